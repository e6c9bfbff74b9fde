/**
 * One app per test file, over the store the project selects (memory or postgres), called through the
 * real HTTP stack (routing, middleware, envelope) as a web handler. Time is a controllable clock so
 * rate-limit windows and expiries are deterministic.
 *
 * The Promise-based harness of the unit tests that still use it; the contract suite runs on its Effect
 * counterpart, support/TestApp.ts (@effect/vitest layers, TestClock, the typed HttpApiClient).
 */
import { Clock, Duration, Effect, Layer, Redacted, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { inject } from "vitest"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { createAccount, createProject, mintToken } from "../../src/accounts/Provisioning.ts"
import { ROUTER_CONFIG } from "../../src/App.ts"
import { readConfig, type AppConfigShape } from "../../src/Config.ts"
import { pgLayer } from "../../src/db/Database.ts"
import { appLayer, MemoryRepos, SqlRepos } from "../../src/Layers.ts"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import type { Permission } from "@sitehealth/domain/Permissions"

export const store = (process.env.SITEHEALTH_TEST_STORE ?? "memory") as "memory" | "postgres"

/** A clock whose time the test sets; sleeping still takes real time. */
export const makeTestClock = (startMs: number) => {
  let now = startMs
  const real = Clock.Clock.defaultValue()
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => now,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (d: Duration.Duration) => real.sleep(d)
  }
  return {
    clock,
    now: () => now,
    set: (ms: number) => void (now = ms),
    advance: (ms: number) => void (now += ms)
  }
}

export interface CallOptions {
  readonly token?: string | null
  readonly body?: unknown
  /** Sent as is (for malformed JSON and the like). */
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

export interface CallResult {
  readonly status: number
  readonly headers: Headers
  readonly json: any
  readonly text: string
}

/** 30 seconds into a UTC minute, so 60 quick requests never straddle a rate-limit window. */
export const START = Date.parse("2026-11-20T12:00:30.000Z")

export const makeHarness = async (
  overrides: Partial<AppConfigShape> = {},
  options: { readonly repos?: Layer.Layer<any, any> } = {}
) => {
  const time = makeTestClock(START)
  // Rate-limit counters go to Redis when REDIS_URL is set, as in production; else memory.
  const config: AppConfigShape = { ...readConfig({}), redisUrl: process.env.REDIS_URL === undefined ? null : Redacted.make(process.env.REDIS_URL), ...overrides }
  const repos: Layer.Layer<any, any> = options.repos ?? (store === "memory"
    ? MemoryRepos
    : SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl")))))
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(repos, scope).pipe(Effect.provideService(Clock.Clock, time.clock)) as Effect.Effect<any>
  )
  const app = appLayer(config, Layer.succeedContext(context)).pipe(
    Layer.provide(HttpServer.layerServices),
    Layer.provide(Layer.succeed(Clock.Clock, time.clock))
  )
  const { dispose, handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true, routerConfig: ROUTER_CONFIG })

  const run = <A>(effect: Effect.Effect<A, any, any>): Promise<A> =>
    Effect.runPromise(
      effect.pipe(Effect.provideContext(context), Effect.provideService(Clock.Clock, time.clock)) as Effect.Effect<A>
    )

  let defaultToken: string | null = null

  const call = async (method: string, path: string, options: CallOptions = {}): Promise<CallResult> => {
    const token = options.token === undefined ? defaultToken : options.token
    const headers: Record<string, string> = { ...options.headers }
    if (token !== null) headers.authorization = `Bearer ${token}`
    let body: string | undefined
    if (options.rawBody !== undefined) body = options.rawBody
    else if (options.body !== undefined) body = JSON.stringify(options.body)
    if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
    return callResultOf(await handler(new Request(`http://localhost${path}`, { method, headers, ...(body === undefined ? {} : { body }) })))
  }

  /** A fresh account (trial live) with `projects` projects and an all-access token. */
  const newAccount = async (options: { readonly projects?: number; readonly trialDays?: number } = {}) => {
    const account = await run(createAccount({ name: "Test account", trialDays: options.trialDays ?? 14 }))
    const projects = []
    for (let i = 0; i < (options.projects ?? 1); i++) {
      projects.push(await run(createProject({ accountId: account.id, name: `Site ${i}`, domain: `site${i}.example` })))
    }
    const { secret, token } = await run(mintToken({ accountId: account.id, name: "root" }))
    return { account, projects, token, secret }
  }

  const mint = (
    accountId: string,
    options: { projects?: ReadonlyArray<string> | null; permissions?: ReadonlyArray<Permission>; expiresAt?: Date | null } = {}
  ) => run(mintToken({ accountId, ...options }))

  const endTrial = (accountId: string) =>
    run(Effect.flatMap(AccountsRepo, (a) => a.setTrial(accountId, new Date(time.now() - 1000))))

  const setSubscription = (accountId: string, status: "none" | "active" | "canceled", until: Date | null) =>
    run(Effect.flatMap(AccountsRepo, (a) => a.setSubscription(accountId, status, until)))

  const metrics = () => run(MetricsRepo)

  return {
    store,
    time,
    call,
    run,
    newAccount,
    mint,
    endTrial,
    setSubscription,
    metrics,
    useToken: (secret: string | null) => void (defaultToken = secret),
    close: async () => {
      await dispose()
      await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as any))
    }
  }
}

export type Harness = Awaited<ReturnType<typeof makeHarness>>

/** Every endpoint of the contract, with a path for the given project, for sweeping rules across all. */
export const allEndpoints = (projectId: string) => [
  ["GET", "/api/v1/projects"],
  ["GET", `/api/v1/projects/${projectId}/health`],
  ["GET", `/api/v1/projects/${projectId}/briefing`],
  ["GET", `/api/v1/projects/${projectId}/signals`],
  ["GET", `/api/v1/projects/${projectId}/analytics?period=7d`],
  ["GET", `/api/v1/projects/${projectId}/revenue`],
  ["GET", `/api/v1/projects/${projectId}/churn`],
  ["GET", `/api/v1/projects/${projectId}/seo`],
  ["GET", `/api/v1/projects/${projectId}/integrations`],
  ["POST", `/api/v1/projects/${projectId}/integrations/stripe/sync`],
  ["GET", `/api/v1/projects/${projectId}/expenses`],
  ["POST", `/api/v1/projects/${projectId}/expenses`],
  ["DELETE", `/api/v1/projects/${projectId}/expenses/exp_x`],
  ["GET", "/api/v1/tokens"],
  ["GET", "/api/v1/tokens/current"],
  ["POST", "/api/v1/tokens"],
  ["DELETE", "/api/v1/tokens/tok_x"],
  ["DELETE", `/api/v1/projects/${projectId}`],
  ["POST", `/api/v1/projects/${projectId}/integrations/stripe`],
  ["DELETE", `/api/v1/projects/${projectId}/integrations/stripe`]
] as const

/** A response as the tests read it: status, headers, the text, and its JSON (undefined when it is not JSON). */
export const callResultOf = async (response: Response) => {
  const text = await response.text()
  let json: any = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // left undefined: tests that expect JSON fail on it
  }
  return { status: response.status, headers: response.headers, json, text }
}
