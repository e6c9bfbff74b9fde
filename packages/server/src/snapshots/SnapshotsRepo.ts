/**
 * Stored health snapshots (one per project and local day, latest computation wins) and briefings (one
 * per project and local date: the morning edition written once, recomposed during the day as its data lands).
 * Written by recompute/Recompute.ts under the project lock.
 */
import { Briefing, Health, type HealthSnapshot, HealthStatus } from "@sitehealth/domain/Projects"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { PROJECT_LIST_ENTRY } from "../answers/AnswersRepo.ts"
import { pageInMemory, toPage } from "../store/Cursor.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { Page, PageRequest, ProjectRecord } from "../store/Records.ts"
import { ProjectRow, toProjectRecord } from "../store/Rows.ts"
import { bulkRowsOf, CorruptRow, Day, dieOnSqlError, firstOf, Instant, singleOf, Wide } from "../store/Sql.ts"

const encodeHealth = Schema.encodeSync(Health)
/**
 * The response `data` of GET /projects/{id}/health as the contract encodes it, computed once when the
 * snapshot is stored, so serving it costs no decoding, encoding or JSON work (access/AccessRepo.ts).
 */
export const encodeHealthJson = (health: Health): string => JSON.stringify(encodeHealth(health))

export interface StoredHealth {
  readonly projectId: string
  readonly day: string
  readonly dataVersion: string
  readonly computedAt: Date
  readonly health: Health
  /** encodeHealthJson(health); absent on rows stored before it was kept (they are served the slow way). */
  readonly encoded?: string | undefined
}

/** One row of the projects list's single read: a stored snapshot (or none) and the project's data_version. */
export interface TrendRow {
  readonly projectId: string
  readonly currentVersion: string
  readonly day: string
  readonly dataVersion: string
  readonly snapshot: HealthSnapshot
}

export interface SnapshotsRepoShape {
  readonly putHealth: (row: StoredHealth) => Effect.Effect<void>
  readonly healthOf: (projectId: string, day: string) => Effect.Effect<StoredHealth | null>
  /**
   * Stores the encoded text of a snapshot that has none (written before it was kept, or by an older
   * instance), if the row still holds that computation; the next request then takes the fast path.
   */
  readonly keepEncoded: (row: StoredHealth) => Effect.Effect<void>
  /**
   * A page of the account's projects (limited to `scope` when not null, oldest first — as ProjectsRepo.list)
   * with each one's stored snapshots of days ≥ fromDay, oldest first, and its current data_version (memory:
   * the snapshots' own) — one query for the projects list.
   */
  readonly pageWithTrends: (
    accountId: string,
    scope: ReadonlyArray<string> | null,
    page: PageRequest,
    fromDay: string
  ) => Effect.Effect<{
    readonly page: Page<ProjectRecord>
    readonly rows: ReadonlyArray<TrendRow>
    readonly versions: ReadonlyMap<string, string>
  }>
  readonly briefingOf: (projectId: string, localDate: string) => Effect.Effect<Briefing | null>
  /** INSERT … ON CONFLICT DO NOTHING, then read: the first briefing of the local date wins the morning edition. */
  readonly insertBriefing: (projectId: string, localDate: string, briefing: Briefing) => Effect.Effect<Briefing>
  /**
   * Replaces the date's briefing with a recomposed one (recompute/Recompute.ts, "The briefing follows its data"),
   * keeping the edition first written as the morning's (what alerts send stays as sent), and forgets the stored
   * answer `answerKey` of the project (the briefing read's), which no longer holds.
   */
  readonly replaceBriefing: (
    projectId: string,
    localDate: string,
    briefing: Briefing,
    answerKey: string
  ) => Effect.Effect<void>
  /** The date's morning edition: the briefing as first written, whatever was recomposed since. */
  readonly morningBriefingOf: (projectId: string, localDate: string) => Effect.Effect<Briefing | null>
}

/** jsonb arrives parsed; text (the `encoded` column) is parsed here. Either is then decoded by its schema. */
const JsonValue = Schema.Unknown
const parsed = (v: unknown): unknown => (typeof v === "string" ? JSON.parse(v) : v)

const HealthRow = Schema.Struct({
  v: Schema.String,
  computed_at: Instant,
  body: JsonValue,
  encoded: Schema.NullOr(Schema.String)
})
const BriefingRow = Schema.Struct({ body: JsonValue })

/**
 * One row of the projects list's read: the project, its data_version and one stored snapshot (all h_*
 * columns null when the project has none in the window). Only the snapshot columns the list shows are read.
 * A page is up to 100 projects × the trend's days: a bulk read (bulkRowsOf), so nothing here transforms —
 * score and confidence (numeric) go through Number() below.
 */
const TrendRowSchema = Schema.Struct({
  ...ProjectRow.fields,
  current_version: Schema.String,
  h_day: Schema.NullOr(Day),
  h_version: Schema.NullOr(Schema.String),
  score: Schema.NullOr(Wide),
  confidence: Schema.NullOr(Wide),
  status: Schema.NullOr(HealthStatus),
  h_computed_at: Schema.NullOr(Instant)
})

const decodeHealthBody = Schema.decodeUnknownResult(Health)
const decodeBriefingBody = Schema.decodeUnknownResult(Briefing)
/** A stored body that no longer decodes as the contract's shape is a corrupt row (store/Sql.ts). */
const bodyOf = <A>(table: string, decode: (u: unknown) => Result.Result<A, Schema.SchemaError>, value: unknown) => {
  const result = decode(parsed(value))
  return Result.isSuccess(result)
    ? Effect.succeed(result.success)
    : Effect.die(new CorruptRow({ table, reason: result.failure.message }))
}

export class SnapshotsRepo extends Context.Service<SnapshotsRepo, SnapshotsRepoShape>()("sitehealth/SnapshotsRepo") {
  static readonly sql = Layer.effect(
    SnapshotsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeHealthRow = firstOf("health_snapshots", HealthRow)
      const decodeTrends = bulkRowsOf("projects, health_snapshots", TrendRowSchema)
      const decodeBriefing = firstOf("briefings", BriefingRow)
      const decodeInsertedBriefing = singleOf("briefings", BriefingRow)
      return SnapshotsRepo.of({
        // Any snapshot written makes a kept list entry (answers/AnswersRepo.ts, PROJECT_LIST_ENTRY) go: one of
        // the entry's day replaces the snapshot it was built from, one of another day (a backfill, a rebuilt
        // history) may be one of its trend points. So the list's lookup reads the entry alone, with no join of
        // the snapshot it was built from.
        putHealth: Effect.fn("SnapshotsRepo.putHealth")(function*(r) {
          return yield* sql`WITH forget AS (DELETE FROM stored_answers WHERE project_id = ${r.projectId} AND key =
              ${PROJECT_LIST_ENTRY})
              INSERT INTO health_snapshots (project_id, day, computed_at, data_version, score, confidence, status, body,
                encoded,
                encoded_computed_at)
              VALUES (${r.projectId}, ${r.day}::date, ${r.computedAt}, ${r.dataVersion}::bigint, ${r.health.score},
                ${r.health.confidence}, ${r.health.status}, ${JSON.stringify(r.health)}::jsonb, ${
            encodeHealthJson(r.health)
          },
                ${r.computedAt})
              ON CONFLICT (project_id, day) DO UPDATE SET computed_at = EXCLUDED.computed_at,
                data_version = EXCLUDED.data_version, score = EXCLUDED.score, confidence = EXCLUDED.confidence,
                status = EXCLUDED.status, body = EXCLUDED.body, encoded = EXCLUDED.encoded,
                encoded_computed_at = EXCLUDED.encoded_computed_at
              WHERE health_snapshots.computed_at <= EXCLUDED.computed_at`.pipe(Effect.asVoid, dieOnSqlError)
        }),
        keepEncoded: Effect.fn("SnapshotsRepo.keepEncoded")(function*(r) {
          return yield* sql`UPDATE health_snapshots SET encoded = ${
            encodeHealthJson(r.health)
          }, encoded_computed_at = computed_at
              WHERE project_id = ${r.projectId} AND day = ${r.day}::date AND computed_at = ${r.computedAt}`.pipe(
            Effect.asVoid,
            dieOnSqlError
          )
        }),
        healthOf: Effect.fn("SnapshotsRepo.healthOf")(function*(projectId, day) {
          // `encoded` only when it belongs to this computation (see migration 0011).
          return yield* sql`SELECT data_version::text AS v, computed_at, body,
                CASE WHEN encoded_computed_at = computed_at THEN encoded END AS encoded FROM health_snapshots
              WHERE project_id = ${projectId} AND day = ${day}::date`.pipe(
            Effect.flatMap(decodeHealthRow),
            Effect.flatMap((r) =>
              r === null ? Effect.succeed(null) : Effect.map(
                // From the encoded text when there is one: jsonb reorders keys, and a snapshot must read the
                // same whether it is served as stored or through the handler (Health's encoded form is its type).
                bodyOf("health_snapshots", decodeHealthBody, r.encoded === null ? r.body : r.encoded),
                (health): StoredHealth => ({
                  projectId,
                  day,
                  dataVersion: r.v,
                  computedAt: r.computed_at,
                  health,
                  encoded: r.encoded ?? undefined
                })
              )
            ),
            dieOnSqlError
          )
        }),
        pageWithTrends: Effect.fn("SnapshotsRepo.pageWithTrends")(function*(accountId, scope, page, fromDay) {
          const after = page.after
          return yield* sql`WITH page AS (
                SELECT * FROM projects WHERE account_id = ${accountId}
                ${scope === null ? sql`` : sql`AND id = ANY(${[...scope]})`}
                ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
                ORDER BY created_at, id LIMIT ${page.limit + 1})
              SELECT page.*, page.data_version::text AS current_version, to_char(h.day, 'YYYY-MM-DD') AS h_day,
                h.data_version::text AS h_version, h.score, h.confidence, h.status, h.computed_at AS h_computed_at
              FROM page LEFT JOIN health_snapshots h ON h.project_id = page.id AND h.day >= ${fromDay}::date
              ORDER BY page.created_at, page.id, h.day`.pipe(
            Effect.flatMap(decodeTrends),
            Effect.map((rows) => {
              const versions = new Map<string, string>()
              const projects: Array<ProjectRecord> = []
              const out: Array<TrendRow> = []
              for (const r of rows) {
                if (!versions.has(r.id)) projects.push(toProjectRecord(r))
                versions.set(r.id, r.current_version)
                // The LEFT JOIN found no snapshot: every h_* column is null together.
                if (r.h_day === null || r.h_version === null || r.status === null || r.h_computed_at === null) continue
                out.push({
                  projectId: r.id,
                  currentVersion: r.current_version,
                  day: r.h_day,
                  dataVersion: r.h_version,
                  snapshot: {
                    score: r.score === null ? null : Number(r.score),
                    confidence: Number(r.confidence),
                    status: r.status,
                    computedAt: r.h_computed_at.toISOString()
                  }
                })
              }
              return { page: toPage(projects, page.limit), rows: out, versions }
            }),
            dieOnSqlError
          )
        }),
        briefingOf: Effect.fn("SnapshotsRepo.briefingOf")(function*(projectId, localDate) {
          return yield* sql`SELECT body FROM briefings WHERE project_id = ${projectId} AND local_date =
              ${localDate}::date`
            .pipe(
              Effect.flatMap(decodeBriefing),
              Effect.flatMap((
                r
              ) => (r === null ? Effect.succeed(null) : bodyOf("briefings", decodeBriefingBody, r.body))),
              dieOnSqlError
            )
        }),
        insertBriefing: Effect.fn("SnapshotsRepo.insertBriefing")(function*(projectId, localDate, b) {
          yield* sql`INSERT INTO briefings (project_id, local_date, generated_at, body)
              VALUES (${projectId}, ${localDate}::date, ${b.generatedAt}::timestamptz, ${JSON.stringify(b)}::jsonb)
              ON CONFLICT (project_id, local_date) DO NOTHING`
          const row =
            yield* sql`SELECT body FROM briefings WHERE project_id = ${projectId} AND local_date = ${localDate}::date`
              .pipe(Effect.flatMap(decodeInsertedBriefing))
          return yield* bodyOf("briefings", decodeBriefingBody, row.body)
        }, dieOnSqlError),
        replaceBriefing: Effect.fn("SnapshotsRepo.replaceBriefing")(function*(projectId, localDate, b, answerKey) {
          yield* sql`WITH forget AS (DELETE FROM stored_answers WHERE project_id = ${projectId} AND key = ${answerKey})
              UPDATE briefings SET morning_body = COALESCE(morning_body, body), body = ${JSON.stringify(b)}::jsonb,
                updated_at = ${b.updatedAt ?? b.generatedAt}::timestamptz
              WHERE project_id = ${projectId} AND local_date = ${localDate}::date`
        }, dieOnSqlError),
        morningBriefingOf: Effect.fn("SnapshotsRepo.morningBriefingOf")(function*(projectId, localDate) {
          return yield* sql`SELECT COALESCE(morning_body, body) AS body FROM briefings
              WHERE project_id = ${projectId} AND local_date = ${localDate}::date`
            .pipe(
              Effect.flatMap(decodeBriefing),
              Effect.flatMap((
                r
              ) => (r === null ? Effect.succeed(null) : bodyOf("briefings", decodeBriefingBody, r.body))),
              dieOnSqlError
            )
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    SnapshotsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const health = new Map<string, StoredHealth>() // project|day
      const briefings = new Map<string, Briefing>() // project|date
      const mornings = new Map<string, Briefing>() // project|date, once recomposed: the edition first written
      return SnapshotsRepo.of({
        putHealth: Effect.fn("SnapshotsRepo.putHealth")((r) =>
          Effect.sync(() => {
            const key = `${r.projectId}|${r.day}`
            const old = health.get(key)
            if (old === undefined || old.computedAt <= r.computedAt) {
              health.set(key, { ...structuredClone(r), encoded: encodeHealthJson(r.health) })
            }
            db.answers.delete(`${r.projectId}|${PROJECT_LIST_ENTRY}`)
          })
        ),
        healthOf: Effect.fn("SnapshotsRepo.healthOf")((projectId, day) =>
          Effect.sync(() => structuredClone(health.get(`${projectId}|${day}`) ?? null))
        ),
        keepEncoded: Effect.fn("SnapshotsRepo.keepEncoded")((r) =>
          Effect.sync(() => {
            const key = `${r.projectId}|${r.day}`
            const old = health.get(key)
            if (old !== undefined && old.computedAt.getTime() === r.computedAt.getTime()) {
              health.set(key, { ...old, encoded: encodeHealthJson(old.health) })
            }
          })
        ),
        pageWithTrends: Effect.fn("SnapshotsRepo.pageWithTrends")((accountId, scope, page, fromDay) =>
          Effect.sync(() => {
            const found = pageInMemory(
              [...db.projects.values()].filter((p) =>
                p.accountId === accountId && (scope === null || scope.includes(p.id))
              ),
              page,
              "asc"
            )
            const ids: ReadonlyArray<string> = found.items.map((p) => p.id)
            const rows = [...health.values()]
              .filter((h) => ids.includes(h.projectId) && h.day >= fromDay)
              .sort((a, b) => (a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : a.day < b.day ? -1 : 1))
              .map((h) => ({
                projectId: h.projectId,
                currentVersion: h.dataVersion,
                day: h.day,
                dataVersion: h.dataVersion,
                snapshot: {
                  score: h.health.score,
                  confidence: h.health.confidence,
                  status: h.health.status,
                  computedAt: h.health.computedAt
                }
              }))
            return { page: found, rows, versions: new Map<string, string>() }
          })
        ),
        briefingOf: Effect.fn("SnapshotsRepo.briefingOf")((projectId, localDate) =>
          Effect.sync(() => structuredClone(briefings.get(`${projectId}|${localDate}`) ?? null))
        ),
        insertBriefing: Effect.fn("SnapshotsRepo.insertBriefing")((projectId, localDate, b) =>
          Effect.sync(() => {
            const key = `${projectId}|${localDate}`
            if (!briefings.has(key)) briefings.set(key, structuredClone(b))
            return structuredClone(briefings.get(key)!)
          })
        ),
        replaceBriefing: Effect.fn("SnapshotsRepo.replaceBriefing")((projectId, localDate, b, answerKey) =>
          Effect.sync(() => {
            const key = `${projectId}|${localDate}`
            const old = briefings.get(key)
            if (old === undefined) return
            if (!mornings.has(key)) mornings.set(key, old)
            briefings.set(key, structuredClone(b))
            db.answers.delete(`${projectId}|${answerKey}`)
          })
        ),
        morningBriefingOf: Effect.fn("SnapshotsRepo.morningBriefingOf")((projectId, localDate) =>
          Effect.sync(() => {
            const key = `${projectId}|${localDate}`
            return structuredClone(mornings.get(key) ?? briefings.get(key) ?? null)
          })
        )
      })
    })
  )
}
