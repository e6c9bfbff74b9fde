/**
 * The dashboard API's authorization matrix, generated from the contract: every endpoint of DashboardApi
 * (walked from its groups, so an endpoint added to the contract is in the matrix without anyone writing it
 * here) × every point of view a caller can be in, behind the real session middleware, Origin check and CSRF
 * token (docs/dashboard.md, "Auth model"):
 *
 * - logged out, a made-up cookie, an expired session, a logged-out (revoked) session, a bearer token instead
 *   of the cookie → 401 `session_required` on every endpoint that needs the session;
 * - another account's session naming this account's website, token, session or connection → 404 (never
 *   403: whether the object exists is not revealed); its lists never show them; and they are untouched after;
 * - the right session without the CSRF token → 403 `csrf_token` on every state-changing endpoint (reads pass);
 * - a foreign Origin → 403 `csrf_origin` on every state-changing endpoint, log-in and sign-up included;
 * - and the other wall: a session cookie never authenticates any /api/v1 operation (401 `missing_token`).
 *
 * Public endpoints (no session) are exactly PUBLIC: one added without the session middleware fails the suite
 * until it is declared here on purpose.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { DashboardApi, DashboardSession } from "@sitehealth/domain/DashboardApi"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { readConfig } from "../../src/platform/Config.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { expectError } from "../support/Expect.ts"
import { SECRET, TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const ORIGIN = "http://localhost"
const PASSWORD = "correct horse battery"
const STATE_CHANGING = new Set(["POST", "PATCH", "PUT", "DELETE"])

/** The endpoints that need no session, on purpose. */
const PUBLIC = new Set([
  "auth.signUp",
  "auth.logIn",
  "auth.logInSecondFactor",
  "auth.requestPasswordReset",
  "auth.resetPassword",
  "auth.verifyEmail"
])

interface Endpoint {
  readonly key: string
  readonly method: string
  readonly path: string
  readonly session: boolean
}

/** Every endpoint of the contract, with the prefix applied (HttpApi.prefix rewrites the endpoints' paths). */
const ENDPOINTS: ReadonlyArray<Endpoint> = Object.values(DashboardApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((e) => ({
    key: `${group.identifier}.${e.identifier}`,
    method: e.method,
    path: e.path,
    session: e.middlewares.has(DashboardSession as any)
  }))
)

/** Everything of the victim account the other views name. */
interface World {
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
const fillPath = (e: Endpoint, w: World): string =>
  e.path.replace(/:(\w+)/g, (_m: string, name: string) => {
    if (name === "provider") return "plausible"
    if (name === "id" && /\/websites\/:id/.test(e.path)) return w.website.id
    if (name === "id" && /\/tokens\/:id/.test(e.path)) return w.token.id
    if (name === "id" && /\/sessions\/:id/.test(e.path)) return w.sessionId
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
const EXAMPLES: Record<string, Example> = {
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
  "consent.describe": { query: consentRequest },
  "reports.createWebhook": {
    body: () => ({ url: "https://hooks.example.com/matrix", events: ["health.changed"], confirm: true })
  },
  "reports.updateWebhook": { body: () => ({ minMoneyAtStake: 1 }) },
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

const EXPENSE = {
  amount: 1200,
  currency: "EUR",
  category: "hosting",
  description: "Matrix",
  incurredOn: "2026-11-01",
  recurrence: "one_off"
}

let counter = 0
const headersOf = (cookie: string | null, extra: Record<string, string> = {}) => ({
  origin: ORIGIN,
  ...(cookie === null ? {} : { cookie: `sitehealth_session=${cookie}` }),
  ...extra
})

/** A verified user of a new account, logged in (each log-in in a fresh throttle minute). */
const newUser = Effect.gen(function*() {
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
const logIn = (email: string) =>
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
const makeWorld = Effect.gen(function*() {
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
  return {
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

const send = (e: Endpoint, w: World, headers: Record<string, string>) => {
  const body = EXAMPLES[e.key]?.body?.(w)
  const query = EXAMPLES[e.key]?.query?.(w)
  const path = `${fillPath(e, w)}${query === undefined ? "" : `?${new URLSearchParams(query)}`}`
  return h.raw(e.method, path, { token: null, headers, ...(body === undefined ? {} : { body }) })
}

const base = readConfig({})
const App = TestApp.layer({
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

layer(App, { timeout: 120_000 })("Dashboard authorization matrix (generated from DashboardApi)", (it) => {
  let cells = 0
  const sessionEndpoints = ENDPOINTS.filter((e) => e.session)

  it("walks the contract: every endpoint is behind the session but the declared public ones; examples name real endpoints", () => {
    expect(ENDPOINTS.length).toBeGreaterThanOrEqual(20)
    expect(ENDPOINTS.filter((e) => !e.session).map((e) => e.key).sort()).toEqual([...PUBLIC].sort())
    for (const key of Object.keys(EXAMPLES)) expect(ENDPOINTS.map((e) => e.key), key).toContain(key)
    for (const e of ENDPOINTS) expect(e.path.startsWith("/app/api/"), e.key).toBe(true)
  })

  it.effect("no session — logged out, made-up, expired, logged out, or a bearer token instead: 401 on every session endpoint", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      // A session that logged out, and one that will expire (idle) while the others are kept alive.
      const gone = yield* logIn(w.email)
      const out = yield* h.raw("POST", "/app/api/auth/logout", {
        token: null,
        headers: headersOf(gone.cookie, { "x-csrf-token": gone.csrf })
      })
      expect(out.status, out.text).toBe(200)
      const expiring = yield* logIn(w.email)
      yield* TestClock.adjust("61 minutes")
      const views: Array<[string, Record<string, string>]> = [
        ["logged out", headersOf(null, { "x-csrf-token": w.csrf })],
        [
          "made-up session",
          headersOf("bWFkZS11cC1zZXNzaW9uLWNvb2tpZS12YWx1ZS0wMTIzNDU2Nzg5", { "x-csrf-token": w.csrf })
        ],
        ["expired session", headersOf(expiring.cookie, { "x-csrf-token": expiring.csrf })],
        ["logged-out session", headersOf(gone.cookie, { "x-csrf-token": gone.csrf })],
        ["bearer token, no cookie", {
          origin: ORIGIN,
          authorization: `Bearer ${w.token.secret}`,
          "x-csrf-token": w.csrf
        }]
      ]
      for (const [view, headers] of views) {
        for (const e of sessionEndpoints) {
          const r = yield* send(e, w, headers)
          expect(r.status, `${view} × ${e.key}: ${e.method} ${e.path}\n${r.text}`).toBe(401)
          expectError(r, 401, "session_required")
          cells++
        }
      }
    }))

  it.effect("another account's session: the victim's website, token, session or connection is 404 (never 403); lists show none of it; nothing changes", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const other = yield* newUser
      const secrets = [w.website.id, w.website.domain, w.token.id, w.sessionId, w.email]
      for (const e of sessionEndpoints) {
        if (e.key === "auth.logOut") continue // last: it ends the caller's own session
        const headers = headersOf(other.cookie, { "x-csrf-token": other.csrf })
        const r = yield* send(e, w, headers)
        const label = `other account × ${e.key}: ${e.method} ${e.path}\n${r.text}`
        const example = EXAMPLES[e.key]
        if (/:\w+/.test(e.path)) {
          if (r.status === 400) {
            throw new Error(`${label}\n${e.key} answered 400, not 404: give it a valid body or query in EXAMPLES`)
          }
          expect(r.status, label).toBe(404)
          expectError(r, 404)
        } else if (example?.otherAccount !== undefined) {
          expect(r.status, label).toBe(example.otherAccount.status)
          expectError(r, example.otherAccount.status, example.otherAccount.type)
        } else {
          // Its own things only (a list, its session, its account, a website of its own).
          expect(r.status < 300, label).toBe(true)
          for (const s of secrets) expect(r.text, label).not.toContain(s)
        }
        cells++
      }
      const logout = yield* h.raw("POST", "/app/api/auth/logout", {
        token: null,
        headers: headersOf(other.cookie, { "x-csrf-token": other.csrf })
      })
      expect(logout.status).toBe(200)
      cells++

      // The victim's things are as they were: its session alive, its website, token and connection intact.
      const mine = headersOf(w.cookie)
      const sites = yield* h.raw("GET", "/app/api/websites", { token: null, headers: mine })
      expect(sites.status, sites.text).toBe(200)
      expect(sites.json.data.websites).toEqual([
        expect.objectContaining({ id: w.website.id, name: w.website.name, domain: w.website.domain })
      ])
      const tokens = yield* h.raw("GET", "/app/api/tokens", { token: null, headers: mine })
      expect(tokens.json.data.tokens.find((t: any) => t.id === w.token.id)).toMatchObject({ status: "active" })
      const connections = yield* h.raw("GET", `/app/api/websites/${w.website.id}/connections`, {
        token: null,
        headers: mine
      })
      expect(connections.json.data.connections.find((c: any) => c.provider === "plausible")).toMatchObject({
        status: "connected"
      })
      expect((yield* h.raw("GET", "/api/v1/projects", { token: w.token.secret })).status).toBe(200)
    }))

  it.effect("the right session without its CSRF token: 403 csrf_token on every state-changing endpoint; reads pass", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      for (const e of sessionEndpoints) {
        const r = yield* send(e, w, headersOf(w.cookie))
        const label = `no CSRF token × ${e.key}: ${e.method} ${e.path}\n${r.text}`
        if (STATE_CHANGING.has(e.method)) expectError(r, 403, "csrf_token")
        else expect(r.status, label).toBe(200)
        cells++
      }
      // Still logged in and nothing happened.
      const sites = yield* h.raw("GET", "/app/api/websites", { token: null, headers: headersOf(w.cookie) })
      expect(sites.json.data.websites.map((s: any) => s.name)).toEqual([w.website.name])
    }))

  it.effect("a foreign Origin: 403 csrf_origin on every state-changing endpoint, public ones (log-in CSRF) included", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      for (const e of ENDPOINTS.filter((e) => STATE_CHANGING.has(e.method))) {
        const r = yield* send(e, w, {
          origin: "https://evil.example",
          cookie: `sitehealth_session=${w.cookie}`,
          "x-csrf-token": w.csrf
        })
        expect(r.status, `foreign Origin × ${e.key}: ${e.method} ${e.path}\n${r.text}`).toBe(403)
        expectError(r, 403, "csrf_origin")
        cells++
      }
    }))

  it.effect("a session cookie never authenticates /api/v1: 401 missing_token on every operation", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const v1 = Object.values(SiteHealthApi.groups).flatMap((g) => Object.values(g.endpoints))
      expect(v1.length).toBeGreaterThanOrEqual(15)
      for (const e of v1) {
        const path = e.path.replace(
          /:(\w+)/g,
          (_m: string, name: string) => (name === "provider" ? "plausible" : w.website.id)
        )
        const r = yield* h.raw(e.method, path, {
          token: null,
          headers: headersOf(w.cookie, { "x-csrf-token": w.csrf })
        })
        expect(r.status, `session cookie × /api/v1 ${e.name}: ${e.method} ${path}\n${r.text}`).toBe(401)
        expectError(r, 401, "missing_token")
        cells++
      }
    }))

  describe("the count", () => {
    it("reports how many cells the matrix asserted", () => {
      const expected = 5 * sessionEndpoints.length + sessionEndpoints.length + sessionEndpoints.length +
        ENDPOINTS.filter((e) => STATE_CHANGING.has(e.method)).length
      console.info(
        `dashboard authorization matrix (${h.store}): ${ENDPOINTS.length} endpoints (${sessionEndpoints.length} ` +
          `behind the session); ${cells} cells asserted`
      )
      expect(cells).toBeGreaterThanOrEqual(expected)
    })
  })
})
