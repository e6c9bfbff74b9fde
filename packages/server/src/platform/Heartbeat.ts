/**
 * Worker heartbeats, for /readyz (http/Readiness.ts). Every worker — the server's in-process one or an
 * `npm run worker` — beats on each poll of its recompute loop (and between projects of a long round): the
 * time is kept in this process for the server's own /readyz, and written to `worker_heartbeats`
 * (HeartbeatMigration.ts) for the servers that run no worker (SITEHEALTH_WORKER=0), which report the most
 * recent beat of any worker.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as Os from "node:os"

/** A worker whose last beat is older than this is reported `stale` (the instance is `degraded`, not down). */
export const STALE_AFTER_SECONDS = 60
/** Between projects of one long round, the row is written at most this often. */
export const BEAT_EVERY_MS = 5_000
/** Rows of workers gone for longer than this are deleted when a worker starts. */
const FORGET_AFTER = "1 day"

/** This process's worker: host and pid say where it runs; the suffix tells apart a pid reused in a container. */
export const WORKER_ID = `${Os.hostname()}:${process.pid}:${NodeCrypto.randomBytes(3).toString("hex")}`

/**
 * Epoch ms of the last beat of the worker running in THIS process; null when none runs here (then /readyz
 * reads the table). A module variable, like Readiness's `draining`: set by the worker's fiber, read by the
 * /readyz route, both in this process.
 */
let localBeatMs: number | null = null

export const localHeartbeatMs = (): number | null => localBeatMs

/** Tests only: forget the in-process worker (another test in the same file ran one). */
export const resetLocalHeartbeat = (): void => {
  localBeatMs = null
}

let lastWarningMs = 0

/**
 * Records a beat: in this process at once, then the row (the database's now()). A failed write is logged
 * at most once a minute and does not stop the worker: the round itself fails and says why.
 */
export const beat = Effect.gen(function*() {
  const now = yield* Clock.currentTimeMillis
  localBeatMs = now
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at)
    VALUES (${WORKER_ID}, ${Os.hostname()}, ${process.pid}, now(), now())
    ON CONFLICT (worker_id) DO UPDATE SET beat_at = now()`.pipe(
    Effect.catch((error) => {
      if (now - lastWarningMs < 60_000) return Effect.void
      lastWarningMs = now
      return Effect.logWarning(
        `worker heartbeat not recorded (servers without a worker will report it stale): ${error.message}`
      )
    })
  )
})

/** A beat unless one was recorded less than BEAT_EVERY_MS ago: cheap enough to call after every project. */
export const beatIfDue = Effect.suspend(() =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => localBeatMs !== null && now - localBeatMs < BEAT_EVERY_MS ? Effect.void : beat
  )
)

/** At a worker's start: the first beat, and the rows of workers long gone deleted. */
export const startHeartbeat = Effect.gen(function*() {
  // This process's /readyz counts the worker from now, before any database round trip.
  localBeatMs = yield* Clock.currentTimeMillis
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM worker_heartbeats WHERE beat_at < now() - ${FORGET_AFTER}::interval`.pipe(Effect.ignore)
  yield* beat
})

/**
 * Seconds since the most recent beat of any worker, by the database's clock; null when no worker ever beat
 * (or every row was forgotten).
 */
export const latestHeartbeatAgeSeconds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<
    { age: number | null }
  >`SELECT EXTRACT(EPOCH FROM (now() - max(beat_at)))::float8 AS age FROM worker_heartbeats`
  const age = rows[0]?.age
  return age === null || age === undefined ? null : Math.max(0, Number(age))
})
