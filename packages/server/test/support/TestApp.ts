/**
 * The contract suite's app, as an Effect service for `@effect/vitest`: one app per test file (shared with
 * `layer(TestApp.layer())`), over the store the project selects (memory or postgres), called through the
 * real HTTP stack (routing, middleware, envelope) as an in-process web handler.
 *
 * Requests go through the typed `HttpApiClient` derived from the contract (`h.api.<group>.<endpoint>`), so
 * params, query and payload are checked against `SiteHealthApi` at compile time and encoded by its schemas.
 * The client is run in "response-only" mode: the tests assert on the wire (status, headers, the envelope's
 * JSON), which decoding would hide. `h.raw` sends what the typed client cannot: malformed JSON, bodies the
 * contract rejects, unknown paths and methods, routes outside /api/v1 (health, metrics, /mcp).
 *
 * Time is `TestClock`: the app reads the test's clock (so `TestClock.adjust`/`setTime` move rate-limit
 * windows, expiries and `computedAt`), while the app's own sleeps (pool timeouts, background writes) take
 * real time, since no test drives them.
 */
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import type { Permission } from "@sitehealth/domain/Permissions"
import { Clock, Console, Context, Duration, Effect, Layer, Option, Redacted, Scope } from "effect"
import { FetchHttpClient, HttpClientRequest, HttpRouter, HttpServer, HttpServerRequest } from "effect/http"
import type { HttpClientResponse } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { TestClock } from "effect/testing"
import { inject } from "vitest"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { createAccount, createProject, mintToken } from "../../src/accounts/Provisioning.ts"
import { ROUTER_CONFIG } from "../../src/App.ts"
import { appLayer, MemoryRepos, SqlRepos } from "../../src/Layers.ts"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { type AppConfigShape, readConfig } from "../../src/platform/Config.ts"
import { pgLayer } from "../../src/platform/Database.ts"

/** The store the test project selects (vitest.workspace.ts): the in-memory repositories or PostgreSQL. */
export const store = (process.env.SITEHEALTH_TEST_STORE ?? "memory") as "memory" | "postgres"

/** 30 seconds into a UTC minute, so 60 quick requests never straddle a rate-limit window. */
export const START = Date.parse("2026-11-20T12:00:30.000Z")

/** A response as the tests read it: status, headers, the text, and its JSON (undefined when it is not JSON). */
export interface CallResult {
  readonly status: number
  readonly headers: Headers
  readonly json: any
  readonly text: string
}

const parseJson = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined // tests that expect JSON fail on it
  }
}

export const callResultOf = async (response: Response): Promise<CallResult> => {
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: parseJson(text), text }
}

/** The routes under /projects/{id} that take no body, for sweeping scope rules across them. */
export const projectRoutes = (projectId: string) =>
  [
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
    ["DELETE", `/api/v1/projects/${projectId}/expenses/exp_x`]
  ] as const

/** Every endpoint of the contract, with a path for the given project, for sweeping rules across all. */
export const allEndpoints = (projectId: string) =>
  [
    ["GET", "/api/v1/projects"],
    ...projectRoutes(projectId),
    ["POST", `/api/v1/projects/${projectId}/expenses`],
    ["GET", "/api/v1/tokens"],
    ["GET", "/api/v1/tokens/current"],
    ["POST", "/api/v1/tokens"],
    ["DELETE", "/api/v1/tokens/tok_x"],
    ["DELETE", `/api/v1/projects/${projectId}`],
    ["POST", `/api/v1/projects/${projectId}/integrations/stripe`],
    ["DELETE", `/api/v1/projects/${projectId}/integrations/stripe`],
    // The webhooks group (docs/alerts.md).
    ["GET", `/api/v1/projects/${projectId}/webhooks`],
    ["POST", `/api/v1/projects/${projectId}/webhooks`],
    ["GET", `/api/v1/projects/${projectId}/webhooks/whk_x`],
    ["PATCH", `/api/v1/projects/${projectId}/webhooks/whk_x`],
    ["DELETE", `/api/v1/projects/${projectId}/webhooks/whk_x`],
    ["POST", `/api/v1/projects/${projectId}/webhooks/whk_x/test`],
    ["GET", `/api/v1/projects/${projectId}/webhooks/whk_x/deliveries`],
    ["POST", `/api/v1/projects/${projectId}/webhooks/whk_x/deliveries/whd_x/redeliver`],
    // The annotations group (docs/api.md).
    ["GET", `/api/v1/projects/${projectId}/annotations`],
    ["POST", `/api/v1/projects/${projectId}/annotations`],
    ["PATCH", `/api/v1/projects/${projectId}/annotations/ann_x`],
    ["DELETE", `/api/v1/projects/${projectId}/annotations/ann_x`]
  ] as const

/** Per request: the bearer token (null: none) and extra headers (e.g. Idempotency-Key). */
export interface RequestOptions {
  readonly token?: string | null
  readonly headers?: Record<string, string>
}

export interface RawOptions extends RequestOptions {
  readonly body?: unknown
  /** Sent as is (for malformed JSON and the like). */
  readonly rawBody?: string
}

type Client = HttpApiClient.ForApi<typeof SiteHealthApi>
type RequestOf<F> = F extends (request: infer Q) => any ? Q : never

/** The contract's client, each endpoint answering the raw wire result. */
export type TypedApi = {
  readonly [G in keyof Client]: {
    readonly [E in keyof Client[G]]: (
      request: RequestOf<Client[G][E]>,
      options?: RequestOptions
    ) => Effect.Effect<CallResult>
  }
}

const CurrentRequest = Context.Reference<{ readonly token: string | null; readonly headers: Record<string, string> }>(
  "test/CurrentRequest",
  { defaultValue: () => ({ token: null, headers: {} }) }
)

// The contract marks Authentication as required by clients: this is where the bearer token goes.
const ClientAuthentication = HttpApiMiddleware.layerClient(
  Authentication,
  ({ next, request }) =>
    Effect.flatMap(CurrentRequest, ({ headers, token }) => {
      const withHeaders = HttpClientRequest.setHeaders(request, headers)
      return next(token === null ? withHeaders : HttpClientRequest.bearerToken(withHeaders, token))
    })
)

/**
 * An in-process request has no socket, so no client address: a test names one with this header (taken off the
 * request before the app sees it), as a server would read it from the socket — for the throttling by address.
 */
export const TEST_ADDRESS_HEADER = "x-test-remote-address"
const withTestAddress = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request: HttpServerRequest.HttpServerRequest) => {
    const address = request.headers[TEST_ADDRESS_HEADER]
    if (address === undefined) return effect
    const { [TEST_ADDRESS_HEADER]: _, ...headers } = request.headers
    return Effect.provideService(
      effect,
      HttpServerRequest.HttpServerRequest,
      request.modify({ headers: headers as any, remoteAddress: Option.some(address) })
    )
  })

const toCallResult = (response: Response): Effect.Effect<CallResult> => Effect.promise(() => callResultOf(response))

type Account = Effect.Success<ReturnType<typeof createAccount>>
type Project = Effect.Success<ReturnType<typeof createProject>>
type Minted = Effect.Success<ReturnType<typeof mintToken>>

export interface TestAppShape {
  readonly store: typeof store
  readonly api: TypedApi
  /** A request the typed client cannot send (see the module comment). */
  readonly raw: (method: string, path: string, options?: RawOptions) => Effect.Effect<CallResult>
  /** Runs an effect against the app's repositories, on the test clock. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Effect.Effect<A, E>
  /** A fresh account (trial live) with `projects` projects and an all-access token. */
  readonly newAccount: (
    options?: { readonly projects?: number; readonly trialDays?: number }
  ) => Effect.Effect<{ account: Account; projects: Array<Project>; token: Minted["token"]; secret: string }>
  readonly mint: (
    accountId: string,
    options?: {
      projects?: ReadonlyArray<string> | null
      permissions?: ReadonlyArray<Permission>
      expiresAt?: Date | null
    }
  ) => Effect.Effect<Minted>
  readonly endTrial: (accountId: string) => Effect.Effect<void>
  readonly setSubscription: (
    accountId: string,
    status: "none" | "active" | "canceled",
    until: Date | null
  ) => Effect.Effect<void>
  readonly metrics: Effect.Effect<MetricsRepo["Service"]>
  /** The token sent when a request names none. */
  readonly useToken: (secret: string | null) => Effect.Effect<void>
}

export class TestApp extends Context.Service<TestApp, TestAppShape>()("test/TestApp") {
  /** The file's app; the test clock starts at START. */
  static layer = (
    overrides: Partial<AppConfigShape> = {},
    options: { readonly repos?: Layer.Layer<any, any> } = {}
  ): Layer.Layer<TestApp> =>
    Layer.effect(TestApp, Effect.andThen(TestClock.setTime(START), makeTestApp(overrides, options)))
}

/**
 * Builds an app on the current clock (the shared `TestClock` under `@effect/vitest`), released with the
 * scope. For a second app next to the file's one, use it inside a test.
 */
export const makeTestApp = (
  overrides: Partial<AppConfigShape> = {},
  options: { readonly repos?: Layer.Layer<any, any> } = {}
): Effect.Effect<TestAppShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const testClock = yield* Clock.Clock
    const live = Clock.Clock.defaultValue()
    // Wall time from the test clock; sleeps on the live one, for the app's own timers that no test drives.
    const clock: Clock.Clock = {
      currentTimeMillisUnsafe: () => testClock.currentTimeMillisUnsafe(),
      currentTimeMillis: Effect.sync(() => testClock.currentTimeMillisUnsafe()),
      currentTimeNanosUnsafe: () => BigInt(testClock.currentTimeMillisUnsafe()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(testClock.currentTimeMillisUnsafe()) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: live.monotonicTimeNanos,
      sleep: (d: Duration.Duration) => live.sleep(d)
    }
    // Rate-limit counters go to Redis when REDIS_URL is set, as in production; else memory.
    const config: AppConfigShape = {
      ...readConfig({}),
      redisUrl: process.env.REDIS_URL === undefined ? null : Redacted.make(process.env.REDIS_URL),
      ...overrides
    }
    const repos: Layer.Layer<any, any> = options.repos ?? (store === "memory"
      ? MemoryRepos
      : SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl")))))
    const scope = yield* Scope.Scope
    const context = yield* (Layer.buildWithScope(repos, scope).pipe(
      Effect.provideService(Clock.Clock, clock)
    ) as Effect.Effect<Context.Context<any>>)
    // The clock is merged into the app's context, which the web handler hands to every request: the
    // handlers read it from the request's context (the /api/v1 groups keep none of their own:
    // http/GroupContext.ts).
    const app = appLayer(config, Layer.succeedContext(context)).pipe(
      Layer.provide(HttpServer.layerServices),
      Layer.provideMerge(Layer.succeed(Clock.Clock, clock))
    )
    const { dispose, handler } = HttpRouter.toWebHandler(app as any, {
      disableLogger: true,
      routerConfig: ROUTER_CONFIG,
      middleware: withTestAddress as any
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => dispose()))

    // The real console, as the app has: what the repositories, runners and loggers print is output (and
    // can be captured from stdout), not kept by @effect/vitest's TestConsole.
    const console = Console.Console.defaultValue()
    const run = <A, E>(effect: Effect.Effect<A, E, any>): Effect.Effect<A, E> =>
      effect.pipe(
        Effect.provideContext(context),
        Effect.provideService(Clock.Clock, clock),
        Effect.provideService(Console.Console, console)
      ) as Effect.Effect<A, E>

    let defaultToken: string | null = null
    const tokenOf = (options: RequestOptions) => options.token === undefined ? defaultToken : options.token

    const raw = (method: string, path: string, options: RawOptions = {}) =>
      Effect.suspend(() => {
        const token = tokenOf(options)
        const headers: Record<string, string> = { ...options.headers }
        if (token !== null) headers.authorization = `Bearer ${token}`
        let body: string | undefined
        if (options.rawBody !== undefined) body = options.rawBody
        else if (options.body !== undefined) body = JSON.stringify(options.body)
        if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
        return Effect.promise(() =>
          handler(new Request(`http://localhost${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
        ).pipe(Effect.flatMap(toCallResult))
      })

    // The typed client's transport: the same in-process handler, through fetch's Request/Response.
    const fetchViaHandler = ((input: string | URL | Request, init?: RequestInit) =>
      handler(new Request(input, init))) as typeof globalThis.fetch
    const client = yield* HttpApiClient.make(SiteHealthApi, { baseUrl: "http://localhost" }).pipe(
      Effect.provide(ClientAuthentication),
      Effect.provide(FetchHttpClient.layer),
      Effect.provideService(FetchHttpClient.Fetch, fetchViaHandler)
    )
    const fromClient = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<CallResult> =>
      Effect.map(
        Effect.orDie(response.text),
        (text) => ({
          status: response.status,
          headers: new Headers(response.headers as Record<string, string>),
          json: parseJson(text),
          text
        })
      )
    const api = Object.fromEntries(
      Object.entries(client).map(([group, endpoints]) => [
        group,
        Object.fromEntries(
          Object.entries(endpoints as unknown as Record<string, (request: any) => Effect.Effect<any, any>>).map((
            [name, method]
          ) => [
            name,
            (request: Record<string, unknown> | void, options: RequestOptions = {}) =>
              Effect.suspend(() =>
                method({ ...request, responseMode: "response-only" }).pipe(
                  Effect.orDie,
                  Effect.flatMap(fromClient),
                  Effect.provideService(CurrentRequest, { token: tokenOf(options), headers: options.headers ?? {} })
                )
              )
          ])
        )
      ])
    ) as unknown as TypedApi

    const newAccount: TestAppShape["newAccount"] = (options = {}) =>
      Effect.gen(function*() {
        const account = yield* run(createAccount({ name: "Test account", trialDays: options.trialDays ?? 14 }))
        const projects = []
        for (let i = 0; i < (options.projects ?? 1); i++) {
          projects.push(
            yield* run(createProject({ accountId: account.id, name: `Site ${i}`, domain: `site${i}.example` }))
          )
        }
        const { secret, token } = yield* run(mintToken({ accountId: account.id, name: "root" }))
        return { account, projects, token, secret }
      }).pipe(Effect.orDie)

    return {
      store,
      api,
      raw,
      run,
      newAccount,
      mint: (accountId, options = {}) =>
        Effect.orDie(run(mintToken({ accountId, ...options }))),
      endTrial: (accountId) =>
        Effect.orDie(run(Effect.flatMap(AccountsRepo, (a) =>
          a.setTrial(accountId, new Date(testClock.currentTimeMillisUnsafe() - 1000))))),
      setSubscription: (accountId, status, until) =>
        Effect.orDie(run(Effect.flatMap(AccountsRepo, (a) =>
          a.setSubscription(accountId, status, until)))),
      metrics: run(MetricsRepo),
      useToken: (secret) => Effect.sync(() => void (defaultToken = secret))
    } satisfies TestAppShape
  })

const use = <A, E>(f: (app: TestAppShape) => Effect.Effect<A, E>): Effect.Effect<A, E, TestApp> =>
  Effect.flatMap(TestApp, f)

type Accessed<T> = {
  readonly [G in keyof T]: {
    readonly [E in keyof T[G]]: T[G][E] extends (...args: infer A) => Effect.Effect<infer X, infer Err>
      ? (...args: A) => Effect.Effect<X, Err, TestApp>
      : never
  }
}

const apiAccessor = new Proxy({}, {
  get: (_, group: string) =>
    new Proxy({}, {
      get: (_, endpoint: string) => (...args: Array<any>) => use((app) => (app.api as any)[group][endpoint](...args))
    })
}) as Accessed<TypedApi>

/** The file's `TestApp`, reached from the test's context: `yield* h.api.tokens.listTokens(...)`. */
export const h = {
  store,
  api: apiAccessor,
  raw: (method: string, path: string, options?: RawOptions) => use((app) => app.raw(method, path, options)),
  run: <A, E>(effect: Effect.Effect<A, E, any>) => use((app) => app.run(effect)),
  newAccount: (options?: Parameters<TestAppShape["newAccount"]>[0]) => use((app) => app.newAccount(options)),
  mint: (...args: Parameters<TestAppShape["mint"]>) => use((app) => app.mint(...args)),
  endTrial: (accountId: string) => use((app) => app.endTrial(accountId)),
  setSubscription: (...args: Parameters<TestAppShape["setSubscription"]>) => use((app) => app.setSubscription(...args)),
  metrics: use((app) => app.metrics),
  useToken: (secret: string | null) => use((app) => app.useToken(secret)),
  /** The test clock's time, in milliseconds. */
  now: Clock.currentTimeMillis
}
