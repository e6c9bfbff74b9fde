/**
 * A streaming sync's STAGING and PROGRESS on PostgreSQL (StagingMigration.ts): the provider objects kept
 * between runs for a later rebuild (payments_staged), and where a sync resumes (payments_sync_progress).
 * `commitStaging` is the staging part of a sync's `commit`, run by PaymentsRepo.ts in one transaction with the
 * batch's facts (PaymentsFacts.ts); the reads are PaymentsRepo's `progress`, `stagedAfter` and `stagedOf`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { chunks } from "../store/Chunks.ts"
import { bulkRowsOf, dieOnSqlError, firstOf, rowsOf } from "../store/Sql.ts"
import { groupDocs, type PaymentsBatch, type PaymentsRepoShape, type StagedDoc } from "./PaymentsShape.ts"

const StagedRow = Schema.Struct({
  kind: Schema.String,
  id: Schema.String,
  parent_id: Schema.String,
  group_id: Schema.String,
  data: Schema.Unknown
})
const decodeStaged = bulkRowsOf("payments_staged", StagedRow)
const decodeProgress = firstOf("payments_sync_progress", Schema.Struct({ progress: Schema.Unknown }))
const decodeRemovedGroups = rowsOf("payments_staged", Schema.Struct({ group_id: Schema.String }))

const docsOf = (rows: ReadonlyArray<typeof StagedRow.Type>) =>
  groupDocs(
    rows.map((r): StagedDoc => ({ kind: r.kind, id: r.id, parentId: r.parent_id, groupId: r.group_id, data: r.data }))
  )

/**
 * The staging of one sync batch, inside the commit's transaction: the docs of `unstageParents` removed (but
 * those staged again in this batch), `staged` upserted, the progress saved. Returns the groups of the removed
 * docs.
 */
export const commitStaging = Effect.fnUntraced(
  function*(sql: SqlClient.SqlClient, projectId: string, batch: PaymentsBatch) {
    const removed = new Set<string>()
    // Per kind, `parent_id = ANY(…)`: an index scan of payments_staged_parent (a join on unnest would let
    // the planner scan the whole table once per batch).
    const byKind = new Map<string, Array<string>>()
    for (const p of batch.unstageParents ?? []) {
      const list = byKind.get(p.kind)
      if (list === undefined) byKind.set(p.kind, [p.parentId])
      else list.push(p.parentId)
    }
    for (const [kind, parents] of byKind) {
      const keep = (batch.staged ?? []).filter((d) => d.kind === kind).map((d) => d.id)
      for (const ids of chunks(parents)) {
        const rows = yield* sql`DELETE FROM payments_staged WHERE project_id = ${projectId} AND kind = ${kind}
          AND parent_id = ANY(${ids}) AND NOT (id = ANY(${keep})) RETURNING group_id`.pipe(
          Effect.flatMap(decodeRemovedGroups)
        )
        for (const r of rows) removed.add(r.group_id)
      }
    }
    // A doc stored as it is re-staged is not rewritten (a jsonb row and its index entries).
    for (const rows of chunks(batch.staged ?? [])) {
      const json = JSON.stringify(rows.map((d) => ({ k: d.kind, id: d.id, p: d.parentId, g: d.groupId, d: d.data })))
      yield* sql`INSERT INTO payments_staged (project_id, kind, id, parent_id, group_id, data)
      SELECT ${projectId}, u.k, u.id, u.p, u.g, u.d
      FROM jsonb_to_recordset(${json}::jsonb) AS u(k text, id text, p text, g text, d jsonb)
      ON CONFLICT (project_id, kind, id) DO UPDATE SET parent_id = EXCLUDED.parent_id, group_id = EXCLUDED.group_id,
        data = EXCLUDED.data
      WHERE (payments_staged.parent_id, payments_staged.group_id, payments_staged.data)
        IS DISTINCT FROM (EXCLUDED.parent_id, EXCLUDED.group_id, EXCLUDED.data)`
    }
    const progress = batch.progress
    if (progress !== undefined) {
      if (progress.value === null) {
        yield* sql`DELETE FROM payments_sync_progress
          WHERE project_id = ${projectId} AND provider = ${progress.provider}`
      } else {
        yield* sql`INSERT INTO payments_sync_progress (project_id, provider, progress)
          VALUES (${projectId}, ${progress.provider}, ${JSON.stringify(progress.value)}::jsonb)
          ON CONFLICT (project_id, provider) DO UPDATE SET progress = EXCLUDED.progress`
      }
    }
    return [...removed]
  }
)

/** The repository's reads of what syncs staged and saved. */
export const makePaymentsStaging = (
  sql: SqlClient.SqlClient
): Pick<PaymentsRepoShape, "progress" | "stagedAfter" | "stagedOf"> => ({
  progress: Effect.fn("PaymentsRepo.progress")(function*(projectId: string, provider: string) {
    const row = yield* sql`SELECT progress FROM payments_sync_progress
        WHERE project_id = ${projectId} AND provider = ${provider}`.pipe(Effect.flatMap(decodeProgress))
    return row?.progress ?? null
  }, dieOnSqlError),
  stagedAfter: Effect.fn("PaymentsRepo.stagedAfter")(function*(projectId: string, after: string | null, limit: number) {
    const rows = yield* (after === null
      ? sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId}
            AND group_id IN (SELECT DISTINCT group_id FROM payments_staged WHERE project_id = ${projectId}
              ORDER BY group_id LIMIT ${limit})
          ORDER BY group_id, kind, id`
      : sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId}
            AND group_id IN (SELECT DISTINCT group_id FROM payments_staged WHERE project_id = ${projectId}
              AND group_id > ${after} ORDER BY group_id LIMIT ${limit})
          ORDER BY group_id, kind, id`).pipe(Effect.flatMap(decodeStaged))
    return docsOf(rows)
  }, dieOnSqlError),
  stagedOf: Effect.fn("PaymentsRepo.stagedOf")(function*(projectId: string, groups: ReadonlyArray<string>) {
    if (groups.length === 0) return []
    const rows = yield* sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged
        WHERE project_id = ${projectId} AND group_id = ANY(${[...groups]})
        ORDER BY group_id, kind, id`.pipe(Effect.flatMap(decodeStaged))
    return docsOf(rows)
  }, dieOnSqlError)
})
