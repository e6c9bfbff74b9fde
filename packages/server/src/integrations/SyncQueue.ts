/**
 * The durable sync queue (table sync_runs). A run is `queued`, then `running` under a lease a worker holds
 * (renewed while it works), then `succeeded` or `failed`. At most one queued-or-running run per integration
 * (partial unique index sync_runs_pending), so a second request returns the pending one and two workers
 * never sync one integration at once. Workers claim with FOR UPDATE SKIP LOCKED in a SHORT transaction and
 * run the connector outside it; a worker that dies leaves its run `running` with a lease that expires,
 * and the next claim takes it over (attempts + 1); a worker that STOPS (SIGTERM) releases its run instead
 * (back to queued at once, the attempt not counted), so another worker takes it without waiting for the
 * lease. Finishing is one transaction: the run's outcome, the
 * integration's cursor/status/error and the project's data_version together; a finish whose attempt was
 * taken over meanwhile (the lease ran out) changes nothing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { newId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { IntegrationRecord, SyncRunRecord } from "../store/Records.ts"
import { dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"
import { onTransition } from "./SyncEvents.ts"
import { isDue, memorySide } from "./SyncState.ts"

export interface RequestSyncInput {
  readonly projectId: string
  readonly provider: string
  readonly mode: "incremental" | "full"
  readonly requestedBy: string | null
  readonly now: Date
}

export interface SyncQueueShape {
  /** Queues a run unless one is queued or running for that integration (then returns that one). */
  readonly request: (
    input: RequestSyncInput
  ) => Effect.Effect<{ readonly sync: SyncRunRecord; readonly alreadyQueued: boolean }>
  /** The most recent run of each of the project's integrations. */
  readonly latestRuns: (projectId: string) => Effect.Effect<ReadonlyArray<SyncRunRecord>>
  readonly find: (runId: string) => Effect.Effect<SyncRunRecord | null>
  /**
   * Takes the oldest run that is queued (and not waiting for a retry) or running with an expired lease:
   * status running, started_at now, lease_until now + leaseMs, attempts + 1. Null when there is none.
   * `projectIds`: only these projects' runs (a caller that drains its own runs: the demo seed, a test on a
   * database other test files share); every project's when omitted, as the worker claims.
   */
  readonly claim: (
    now: Date,
    leaseMs: number,
    projectIds?: ReadonlyArray<string>
  ) => Effect.Effect<SyncRunRecord | null>
  /** Extends the lease of the worker's attempt; false when the attempt was taken over or finished. */
  readonly renew: (run: SyncRunRecord, until: Date) => Effect.Effect<boolean>
  /**
   * The worker is stopping mid-run: the run goes back to `queued` with no lease, so any worker claims it at
   * once, and the interrupted attempt is not counted (a deploy is not a failure of the run). False when the
   * attempt was taken over or finished meanwhile.
   */
  readonly release: (run: SyncRunRecord) => Effect.Effect<boolean>
  /**
   * The run succeeded: counts, the connector's new cursor, integration connected with last_success_at = now,
   * no failures, next scheduled run at `nextSyncAt` (its next slot, Schedule.ts).
   */
  readonly succeed: (input: {
    readonly run: SyncRunRecord
    readonly counts: Readonly<Record<string, number>>
    readonly state: unknown
    readonly now: Date
    readonly nextSyncAt: Date
    /** The run brought the integration's history: its project's history is to be rebuilt (history_pending). */
    readonly historyPending: boolean
  }) => Effect.Effect<boolean>
  /**
   * The attempt failed. With `retryAt`, the run goes back to the queue until then (integration untouched);
   * without, the run is failed and the integration is in error with that message, one more failure counted
   * and its next scheduled run at `nextSyncAt` (the back-off, Schedule.ts).
   */
  readonly fail: (input: {
    readonly run: SyncRunRecord
    readonly error: string
    readonly now: Date
    readonly retryAt: Date | null
    readonly nextSyncAt: Date
  }) => Effect.Effect<boolean>
  /**
   * Queues an incremental run for every integration that can sync (stored credentials: every connector needs
   * some), has no pending run and is due: its next_sync_at has come, or — never scheduled yet —
   * its first slot after it was connected (Schedule.ts). Returns the runs queued. `projectIds`: only these
   * projects' integrations (a test on a database other test files share), as `claim` takes them; every
   * project's when omitted, as the worker schedules.
   */
  readonly schedule: (
    input: { readonly now: Date; readonly defaultIntervalMinutes: number; readonly projectIds?: ReadonlyArray<string> }
  ) => Effect.Effect<ReadonlyArray<SyncRunRecord>>
}

const RunRow = Schema.Struct({
  id: Schema.String,
  project_id: Schema.String,
  provider: Schema.String,
  mode: Schema.Literals(["incremental", "full"]),
  status: Schema.Literals(["queued", "running", "succeeded", "failed"]),
  requested_at: Instant,
  started_at: Schema.NullOr(Instant),
  finished_at: Schema.NullOr(Instant),
  lease_until: Schema.NullOr(Instant),
  attempts: Schema.Finite,
  counts: Schema.NullOr(Schema.Record(Schema.String, Schema.Finite)),
  error: Schema.NullOr(Schema.String),
  requested_by: Schema.NullOr(Schema.String)
})
const decodeRuns = rowsOf("sync_runs", RunRow)
const decodeRun = firstOf("sync_runs", RunRow)
const decodeClaimed = singleOf("sync_runs", RunRow)
const decodeIds = rowsOf("sync_runs", Schema.Struct({ id: Schema.String }))
const decodeDue = rowsOf(
  "integrations",
  Schema.Struct({
    project_id: Schema.String,
    provider: Schema.String,
    connected_at: Instant,
    next_sync_at: Schema.NullOr(Instant),
    sync_interval_minutes: Schema.NullOr(Schema.Finite)
  })
)

const toRun = (r: typeof RunRow.Type): SyncRunRecord => ({
  id: r.id,
  projectId: r.project_id,
  provider: r.provider,
  mode: r.mode,
  status: r.status,
  requestedAt: r.requested_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  leaseUntil: r.lease_until,
  attempts: r.attempts,
  counts: r.counts,
  error: r.error,
  requestedBy: r.requested_by
})

export class SyncQueue extends Context.Service<SyncQueue, SyncQueueShape>()("sitehealth/SyncQueue") {
  static readonly sql = Layer.effect(
    SyncQueue,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const transition = onTransition(yield* WebhooksRepo)
      // The integration's status before a run's end, locked for the transaction (its events: SyncEvents.ts).
      const statusOf = (run: SyncRunRecord) =>
        Effect.map(
          sql<{ status: string }>`SELECT status FROM integrations WHERE project_id = ${run.projectId}
            AND provider = ${run.provider} FOR UPDATE`,
          (rows) => rows[0]?.status
        )
      const pendingOf = (projectId: string, provider: string) =>
        sql`SELECT * FROM sync_runs WHERE project_id = ${projectId} AND provider = ${provider} AND status IN
            ('queued','running')`
          .pipe(Effect.flatMap(decodeRun))
      const insertRun = (i: RequestSyncInput) =>
        sql`INSERT INTO sync_runs (id, project_id, provider, mode, status, requested_at, requested_by)
            VALUES (${newId("syn")}, ${i.projectId}, ${i.provider}, ${i.mode}, 'queued', ${i.now}, ${i.requestedBy})
            ON CONFLICT (project_id, provider) WHERE status IN ('queued','running') DO NOTHING
            RETURNING *`.pipe(Effect.flatMap(decodeRun))
      const bump = (projectId: string) =>
        sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`
      return SyncQueue.of({
        request: Effect.fn("SyncQueue.request")(function*(input) {
          for (;;) {
            const inserted = yield* insertRun(input)
            if (inserted !== null) return { sync: toRun(inserted), alreadyQueued: false }
            const existing = yield* pendingOf(input.projectId, input.provider)
            // The pending one may have finished between the two statements: then queue again.
            if (existing !== null) return { sync: toRun(existing), alreadyQueued: true }
          }
        }, dieOnSqlError),
        latestRuns: Effect.fn("SyncQueue.latestRuns")(function*(projectId) {
          return yield* sql`SELECT DISTINCT ON (provider) * FROM sync_runs WHERE project_id = ${projectId}
              ORDER BY provider, requested_at DESC, (status IN ('queued','running')) DESC, finished_at DESC NULLS FIRST,
                id DESC`
            .pipe(
              Effect.flatMap(decodeRuns),
              Effect.map((rows) => rows.map(toRun)),
              dieOnSqlError
            )
        }),
        find: Effect.fn("SyncQueue.find")(function*(runId) {
          return yield* sql`SELECT * FROM sync_runs WHERE id = ${runId}`.pipe(
            Effect.flatMap(decodeRun),
            Effect.map((r) => (r === null ? null : toRun(r))),
            dieOnSqlError
          )
        }),
        claim: Effect.fn("SyncQueue.claim")(
          function*(now, leaseMs, projectIds) {
            const rows = yield* sql`SELECT id FROM sync_runs
              WHERE ((status = 'queued' AND (lease_until IS NULL OR lease_until <= ${now}))
                 OR (status = 'running' AND lease_until < ${now}))
                ${projectIds === undefined ? sql`` : sql`AND project_id = ANY(${projectIds})`}
              ORDER BY requested_at, id
              LIMIT 1
              FOR UPDATE SKIP LOCKED`.pipe(Effect.flatMap(decodeIds))
            if (rows.length === 0) return null
            const claimed = yield* sql`UPDATE sync_runs SET status = 'running', started_at = ${now},
                lease_until = ${new Date(now.getTime() + leaseMs)}, attempts = attempts + 1
              WHERE id = ${rows[0].id} RETURNING *`.pipe(Effect.flatMap(decodeClaimed))
            return toRun(claimed)
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        renew: Effect.fn("SyncQueue.renew")(function*(run, until) {
          return yield* sql`UPDATE sync_runs SET lease_until = ${until}
              WHERE id = ${run.id} AND status = 'running' AND attempts = ${run.attempts} RETURNING id`.pipe(
            Effect.map((rows) => rows.length > 0),
            dieOnSqlError
          )
        }),
        release: Effect.fn("SyncQueue.release")(function*(run) {
          return yield* sql`UPDATE sync_runs SET status = 'queued', lease_until = NULL, attempts = attempts - 1
              WHERE id = ${run.id} AND status = 'running' AND attempts = ${run.attempts} RETURNING id`.pipe(
            Effect.map((rows) => rows.length > 0),
            dieOnSqlError
          )
        }),
        succeed: Effect.fn("SyncQueue.succeed")(
          function*({ counts, historyPending, nextSyncAt, now, run, state }) {
            const done = yield* sql`UPDATE sync_runs SET status = 'succeeded', finished_at = ${now}, lease_until = NULL,
                counts = ${JSON.stringify(counts)}::jsonb, error = NULL
              WHERE id = ${run.id} AND status = 'running' AND attempts = ${run.attempts} RETURNING id`
            if (done.length === 0) return false
            yield* transition(run, yield* statusOf(run), now, null)
            yield* sql`UPDATE integrations SET state = ${
              JSON.stringify(state ?? null)
            }::jsonb, last_success_at = ${now},
                status = 'connected', last_error = NULL, failures = 0, next_sync_at = ${nextSyncAt},
                history_pending = history_pending OR ${historyPending}
              WHERE project_id = ${run.projectId} AND provider = ${run.provider}`
            yield* bump(run.projectId)
            return true
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        fail: Effect.fn("SyncQueue.fail")(
          function*({ error, nextSyncAt, now, retryAt, run }) {
            const done = retryAt !== null
              ? yield* sql`UPDATE sync_runs SET status = 'queued', lease_until = ${retryAt}, error = ${error}
                WHERE id = ${run.id} AND status = 'running' AND attempts = ${run.attempts} RETURNING id`
              : yield* sql`UPDATE sync_runs SET status = 'failed', finished_at = ${now}, lease_until = NULL, error =
                  ${error}
                WHERE id = ${run.id} AND status = 'running' AND attempts = ${run.attempts} RETURNING id`
            if (done.length === 0) return false
            if (retryAt === null) {
              yield* transition(run, yield* statusOf(run), now, error)
              yield* sql`UPDATE integrations SET status = 'error', last_error = ${error}, failures = failures + 1,
                  next_sync_at = ${nextSyncAt}
                WHERE project_id = ${run.projectId} AND provider = ${run.provider}`
              yield* bump(run.projectId)
            }
            return true
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        schedule: Effect.fn("SyncQueue.schedule")(function*({ defaultIntervalMinutes, now, projectIds }) {
          // next_sync_at NULL (never scheduled): the slot is computed here, from connected_at.
          const candidates =
            yield* sql`SELECT i.project_id, i.provider, i.connected_at, i.next_sync_at, i.sync_interval_minutes
              FROM integrations i
              WHERE i.credentials IS NOT NULL
                AND (i.next_sync_at IS NULL OR i.next_sync_at <= ${now})
                ${projectIds === undefined ? sql`` : sql`AND i.project_id = ANY(${projectIds})`}
                AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.project_id = i.project_id AND r.provider = i.provider
                  AND r.status IN ('queued','running'))
              ORDER BY i.next_sync_at NULLS FIRST, i.project_id, i.provider`.pipe(Effect.flatMap(decodeDue))
          const due = candidates.filter((r) =>
            isDue(
              {
                projectId: r.project_id,
                provider: r.provider,
                connectedAt: r.connected_at,
                nextSyncAt: r.next_sync_at,
                syncIntervalMinutes: r.sync_interval_minutes
              },
              defaultIntervalMinutes,
              now
            )
          )
          const queued: Array<SyncRunRecord> = []
          // Two instances scheduling at once: the pending index lets one insert per integration through.
          for (const r of due) {
            const inserted = yield* insertRun({
              projectId: r.project_id,
              provider: r.provider,
              mode: "incremental",
              requestedBy: "scheduler",
              now
            })
            if (inserted !== null) queued.push(toRun(inserted))
          }
          return queued
        }, dieOnSqlError)
      })
    })
  )

  /** Tests only: the runs in MemoryDb.syncRequests; a JS turn is atomic, so no locking is needed. */
  static readonly memory = Layer.effect(
    SyncQueue,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const transition = onTransition(yield* WebhooksRepo)
      const side = memorySide(db)
      const runs = db.syncRequests
      const isPending = (r: SyncRunRecord) => r.status === "queued" || r.status === "running"
      const pendingOf = (projectId: string, provider: string) =>
        [...runs.values()].find((r) => r.projectId === projectId && r.provider === provider && isPending(r))
      const byRequest = (a: SyncRunRecord, b: SyncRunRecord) =>
        a.requestedAt.getTime() - b.requestedAt.getTime() || a.id.localeCompare(b.id)
      // Latest first as in SQL: requested last; on a tie the pending one, then the last finished.
      const latestFirst = (a: SyncRunRecord, b: SyncRunRecord) =>
        b.requestedAt.getTime() - a.requestedAt.getTime() || Number(isPending(b)) - Number(isPending(a)) ||
        (b.finishedAt?.getTime() ?? Infinity) - (a.finishedAt?.getTime() ?? Infinity) || b.id.localeCompare(a.id)
      const newRun = (i: RequestSyncInput): SyncRunRecord => ({
        id: newId("syn"),
        projectId: i.projectId,
        provider: i.provider,
        mode: i.mode,
        status: "queued",
        requestedAt: i.now,
        startedAt: null,
        finishedAt: null,
        leaseUntil: null,
        attempts: 0,
        counts: null,
        error: null,
        requestedBy: i.requestedBy
      })
      const current = (run: SyncRunRecord) => {
        const r = runs.get(run.id)
        return r !== undefined && r.status === "running" && r.attempts === run.attempts ? r : null
      }
      const setIntegration = (
        run: SyncRunRecord,
        patch: (
          i: IntegrationRecord
        ) => Partial<
          {
            status: "connected" | "error"
            lastSyncedAt: Date
            lastError: string | null
            nextSyncAt: Date
            failures: number
          }
        >
      ) => {
        const k = `${run.projectId}/${run.provider}`
        const i = db.integrations.get(k)
        if (i !== undefined) db.integrations.set(k, { ...i, ...patch(i) })
      }
      return SyncQueue.of({
        request: Effect.fn("SyncQueue.request")((input) =>
          Effect.sync(() => {
            const existing = pendingOf(input.projectId, input.provider)
            if (existing) return { sync: existing, alreadyQueued: true }
            const sync = newRun(input)
            runs.set(sync.id, sync)
            return { sync, alreadyQueued: false }
          })
        ),
        latestRuns: Effect.fn("SyncQueue.latestRuns")((projectId) =>
          Effect.sync(() => {
            const latest = new Map<string, SyncRunRecord>()
            for (const r of [...runs.values()].filter((r) => r.projectId === projectId).sort(latestFirst)) {
              if (!latest.has(r.provider)) latest.set(r.provider, r)
            }
            return [...latest.values()].sort((a, b) => a.provider.localeCompare(b.provider))
          })
        ),
        find: Effect.fn("SyncQueue.find")((runId) => Effect.sync(() => runs.get(runId) ?? null)),
        claim: Effect.fn("SyncQueue.claim")((now, leaseMs, projectIds) =>
          Effect.sync(() => {
            const next = [...runs.values()].filter((r) =>
              (projectIds === undefined || projectIds.includes(r.projectId)) && (
                (r.status === "queued" && (r.leaseUntil === null || r.leaseUntil <= now)) ||
                (r.status === "running" && r.leaseUntil !== null && r.leaseUntil < now)
              )
            ).sort(byRequest)[0]
            if (next === undefined) return null
            const claimed: SyncRunRecord = {
              ...next,
              status: "running",
              startedAt: now,
              leaseUntil: new Date(now.getTime() + leaseMs),
              attempts: next.attempts + 1
            }
            runs.set(claimed.id, claimed)
            return claimed
          })
        ),
        renew: Effect.fn("SyncQueue.renew")((run, until) =>
          Effect.sync(() => {
            const r = current(run)
            if (r === null) return false
            runs.set(r.id, { ...r, leaseUntil: until })
            return true
          })
        ),
        release: Effect.fn("SyncQueue.release")((run) =>
          Effect.sync(() => {
            const r = current(run)
            if (r === null) return false
            runs.set(r.id, { ...r, status: "queued", leaseUntil: null, attempts: r.attempts - 1 })
            return true
          })
        ),
        succeed: Effect.fn("SyncQueue.succeed")(({ counts, historyPending, nextSyncAt, now, run, state }) =>
          Effect.suspend(() => {
            const r = current(run)
            if (r === null) return Effect.succeed(false)
            const was = db.integrations.get(`${run.projectId}/${run.provider}`)?.status
            runs.set(r.id, {
              ...r,
              status: "succeeded",
              finishedAt: now,
              leaseUntil: null,
              counts: { ...counts },
              error: null
            })
            side.states.set(`${run.projectId}/${run.provider}`, structuredClone(state ?? null))
            if (historyPending) side.historyPending.add(`${run.projectId}/${run.provider}`)
            setIntegration(
              run,
              () => ({ status: "connected", lastSyncedAt: now, lastError: null, failures: 0, nextSyncAt })
            )
            return Effect.as(transition(run, was, now, null), true)
          })
        ),
        fail: Effect.fn("SyncQueue.fail")(({ error, nextSyncAt, now, retryAt, run }) =>
          Effect.suspend(() => {
            const r = current(run)
            if (r === null) return Effect.succeed(false)
            if (retryAt !== null) {
              runs.set(r.id, { ...r, status: "queued", leaseUntil: retryAt, error })
              return Effect.succeed(true)
            }
            const was = db.integrations.get(`${run.projectId}/${run.provider}`)?.status
            runs.set(r.id, { ...r, status: "failed", finishedAt: now, leaseUntil: null, error })
            setIntegration(
              run,
              (i) => ({ status: "error", lastError: error, failures: (i.failures ?? 0) + 1, nextSyncAt })
            )
            return Effect.as(transition(run, was, now, error), true)
          })
        ),
        schedule: Effect.fn("SyncQueue.schedule")(({ defaultIntervalMinutes, now, projectIds }) =>
          Effect.sync(() => {
            const queued: Array<SyncRunRecord> = []
            for (
              const i of [...db.integrations.values()].sort((a, b) =>
                `${a.projectId}/${a.provider}`.localeCompare(`${b.projectId}/${b.provider}`)
              )
            ) {
              const k = `${i.projectId}/${i.provider}`
              if (projectIds !== undefined && !projectIds.includes(i.projectId)) continue
              if ((side.credentials.get(k) ?? null) === null) continue
              if (pendingOf(i.projectId, i.provider)) continue
              const due = isDue(
                {
                  projectId: i.projectId,
                  provider: i.provider,
                  connectedAt: i.connectedAt,
                  nextSyncAt: i.nextSyncAt ?? null,
                  syncIntervalMinutes: i.syncIntervalMinutes ?? null
                },
                defaultIntervalMinutes,
                now
              )
              if (!due) continue
              const run = newRun({
                projectId: i.projectId,
                provider: i.provider,
                mode: "incremental",
                requestedBy: "scheduler",
                now
              })
              runs.set(run.id, run)
              queued.push(run)
            }
            return queued
          })
        )
      })
    })
  )
}
