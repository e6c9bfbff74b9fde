/**
 * Annotations of a website. Every change bumps the project's data_version in the same statement (the briefing
 * and signals cite annotations, so their stored answers must not outlive one). Deleting is soft.
 */
import type { AnnotationCategory } from "@sitehealth/domain/Annotations"
import { AnnotationId, ProjectId } from "@sitehealth/domain/Common"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { looksLikeId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { AnnotationRecord } from "../store/Records.ts"
import { Day, dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"

export type { AnnotationRecord }

export interface AnnotationChange {
  readonly date?: string
  readonly note?: string
  readonly category?: AnnotationCategory
}

export interface AnnotationsRepoShape {
  readonly insert: (a: AnnotationRecord) => Effect.Effect<AnnotationRecord>
  /** Live annotations of the project from `from` to `to` (inclusive, either open), by day then id; at most `limit`. */
  readonly list: (
    projectId: string,
    range: { readonly from: string | null; readonly to: string | null; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<AnnotationRecord>>
  /** Changes a live annotation of the project (an empty change: as it is); null when there is none. */
  readonly update: (
    projectId: string,
    id: string,
    change: AnnotationChange,
    at: Date
  ) => Effect.Effect<AnnotationRecord | null>
  /** Marks a live annotation of the project deleted; null when there is none. */
  readonly softDelete: (projectId: string, id: string, at: Date) => Effect.Effect<AnnotationRecord | null>
}

const Row = Schema.Struct({
  id: AnnotationId,
  project_id: ProjectId,
  day: Day,
  note: Schema.String,
  category: Schema.Literals(["launch", "price_change", "campaign", "release", "incident", "other"]),
  created_at: Instant,
  updated_at: Instant,
  deleted_at: Schema.NullOr(Instant)
})

const toRecord = (r: typeof Row.Type): AnnotationRecord => ({
  id: r.id,
  projectId: r.project_id,
  date: r.day,
  note: r.note,
  category: r.category,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at
})

const inRange = (a: AnnotationRecord, from: string | null, to: string | null) =>
  (from === null || a.date >= from) && (to === null || a.date <= to)

const byDay = (a: AnnotationRecord, b: AnnotationRecord) =>
  a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

export class AnnotationsRepo extends Context.Service<AnnotationsRepo, AnnotationsRepoShape>()(
  "sitehealth/AnnotationsRepo"
) {
  static readonly sql = Layer.effect(
    AnnotationsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeAll = rowsOf("annotations", Row)
      const decodeFirst = firstOf("annotations", Row)
      const decodeSingle = singleOf("annotations", Row)
      const day = sql`to_char(day, 'YYYY-MM-DD') AS day`
      return AnnotationsRepo.of({
        insert: Effect.fn("AnnotationsRepo.insert")(function*(a) {
          return yield* sql`WITH bump AS (UPDATE projects SET data_version = data_version + 1 WHERE id = ${a.projectId})
              INSERT INTO annotations (id, project_id, day, note, category, created_at, updated_at)
              VALUES (${a.id}, ${a.projectId}, ${a.date}::date, ${a.note}, ${a.category}, ${a.createdAt},
                ${a.updatedAt})
              RETURNING *, ${day}`.pipe(Effect.flatMap(decodeSingle), Effect.map(toRecord), dieOnSqlError)
        }),
        list: Effect.fn("AnnotationsRepo.list")(function*(projectId, { from, limit, to }) {
          return yield* sql`SELECT *, ${day} FROM annotations
              WHERE project_id = ${projectId} AND deleted_at IS NULL
              ${from === null ? sql`` : sql`AND day >= ${from}::date`}
              ${to === null ? sql`` : sql`AND day <= ${to}::date`}
              ORDER BY annotations.day, id LIMIT ${limit}`.pipe(
            Effect.flatMap(decodeAll),
            Effect.map((rows) => rows.map(toRecord)),
            dieOnSqlError
          )
        }),
        update: Effect.fn("AnnotationsRepo.update")(function*(projectId, id, change, at) {
          if (!looksLikeId(id)) return null
          const touched = Object.keys(change).length > 0
          return yield* sql`WITH changed AS (
                UPDATE annotations SET
                  day = COALESCE(${change.date ?? null}::date, day),
                  note = COALESCE(${change.note ?? null}, note),
                  category = COALESCE(${change.category ?? null}, category),
                  updated_at = CASE WHEN ${touched} THEN ${at} ELSE updated_at END
                WHERE id = ${id} AND project_id = ${projectId} AND deleted_at IS NULL RETURNING *
              ), bump AS (
                UPDATE projects SET data_version = data_version + 1
                WHERE id = ${projectId} AND EXISTS (SELECT 1 FROM changed)
              )
              SELECT *, ${day} FROM changed`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toRecord(r))),
            dieOnSqlError
          )
        }),
        softDelete: Effect.fn("AnnotationsRepo.softDelete")(function*(projectId, id, at) {
          if (!looksLikeId(id)) return null
          return yield* sql`WITH deleted AS (
                UPDATE annotations SET deleted_at = ${at}
                WHERE id = ${id} AND project_id = ${projectId} AND deleted_at IS NULL RETURNING *
              ), bump AS (
                UPDATE projects SET data_version = data_version + 1
                WHERE id = ${projectId} AND EXISTS (SELECT 1 FROM deleted)
              )
              SELECT *, ${day} FROM deleted`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toRecord(r))),
            dieOnSqlError
          )
        })
      })
    })
  )

  /** Tests' store: the memory tables' map (its rows are in the memory store's stand-in for data_version). */
  static readonly memory = Layer.effect(
    AnnotationsRepo,
    Effect.gen(function*() {
      const rows = (yield* MemoryDb).annotations
      const live = (projectId: string, id: string) => {
        const a = rows.get(id)
        return a === undefined || a.projectId !== projectId || a.deletedAt !== null ? null : a
      }
      const save = (a: AnnotationRecord) => {
        rows.set(a.id, a)
        return a
      }
      return AnnotationsRepo.of({
        insert: Effect.fn("AnnotationsRepo.insert")((a) => Effect.sync(() => save(a))),
        list: Effect.fn("AnnotationsRepo.list")((projectId, { from, limit, to }) =>
          Effect.sync(() =>
            [...rows.values()]
              .filter((a) => a.projectId === projectId && a.deletedAt === null && inRange(a, from, to))
              .sort(byDay)
              .slice(0, limit)
          )
        ),
        update: Effect.fn("AnnotationsRepo.update")((projectId, id, change, at) =>
          Effect.sync(() => {
            const a = live(projectId, id)
            if (a === null) return null
            return Object.keys(change).length === 0 ? a : save({ ...a, ...change, updatedAt: at })
          })
        ),
        softDelete: Effect.fn("AnnotationsRepo.softDelete")((projectId, id, at) =>
          Effect.sync(() => {
            const a = live(projectId, id)
            return a === null ? null : save({ ...a, deletedAt: at })
          })
        )
      })
    })
  )
}
