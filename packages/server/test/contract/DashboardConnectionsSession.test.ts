/**
 * The connections group inside the real app, behind the real dashboard middleware: a session cookie from a
 * real log-in, the Origin check and the CSRF token; /api/v1 still refuses to connect or disconnect (403
 * `dashboard_only`). The group's own behaviour is DashboardConnections.test.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { type FakePlausible, startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { Context, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { readConfig } from "../../src/platform/Config.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
const KEY = "plausible-key-TOPSECRET-session"
const SITE = "shop.example.com"

class Plausible extends Context.Service<Plausible, FakePlausible>()("test/Plausible") {
  static readonly layer = Layer.effect(
    Plausible,
    Effect.acquireRelease(
      Effect.promise(() =>
        startFakePlausible({
          apiKey: KEY,
          siteId: SITE,
          data: { days: {}, hours: {}, pages: [], sources: [], uniques: {} }
        })
      ),
      (f) => Effect.promise(() => f.close())
    )
  )
}

const App = Layer.unwrap(Effect.gen(function*() {
  const plausible = yield* Plausible
  const base = readConfig({})
  return TestApp.layer({
    secretKey: Redacted.make(Buffer.alloc(32, 9).toString("base64")),
    connections: { ...base.connections, plausibleApiBase: plausible.url }
  })
})).pipe(Layer.provideMerge(Plausible.layer))

let counter = 0

/** A verified user of a fresh account, logged in: its cookie and CSRF token, and one website. */
const owner = Effect.gen(function*() {
  const email = `conn-${Date.now().toString(36)}-${counter++}@example.test`
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
  yield* TestClock.adjust("1 minute")
  const login = yield* h.raw("POST", "/app/api/auth/login", {
    token: null,
    headers: ORIGIN,
    body: { email, password: PASSWORD }
  })
  expect(login.status, login.text).toBe(200)
  const cookie = `sitehealth_session=${/sitehealth_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")![1]}`
  const write = { ...ORIGIN, cookie, "x-csrf-token": login.json.data.csrfToken as string }
  const site = yield* h.raw("POST", "/app/api/websites", {
    token: null,
    headers: write,
    body: { name: "Shop", domain: `shop${counter}.example.com`, timezone: "UTC", currency: "EUR" }
  })
  expect(site.status, site.text).toBe(201)
  return { read: { cookie }, write, websiteId: site.json.data.id as string }
})

layer(App, { timeout: 60_000 })("Dashboard connections behind the real session", (it) => {
  describe("session, Origin and CSRF", () => {
    it.effect("logged out 401; no CSRF token or a foreign Origin 403; with both, connected — and another account's session gets 404", () =>
      Effect.gen(function*() {
        const me = yield* owner
        const path = `/app/api/websites/${me.websiteId}/connections/plausible`
        const body = { apiKey: KEY, siteId: SITE }
        expectError(yield* h.raw("GET", `/app/api/websites/${me.websiteId}/connections`, { token: null }), 401)
        expectError(yield* h.raw("POST", path, { token: null, headers: ORIGIN, body }), 401)
        expectError(
          yield* h.raw("POST", path, { token: null, headers: { ...me.write, "x-csrf-token": "wrong" }, body }),
          403,
          "csrf_token"
        )
        expectError(
          yield* h.raw("POST", path, { token: null, headers: { ...me.write, origin: "https://evil.example" }, body }),
          403,
          "csrf_origin"
        )
        expect(yield* h.run(Effect.flatMap(IntegrationsRepo, (r) => r.connection(me.websiteId, "plausible"))))
          .toBeNull()

        const ok = yield* h.raw("POST", path, { token: null, headers: me.write, body })
        expect(ok.status, ok.text).toBe(201)
        expect(ok.text).not.toContain(KEY)
        const list = yield* h.raw("GET", `/app/api/websites/${me.websiteId}/connections`, {
          token: null,
          headers: me.read
        })
        expect(list.status, list.text).toBe(200)
        expect(list.json.data.connections[1]).toMatchObject({
          provider: "plausible",
          status: "connected",
          detail: SITE
        })
        expect(list.text).not.toContain(KEY)

        const other = yield* owner
        expectError(
          yield* h.raw("GET", `/app/api/websites/${me.websiteId}/connections`, { token: null, headers: other.read }),
          404
        )
        expectError(
          yield* h.raw("DELETE", `/app/api/websites/${me.websiteId}/connections/plausible`, {
            token: null,
            headers: other.write
          }),
          404
        )
        expectError(
          yield* h.raw("POST", `/app/api/websites/${me.websiteId}/connections/plausible/sync`, {
            token: null,
            headers: other.write
          }),
          404
        )
      }))
  })

  describe("/api/v1 stays out of it", () => {
    it.effect("a bearer token cannot connect or disconnect (403 dashboard_only), nor reach the dashboard's connections (401)", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0]!.id
        expectError(
          yield* h.raw("POST", `/api/v1/projects/${id}/integrations/plausible`, {
            token: secret,
            body: { apiKey: KEY, siteId: SITE }
          }),
          403,
          "dashboard_only"
        )
        expectError(
          yield* h.raw("DELETE", `/api/v1/projects/${id}/integrations/plausible`, { token: secret }),
          403,
          "dashboard_only"
        )
        expectError(yield* h.raw("GET", `/app/api/websites/${id}/connections`, { token: secret }), 401)
      }))
  })
})
