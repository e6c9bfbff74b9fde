/**
 * Prometheus metrics: the series this service keeps (Effect's Metric module) and GET /metrics, which renders
 * them in the text format 0.0.4 with effect/observability's PrometheusMetrics.
 *
 *   http_requests_total{route,method,status}            counter, every response (http/RequestLog.ts)
 *   http_request_duration_seconds{route,method}          histogram, time until the response was ready
 *   rate_limit_rejections_total                          counter, every 429 (the rate limiter is its only source)
 *   sync_runs_total{provider,outcome}                    counter, sync attempts finished by a worker in THIS
 *                                                        process: succeeded | failed | retry (a transient
 *                                                        failure, queued again)
 *   sync_runs_queued, sync_runs_running                  gauges, read from the database at scrape time (every
 *                                                        instance's queue: it is one table)
 *   recompute_projects_due                               gauge, projects whose stored figures are stale or due
 *   db_connections{state="active"|"idle"|"idle_in_transaction"}
 *                                                        gauges from pg_stat_activity, application_name
 *                                                        'sitehealth': every instance and worker on this
 *                                                        database, this scrape's own statement included
 *                                                        (@effect/sql-pg's pool exposes no counts of its own)
 *
 * `route` is the router's template (`/api/v1/projects/:id/health`) or `unmatched`; `method` is one of the
 * standard methods or OTHER; so the number of series stays bounded whatever clients send.
 *
 * The series live in Effect's default metric registry, process-wide, as a Prometheus client library's
 * would: every app layer and worker in the process counts into the same ones.
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Crypto from "node:crypto"
import { MemoryDb, type MemoryTables } from "../store/MemoryDb.ts"
import { AppConfig } from "./Config.ts"

export const METRICS_PATH = "/metrics"

/** The context every update and the renderer read the registry from: no override, so Effect's default one. */
const registry: Context.Context<never> = Context.empty()

/** 1 ms to 5 s: the health endpoint answers in a few ms, reports in tens, a slow database shows at the top. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export const UNMATCHED_ROUTE = "unmatched"

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

interface RouteSeries {
  readonly duration: Metric.Histogram<number>
  /** One counter per status seen, created on first use. */
  readonly byStatus: Map<number, Metric.Counter<number>>
  readonly route: string
  readonly method: string
}

/** route → method → its series: after the first request of a route, an update is two map lookups. */
const routes = new Map<string, Map<string, RouteSeries>>()

const seriesFor = (route: string, method: string): RouteSeries => {
  let byMethod = routes.get(route)
  if (byMethod === undefined) routes.set(route, byMethod = new Map())
  let series = byMethod.get(method)
  if (series === undefined) {
    series = {
      duration: Metric.histogram("http_request_duration_seconds", {
        description:
          "Time from the request reaching the router until its response was ready, by route template and method",
        boundaries: DURATION_BUCKETS,
        attributes: { route, method }
      }),
      byStatus: new Map(),
      route,
      method
    }
    byMethod.set(method, series)
  }
  return series
}

const rateLimitRejections = Metric.counter("rate_limit_rejections_total", {
  description: "Requests refused with 429 because their token's per-minute budget was spent",
  incremental: true
})
// Exposed from the start at 0, so that rate() and alerts on it see the first rejection as an increase.
rateLimitRejections.updateUnsafe(0, registry)

/** Counts one finished request. Synchronous and allocation-free once its route, method and status were seen. */
export const recordRequest = (method: string, route: string, status: number, seconds: number): void => {
  const series = seriesFor(route, METHODS.has(method) ? method : "OTHER")
  let counter = series.byStatus.get(status)
  if (counter === undefined) {
    counter = Metric.counter("http_requests_total", {
      description: "HTTP requests answered, by route template, method and status",
      incremental: true,
      attributes: { route: series.route, method: series.method, status: String(status) }
    })
    series.byStatus.set(status, counter)
  }
  counter.updateUnsafe(1, registry)
  series.duration.updateUnsafe(seconds, registry)
  if (status === 429) rateLimitRejections.updateUnsafe(1, registry)
}

export type SyncOutcome = "succeeded" | "failed" | "retry"

const syncRuns = new Map<string, Metric.Counter<number>>()

/** Counts a sync attempt that came to an end (worker/SyncRunner.ts). */
export const countSyncRun = (provider: string, outcome: SyncOutcome): Effect.Effect<void> =>
  Effect.sync(() => {
    const key = `${provider}\u0000${outcome}`
    let counter = syncRuns.get(key)
    if (counter === undefined) {
      counter = Metric.counter("sync_runs_total", {
        description:
          "Sync attempts finished by the worker in this process, by provider and outcome (succeeded, failed, retry)",
        incremental: true,
        attributes: { provider, outcome }
      })
      syncRuns.set(key, counter)
    }
    counter.updateUnsafe(1, registry)
  })

// --- Read at scrape time --------------------------------------------------------------------------------

const syncQueued = Metric.gauge("sync_runs_queued", {
  description: "Sync runs waiting in the queue (including those waiting to be retried), all instances"
})
const syncRunning = Metric.gauge("sync_runs_running", {
  description: "Sync runs a worker holds right now, all instances"
})
const recomputeDue = Metric.gauge("recompute_projects_due", {
  description: "Projects whose stored figures are stale (new data) or due for their periodic recompute"
})
const DB_STATES = ["active", "idle", "idle_in_transaction"] as const
const dbDescription =
  "Connections to the database with application_name 'sitehealth' (every instance and worker), by state, from " +
  "pg_stat_activity"
const dbConnections = Object.fromEntries(
  DB_STATES.map((
    state
  ) => [state, Metric.gauge("db_connections", { description: dbDescription, attributes: { state } })])
) as Record<(typeof DB_STATES)[number], Metric.Gauge<number>>

const DATABASE_GAUGES: ReadonlyArray<Metric.Gauge<number>> = [
  syncQueued,
  syncRunning,
  recomputeDue,
  ...Object.values(dbConnections)
]

/**
 * One statement, one round trip. `due` is the worker's own claim condition (recompute/JobsRepo.ts claimNext),
 * plus projects that have no job row yet (the worker creates theirs and computes them at once).
 */
const sqlGauges = (sql: SqlClient.SqlClient) =>
  sql<
    {
      sync_queued: number
      sync_running: number
      recompute_due: number
      db_active: number
      db_idle: number
      db_idle_in_tx: number
    }
  >`
    SELECT
      (SELECT count(*) FROM sync_runs WHERE status = 'queued')::int AS sync_queued,
      (SELECT count(*) FROM sync_runs WHERE status = 'running')::int AS sync_running,
      (SELECT count(*) FROM projects p LEFT JOIN project_jobs j ON j.project_id = p.id
        WHERE j.project_id IS NULL OR j.computed_version IS DISTINCT FROM p.data_version OR j.due_at <= now())::int AS
          recompute_due,
      count(*) FILTER (WHERE state IS NULL OR state NOT LIKE 'idle%')::int AS db_active,
      count(*) FILTER (WHERE state = 'idle')::int AS db_idle,
      count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS db_idle_in_tx
    FROM pg_stat_activity WHERE application_name = 'sitehealth'`.pipe(
    Effect.timeout(Duration.seconds(2)),
    Effect.map((rows) => {
      const r = rows[0]
      syncQueued.updateUnsafe(r.sync_queued, registry)
      syncRunning.updateUnsafe(r.sync_running, registry)
      recomputeDue.updateUnsafe(r.recompute_due, registry)
      dbConnections.active.updateUnsafe(r.db_active, registry)
      dbConnections.idle.updateUnsafe(r.db_idle, registry)
      dbConnections.idle_in_transaction.updateUnsafe(r.db_idle_in_tx, registry)
    }),
    // A database that does not answer must not take the request metrics down with it: its gauges are left
    // out of this scrape (rather than repeat stale values) and the log says why.
    Effect.catchCause((cause) =>
      Effect.andThen(
        Effect.sync(() => DATABASE_GAUGES.forEach((gauge) => Metric.removeUnsafe(gauge, registry))),
        Effect.logWarning("metrics: database gauges left out of this scrape: the database did not answer", cause)
      )
    )
  )

/** The in-memory store (tests only): the sync queue is a map; there is no job table nor a pool to read. */
const memoryGauges = (db: MemoryTables) =>
  Effect.sync(() => {
    let queued = 0
    let running = 0
    for (const run of db.syncRequests.values()) {
      if (run.status === "queued") queued++
      else if (run.status === "running") running++
    }
    syncQueued.updateUnsafe(queued, registry)
    syncRunning.updateUnsafe(running, registry)
  })

const sha256 = (s: string) => Crypto.createHash("sha256").update(s).digest()

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/**
 * Constant-time: both sides are hashed to 32 bytes first, so neither the comparison nor the lengths say how
 * much of a guess was right.
 */
const bearerMatches = (authorization: string | undefined, expected: Buffer): boolean => {
  const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
  return Crypto.timingSafeEqual(sha256(presented ?? ""), expected) && presented !== undefined
}

const unauthorized = () =>
  HttpServerResponse.jsonUnsafe(
    errorBody(401, "Invalid or missing metrics token", "unauthorized"),
    { status: 401, headers: { "www-authenticate": "Bearer realm=\"sitehealth-metrics\"" } }
  )

/** The text format 0.0.4 that Prometheus scrapes. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** Every series of the process's registry as Prometheus text (tests read it without going through HTTP). */
export const renderMetrics = (): string => PrometheusMetrics.formatUnsafe(registry)

/**
 * GET /metrics on the API's own listener (outside /api/v1: no API token, no rate limit). With METRICS_TOKEN set
 * it wants `Authorization: Bearer <METRICS_TOKEN>` and answers 401 in the envelope otherwise; unset, it is open.
 * The gauges' sources are taken when the routes are built (a served router does not hand the app layer's
 * services to its routes per request): the SQL database when there is one, else the in-memory store.
 */
export const MetricsRoute = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    const memory = yield* Effect.serviceOption(MemoryDb)
    const refresh = Option.isSome(sql)
      ? sqlGauges(sql.value)
      : Option.isSome(memory)
      ? memoryGauges(memory.value)
      : Effect.void
    const expected = config.metricsToken === null ? null : sha256(Redacted.value(config.metricsToken))
    const respond = Effect.map(refresh, () => HttpServerResponse.text(renderMetrics(), { contentType: CONTENT_TYPE }))
    return HttpRouter.add(
      "GET",
      METRICS_PATH,
      (request) =>
        expected !== null && !bearerMatches(request.headers["authorization"], expected)
          ? Effect.succeed(unauthorized())
          : respond
    )
  })
)
