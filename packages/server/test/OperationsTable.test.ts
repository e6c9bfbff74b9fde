/**
 * The operation table and the contract stay in step, and the auth middleware denies by default: every
 * endpoint of SiteHealthApi has an entry in OPERATIONS and every entry names an endpoint (a typo in
 * either would otherwise silently drop a permission check or leave a dead row), and an endpoint that has
 * no entry — one added to the contract without its row — is refused with 403 `operation_not_allowed`
 * instead of being let through with no permission check.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import { OPERATIONS, PERMISSIONS, type Operation } from "@sitehealth/domain/Permissions"
import { createAccount, mintToken } from "../src/accounts/Provisioning.ts"
import { AuthenticationLive } from "../src/http/Authentication.ts"
import { RateLimiter } from "../src/http/RateLimiter.ts"
import { MemoryRepos } from "../src/Layers.ts"

/** Every endpoint of the contract as [group, name, method, path]. */
const contractEndpoints = () =>
  Object.values(SiteHealthApi.groups).flatMap((group) =>
    Object.values(group.endpoints).map((e) => [group.identifier, e.identifier, e.method, e.path] as const)
  )

describe("OPERATIONS ↔ SiteHealthApi", () => {
  it("every endpoint of the contract has an entry, and every entry is an endpoint", () => {
    const names = contractEndpoints().map(([, name]) => name)
    expect(names.length).toBeGreaterThan(0)
    expect(new Set(names).size).toBe(names.length)
    const missing = names.filter((n) => !Object.hasOwn(OPERATIONS, n))
    const stale = Object.keys(OPERATIONS).filter((n) => !names.includes(n))
    expect(missing, "endpoints without an OPERATIONS entry (they would get 403 operation_not_allowed)").toEqual([])
    expect(stale, "OPERATIONS entries that name no endpoint").toEqual([])
  })

  it("each entry is coherent: a known permission or null exactly when dashboard-only, and project matches the path", () => {
    const byName = new Map(contractEndpoints().map(([, name, method, path]) => [name, { method, path }]))
    for (const [name, op] of Object.entries(OPERATIONS) as Array<[string, Operation]>) {
      const endpoint = byName.get(name)!
      expect(op.permission === null, name).toBe(op.kind === "dashboard_only")
      if (op.permission !== null) expect(PERMISSIONS, name).toContain(op.permission)
      // `project` drives the single lookup's project join: it must be true exactly when the path names one.
      expect(op.project, `${name} ${endpoint.path}`).toBe(/^\/api\/v1\/projects\/:id(\/|$)/.test(endpoint.path))
      // A read never changes anything: GET only; every GET is a read.
      expect(op.kind === "read", `${name} ${endpoint.method}`).toBe(endpoint.method === "GET")
      if (op.confirmGate) expect(op.kind === "write" || op.kind === "destructive", name).toBe(true)
      expect(op.summary.length, name).toBeGreaterThan(0)
    }
  })
})

/** A contract with one endpoint that the operation table does not list, behind the real middleware. */
class ProbeGroup extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("unlistedProbe", "/probe", { success: Schema.Struct({ reached: Schema.Boolean }) })
) {}
class ProbeApi extends HttpApi.make("probe").add(ProbeGroup).middleware(Authentication) {}

describe("deny by default", () => {
  // Live: the web handler runs on the real clock, so the account's trial must be minted on it too.
  it.live("an endpoint without an OPERATIONS entry answers 403 operation_not_allowed and its handler never runs", () =>
    Effect.gen(function*() {
      let reached = 0
      // The repositories are built once and shared by the app and the minting below (as test/support/Harness.ts does).
      const context = yield* Layer.build(Layer.mergeAll(MemoryRepos, RateLimiter.memory(60)))
      const handlers = HttpApiBuilder.group(ProbeApi, "probe", (h) =>
        h.handle("unlistedProbe", () => Effect.sync(() => (reached++, { reached: true }))))
      const app = HttpApiBuilder.layer(ProbeApi).pipe(
        Layer.provide(handlers),
        Layer.provide(AuthenticationLive),
        Layer.provide(Layer.succeedContext(context)),
        Layer.provide(HttpServer.layerServices)
      )
      const { dispose, handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true })
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const { secret } = yield* Effect.gen(function*() {
        const account = yield* createAccount({ name: "probe" })
        return yield* mintToken({ accountId: account.id, permissions: [...PERMISSIONS] })
      }).pipe(Effect.provideContext(context))
      const get = (token: string | null) =>
        Effect.promise(() => handler(new Request("http://localhost/probe", token === null ? {} : { headers: { authorization: `Bearer ${token}` } })))
      // With every permission: refused, and in the envelope.
      const r = yield* get(secret)
      expect(r.status).toBe(403)
      expect(yield* Effect.promise(() => r.json())).toEqual({
        status: "error",
        error: { code: 403, message: "The operation unlistedProbe is not allowed through the API", type: "operation_not_allowed" }
      })
      // Authentication still comes first: no token is 401, not 403.
      expect((yield* get(null)).status).toBe(401)
      expect(reached).toBe(0)
    }))
})
