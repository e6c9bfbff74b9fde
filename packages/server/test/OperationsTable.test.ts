/**
 * Every endpoint of SiteHealthApi carries its `Operation` annotation (a missing one would otherwise be
 * refused at run time), each is coherent with its endpoint, and the auth middleware denies by default: an
 * endpoint without one — added to the contract without it — is refused with 403 `operation_not_allowed`
 * instead of being let through with no permission check.
 */
import { operationOf, operations, SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "@sitehealth/domain/Middleware"
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { createAccount, mintToken } from "../src/accounts/Provisioning.ts"
import { AccessMiddlewareLive } from "../src/http/Middleware.ts"
import { RateLimiter } from "../src/http/RateLimiter.ts"
import { MemoryRepos } from "../src/Layers.ts"

/** Every endpoint of the contract as [group, name, method, path]. */
const contractEndpoints = () =>
  Object.values(SiteHealthApi.groups).flatMap((group) =>
    Object.values(group.endpoints).map((e) => [group.identifier, e.identifier, e.method, e.path] as const)
  )

describe("Operation annotations of SiteHealthApi", () => {
  it("every endpoint of the contract carries an Operation annotation", () => {
    const endpoints = Object.values(SiteHealthApi.groups).flatMap((group) => Object.values(group.endpoints))
    const names = endpoints.map((e) => e.identifier)
    expect(names.length).toBeGreaterThan(0)
    expect(new Set(names).size).toBe(names.length)
    const missing = endpoints.filter((e) => operationOf(e) === undefined).map((e) => e.identifier)
    expect(missing, "endpoints without an Operation annotation (they would get 403 operation_not_allowed)").toEqual([])
    expect(operations.map(([name]) => name)).toEqual(names)
  })

  it("CLI commands and MCP tools are named once each, and dashboard-only endpoints have neither", () => {
    const cli = operations.flatMap(([, op]) => (op.cli === null ? [] : [op.cli.join(" ")]))
    const mcp = operations.flatMap(([, op]) => (op.mcp === null ? [] : [op.mcp]))
    expect(new Set(cli).size).toBe(cli.length)
    expect(new Set(mcp).size).toBe(mcp.length)
    for (const [name, op] of operations) {
      if (op.kind === "dashboard_only") {
        expect({ name, cli: op.cli, mcp: op.mcp }).toEqual({ name, cli: null, mcp: null })
      }
      if (op.mcp !== null) expect(op.mcp, name).toMatch(/^[a-z]+(_[a-z]+)*$/)
    }
  })

  it("each annotation is coherent: a known permission or null exactly when dashboard-only, and project matches the path", () => {
    const byName = new Map(contractEndpoints().map(([, name, method, path]) => [name, { method, path }]))
    for (const [name, op] of operations) {
      const endpoint = byName.get(name)!
      expect(op.permission === null, name).toBe(op.kind === "dashboard_only")
      if (op.permission !== null) expect([...PERMISSIONS, "authenticated"], name).toContain(op.permission)
      // `project` drives the single lookup's project join: it must be true exactly when the path names one.
      expect(op.project, `${name} ${endpoint.path}`).toBe(/^\/api\/v1\/projects\/:id(\/|$)/.test(endpoint.path))
      // A read never changes anything: GET only; every GET is a read.
      expect(op.kind === "read", `${name} ${endpoint.method}`).toBe(endpoint.method === "GET")
      if (op.confirmGate) expect(op.kind === "write" || op.kind === "destructive", name).toBe(true)
      expect(op.summary.length, name).toBeGreaterThan(0)
    }
  })
})

/** A contract with one endpoint that carries no Operation annotation, behind the real middleware. */
class ProbeGroup extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("unlistedProbe", "/probe", { success: Schema.Struct({ reached: Schema.Boolean }) })
) {}
class ProbeApi extends HttpApi.make("probe").add(ProbeGroup)
  .middleware(TokenUsage).middleware(ProjectAccess).middleware(Entitlement).middleware(RateLimit).middleware(
    Authentication
  )
{}

describe("deny by default", () => {
  it("an endpoint without an Operation annotation answers 403 operation_not_allowed and its handler never runs", async () => {
    let reached = 0
    const scope = Effect.runSync(Scope.make())
    // The repositories are built once and shared by the app and the minting below (as test/support/TestApp.ts does).
    const context = await Effect.runPromise(
      Layer.buildWithScope(Layer.mergeAll(MemoryRepos, RateLimiter.memory(60)), scope) as Effect.Effect<
        Context.Context<any>
      >
    )
    const handlers = HttpApiBuilder.group(
      ProbeApi,
      "probe",
      (h) => h.handle("unlistedProbe", () => Effect.sync(() => (reached++, { reached: true })))
    )
    const app = HttpApiBuilder.layer(ProbeApi).pipe(
      Layer.provide(handlers),
      Layer.provide(AccessMiddlewareLive),
      Layer.provide(Layer.succeedContext(context)),
      Layer.provide(HttpServer.layerServices)
    )
    const { dispose, handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true })
    try {
      const { secret } = await Effect.runPromise(
        Effect.gen(function*() {
          const account = yield* createAccount({ name: "probe" })
          return yield* mintToken({ accountId: account.id, permissions: [...PERMISSIONS] })
        }).pipe(Effect.provideContext(context)) as Effect.Effect<{ secret: string }>
      )
      const get = (token: string | null) =>
        handler(
          new Request("http://localhost/probe", token === null ? {} : { headers: { authorization: `Bearer ${token}` } })
        )
      // With every permission: refused, and in the envelope.
      const r = await get(secret)
      expect(r.status).toBe(403)
      expect(await r.json()).toEqual({
        status: "error",
        error: {
          code: 403,
          message: "The operation unlistedProbe is not allowed through the API",
          type: "operation_not_allowed"
        }
      })
      // Authentication still comes first: no token is 401, not 403.
      expect((await get(null)).status).toBe(401)
    } finally {
      await dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    expect(reached).toBe(0)
  })
})
