/** Integrations of projects and the sync requests callers queue for them. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { IntegrationRecord, SyncRequestRecord } from "../store/Records.ts"

export interface IntegrationsRepoShape {
  readonly list: (projectId: string) => Effect.Effect<{
    readonly integrations: ReadonlyArray<IntegrationRecord>
    readonly pending: ReadonlyArray<SyncRequestRecord>
  }>
  /** Dashboard/operator side: record a connected integration. */
  readonly upsert: (record: IntegrationRecord) => Effect.Effect<void>
  /**
   * Queue a sync unless one is already queued or running for that integration (then return that one).
   * Safe under concurrent calls: a partial unique index allows one pending request per integration.
   */
  readonly requestSync: (input: {
    readonly projectId: string
    readonly provider: string
    readonly mode: "incremental" | "full"
    readonly requestedBy: string
    readonly now: Date
  }) => Effect.Effect<{ readonly sync: SyncRequestRecord; readonly alreadyQueued: boolean }>
}

const toIntegration = (r: any): IntegrationRecord => ({
  projectId: r.project_id,
  provider: r.provider,
  status: r.status,
  connectedAt: r.connected_at,
  lastSyncedAt: r.last_synced_at,
  lastError: r.last_error
})

const toSync = (r: any): SyncRequestRecord => ({
  id: r.id,
  projectId: r.project_id,
  provider: r.provider,
  mode: r.mode,
  status: r.status,
  requestedAt: r.requested_at,
  finishedAt: r.finished_at,
  requestedBy: r.requested_by
})

export class IntegrationsRepo extends Context.Service<IntegrationsRepo, IntegrationsRepoShape>()(
  "sitehealth/IntegrationsRepo"
) {
  static readonly sql = Layer.effect(
    IntegrationsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pendingOf = (projectId: string, provider: string) =>
        sql`SELECT * FROM sync_requests WHERE project_id = ${projectId} AND provider = ${provider}
            AND status IN ('queued','running')`
      return IntegrationsRepo.of({
        list: (projectId) =>
          Effect.all({
            integrations: sql`SELECT * FROM integrations WHERE project_id = ${projectId}`,
            pending: sql`SELECT * FROM sync_requests WHERE project_id = ${projectId} AND status IN ('queued','running')`
          }, { concurrency: 2 }).pipe(
            Effect.map(({ integrations, pending }) => ({
              integrations: integrations.map(toIntegration),
              pending: pending.map(toSync)
            })),
            Effect.orDie
          ),
        upsert: (i) =>
          sql`INSERT INTO integrations (project_id, provider, status, connected_at, last_synced_at, last_error)
              VALUES (${i.projectId}, ${i.provider}, ${i.status}, ${i.connectedAt}, ${i.lastSyncedAt}, ${i.lastError})
              ON CONFLICT (project_id, provider) DO UPDATE SET status = EXCLUDED.status,
                last_synced_at = EXCLUDED.last_synced_at, last_error = EXCLUDED.last_error`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        requestSync: ({ mode, now, projectId, provider, requestedBy }) =>
          Effect.gen(function*() {
            const inserted = yield* sql`INSERT INTO sync_requests (id, project_id, provider, mode, status, requested_at, requested_by)
                VALUES (${newId("syn")}, ${projectId}, ${provider}, ${mode}, 'queued', ${now}, ${requestedBy})
                ON CONFLICT (project_id, provider) WHERE status IN ('queued','running') DO NOTHING
                RETURNING *`
            if (inserted.length > 0) return { sync: toSync(inserted[0]), alreadyQueued: false }
            const existing = yield* pendingOf(projectId, provider)
            return { sync: toSync(existing[0]), alreadyQueued: true }
          }).pipe(Effect.orDie)
      })
    })
  )

  static readonly memory = Layer.effect(
    IntegrationsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const pending = (projectId: string) =>
        [...db.syncRequests.values()].filter(
          (s) => s.projectId === projectId && (s.status === "queued" || s.status === "running")
        )
      return IntegrationsRepo.of({
        list: (projectId) =>
          Effect.sync(() => ({
            integrations: [...db.integrations.values()].filter((i) => i.projectId === projectId),
            pending: pending(projectId)
          })),
        upsert: (i) => Effect.sync(() => void db.integrations.set(`${i.projectId}/${i.provider}`, i)),
        requestSync: ({ mode, now, projectId, provider, requestedBy }) =>
          Effect.sync(() => {
            const existing = pending(projectId).find((s) => s.provider === provider)
            if (existing) return { sync: existing, alreadyQueued: true }
            const sync: SyncRequestRecord = {
              id: newId("syn"),
              projectId,
              provider,
              mode,
              status: "queued",
              requestedAt: now,
              finishedAt: null,
              requestedBy
            }
            db.syncRequests.set(sync.id, sync)
            return { sync, alreadyQueued: false }
          })
      })
    })
  )
}
