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
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import {
  App,
  ENDPOINTS,
  EXAMPLES,
  headersOf,
  logIn,
  makeWorld,
  newUser,
  ORIGIN,
  PUBLIC,
  send,
  STATE_CHANGING
} from "../support/DashboardMatrix.ts"
import { expectError } from "../support/Expect.ts"
import { h } from "../support/TestApp.ts"

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
