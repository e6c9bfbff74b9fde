/**
 * Integrations of projects: which providers are connected, their encrypted credentials (bytes from
 * Crypto.ts; this repository never sees plaintext), base URL override, sync cursor (`state`) and outcome.
 * Every change of an integration's row bumps projects.data_version: the signals read it
 * (integration_failing, integration_stale). The sync runs themselves live in SyncQueue.ts.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { IntegrationRecord, SyncRunRecord } from "../store/Records.ts"
import { Bytes, dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"
import { SyncQueue } from "./SyncQueue.ts"
import { memorySide } from "./SyncState.ts"

/** What a sync needs of an integration besides its public record. */
export interface IntegrationConnection {
  readonly integration: IntegrationRecord
  /** AES-256-GCM bytes (Crypto.ts); null when nothing was stored (display rows). */
  readonly credentials: Uint8Array | null
  /** The connector's cursor saved by the last successful run; null before it. */
  readonly state: unknown
}

export interface ConnectInput {
  readonly projectId: string
  readonly provider: string
  readonly credentials: Uint8Array | null
  readonly baseUrl: string | null
  readonly syncIntervalMinutes: number | null
  readonly now: Date
  /**
   * The demo seed: the first sync it ran itself (demo/Seed.ts) counts as this connection's last success, with its
   * `state`.
   */
  readonly synced?: { readonly at: Date; readonly state: unknown }
}

export interface IntegrationsRepoShape {
  /** The project's integrations and the latest run of each (by provider). */
  readonly list: (projectId: string) => Effect.Effect<{
    readonly integrations: ReadonlyArray<IntegrationRecord>
    readonly lastRuns: ReadonlyArray<SyncRunRecord>
  }>
  /** Every integration (of one project, or all), for the operator's list. */
  readonly all: (projectId: string | null) => Effect.Effect<ReadonlyArray<IntegrationRecord>>
  /** Records an integration's public row as given (seed, tests); credentials and state are left as they are. */
  readonly upsert: (record: IntegrationRecord) => Effect.Effect<void>
  /**
   * Connects (or reconnects) with new credentials: status connected, no error, connected_at now, the
   * cursor cleared (new credentials may be another account: the next run starts from scratch), and the
   * schedule restarted (no failures; next scheduled run at its first slot after now).
   */
  readonly connect: (input: ConnectInput) => Effect.Effect<IntegrationRecord>
  /**
   * New credentials and base URL for the same account (the demo's local providers, restarted on new ports
   * with new keys): the cursor, the schedule and the outcome stay as they are. False when not connected.
   */
  readonly repoint: (
    input: {
      readonly projectId: string
      readonly provider: string
      readonly credentials: Uint8Array
      readonly baseUrl: string
    }
  ) => Effect.Effect<boolean>
  /** Removes the integration (its data stays); queued runs are dropped. False when it was not connected. */
  readonly disconnect: (projectId: string, provider: string) => Effect.Effect<boolean>
  readonly connection: (projectId: string, provider: string) => Effect.Effect<IntegrationConnection | null>
  /** Projects whose history is still to be rebuilt after a sync (history_pending), oldest connection first. */
  readonly historyPending: (limit: number) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Inside the project's lock (the rebuild's transaction): whether the project's history is pending, and
   * clears it — committed with the rebuild, so a rebuild that dies leaves it pending.
   */
  readonly takeHistoryPending: (projectId: string) => Effect.Effect<boolean>
}

/** PUBLIC_COLUMNS' shapes. */
const IntegrationRow = Schema.Struct({
  project_id: Schema.String,
  provider: Schema.String,
  status: Schema.Literals(["connected", "error"]),
  connected_at: Instant,
  last_success_at: Schema.NullOr(Instant),
  last_error: Schema.NullOr(Schema.String),
  base_url: Schema.NullOr(Schema.String),
  sync_interval_minutes: Schema.NullOr(Schema.Finite),
  next_sync_at: Schema.NullOr(Instant),
  failures: Schema.Finite
})
/** With what only a sync reads: the encrypted credentials and the connector's cursor (jsonb, any JSON). */
const ConnectionRow = Schema.Struct({
  ...IntegrationRow.fields,
  credentials: Schema.NullOr(Bytes),
  state: Schema.NullOr(Schema.Unknown)
})
const decodeAll = rowsOf("integrations", IntegrationRow)
const decodeSingle = singleOf("integrations", IntegrationRow)
const decodeConnection = firstOf("integrations", ConnectionRow)

const toIntegration = (r: typeof IntegrationRow.Type): IntegrationRecord => ({
  projectId: r.project_id,
  provider: r.provider,
  status: r.status,
  connectedAt: r.connected_at,
  lastSyncedAt: r.last_success_at,
  lastError: r.last_error,
  baseUrl: r.base_url,
  syncIntervalMinutes: r.sync_interval_minutes,
  nextSyncAt: r.next_sync_at,
  failures: r.failures
})

const PUBLIC_COLUMNS =
  "project_id, provider, status, connected_at, last_success_at, last_error, base_url, sync_interval_minutes, " +
  "next_sync_at, failures"

export class IntegrationsRepo extends Context.Service<IntegrationsRepo, IntegrationsRepoShape>()(
  "sitehealth/IntegrationsRepo"
) {
  static readonly sql = Layer.effect(
    IntegrationsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* SyncQueue
      const cols = sql.unsafe(PUBLIC_COLUMNS)
      const bump = (projectId: string) =>
        sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`
      return IntegrationsRepo.of({
        list: Effect.fn("IntegrationsRepo.list")(function*(projectId) {
          return yield* Effect.all({
            integrations: sql`SELECT ${cols} FROM integrations WHERE project_id = ${projectId} ORDER BY provider`
              .pipe(Effect.flatMap(decodeAll), dieOnSqlError),
            lastRuns: queue.latestRuns(projectId)
          }, { concurrency: 2 }).pipe(
            Effect.map(({ integrations, lastRuns }) => ({ integrations: integrations.map(toIntegration), lastRuns }))
          )
        }),
        all: Effect.fn("IntegrationsRepo.all")(function*(projectId) {
          return yield* (projectId === null
            ? sql`SELECT ${cols} FROM integrations ORDER BY project_id, provider`
            : sql`SELECT ${cols} FROM integrations WHERE project_id = ${projectId} ORDER BY provider`).pipe(
              Effect.flatMap(decodeAll),
              Effect.map((rows) => rows.map(toIntegration)),
              dieOnSqlError
            )
        }),
        upsert: Effect.fn("IntegrationsRepo.upsert")(
          function*(i) {
            yield* sql`INSERT INTO integrations (project_id, provider, status, connected_at, last_success_at,
                last_error,
                base_url, sync_interval_minutes)
              VALUES (${i.projectId}, ${i.provider}, ${i.status}, ${i.connectedAt}, ${i.lastSyncedAt}, ${i.lastError},
                ${i.baseUrl ?? null}, ${i.syncIntervalMinutes ?? null})
              ON CONFLICT (project_id, provider) DO UPDATE SET status = EXCLUDED.status, connected_at =
                EXCLUDED.connected_at,
                last_success_at = EXCLUDED.last_success_at, last_error = EXCLUDED.last_error,
                base_url = EXCLUDED.base_url, sync_interval_minutes = EXCLUDED.sync_interval_minutes`
            yield* bump(i.projectId)
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        connect: Effect.fn("IntegrationsRepo.connect")(
          function*(c) {
            const row =
              yield* sql`INSERT INTO integrations (project_id, provider, status, connected_at, last_success_at,
                last_error, credentials, base_url, state, sync_interval_minutes)
              VALUES (${c.projectId}, ${c.provider}, 'connected', ${c.now}, ${c.synced?.at ?? null}, NULL,
                ${c.credentials === null ? null : Buffer.from(c.credentials)}, ${c.baseUrl},
                ${c.synced === undefined ? null : JSON.stringify(c.synced.state)}::jsonb, ${c.syncIntervalMinutes})
              ON CONFLICT (project_id, provider) DO UPDATE SET status = 'connected', connected_at =
                EXCLUDED.connected_at,
                last_success_at = COALESCE(EXCLUDED.last_success_at, integrations.last_success_at),
                last_error = NULL, credentials = EXCLUDED.credentials, base_url = EXCLUDED.base_url, state =
                  EXCLUDED.state,
                sync_interval_minutes = EXCLUDED.sync_interval_minutes, next_sync_at = NULL, failures = 0
              RETURNING ${cols}`.pipe(Effect.flatMap(decodeSingle))
            yield* bump(c.projectId)
            return toIntegration(row)
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        repoint: Effect.fn("IntegrationsRepo.repoint")(
          function*(r) {
            const rows = yield* sql`UPDATE integrations SET credentials = ${
              Buffer.from(r.credentials)
            }, base_url = ${r.baseUrl}
              WHERE project_id = ${r.projectId} AND provider = ${r.provider} RETURNING provider`
            if (rows.length === 0) return false
            yield* bump(r.projectId)
            return true
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        disconnect: Effect.fn("IntegrationsRepo.disconnect")(
          function*(projectId, provider) {
            const gone =
              yield* sql`DELETE FROM integrations WHERE project_id = ${projectId} AND provider = ${provider} RETURNING
                  provider`
            if (gone.length === 0) return false
            yield* sql`DELETE FROM sync_runs WHERE project_id = ${projectId} AND provider = ${provider} AND status =
                'queued'`
            yield* bump(projectId)
            return true
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        historyPending: Effect.fn("IntegrationsRepo.historyPending")(function*(limit) {
          return yield* sql`SELECT project_id FROM integrations WHERE history_pending GROUP BY project_id ORDER BY
              min(connected_at), project_id
              LIMIT ${limit}`.pipe(
            Effect.map((rows) => rows.map((r) => String((r as { project_id: unknown }).project_id))),
            dieOnSqlError
          )
        }),
        takeHistoryPending: Effect.fn("IntegrationsRepo.takeHistoryPending")(function*(projectId) {
          return yield* sql`UPDATE integrations SET history_pending = false WHERE project_id = ${projectId} AND
              history_pending RETURNING provider`
            .pipe(
              Effect.map((rows) => rows.length > 0),
              dieOnSqlError
            )
        }),
        connection: Effect.fn("IntegrationsRepo.connection")(function*(projectId, provider) {
          return yield* sql`SELECT ${cols}, credentials, state FROM integrations WHERE project_id = ${projectId} AND
              provider = ${provider}`
            .pipe(
              Effect.flatMap(decodeConnection),
              Effect.map((r) =>
                r === null ? null : {
                  integration: toIntegration(r),
                  credentials: r.credentials === null ? null : new Uint8Array(r.credentials),
                  state: r.state ?? null
                }
              ),
              dieOnSqlError
            )
        })
      })
    })
  )

  /** Tests only. Rows in MemoryDb.integrations; credentials and cursors beside them (SyncState.ts memorySide). */
  static readonly memory = Layer.effect(
    IntegrationsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const queue = yield* SyncQueue
      const side = memorySide(db)
      const key = (projectId: string, provider: string) => `${projectId}/${provider}`
      const sorted = (rows: Iterable<IntegrationRecord>) =>
        [...rows].sort((a, b) => a.projectId.localeCompare(b.projectId) || a.provider.localeCompare(b.provider))
      const normalise = (i: IntegrationRecord, old: IntegrationRecord | undefined): IntegrationRecord => ({
        ...i,
        baseUrl: i.baseUrl ?? null,
        syncIntervalMinutes: i.syncIntervalMinutes ?? null,
        nextSyncAt: i.nextSyncAt ?? old?.nextSyncAt ?? null,
        failures: i.failures ?? old?.failures ?? 0
      })
      return IntegrationsRepo.of({
        list: Effect.fn("IntegrationsRepo.list")(function*(projectId) {
          const lastRuns = yield* queue.latestRuns(projectId)
          return {
            integrations: sorted([...db.integrations.values()].filter((i) => i.projectId === projectId)),
            lastRuns
          }
        }),
        all: Effect.fn("IntegrationsRepo.all")((projectId) =>
          Effect.sync(() =>
            sorted([...db.integrations.values()].filter((i) => projectId === null || i.projectId === projectId))
          )
        ),
        upsert: Effect.fn("IntegrationsRepo.upsert")((i) =>
          Effect.sync(() =>
            void db.integrations.set(
              key(i.projectId, i.provider),
              normalise(i, db.integrations.get(key(i.projectId, i.provider)))
            )
          )
        ),
        connect: Effect.fn("IntegrationsRepo.connect")((c) =>
          Effect.sync(() => {
            const record: IntegrationRecord = {
              projectId: c.projectId,
              provider: c.provider,
              status: "connected",
              connectedAt: c.now,
              lastSyncedAt: c.synced?.at ?? db.integrations.get(key(c.projectId, c.provider))?.lastSyncedAt ?? null,
              lastError: null,
              baseUrl: c.baseUrl,
              syncIntervalMinutes: c.syncIntervalMinutes,
              nextSyncAt: null,
              failures: 0
            }
            db.integrations.set(key(c.projectId, c.provider), record)
            side.credentials.set(key(c.projectId, c.provider), c.credentials)
            if (c.synced === undefined) side.states.delete(key(c.projectId, c.provider))
            else side.states.set(key(c.projectId, c.provider), structuredClone(c.synced.state))
            return record
          })
        ),
        repoint: Effect.fn("IntegrationsRepo.repoint")((r) =>
          Effect.sync(() => {
            const k = key(r.projectId, r.provider)
            const record = db.integrations.get(k)
            if (record === undefined) return false
            db.integrations.set(k, { ...record, baseUrl: r.baseUrl })
            side.credentials.set(k, r.credentials)
            return true
          })
        ),
        disconnect: Effect.fn("IntegrationsRepo.disconnect")((projectId, provider) =>
          Effect.sync(() => {
            if (!db.integrations.delete(key(projectId, provider))) return false
            side.credentials.delete(key(projectId, provider))
            side.states.delete(key(projectId, provider))
            side.historyPending.delete(key(projectId, provider))
            for (const [id, r] of db.syncRequests) {
              if (r.projectId === projectId && r.provider === provider && r.status === "queued") {
                db.syncRequests.delete(id)
              }
            }
            return true
          })
        ),
        historyPending: Effect.fn("IntegrationsRepo.historyPending")((limit) =>
          Effect.sync(() =>
            [...new Set([...side.historyPending].map((k) => k.split("/")[0]))].filter((id) => db.projects.has(id))
              .slice(0, limit)
          )
        ),
        takeHistoryPending: Effect.fn("IntegrationsRepo.takeHistoryPending")((projectId) =>
          Effect.sync(() => {
            const mine = [...side.historyPending].filter((k) => k.startsWith(`${projectId}/`))
            for (const k of mine) side.historyPending.delete(k)
            return mine.length > 0
          })
        ),
        connection: Effect.fn("IntegrationsRepo.connection")((projectId, provider) =>
          Effect.sync(() => {
            const integration = db.integrations.get(key(projectId, provider))
            if (integration === undefined) return null
            const k = key(projectId, provider)
            return { integration, credentials: side.credentials.get(k) ?? null, state: side.states.get(k) ?? null }
          })
        )
      })
    })
  )
}
