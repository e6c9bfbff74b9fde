/**
 * `npm start`: migrate, seed the demo account on a fresh embedded database, and serve the API on
 * HOST:PORT (127.0.0.1:8787 by default).
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { createServer } from "node:http"
import { AccountsRepo } from "./accounts/AccountsRepo.ts"
import { OPENAPI_PATH, ROUTER_CONFIG } from "./App.ts"
import { AppConfig, readConfig } from "./Config.ts"
import { pgLayer, resolveDatabaseUrl, runMigrations } from "./db/Database.ts"
import { seedDemo, writeDemoToken } from "./demo/Seed.ts"
import { resolveSecretKey } from "./integrations/Crypto.ts"
import { appLayer, SqlRepos } from "./Layers.ts"
import { runWorker } from "./worker/RecomputeWorker.ts"

const config = (() => {
  try {
    return readConfig()
  } catch (e) {
    process.stderr.write(`sitehealth: ${(e as Error).message}\n`)
    process.exit(1)
  }
})()

// Integration credentials are encrypted with this key; without one (an external DATABASE_URL and no
// SITEHEALTH_SECRET_KEY) the server refuses to start rather than fail later inside the sync worker.
try {
  resolveSecretKey(config)
} catch (e) {
  process.stderr.write(`sitehealth: ${(e as Error).message}\n`)
  process.exit(1)
}

const program = Effect.gen(function*() {
  const database = yield* resolveDatabaseUrl
  const repos = SqlRepos.pipe(Layer.provideMerge(pgLayer(database.url)))
  const context = yield* Layer.build(repos)

  yield* runMigrations.pipe(Effect.provideContext(context))
  if (database.kind === "embedded") {
    const accounts = yield* Effect.provideContext(AccountsRepo, context)
    if ((yield* accounts.count()) === 0) {
      const demo = yield* seedDemo().pipe(Effect.provideContext(context))
      const file = writeDemoToken(config.dataDir, demo.secret)
      process.stdout.write(
        [
          "",
          "  A demo account with 3 projects and a year of history was created.",
          "  Demo token (all access, shown once; also saved to " + file + "):",
          "",
          `    ${demo.secret}`,
          "",
          `  Try: curl -H "Authorization: Bearer $(cat ${file})" http://${config.host}:${config.port}/api/v1/projects`,
          ""
        ].join("\n") + "\n"
      )
    }
  }

  // The recompute worker runs in the server unless SITEHEALTH_WORKER=off (then run `npm run worker`).
  if (process.env.SITEHEALTH_WORKER !== "off") yield* Effect.forkScoped(runWorker.pipe(Effect.provideContext(context)))

  const server = HttpRouter.serve(appLayer(config, Layer.succeedContext(context)), { disableLogger: true, routerConfig: ROUTER_CONFIG }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
  )
  yield* Effect.logInfo(
    `sitehealth: serving http://${config.host}:${config.port}/api/v1 (OpenAPI: ${OPENAPI_PATH}, rate limit ${config.rateLimit}/min per token, ${config.redisUrl ? "redis" : "in-memory"} counters)`
  )
  return yield* Layer.launch(server)
}).pipe(
  Effect.scoped,
  Effect.provideService(AppConfig, config),
  // A failure to start (port taken, database unreachable) is one clear line, not a stack trace.
  Effect.catchCause((cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    const error = Cause.squash(cause) as { message?: string; cause?: { message?: string } } | undefined
    const reason = error?.cause?.message ?? error?.message ?? String(error)
    return Effect.sync(() => {
      process.stderr.write(`sitehealth: stopped: ${reason}\n`)
      process.exit(1)
    })
  })
)

// The router layer's request-scoped requirements are all met above; its type does not narrow to never.
NodeRuntime.runMain(program as Effect.Effect<never, unknown>)
