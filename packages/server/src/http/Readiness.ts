/**
 * Whether this instance should get traffic, behind GET /readyz, and what it depends on:
 *
 *   database  `SELECT` with a 2 s timeout, and whether a schema migration holds its lock right now
 *   redis     PING with a 1 s timeout, only when REDIS_URL is set
 *   worker    how long ago the worker beat (platform/Heartbeat.ts): this process's own worker, or — with
 *             SITEHEALTH_WORKER=0 — the most recent beat any worker wrote to the database
 *
 * Unavailable (503) — take the instance out of rotation — while it is draining (main.ts marks it on
 * SIGTERM/SIGINT), while the database does not answer, and while a migration runs (it holds an ACCESS
 * EXCLUSIVE lock on sitehealth_migrations: requests would queue behind it). Degraded (200) when Redis does
 * not answer or the worker's last beat is older than a minute: the rate limiter fails open to per-instance
 * counting and reads recompute on demand, so the instance still serves correctly — pulling every instance
 * out of rotation for either would turn a partial fault into an outage. Alert on `degraded` instead.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { AppConfig } from "../platform/Config.ts"
import { latestHeartbeatAgeSeconds, localHeartbeatMs, STALE_AFTER_SECONDS } from "../platform/Heartbeat.ts"

export type ReadinessStatus = "ready" | "degraded" | "unavailable"

export interface DatabaseCheck {
  readonly status: "ok" | "down" | "migrating"
  /** Round trip of the check; null when it did not answer. */
  readonly latencyMs: number | null
}

export interface RedisCheck {
  readonly status: "ok" | "down"
  readonly latencyMs: number | null
}

export interface WorkerCheck {
  /** missing: no worker ever beat; unknown: the heartbeats could not be read (the database is down). */
  readonly status: "ok" | "stale" | "missing" | "unknown"
  readonly lastHeartbeatSecondsAgo: number | null
  /** in-process: this server's own worker; database: the latest beat of any worker (SITEHEALTH_WORKER=0). */
  readonly source: "in-process" | "database"
}

export interface ReadinessReport {
  readonly status: ReadinessStatus
  /** Why not `ready`, in words ("draining", "database unreachable", "redis unreachable; worker stale …"). */
  readonly reason?: string
  readonly checks: {
    readonly database: DatabaseCheck
    readonly redis?: RedisCheck
    readonly worker: WorkerCheck
  }
}

/**
 * Process-wide, one-way: a process that began stopping never becomes ready again (a restart is a new
 * process). A module variable rather than a service because the signal handler that sets it runs outside
 * any Effect context, and every layer built in this process must see it.
 */
let draining = false

/** Called once a stop signal arrives; /readyz answers 503 `draining` from then on. */
export const markDraining = (): void => {
  draining = true
}

export const isDraining = (): boolean => draining

export const DATABASE_TIMEOUT = "2 seconds"
export const REDIS_TIMEOUT = "1 second"

const round = (ms: number) => Math.round(ms * 10) / 10

/** `effect`'s wall time in ms (performance.now: the Effect clock may be a test's). */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.map(effect, (a) => [a, round(performance.now() - start)] as const)
  })

const workerFromAge = (age: number | null, source: WorkerCheck["source"]): WorkerCheck => ({
  status: age === null ? "missing" : age > STALE_AFTER_SECONDS ? "stale" : "ok",
  lastHeartbeatSecondsAgo: age === null ? null : Math.round(age),
  source
})

/** The in-process worker's age, or null when no worker runs in this process. */
const localWorker = Effect.map(Clock.currentTimeMillis, (now): WorkerCheck | null => {
  const last = localHeartbeatMs()
  return last === null ? null : workerFromAge(Math.max(0, now - last) / 1000, "in-process")
})

/** The report's verdict from its checks: the order of the reasons is the order an operator should look. */
export const summarize = (checks: ReadinessReport["checks"], isDrainingNow: boolean): ReadinessReport => {
  const fatal: Array<string> = []
  if (isDrainingNow) fatal.push("draining")
  if (checks.database.status === "down") fatal.push("database unreachable")
  if (checks.database.status === "migrating") fatal.push("migrations running")
  const degraded: Array<string> = []
  if (checks.redis?.status === "down") degraded.push("redis unreachable (rate limits counted per instance)")
  const w = checks.worker
  if (w.status === "stale") degraded.push(`worker heartbeat stale (${w.lastHeartbeatSecondsAgo} s ago)`)
  if (w.status === "missing") degraded.push("no worker heartbeat (is a worker running?)")
  if (w.status === "unknown" && fatal.length === 0) degraded.push("worker heartbeat unreadable")
  if (fatal.length > 0) return { status: "unavailable", reason: fatal.join("; "), checks }
  if (degraded.length > 0) return { status: "degraded", reason: degraded.join("; "), checks }
  return { status: "ready", checks }
}

interface RedisPinger {
  readonly ping: Effect.Effect<RedisCheck>
  readonly close: () => void
}

/**
 * A client of its own (the rate limiter's is private to it), connected on the first /readyz: a process that
 * never serves /readyz (the worker) never opens it. No offline queue: while Redis is away a PING fails at once.
 */
const redisPinger = (url: string): RedisPinger => {
  let client: { ping: () => Promise<unknown>; destroy: () => void } | null = null
  let connected: Promise<boolean> | null = null
  const open = async () => {
    // A CommonJS package: its exports are `default` in the bundle as in Node (docs/deploy.md, "The bundle").
    const { createClient } = (await import("redis")).default
    const c = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 1_000 } })
    c.on("error", () => {}) // reconnects by itself; each PING says whether it is back
    client = c
    connected = c.connect().then(() => true, () => false)
  }
  return {
    ping: timed(
      Effect.tryPromise(async () => {
        // Only the first check waits for the connection; later ones fail at once while it is down.
        if (client === null) {
          await open()
          await connected
        }
        await client!.ping()
      }).pipe(Effect.timeout(REDIS_TIMEOUT))
    ).pipe(
      Effect.map(([, latencyMs]): RedisCheck => ({ status: "ok", latencyMs })),
      Effect.catchCause(() => Effect.succeed<RedisCheck>({ status: "down", latencyMs: null }))
    ),
    close: () => {
      try {
        client?.destroy()
      } catch {
        // already closed
      }
    }
  }
}

export class Readiness extends Context.Service<Readiness, {
  /** true unless the report says `unavailable` (degraded still serves). */
  readonly check: Effect.Effect<boolean>
  /** The verdict and every check: the body of /readyz. */
  readonly status: Effect.Effect<ReadinessReport>
}>()("sitehealth/Readiness") {
  /** Needs a SqlClient; takes REDIS_URL from AppConfig when one is provided (the server's is). */
  static readonly sql = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = yield* Effect.serviceOption(AppConfig)
      const redisUrl = config._tag === "Some" ? config.value.redisUrl : null
      const redis = redisUrl === null ? null : redisPinger(Redacted.value(redisUrl))
      if (redis !== null) yield* Effect.addFinalizer(() => Effect.sync(redis.close))

      // One statement: it answers (the database is up) and says whether a migration holds its table's lock
      // (the migrator takes ACCESS EXCLUSIVE on sitehealth_migrations for its whole transaction). pg_locks is
      // read without waiting for any lock, so a running migration cannot make this check hang.
      const database: Effect.Effect<DatabaseCheck> = timed(
        sql<{ migrating: boolean }>`SELECT EXISTS (
            SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'sitehealth_migrations' AND l.mode = 'AccessExclusiveLock' AND l.granted
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          ) AS migrating`.pipe(Effect.timeout(DATABASE_TIMEOUT))
      ).pipe(
        Effect.map(([rows, latencyMs]): DatabaseCheck => ({
          status: rows[0]?.migrating === true ? "migrating" : "ok",
          latencyMs
        })),
        Effect.catchCause(() => Effect.succeed<DatabaseCheck>({ status: "down", latencyMs: null }))
      )

      const worker: Effect.Effect<WorkerCheck> = Effect.flatMap(
        localWorker,
        (local) =>
          local !== null ? Effect.succeed(local) : latestHeartbeatAgeSeconds.pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.timeout(DATABASE_TIMEOUT),
            Effect.map((age) => workerFromAge(age, "database")),
            Effect.catchCause(() =>
              Effect.succeed<WorkerCheck>({ status: "unknown", lastHeartbeatSecondsAgo: null, source: "database" })
            )
          )
      )

      const report = Effect.map(
        Effect.all({ database, worker, ...(redis === null ? {} : { redis: redis.ping }) }, {
          concurrency: "unbounded"
        }),
        (checks) => summarize(checks, draining)
      )
      return Readiness.of({ check: Effect.map(report, (r) => r.status !== "unavailable"), status: report })
    })
  )

  /** Tests over the in-memory store: the "database" always answers; the worker is this process's, if any. */
  static readonly memory = Layer.sync(Readiness, () => {
    const report = Effect.map(localWorker, (local) =>
      summarize({
        database: { status: "ok", latencyMs: 0 },
        worker: local ?? { status: "missing", lastHeartbeatSecondsAgo: null, source: "in-process" }
      }, draining))
    return Readiness.of({ check: Effect.map(report, (r) => r.status !== "unavailable"), status: report })
  })
}
