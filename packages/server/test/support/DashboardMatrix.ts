/**
 * What the dashboard authorization matrices share (DashboardAuthorizationMatrix.test.ts, DashboardRoleMatrix.test.ts):
 * the endpoints walked from the contract, a valid example request per endpoint, a victim account with one of
 * everything (`makeWorld`), and the app they run against.
 */
import { expect } from "@effect/vitest"
import { DashboardApi, DashboardSession } from "@sitehealth/domain/DashboardApi"
import { accessOf, type DashboardAccess } from "@sitehealth/domain/DashboardRoles"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { newInvitationId } from "../../src/dashboard/TeamRows.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { readConfig } from "../../src/platform/Config.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { SECRET, TEST_KEY } from "./SyncFakes.ts"
import { h, TestApp } from "./TestApp.ts"

export const ORIGIN = "http://localhost"
export const PASSWORD = "correct horse battery"
export const STATE_CHANGING = new Set(["POST", "PATCH", "PUT", "DELETE"])

/** The endpoints that need no session, on purpose. */
export const PUBLIC = new Set([
  "auth.signUp",
  "auth.logIn",
  "auth.logInSecondFactor",
  "auth.requestPasswordReset",
  "auth.resetPassword",
  "auth.verifyEmail",
  "team.previewInvitation",
  "team.acceptInvitation"
])

export interface Endpoint {
  readonly key: string
  readonly method: string
  readonly path: string
  readonly session: boolean
  /** The minimum access level the endpoint declares in the contract (DashboardRoles.ts); undefined: none. */
  readonly level: DashboardAccess | undefined
}

/** Every endpoint of the contract, with the prefix applied (HttpApi.prefix rewrites the endpoints' paths). */
export const ENDPOINTS: ReadonlyArray<Endpoint> = Object.values(DashboardApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((e) => ({
    key: `${group.identifier}.${e.identifier}`,
    method: e.method,
    path: e.path,
    session: e.middlewares.has(DashboardSession as any),
    level: accessOf(e)
  }))
)

/** Everything of the victim account the other views name. */
export interface World {
  readonly email: string
  readonly cookie: string
  readonly csrf: string
  readonly sessionId: string
  readonly website: { readonly id: string; readonly domain: string; readonly name: string }
  readonly token: { readonly id: string; readonly secret: string }
  /** The `state` of a Google sign-in the victim started (still unclaimed). */
  readonly googleState: string
  /** An expense of the victim's website. */
  readonly expenseId: string
  /** An annotation of the victim's website. */
  readonly annotationId: string
  /** A webhook endpoint of the victim's website, and a delivery of it. */
  readonly webhookId: string
  readonly deliveryId: string
  /** An MCP client registered with the authorization server (oauth/), for the consent endpoints. */
  readonly oauthClientId: string
  /** A second member of the victim's account (a viewer), and a pending invitation. */
  readonly memberId: string
  readonly invitationId: string
}

/** An authorization request of the registered client, as /oauth/authorize passes it to the consent page. */
const consentRequest = (w: World) => ({
  client_id: w.oauthClientId,
  redirect_uri: "http://127.0.0.1:7777/callback",
  response_type: "code",
  code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  code_challenge_method: "S256",
  state: "matrix"
})

/** How a path parameter is filled: the victim's object the endpoint is about. */
export const fillPath = (e: Endpoint, w: World): string =>
  e.path.replace(/:(\w+)/g, (_m: string, name: string) => {
    if (name === "provider") return "plausible"
    if (name === "id" && /\/websites\/:id/.test(e.path)) return w.website.id
    if (name === "id" && /\/tokens\/:id/.test(e.path)) return w.token.id
    if (name === "id" && /\/sessions\/:id/.test(e.path)) return w.sessionId
    if (name === "id" && /\/team\/members\/:id/.test(e.path)) return w.memberId
    if (name === "id" && /\/team\/invitations\/:id/.test(e.path)) return w.invitationId
    if (name === "expenseId") return w.expenseId
    if (name === "annotationId") return w.annotationId
    if (name === "webhookId") return w.webhookId
    if (name === "deliveryId") return w.deliveryId
    throw new Error(`${e.key}: the matrix does not know whose object :${name} in ${e.path} is — teach fillPath`)
  })

interface Example {
  /** A valid body (the 404 must come from the object, not from a 400 on the body). */
  readonly body?: (w: World) => unknown
  /** A valid query string's parameters, for endpoints that require some (e.g. a report's `period`). */
  readonly query?: (w: World) => Record<string, string>
  /** What another account's session gets when no path parameter names the victim's object (default: 2xx). */
  readonly otherAccount?: { readonly status: number; readonly type?: string }
}

/**
 * A body (and query) for each endpoint that takes one. An endpoint without an example is sent without: fine
 * for the 401 and 403 views (the middleware answers first); the other-account view asks for one when it gets
 * 400.
 */
export const EXAMPLES: Record<string, Example> = {
  "auth.signUp": { body: () => ({ email: "matrix@example.test", password: PASSWORD }) },
  "auth.logIn": { body: () => ({ email: "matrix@example.test", password: PASSWORD }) },
  "auth.requestPasswordReset": { body: () => ({ email: "matrix@example.test" }) },
  "auth.resetPassword": { body: () => ({ token: "x.y", password: PASSWORD }) },
  "auth.verifyEmail": { body: () => ({ token: "x.y" }) },
  "auth.logInSecondFactor": { body: () => ({ challenge: "x.y", code: "123456" }) },
  // The caller's own password and second factor, asked with a wrong password: refused, and nothing changes.
  "security.changePassword": {
    body: () => ({ currentPassword: "not the password", newPassword: "an entirely new passphrase" }),
    otherAccount: { status: 400, type: "wrong_password" }
  },
  "security.setUpTwoFactor": {
    body: () => ({ password: "not the password" }),
    otherAccount: { status: 400, type: "wrong_password" }
  },
  "security.enableTwoFactor": { body: () => ({ code: "123456" }), otherAccount: { status: 400, type: "no_setup" } },
  "security.disableTwoFactor": {
    body: () => ({ password: "not the password", code: "123456" }),
    otherAccount: { status: 400, type: "wrong_password" }
  },
  "security.regenerateRecoveryCodes": {
    body: () => ({ password: "not the password", code: "123456" }),
    otherAccount: { status: 400, type: "wrong_password" }
  },
  "websites.create": {
    body: () => ({ name: "Matrix", domain: "matrix.example.com", timezone: "UTC", currency: "USD" })
  },
  "websites.update": { body: () => ({ name: "taken over" }) },
  "websites.delete": { body: (w) => ({ confirmDomain: w.website.domain }) },
  // Asks for the victim's website: the account check answers.
  "tokens.create": {
    body: (w) => ({ name: "matrix", websites: [w.website.id], permissions: ["projects:read"] }),
    otherAccount: { status: 404, type: "not_found" }
  },
  "connections.connectStripe": { body: () => ({ key: "rk_test_51MatrixKeyAbCdEf0123456789" }) },
  "connections.connectPlausible": { body: () => ({ apiKey: "matrix-key-0123456789", siteId: "matrix.example.com" }) },
  // The victim's sign-in: claimed only by the account that started it (400, and Google is never asked).
  "connections.googleCallback": {
    body: (w) => ({ code: "4/matrix", state: w.googleState }),
    otherAccount: { status: 400, type: "oauth_state_invalid" }
  },
  "connections.connectGoogle": { body: () => ({ flow: "oaf_matrix", siteUrl: "sc-domain:matrix.example.com" }) },
  "reports.createExpense": { body: () => EXPENSE },
  "reports.createAnnotation": { body: () => ({ date: "2026-11-02", note: "Matrix launch" }) },
  "reports.updateAnnotation": { body: () => ({ note: "taken over" }) },
  // The caller's own billing; this app has no billing keys (docs/billing.md): 409, and Stripe is never asked.
  "account.checkout": {
    body: () => ({ plan: "monthly" }),
    otherAccount: { status: 409, type: "billing_not_configured" }
  },
  "account.billingPortal": { otherAccount: { status: 409, type: "billing_not_configured" } },
  // Never the victim's: the caller's own account, and the typed address is not theirs (nothing is deleted).
  "account.delete": {
    body: () => ({ confirmEmail: "not-the-owner@example.test" }),
    otherAccount: { status: 400, type: "confirmation_mismatch" }
  },
  "consent.describe": { query: consentRequest },
  "reports.createWebhook": {
    body: () => ({ url: "https://hooks.example.com/matrix", events: ["health.changed"], confirm: true })
  },
  "reports.updateWebhook": { body: () => ({ minMoneyAtStake: 1 }) },
  "team.invite": { body: () => ({ email: "invitee@example.test", role: "viewer" }) },
  "team.changeRole": { body: () => ({ role: "admin" }) },
  "team.previewInvitation": { body: () => ({ token: "x.y" }) },
  "team.acceptInvitation": { body: () => ({ token: "x.y", password: PASSWORD }) },
  // The caller's own morning email: nothing of the victim's is named.
  "alerts.updateEmail": { body: () => ({ hour: 9 }) },
  // Grants the victim's website to an MCP client: never the account's to give.
  "consent.decide": {
    body: (w) => ({
      request: consentRequest(w),
      approve: true,
      websites: [w.website.id],
      permissions: ["projects:read"]
    }),
    otherAccount: { status: 404, type: "not_found" }
  }
}

export const EXPENSE = {
  amount: 1200,
  currency: "EUR",
  category: "hosting",
  description: "Matrix",
  incurredOn: "2026-11-01",
  recurrence: "one_off"
}

let counter = 0
export const headersOf = (cookie: string | null, extra: Record<string, string> = {}) => ({
  origin: ORIGIN,
  ...(cookie === null ? {} : { cookie: `sitehealth_session=${cookie}` }),
  ...extra
})

/** A verified user of a new account, logged in (each log-in in a fresh throttle minute). */
export const newUser = Effect.gen(function*() {
  const email = `matrix-${Date.now().toString(36)}-${counter++}@example.test`
  const passwordHash = yield* hashPassword(PASSWORD)
  yield* h.run(Effect.gen(function*() {
    const account = yield* createAccount({ name: email })
    yield* (yield* AuthRepo).createUser({
      id: newUserId(),
      accountId: account.id,
      email,
      passwordHash,
      emailVerifiedAt: new Date(),
      createdAt: new Date()
    })
  }))
  return { email, ...(yield* logIn(email)) }
})
export const logIn = (email: string) =>
  Effect.gen(function*() {
    yield* TestClock.adjust("1 minute")
    const r = yield* h.raw("POST", "/app/api/auth/login", {
      token: null,
      headers: { origin: ORIGIN },
      body: { email, password: PASSWORD }
    })
    expect(r.status, r.text).toBe(200)
    const cookie = /sitehealth_session=([^;]+)/.exec(r.headers.get("set-cookie") ?? "")![1]!
    return { cookie, csrf: r.json.data.csrfToken as string, sessionId: r.json.data.sessionId as string }
  })

/**
 * The victim: a website with Plausible connected (credentials encrypted, as the admin CLI does), a token, a Google
 * sign-in under way.
 */
export const makeWorld = Effect.gen(function*() {
  const user = yield* newUser
  const write = headersOf(user.cookie, { "x-csrf-token": user.csrf })
  const site = yield* h.raw("POST", "/app/api/websites", {
    token: null,
    headers: write,
    body: { name: "Victim", domain: `victim-${counter++}.example.com`, timezone: "UTC", currency: "EUR" }
  })
  expect(site.status, site.text).toBe(201)
  const website = site.json.data as World["website"]
  yield* h.run(Effect.gen(function*() {
    const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
    yield* (yield* IntegrationsRepo).connect({
      projectId: website.id,
      provider: "plausible",
      credentials: cipher.encrypt({ apiKey: SECRET }),
      baseUrl: null,
      syncIntervalMinutes: null,
      now: new Date(yield* h.now)
    })
  }))
  const token = yield* h.raw("POST", "/app/api/tokens", {
    token: null,
    headers: write,
    body: { name: "victim", websites: null, permissions: ["projects:read"] }
  })
  expect(token.status, token.text).toBe(201)
  const start = yield* h.raw("POST", `/app/api/websites/${website.id}/connections/google-search-console/start`, {
    token: null,
    headers: write
  })
  expect(start.status, start.text).toBe(200)
  const googleState = new URL(start.json.data.authorizeUrl).searchParams.get("state")!
  const expense = yield* h.raw("POST", `/app/api/websites/${website.id}/expenses`, {
    token: null,
    headers: write,
    body: EXPENSE
  })
  expect(expense.status, expense.text).toBe(201)
  const annotation = yield* h.raw("POST", `/app/api/websites/${website.id}/annotations`, {
    token: null,
    headers: write,
    body: { date: "2026-11-02", note: "The victim's launch" }
  })
  expect(annotation.status, annotation.text).toBe(201)
  const hook = yield* h.raw("POST", `/app/api/websites/${website.id}/webhooks`, {
    token: null,
    headers: write,
    body: { url: "https://hooks.example.com/victim", events: ["health.changed"], confirm: true }
  })
  expect(hook.status, hook.text).toBe(201)
  const webhookId: string = hook.json.data.webhook.id
  const [delivery] = yield* h.run(Effect.flatMap(WebhooksRepo, (repo) =>
    emit(repo)("health.changed", website.id, {
      projectId: website.id as any,
      score: 60,
      previousScore: 70,
      change: -10,
      computedAt: new Date(0).toISOString()
    }, new Date(0))))
  const deliveryId = delivery!.id
  const client = yield* h.raw("POST", "/oauth/register", {
    token: null,
    body: { client_name: "Matrix agent", redirect_uris: ["http://127.0.0.1:7777/callback"] }
  })
  expect(client.status, client.text).toBe(201)
  const team = yield* h.run(Effect.gen(function*() {
    const repo = yield* AuthRepo
    const owner = (yield* repo.findUserByEmail(user.email))!
    const at = new Date(yield* h.now)
    const invitation = (id: string, email: string) =>
      repo.createInvitation({
        id,
        accountId: owner.accountId,
        email,
        role: "viewer",
        invitedBy: owner.id,
        createdAt: at,
        expiresAt: new Date(at.getTime() + 86_400_000)
      })
    const joining = yield* invitation(newInvitationId(), `member-${user.email}`)
    const member = yield* repo.acceptInvitation(joining.id, {
      id: newUserId(),
      accountId: owner.accountId,
      email: joining.email,
      passwordHash: null,
      emailVerifiedAt: at,
      createdAt: at
    }, at)
    if (typeof member === "string") throw new Error(`the victim's member could not join: ${member}`)
    const pending = yield* invitation(newInvitationId(), `invited-${user.email}`)
    return { memberId: member.id, invitationId: pending.id }
  }))
  return {
    ...team,
    email: user.email,
    cookie: user.cookie,
    csrf: user.csrf,
    sessionId: user.sessionId,
    website,
    token: { id: token.json.data.token.id, secret: token.json.data.secret },
    googleState,
    expenseId: expense.json.data.id as string,
    annotationId: annotation.json.data.annotation.id as string,
    webhookId,
    deliveryId,
    oauthClientId: client.json.client_id as string
  } satisfies World
})

export const send = (e: Endpoint, w: World, headers: Record<string, string>) => {
  const body = EXAMPLES[e.key]?.body?.(w)
  const query = EXAMPLES[e.key]?.query?.(w)
  const path = `${fillPath(e, w)}${query === undefined ? "" : `?${new URLSearchParams(query)}`}`
  return h.raw(e.method, path, { token: null, headers, ...(body === undefined ? {} : { body }) })
}

const base = readConfig({})
export const App = TestApp.layer({
  secretKey: Redacted.make(Buffer.from(TEST_KEY).toString("base64")),
  // Google configured (never contacted: the matrix only starts sign-ins and presents unclaimable states).
  connections: {
    ...base.connections,
    googleClientId: "matrix.apps.googleusercontent.com",
    googleClientSecret: Redacted.make("GOCSPX-matrix"),
    googleAuthUrl: "http://127.0.0.1:9/o/oauth2/v2/auth",
    googleTokenUrl: "http://127.0.0.1:9/token"
  }
})
