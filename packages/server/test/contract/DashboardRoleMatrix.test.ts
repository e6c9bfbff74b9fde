/**
 * The dashboard API's authorization matrix by role (docs/security.md), generated from the contract: every
 * endpoint of DashboardApi declares its minimum access level (`public`, `self`, `viewer`, `admin`, `owner`:
 * @sitehealth/domain/DashboardRoles) and the session middleware checks it on every request, against the role
 * read afresh with the session. Here: every endpoint behind the session × every role (owner, admin, viewer),
 * a viewer's session changes nothing by any route, and a role changed mid-session applies to its next request.
 * Another account's member is DashboardAuthorizationMatrix.test.ts's other-account view (404 on every object).
 */
import { describe, expect, layer } from "@effect/vitest"
import { DASHBOARD_ROLES, type DashboardRole, roleAllows } from "@sitehealth/domain/DashboardRoles"
import { Effect } from "effect"
import { AuthRepo } from "../../src/dashboard/AuthRepo.ts"
import {
  App,
  ENDPOINTS,
  headersOf,
  logIn,
  makeWorld,
  send,
  STATE_CHANGING,
  type World
} from "../support/DashboardMatrix.ts"
import { expectError } from "../support/Expect.ts"
import { h } from "../support/TestApp.ts"

const sessionEndpoints = ENDPOINTS.filter((e) => e.session)

const setRole = (w: World, role: DashboardRole) =>
  h.run(Effect.gen(function*() {
    const repo = yield* AuthRepo
    const user = yield* repo.findUserByEmail(w.email)
    expect(yield* repo.setRole(user!.id, role)).toBe(true)
  }))

layer(App, { timeout: 120_000 })("Dashboard authorization matrix by role (generated from DashboardApi)", (it) => {
  let cells = 0

  it("every endpoint declares its access level in the contract; `public` exactly where there is no session", () => {
    for (const e of ENDPOINTS) {
      expect(e.level, `${e.key} declares no access level: add access(level, endpoint) in the contract`)
        .toBeDefined()
      expect(e.level === "public", `${e.key}: public ⇔ no session middleware`).toBe(!e.session)
    }
    // Billing and members are the owner's alone; a viewer may read every report.
    expect(ENDPOINTS.filter((e) => e.level === "owner").map((e) => e.key).sort())
      .toEqual([
        "account.billingPortal",
        "account.checkout",
        "account.delete",
        "team.changeRole",
        "team.invite",
        "team.removeMember",
        "team.revokeInvitation"
      ])
    expect(
      ENDPOINTS.filter((e) => e.key.startsWith("reports.") && e.method === "GET").every((e) => e.level === "viewer")
    ).toBe(true)
  })

  for (const role of DASHBOARD_ROLES) {
    it.effect(`${role}: refused (403 role_forbidden) exactly where the endpoint needs more; answered elsewhere`, () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        yield* setRole(w, role)
        let headers = headersOf(w.cookie, { "x-csrf-token": w.csrf })
        // Reads first, then changes; logging out last (it ends the session the rest of the row needs).
        const order = [...sessionEndpoints].sort((a, b) => rank(a) - rank(b))
        for (const e of order) {
          if (e.key === "auth.revokeSession") {
            // Logged out just before: a new session revokes the old one (404, gone already).
            const again = yield* logIn(w.email)
            headers = headersOf(again.cookie, { "x-csrf-token": again.csrf })
          }
          const r = yield* send(e, w, headers)
          const label = `${role} × ${e.key} (${e.level}): ${e.method} ${e.path}\n${r.text}`
          if (roleAllows(role, e.level!)) {
            // Answered by the endpoint itself (a provider's 502 included), never by the session or role check.
            expect([401, 500].includes(r.status), label).toBe(false)
            expect(r.json?.error?.type, label).not.toBe("role_forbidden")
          } else {
            expect(r.status, label).toBe(403)
            expectError(r, 403, "role_forbidden")
          }
          cells++
        }
      }))
  }

  it.effect("a viewer's session changes nothing by any route: every state-changing endpoint but its own login is 403", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      yield* setRole(w, "viewer")
      const headers = headersOf(w.cookie, { "x-csrf-token": w.csrf })
      const changes = sessionEndpoints.filter((e) => STATE_CHANGING.has(e.method) && e.level !== "self")
      expect(changes.length).toBeGreaterThanOrEqual(15)
      for (const e of changes) {
        const r = yield* send(e, w, headers)
        expectError(r, 403, "role_forbidden")
        cells++
      }
      // Everything of the account is as it was, and the viewer still reads it.
      const sites = yield* h.raw("GET", "/app/api/websites", { token: null, headers })
      expect(sites.status, sites.text).toBe(200)
      expect(sites.json.data.websites).toEqual([expect.objectContaining({ id: w.website.id, name: w.website.name })])
      yield* setRole(w, "owner")
      const tokens = yield* h.raw("GET", "/app/api/tokens", { token: null, headers })
      expect(tokens.json.data.tokens.find((t: any) => t.id === w.token.id)).toMatchObject({ status: "active" })
      const expenses = yield* h.raw("GET", `/app/api/websites/${w.website.id}/expenses`, { token: null, headers })
      expect(expenses.status, expenses.text).toBe(200)
      expect(expenses.json.data.expenses.map((x: any) => x.description)).toEqual(["Matrix"])
    }))

  it.effect("the role is read on every request: a member demoted mid-session is refused on its next request", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const headers = headersOf(w.cookie, { "x-csrf-token": w.csrf })
      const create = (domain: string) =>
        h.raw("POST", "/app/api/websites", {
          token: null,
          headers,
          body: { name: "Role", domain, timezone: "UTC", currency: "EUR" }
        })
      expect((yield* create("role-a.example.com")).status).toBe(201)
      yield* setRole(w, "viewer")
      expectError(yield* create("role-b.example.com"), 403, "role_forbidden")
      expectError(
        yield* h.raw("GET", "/app/api/tokens", { token: null, headers }),
        403,
        "role_forbidden"
      )
      expect((yield* h.raw("GET", "/app/api/websites", { token: null, headers })).status).toBe(200)
      // The session's answer says the role as of now (the web app hides what a viewer cannot do).
      const session = yield* h.raw("GET", "/app/api/auth/session", { token: null, headers })
      expect(session.json.data.role).toBe("viewer")
      // The account's owner login (the morning email's addressee) is its owner's alone, never a viewer's.
      const accountId = session.json.data.user.accountId as string
      const owner = yield* h.run(Effect.gen(function*() {
        return yield* (yield* AuthRepo).findUserByAccount(accountId)
      }))
      expect(owner).toBeNull()
      yield* setRole(w, "admin")
      expect((yield* create("role-c.example.com")).status).toBe(201)
      expectError(
        yield* h.raw("POST", "/app/api/account/checkout", { token: null, headers, body: { plan: "monthly" } }),
        403,
        "role_forbidden"
      )
    }))

  describe("the count", () => {
    it("reports how many cells the matrix asserted", () => {
      console.info(`dashboard role matrix (${h.store}): ${sessionEndpoints.length} endpoints × 3 roles; ${cells} cells`)
      expect(cells).toBeGreaterThanOrEqual(3 * sessionEndpoints.length)
    })
  })
})

/** Reads, then changes, then the caller's own sessions, then logging out, then revoking the ended session. */
const rank = (e: { readonly key: string; readonly method: string }) =>
  e.key === "auth.revokeSession"
    ? 5
    : e.key === "auth.logOut"
    ? 4
    : e.key.startsWith("auth.")
    ? 3
    : STATE_CHANGING.has(e.method)
    ? 2
    : 1
