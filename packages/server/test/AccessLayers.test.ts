/**
 * One layer per concern: each access middleware (Authentication, RateLimit, Entitlement, ProjectAccess,
 * TokenUsage) and Freshness swapped alone for its test layer while the rest of the app stays live, over the
 * in-memory repositories and the real HTTP stack. Also: the order the middlewares run in is the reverse of
 * the order they are declared in (the framework's rule the contract relies on), checked on a probe API and
 * on SiteHealthApi itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication, Idempotency, type Principal, RequestErrors } from "@sitehealth/domain/Authentication"
import type { AccountId, ProjectId, TokenId } from "@sitehealth/domain/Common"
import { Forbidden } from "@sitehealth/domain/Errors"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "@sitehealth/domain/Middleware"
import { type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware } from "effect/http-api"
import { TestClock } from "effect/testing"
import { createAccount, createProject, mintToken } from "../src/accounts/Provisioning.ts"
import { type AppOverrides, ROUTER_CONFIG } from "../src/App.ts"
import { AuthenticationTest } from "../src/http/Authentication.ts"
import { EntitlementTest } from "../src/http/Entitlement.ts"
import { ProjectAccessTest } from "../src/http/ProjectAccess.ts"
import { RateLimitTest } from "../src/http/RateLimit.ts"
import { TokenUsageTest } from "../src/http/TokenUsage.ts"
import { appLayer, MemoryRepos } from "../src/Layers.ts"
import { readConfig } from "../src/platform/Config.ts"
import { Freshness } from "../src/recompute/Freshness.ts"
import { TokensRepo } from "../src/tokens/TokensRepo.ts"

/** Mid-minute, so a run of requests never straddles a rate-limit window. */
const START = Date.parse("2026-11-20T12:00:30.000Z")

/** The envelope of an answer, as far as these tests read it. */
interface Envelope {
  readonly data?: { readonly score?: number | null }
  readonly error?: {
    readonly code: number | string
    readonly message: string
    readonly type: string
    readonly permission?: string
  }
}

/** The memory repositories, on the test's clock. */
const buildRepos = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  return yield* Layer.build(MemoryRepos)
})

type Repos = Effect.Success<typeof buildRepos>

/** The whole app over `repos` with the given layers swapped in, as a web handler; answers parsed. */
const serve = (repos: Repos, overrides: AppOverrides) =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const app = appLayer({ ...readConfig({}), redisUrl: null }, Layer.succeedContext(repos), overrides).pipe(
      Layer.provide(HttpServer.layerServices),
      // Merged into the app's context, which the web handler hands to every request (the /api/v1 groups
      // keep no services of their own beyond their middlewares: http/GroupContext.ts).
      Layer.provideMerge(Layer.succeed(Clock.Clock, clock))
    )
    const { dispose, handler } = HttpRouter.toWebHandler(app, { disableLogger: true, routerConfig: ROUTER_CONFIG })
    yield* Effect.addFinalizer(() => Effect.promise(dispose))
    return (method: string, path: string, token: string | null) =>
      Effect.promise(async () => {
        const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` }
        // The app needs nothing per request beyond what its layers built; its type says `any` only because
        // App.ts's SafetyNet is typed over any requirement.
        const response = await handler(
          new Request(`http://localhost/api/v1${path}`, { method, headers }),
          Context.empty() as Context.Context<unknown>
        )
        const body = (await response.json()) as Envelope
        return { status: response.status, headers: response.headers, body }
      })
  })

/** An account with one project and a token holding `permissions` (all by default). */
const provision = (repos: Repos, permissions: ReadonlyArray<Permission> = PERMISSIONS) =>
  Effect.gen(function*() {
    const account = yield* createAccount({ name: "Layers" })
    const project = yield* createProject({ accountId: account.id, name: "Site", domain: "site.example" })
    const { secret, token } = yield* mintToken({ accountId: account.id, permissions })
    return { account, project, secret, token }
  }).pipe(Effect.provideContext(repos))

const principal = (accountId: AccountId, overrides: Partial<Principal> = {}): Principal => ({
  tokenId: "tok_stub" as TokenId,
  accountId,
  projects: null,
  permissions: [...PERMISSIONS],
  expiresAt: null,
  ...overrides
})

/**
 * The write of last_used_at is detached from the answer: let the app's fibers run (until `done`, at most ~50 turns).
 */
const settled = (done: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 50 && !done(); i++) await new Promise((resolve) => setImmediate(resolve))
  })

const refuseAll = () => ({ allowed: false, limit: 5, remaining: 0, reset: START / 1000 + 30 })

describe("the middlewares run in the reverse of their declaration order", () => {
  class Seen extends Context.Service<Seen, Array<string>>()("test/Seen") {}
  class Inner extends HttpApiMiddleware.Service<Inner>()("test/Inner") {}
  class Middle extends HttpApiMiddleware.Service<Middle>()("test/Middle") {}
  class Outer extends HttpApiMiddleware.Service<Outer>()("test/Outer") {}
  class ProbeGroup extends HttpApiGroup.make("probe")
    .add(HttpApiEndpoint.get("probe", "/probe", { success: Schema.String }).middleware(Inner))
    .middleware(Middle)
  {}
  class ProbeApi extends HttpApi.make("probe").add(ProbeGroup).middleware(Outer) {}

  it.effect("endpoint-level inside group-level inside API-level; each the order it was added", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const recording = (name: string) => (httpEffect: Effect.Effect<any, any, any>) =>
        Effect.andThen(Effect.sync(() => void seen.push(name)), httpEffect)
      const app = HttpApiBuilder.layer(ProbeApi).pipe(
        Layer.provide(
          HttpApiBuilder.group(ProbeApi, "probe", (h) => h.handle("probe", () => Effect.succeed("reached")))
        ),
        Layer.provide([
          Layer.succeed(Inner, recording("inner")),
          Layer.succeed(Middle, recording("middle")),
          Layer.succeed(Outer, recording("outer"))
        ]),
        Layer.provide(Layer.succeed(Seen, seen)),
        Layer.provide(HttpServer.layerServices)
      )
      const { dispose, handler } = HttpRouter.toWebHandler(app, { disableLogger: true })
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const response = yield* Effect.promise(() => handler(new Request("http://localhost/probe")))
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(seen, ["outer", "middle", "inner"])
    }))

  it("SiteHealthApi: Idempotency innermost, then TokenUsage, ProjectAccess, Entitlement, RateLimit, Authentication, RequestErrors", () => {
    const endpoints = Object.values(SiteHealthApi.groups).flatMap((group) => Object.values(group.endpoints))
    const api = [TokenUsage, ProjectAccess, Entitlement, RateLimit, Authentication, RequestErrors].map((m) => m.key)
    for (const endpoint of endpoints) {
      const keys = [...endpoint.middlewares].map((m) => (m as { readonly key: string }).key)
      const expected = endpoint.method === "POST" ? [Idempotency.key, ...api] : api
      assert.deepStrictEqual(keys, expected, endpoint.identifier)
    }
  })
})

describe("RateLimit swapped alone", () => {
  it.effect("a limiter that refuses answers 429 with its headers, before a refusing entitlement, touching nothing", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret } = yield* provision(repos)
      const touched: Array<{ tokenId: TokenId; at: Date }> = []
      const call = yield* serve(repos, {
        access: {
          rateLimit: RateLimitTest(refuseAll),
          entitlement: EntitlementTest(false),
          tokenUsage: TokenUsageTest(touched)
        }
      })
      const r = yield* call("GET", "/tokens", secret)
      assert.strictEqual(r.status, 429)
      assert.strictEqual(r.body.error?.type, "rate_limited")
      assert.strictEqual(r.headers.get("x-ratelimit-limit"), "5")
      assert.strictEqual(r.headers.get("x-ratelimit-remaining"), "0")
      assert.strictEqual(r.headers.get("retry-after"), "30")
      assert.deepStrictEqual(touched, [])
      // Authentication still runs first: no token is a 401 whatever the limiter says.
      assert.strictEqual((yield* call("GET", "/tokens", null)).status, 401)
    }))
})

describe("Entitlement swapped alone", () => {
  it.effect("refusing gives 402 after the live rate limit counted the request; nothing later runs", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret } = yield* provision(repos)
      const touched: Array<{ tokenId: TokenId; at: Date }> = []
      const call = yield* serve(repos, {
        access: {
          entitlement: EntitlementTest(false),
          projectAccess: ProjectAccessTest(() => assert.fail("ProjectAccess ran after a 402")),
          tokenUsage: TokenUsageTest(touched)
        }
      })
      const first = yield* call("GET", "/tokens", secret)
      const second = yield* call("GET", "/tokens", secret)
      assert.deepStrictEqual([first.status, second.status], [402, 402])
      assert.strictEqual(first.body.error?.code, "trial_expired")
      // The live limiter keeps its own count, one per authenticated request (docs/api.md §2, check 2).
      assert.deepStrictEqual(
        [first.headers.get("x-ratelimit-remaining"), second.headers.get("x-ratelimit-remaining")],
        ["59", "58"]
      )
      assert.deepStrictEqual(touched, [])
    }))

  it.effect("allowing lets an account whose trial ended through to the handler", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret } = yield* provision(repos)
      const expired = yield* serve(repos, {})
      yield* TestClock.adjust("15 days")
      assert.strictEqual((yield* expired("GET", "/tokens", secret)).status, 402)
      const entitled = yield* serve(repos, { access: { entitlement: EntitlementTest(true) } })
      assert.strictEqual((yield* entitled("GET", "/tokens", secret)).status, 200)
    }))
})

describe("ProjectAccess with a stub authentication", () => {
  it.effect("403 missing_permission from the operation metadata; then 404 / 403 out of scope from the project", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const mine = yield* provision(repos)
      const other = yield* provision(repos)
      const as = (p: Principal) =>
        serve(repos, { access: { authentication: AuthenticationTest(p), tokenUsage: TokenUsageTest([]) } })

      const reader = yield* as(principal(mine.account.id, { permissions: ["analytics:read"] }))
      const denied = yield* reader("GET", `/projects/${mine.project.id}/health`, "anything")
      assert.strictEqual(denied.status, 403)
      assert.deepStrictEqual([denied.body.error?.type, denied.body.error?.permission], [
        "missing_permission",
        "projects:read"
      ])
      assert.strictEqual((yield* reader("GET", `/projects/${mine.project.id}/health`, null)).status, 401)

      const all = yield* as(principal(mine.account.id))
      const foreign = yield* all("GET", `/projects/${other.project.id}/integrations`, "anything")
      assert.deepStrictEqual([foreign.status, foreign.body.error?.type], [404, "not_found"])

      const scoped = yield* as(principal(mine.account.id, { projects: ["prj_elsewhere" as ProjectId] }))
      const outside = yield* scoped("GET", `/projects/${mine.project.id}/integrations`, "anything")
      assert.deepStrictEqual([outside.status, outside.body.error?.type], [403, "project_out_of_scope"])
      assert.strictEqual((yield* all("GET", `/projects/${mine.project.id}/integrations`, "anything")).status, 200)
    }))

  it.effect("the permission check lives in ProjectAccess alone: its test layer lets a token without permissions through", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret } = yield* provision(repos, [])
      const live = yield* serve(repos, {})
      assert.strictEqual((yield* live("GET", "/tokens", secret)).body.error?.type, "missing_permission")
      const open = yield* serve(repos, { access: { projectAccess: ProjectAccessTest() } })
      assert.strictEqual((yield* open("GET", "/tokens", secret)).status, 200)
      const closed = yield* serve(repos, {
        access: { projectAccess: ProjectAccessTest((name) => new Forbidden({ message: name, type: "test_refusal" })) }
      })
      assert.deepStrictEqual((yield* closed("GET", "/tokens", secret)).body.error, {
        code: 403,
        message: "listTokens",
        type: "test_refusal"
      })
    }))
})

describe("TokenUsage", () => {
  it.effect("swapped alone: a request that passed every check is recorded; a refused one is not", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret, token } = yield* provision(repos, ["tokens:read"])
      const touched: Array<{ tokenId: TokenId; at: Date }> = []
      const call = yield* serve(repos, { access: { tokenUsage: TokenUsageTest(touched) } })
      assert.strictEqual((yield* call("GET", "/projects", secret)).status, 403)
      yield* settled(() => touched.length > 0)
      assert.deepStrictEqual(touched, [])
      assert.strictEqual((yield* call("GET", "/tokens", secret)).status, 200)
      yield* settled(() => touched.length > 0)
      assert.deepStrictEqual(touched, [{ tokenId: token.id, at: new Date(START) }])
    }))

  it.effect("live: last_used_at is written at most once a minute, judged from the value read with the token", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { secret, token } = yield* provision(repos, ["tokens:read"])
      const lastUsed = Effect.map(
        Effect.flatMap(TokensRepo, (tokens) => tokens.findById(token.id)),
        (t) => t?.lastUsedAt?.getTime() ?? null
      ).pipe(Effect.provideContext(repos))
      const call = yield* serve(repos, {})
      const at = (ms: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(ms)
          assert.strictEqual((yield* call("GET", "/tokens", secret)).status, 200)
          yield* settled(() => false)
          return yield* lastUsed
        })
      assert.strictEqual(yield* at(START), START)
      assert.strictEqual(yield* at(START + 59_999), START)
      assert.strictEqual(yield* at(START + 60_000), START + 60_000)
    }))
})

describe("Freshness swapped alone", () => {
  it.effect("the project handlers ask the Freshness service, and serve what it answers", () =>
    Effect.gen(function*() {
      const repos = yield* buildRepos
      const { project, secret } = yield* provision(repos)
      const live = Context.get(
        yield* Layer.build(Freshness.live.pipe(Layer.provide(Layer.succeedContext(repos)))),
        Freshness
      )
      const calls: Array<string> = []
      const recording = Freshness.test({
        ensureHealth: (p) =>
          Effect.andThen(Effect.sync(() => void calls.push(`health ${p.id}`)), live.ensureHealth(p)).pipe(
            // What the service answers is what the handler serves.
            Effect.map((stored) => ({ ...stored, health: { ...stored.health, score: 42 } }))
          ),
        ensureBriefing: (p) =>
          Effect.andThen(Effect.sync(() => void calls.push(`briefing ${p.id}`)), live.ensureBriefing(p))
      })
      const call = yield* serve(repos, { freshness: recording })
      const health = yield* call("GET", `/projects/${project.id}/health`, secret)
      assert.strictEqual(health.status, 200)
      assert.strictEqual(health.body.data?.score, 42)
      assert.strictEqual((yield* call("GET", `/projects/${project.id}/briefing`, secret)).status, 200)
      assert.deepStrictEqual(calls, [`health ${project.id}`, `briefing ${project.id}`])
      // The hot path: the snapshot stored by the first call came with the token lookup and is current, so
      // it is served as stored (the live score, not the stub's) without asking for a recomputation.
      const again = yield* call("GET", `/projects/${project.id}/health`, secret)
      assert.strictEqual(again.status, 200)
      assert.notStrictEqual(again.body.data?.score, 42)
      assert.strictEqual(calls.length, 2)
    }))
})
