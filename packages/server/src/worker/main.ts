/**
 * `npm run worker`: the recompute worker as its own process, on the database in DATABASE_URL (or the
 * embedded cluster in SITEHEALTH_DATA_DIR, attached to when a running server owns it). Any number of
 * these, and the servers' in-process workers, can run together: projects are claimed with
 * FOR UPDATE SKIP LOCKED. Run the server with SITEHEALTH_WORKER=off to leave the work to these.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import { AppConfig, readConfig } from "../Config.ts"
import { pgLayer, resolveDatabaseUrl, runMigrations } from "../db/Database.ts"
import { SqlRepos } from "../Layers.ts"
import { runWorker } from "./RecomputeWorker.ts"

const config = (() => {
  try {
    return readConfig()
  } catch (e) {
    process.stderr.write(`sitehealth worker: ${(e as Error).message}\n`)
    process.exit(1)
  }
})()

const program = Effect.gen(function*() {
  const database = yield* resolveDatabaseUrl
  const context = yield* Layer.build(SqlRepos.pipe(Layer.provideMerge(pgLayer(database.url))))
  yield* runMigrations.pipe(Effect.provideContext(context))
  return yield* runWorker.pipe(Effect.provideContext(context))
}).pipe(
  Effect.scoped,
  Effect.provideService(AppConfig, config),
  Effect.catchCause((cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    const error = Cause.squash(cause) as { message?: string; cause?: { message?: string } } | undefined
    return Effect.sync(() => {
      process.stderr.write(`sitehealth worker: stopped: ${error?.cause?.message ?? error?.message ?? String(error)}\n`)
      process.exit(1)
    })
  })
)

NodeRuntime.runMain(program as Effect.Effect<never, unknown>)
