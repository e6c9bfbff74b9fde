/**
 * The MCP authorization server (oauth/, docs/mcp.md "Connecting by URL") on both stores: discovery, dynamic
 * registration, the authorization request, consent in the dashboard, the code and refresh grants, and every
 * refusal the spec asks for — unregistered redirect URIs never redirected to, PKCE, single-use codes,
 * resource binding, refresh rotation with reuse detection, revocation from the dashboard, consent CSRF.
 * The MCP SDK's own client drives the whole flow end to end in packages/mcp/test/OAuth.test.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Crypto from "node:crypto"
import { createAccount, createProject } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { REGISTRATIONS_PER_HOUR } from "../../src/oauth/Routes.ts"
import { h, TEST_ADDRESS_HEADER, TestApp } from "../support/TestApp.ts"

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
const ISSUER = "http://localhost"
const RESOURCE = "http://localhost/mcp"
const REDIRECT = "http://127.0.0.1:7777/callback"

let counter = 0
const unique = (tag: string) => `${tag}-${Date.now().toString(36)}-${counter++}`

interface Session {
  readonly read: Record<string, string>
  readonly write: Record<string, string>
  readonly accountId: string
  readonly websites: ReadonlyArray<string>
}

/** A verified owner with two websites, logged in. */
const owner = Effect.gen(function*() {
  const email = `${unique("oauth")}@example.test`
  const passwordHash = yield* hashPassword(PASSWORD)
  const { account, websites } = yield* h.run(Effect.gen(function*() {
    const account = yield* createAccount({ name: email })
    yield* (yield* AuthRepo).createUser({
      id: newUserId(),
      accountId: account.id,
      email,
      passwordHash,
      emailVerifiedAt: new Date(),
      createdAt: new Date()
    })
    const websites = []
    for (const n of [1, 2]) {
      websites.push(
        yield* createProject({ accountId: account.id, name: `Site ${n}`, domain: `${unique("s")}.example` })
      )
    }
    return { account, websites }
  }))
  yield* TestClock.adjust("1 minute") // a fresh log-in throttle window
  const r = yield* h.raw("POST", "/app/api/auth/login", {
    token: null,
    headers: ORIGIN,
    body: { email, password: PASSWORD }
  })
  expect(r.status, r.text).toBe(200)
  const cookie = /sitehealth_session=([^;]*)/.exec(r.headers.get("set-cookie") ?? "")![1]!
  return {
    read: { cookie: `sitehealth_session=${cookie}` },
    write: { ...ORIGIN, cookie: `sitehealth_session=${cookie}`, "x-csrf-token": r.json.data.csrfToken },
    accountId: account.id,
    websites: websites.map((w) => w.id)
  } satisfies Session
})

const registerClient = (metadata: unknown = { client_name: "Agent X", redirect_uris: [REDIRECT] }) =>
  h.raw("POST", "/oauth/register", {
    token: null,
    headers: { [TEST_ADDRESS_HEADER]: unique("10.0.0") },
    rawBody: typeof metadata === "string" ? metadata : JSON.stringify(metadata)
  })

const pkce = () => {
  const verifier = Crypto.randomBytes(32).toString("base64url")
  return { verifier, challenge: Crypto.createHash("sha256").update(verifier).digest("base64url") }
}

const authorizeQuery = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  client_id: clientId,
  redirect_uri: REDIRECT,
  response_type: "code",
  code_challenge: challenge,
  code_challenge_method: "S256",
  state: "st-123",
  resource: RESOURCE,
  ...extra
})

const qs = (query: Record<string, string>) => new URLSearchParams(query).toString()

const authorize = (query: Record<string, string>) => h.raw("GET", `/oauth/authorize?${qs(query)}`, { token: null })

const decide = (session: Session, request: Record<string, string>, choice: Record<string, unknown>) =>
  h.raw("POST", "/app/api/oauth/consent", {
    token: null,
    headers: session.write,
    body: { request, approve: true, websites: null, permissions: ["projects:read"], ...choice }
  })

const token = (form: Record<string, string>) =>
  h.raw("POST", "/oauth/token", {
    token: null,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    rawBody: qs(form)
  })

/** Registers a client and has the owner approve it: the code, its verifier and the client. */
const approved = (session: Session, choice: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const clientId: string = (yield* registerClient()).json.client_id
    const { challenge, verifier } = pkce()
    const request = authorizeQuery(clientId, challenge)
    const r = yield* decide(session, request, choice)
    expect(r.status, r.text).toBe(200)
    const back = new URL(r.json.data.redirectTo)
    expect(back.searchParams.get("state")).toBe("st-123")
    expect(back.searchParams.get("iss")).toBe(ISSUER)
    return { clientId, verifier, code: back.searchParams.get("code")! }
  })

const exchange = (grant: { clientId: string; verifier: string; code: string }, extra: Record<string, string> = {}) =>
  token({
    grant_type: "authorization_code",
    client_id: grant.clientId,
    code: grant.code,
    redirect_uri: REDIRECT,
    code_verifier: grant.verifier,
    resource: RESOURCE,
    ...extra
  })

const refreshWith = (clientId: string, refreshToken: string, extra: Record<string, string> = {}) =>
  token({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken, resource: RESOURCE, ...extra })

/** The status /api/v1 answers the bearer (200 works, 401 does not). */
const apiStatus = (bearer: string) => Effect.map(h.raw("GET", "/api/v1/projects", { token: bearer }), (r) => r.status)

layer(TestApp.layer(), { timeout: 60_000 })("MCP authorization server", (it) => {
  describe("discovery", () => {
    it.effect("protected-resource metadata at both paths, server metadata, and /mcp's 401 pointing at them", () =>
      Effect.gen(function*() {
        for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
          const r = yield* h.raw("GET", path, { token: null })
          expect(r.status).toBe(200)
          expect(r.json).toMatchObject({ resource: RESOURCE, authorization_servers: [ISSUER] })
          expect(r.json.scopes_supported).toContain("projects:read")
        }
        const as = yield* h.raw("GET", "/.well-known/oauth-authorization-server", { token: null })
        expect(as.json).toMatchObject({
          issuer: ISSUER,
          authorization_endpoint: `${ISSUER}/oauth/authorize`,
          token_endpoint: `${ISSUER}/oauth/token`,
          registration_endpoint: `${ISSUER}/oauth/register`,
          code_challenge_methods_supported: ["S256"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          token_endpoint_auth_methods_supported: ["none"]
        })
        const mcp = yield* h.raw("POST", "/mcp", { token: null, body: {} })
        expect(mcp.status).toBe(401)
        expect(mcp.headers.get("www-authenticate")).toContain(
          `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`
        )
        const bad = yield* h.raw("POST", "/mcp", { token: `svc_${"A".repeat(36)}`, body: {} })
        expect(bad.headers.get("www-authenticate")).toMatch(/resource_metadata=".*", error="invalid_token"/)
      }))
  })

  describe("registration", () => {
    it.effect("https or loopback redirect URIs only; bad metadata is an RFC 7591 error; rate-limited per address", () =>
      Effect.gen(function*() {
        const ok = yield* registerClient({ client_name: "Claude", redirect_uris: ["https://claude.ai/cb", REDIRECT] })
        expect(ok.status, ok.text).toBe(201)
        expect(ok.json).toMatchObject({ client_name: "Claude", token_endpoint_auth_method: "none" })
        expect(ok.json.client_id).toMatch(/^cli_/)
        for (
          const [metadata, error] of [
            [{ redirect_uris: ["http://evil.example/cb"] }, "invalid_redirect_uri"],
            [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
            [{ redirect_uris: ["https://a.example/cb#frag"] }, "invalid_redirect_uri"],
            [{ redirect_uris: [] }, "invalid_redirect_uri"],
            [{ redirect_uris: [REDIRECT], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
            [{ redirect_uris: [REDIRECT], client_name: 7 }, "invalid_client_metadata"],
            ["not json", "invalid_client_metadata"]
          ] as const
        ) {
          const r = yield* registerClient(metadata)
          expect(r.status, JSON.stringify(metadata)).toBe(400)
          expect(r.json.error).toBe(error)
          expect(typeof r.json.error_description).toBe("string")
        }
        const address = { [TEST_ADDRESS_HEADER]: unique("10.9.9") }
        const body = JSON.stringify({ redirect_uris: [REDIRECT] })
        for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) {
          expect((yield* h.raw("POST", "/oauth/register", { token: null, headers: address, rawBody: body })).status)
            .toBe(201)
        }
        const limited = yield* h.raw("POST", "/oauth/register", { token: null, headers: address, rawBody: body })
        expect(limited.status).toBe(429)
        expect(limited.json.error).toBe("too_many_requests")
      }))
  })

  describe("authorization request", () => {
    it.effect("unknown client or unregistered redirect: refused here, never redirected; other faults go back", () =>
      Effect.gen(function*() {
        const clientId: string = (yield* registerClient()).json.client_id
        const { challenge } = pkce()
        const unknown = yield* authorize(authorizeQuery("cli_unknown0000000000000000", challenge))
        expect(unknown.status).toBe(400)
        expect(unknown.headers.get("location")).toBeNull()
        const open = yield* authorize(authorizeQuery(clientId, challenge, { redirect_uri: "https://evil.example/cb" }))
        expect(open.status).toBe(400)
        expect(open.headers.get("location")).toBeNull()
        expect(open.json.error).toBe("invalid_request")

        for (
          const [extra, error] of [
            [{ code_challenge: "" }, "invalid_request"],
            [{ code_challenge_method: "plain" }, "invalid_request"],
            [{ response_type: "token" }, "unsupported_response_type"],
            [{ resource: "https://other.example/mcp" }, "invalid_target"],
            [{ scope: "projects:read admin:all" }, "invalid_scope"]
          ] as const
        ) {
          const r = yield* authorize(authorizeQuery(clientId, challenge, extra))
          expect(r.status, JSON.stringify(extra)).toBe(302)
          const back = new URL(r.headers.get("location")!)
          expect(back.origin + back.pathname).toBe(REDIRECT)
          expect(back.searchParams.get("error")).toBe(error)
          expect(back.searchParams.get("state")).toBe("st-123")
        }
        const query = authorizeQuery(clientId, challenge)
        const valid = yield* authorize(query)
        expect(valid.status).toBe(302)
        expect(valid.headers.get("location")).toBe(`/consent?${qs(query)}`)
      }))
  })

  describe("consent", () => {
    it.effect("names the client and its redirect host; needs a session, our Origin and the CSRF token", () =>
      Effect.gen(function*() {
        const session = yield* owner
        const clientId: string = (yield* registerClient()).json.client_id
        const { challenge } = pkce()
        const request = authorizeQuery(clientId, challenge, { scope: "projects:read revenue:read" })
        const path = `/app/api/oauth/consent?${qs(request)}`
        expect((yield* h.raw("GET", path, { token: null })).status).toBe(401)
        const view = yield* h.raw("GET", path, { token: null, headers: session.read })
        expect(view.status, view.text).toBe(200)
        expect(view.json.data).toMatchObject({
          client: { id: clientId, name: "Agent X" },
          redirectHost: "127.0.0.1:7777",
          resource: RESOURCE,
          requestedPermissions: ["projects:read", "revenue:read"]
        })
        expect(view.json.data.websites.map((w: any) => w.id).sort()).toEqual([...session.websites].sort())
        const unregistered = yield* h.raw(
          "GET",
          `/app/api/oauth/consent?${qs({ ...request, redirect_uri: "https://e.example/" })}`,
          {
            token: null,
            headers: session.read
          }
        )
        expect(unregistered.status).toBe(400)
        expect(unregistered.json.error.type).toBe("invalid_authorization_request")

        const body = { request, approve: true, websites: null, permissions: ["projects:read"] }
        const noCsrf = yield* h.raw("POST", "/app/api/oauth/consent", {
          token: null,
          headers: { ...session.read, ...ORIGIN },
          body
        })
        expect(noCsrf.status).toBe(403)
        expect(noCsrf.json.error.type).toBe("csrf_token")
        const crossSite = yield* h.raw("POST", "/app/api/oauth/consent", {
          token: null,
          headers: { ...session.write, origin: "https://evil.example" },
          body
        })
        expect(crossSite.status).toBe(403)
        expect(crossSite.json.error.type).toBe("csrf_origin")

        // Never more than the account has: another account's website is not found.
        const other = yield* owner
        expect((yield* decide(session, request, { websites: [other.websites[0]] })).status).toBe(404)
        expect((yield* decide(session, request, { permissions: [] })).status).toBe(400)
        expect((yield* decide(session, request, { permissions: ["root:all"] })).status).toBe(400)

        const denied = yield* decide(session, request, { approve: false })
        const back = new URL(denied.json.data.redirectTo)
        expect(back.searchParams.get("error")).toBe("access_denied")
        expect(back.searchParams.get("state")).toBe("st-123")
        expect(back.searchParams.get("code")).toBeNull()
      }))
  })

  describe("grants", () => {
    it.effect("code → an ordinary svc_ token of the chosen websites and permissions, listed with the client's name", () =>
      Effect.gen(function*() {
        const session = yield* owner
        const grant = yield* approved(session, { websites: [session.websites[0]], permissions: ["projects:read"] })
        const r = yield* exchange(grant)
        expect(r.status, r.text).toBe(200)
        expect(r.json).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "projects:read" })
        expect(r.json.access_token).toMatch(/^svc_/)
        expect(r.json.refresh_token).toMatch(/^svr_/)
        const projects = yield* h.raw("GET", "/api/v1/projects", { token: r.json.access_token })
        expect(projects.status).toBe(200)
        expect(projects.json.data.projects.map((p: any) => p.id)).toEqual([session.websites[0]])
        expect(
          (yield* h.raw("GET", `/api/v1/projects/${session.websites[0]}/analytics`, {
            token: r.json.access_token
          })).status
        ).toBe(403)
        const listed = yield* h.raw("GET", "/app/api/tokens", { token: null, headers: session.read })
        const row = listed.json.data.tokens.find((t: any) => t.name === "Agent X (MCP sign-in)")
        expect(row).toMatchObject({ websites: [session.websites[0]], permissions: ["projects:read"], status: "active" })
        // Secrets are kept hashed: no row holds the code, the access or the refresh token (PostgreSQL: the rows as text).
        if (h.store === "postgres") {
          const stored = yield* h.run(
            Effect.gen(function*() {
              const sql = yield* SqlClient.SqlClient
              const rows = yield* sql<{ row: string }>`SELECT t::text AS row FROM oauth_codes t
                UNION ALL SELECT t::text FROM oauth_refresh_tokens t UNION ALL SELECT t::text FROM tokens t`
              return rows.map((x) => x.row).join("\n")
            }).pipe(Effect.orDie)
          )
          expect(stored).toContain("\\x") // the hashes are there
          for (const secret of [grant.code, r.json.access_token, r.json.refresh_token]) {
            expect(stored).not.toContain(secret)
            expect(stored).not.toContain(secret.slice(4, 24))
          }
        }
      }))

    it.effect("wrong PKCE verifier, reused code (revokes what it gave), wrong redirect, expired code, wrong resource", () =>
      Effect.gen(function*() {
        const session = yield* owner
        const wrongVerifier = yield* approved(session)
        const pkceFail = yield* exchange({ ...wrongVerifier, verifier: pkce().verifier })
        expect(pkceFail.status).toBe(400)
        expect(pkceFail.json.error).toBe("invalid_grant")

        const grant = yield* approved(session)
        const first = yield* exchange(grant)
        expect(first.status).toBe(200)
        expect(yield* apiStatus(first.json.access_token)).toBe(200)
        const replay = yield* exchange(grant)
        expect(replay.json.error).toBe("invalid_grant")
        expect(yield* apiStatus(first.json.access_token)).toBe(401)
        expect((yield* refreshWith(grant.clientId, first.json.refresh_token)).json.error).toBe("invalid_grant")

        const redirect = yield* approved(session)
        expect((yield* exchange(redirect, { redirect_uri: "http://127.0.0.1:7777/other" })).json.error).toBe(
          "invalid_grant"
        )
        const otherClient = yield* approved(session)
        const stranger: string = (yield* registerClient()).json.client_id
        expect((yield* exchange({ ...otherClient, clientId: stranger })).json.error).toBe("invalid_grant")

        const late = yield* approved(session)
        yield* TestClock.adjust("61 seconds")
        expect((yield* exchange(late)).json.error).toBe("invalid_grant")

        const target = yield* approved(session)
        const wrongTarget = yield* exchange(target, { resource: "https://other.example/mcp" })
        expect(wrongTarget.status).toBe(400)
        expect(wrongTarget.json.error).toBe("invalid_target")
        expect((yield* exchange(target)).status).toBe(200)

        expect((yield* token({ grant_type: "password", client_id: target.clientId })).json.error).toBe(
          "unsupported_grant_type"
        )
        const json = yield* h.raw("POST", "/oauth/token", { token: null, body: { grant_type: "refresh_token" } })
        expect(json.json.error).toBe("invalid_request")
      }))

    it.effect("refresh rotates (one token row, new secret); a reused refresh token revokes the family", () =>
      Effect.gen(function*() {
        const session = yield* owner
        const grant = yield* approved(session)
        const first = (yield* exchange(grant)).json
        const second = yield* refreshWith(grant.clientId, first.refresh_token)
        expect(second.status, second.text).toBe(200)
        expect(second.json.access_token).not.toBe(first.access_token)
        expect(second.json.refresh_token).not.toBe(first.refresh_token)
        expect(yield* apiStatus(first.access_token)).toBe(401)
        expect(yield* apiStatus(second.json.access_token)).toBe(200)
        const rows = (yield* h.raw("GET", "/app/api/tokens", { token: null, headers: session.read })).json.data.tokens
        expect(rows.filter((t: any) => t.name === "Agent X (MCP sign-in)" && t.status === "active")).toHaveLength(1)

        // A refresh for another resource is refused and leaves the refresh token usable.
        const wrong = yield* refreshWith(grant.clientId, second.json.refresh_token, {
          resource: "https://x.example/mcp"
        })
        expect(wrong.json.error).toBe("invalid_target")
        const third = (yield* refreshWith(grant.clientId, second.json.refresh_token)).json
        expect(yield* apiStatus(third.access_token)).toBe(200)

        // The first refresh token again: someone holds a copy. The whole family ends.
        const reused = yield* refreshWith(grant.clientId, first.refresh_token)
        expect(reused.json.error).toBe("invalid_grant")
        expect(yield* apiStatus(third.access_token)).toBe(401)
        expect((yield* refreshWith(grant.clientId, third.refresh_token)).json.error).toBe("invalid_grant")
      }))

    it.effect("revoking the token on the dashboard ends its refresh token; refresh tokens expire", () =>
      Effect.gen(function*() {
        const session = yield* owner
        const grant = yield* approved(session)
        const pair = (yield* exchange(grant)).json
        const rows = (yield* h.raw("GET", "/app/api/tokens", { token: null, headers: session.read })).json.data.tokens
        const row = rows.find((t: any) => t.name === "Agent X (MCP sign-in)")
        const revoked = yield* h.raw("DELETE", `/app/api/tokens/${row.id}`, { token: null, headers: session.write })
        expect(revoked.status, revoked.text).toBe(200)
        expect(yield* apiStatus(pair.access_token)).toBe(401)
        expect((yield* refreshWith(grant.clientId, pair.refresh_token)).json.error).toBe("invalid_grant")

        const later = yield* approved(session)
        const kept = (yield* exchange(later)).json
        yield* TestClock.adjust("31 days")
        const expired = (yield* refreshWith(later.clientId, kept.refresh_token)).json
        expect(expired).toMatchObject({ error: "invalid_grant", error_description: "The refresh token has expired" })
        // The next grant's refresh token is stored, and the expired one is forgotten (nothing grows without end).
        const fresh = yield* approved(yield* owner) // the session of 31 days ago has ended
        expect((yield* exchange(fresh)).status).toBe(200)
        expect((yield* refreshWith(later.clientId, kept.refresh_token)).json.error_description).toBe(
          "Unknown refresh token"
        )
      }))
  })
})
