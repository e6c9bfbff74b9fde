/**
 * Reads and writes the daily aggregates. A report reads at most a year of days per table in one round
 * trip, whatever the raw volume behind them: aggregation happens on write.
 */
import { ProjectId } from "@sitehealth/domain/Common"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { looksLikeId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { ProjectWithSeries } from "../store/Records.ts"
import { ProjectRow, revenueColumns, toProjectRecord } from "../store/Rows.ts"
import type { ProjectSeries, RevenueDay, SearchDay, TrafficDay } from "../store/Series.ts"
import { dieOnSqlError, firstOf, JsonArray, rowsOf, singleOf, tuplesOf } from "../store/Sql.ts"

export interface DailyRows {
  readonly traffic?: ReadonlyArray<TrafficDay>
  readonly revenue?: ReadonlyArray<RevenueDay>
  readonly search?: ReadonlyArray<SearchDay>
}

export interface MetricsRepoShape {
  /** The project with its daily rows from `fromDay` on (all when null), in one round trip. */
  readonly loadProject: (projectId: string, fromDay: string | null) => Effect.Effect<ProjectWithSeries | null>
  /** Daily rows from `fromDay` on for several projects (the project list's health snapshots). */
  readonly loadSeries: (
    projectIds: ReadonlyArray<string>,
    fromDay: string
  ) => Effect.Effect<ReadonlyMap<string, ProjectSeries>>
  /** Insert or replace daily rows (providers' sync and the demo generator). */
  readonly writeDays: (projectId: string, rows: DailyRows) => Effect.Effect<void>
}

/**
 * The series travel as JSON arrays of positional tuples (see seriesColumns). They are the bulk of a
 * report's read — up to a year of days × 4 tables per project — so they are typed by the SELECT that builds
 * them rather than decoded field by field; the envelope around them (the json columns) is checked.
 */
type TrafficTuple = readonly [
  day: string,
  visitors: number,
  pageviews: number,
  sessions: number,
  bounces: number,
  durationSeconds: number
]
/** bigint sums arrive as JSON numbers (or, from json_build_array over numeric, strings): Number() both. */
type RevenueTuple = readonly [string, ...ReadonlyArray<number | string>]
type SearchTuple = readonly [day: string, clicks: number, impressions: number, positionWeighted: number]
type ExpenseTuple = readonly [
  amountMinor: number | string,
  currency: string,
  incurredOn: string,
  recurrence: "one_off" | "monthly" | "yearly"
]

const SeriesRow = Schema.Struct({ traffic: JsonArray, revenue: JsonArray, search: JsonArray, expenses: JsonArray })
const SeriesRowWithId = Schema.Struct({ ...SeriesRow.fields, id: ProjectId })
const ProjectWithVersion = Schema.Struct({ ...ProjectRow.fields, version: Schema.String })
const VersionRow = Schema.Struct({ id: ProjectId, version: Schema.String })

const toSeries = (r: typeof SeriesRow.Type): ProjectSeries => ({
  traffic: tuplesOf<TrafficTuple>(r.traffic).map((a) => ({
    day: a[0],
    visitors: a[1],
    pageviews: a[2],
    sessions: a[3],
    bounces: a[4],
    durationSeconds: a[5]
  })),
  revenue: tuplesOf<RevenueTuple>(r.revenue).map((a) => ({
    day: a[0],
    grossMinor: Number(a[1]),
    refundsMinor: Number(a[2]),
    failedPayments: Number(a[3]),
    failedMinor: Number(a[4]),
    mrrMinor: Number(a[5]),
    customers: Number(a[6]),
    newMrrMinor: Number(a[7]),
    expansionMrrMinor: Number(a[8]),
    contractionMrrMinor: Number(a[9]),
    churnedMrrMinor: Number(a[10]),
    reactivationMrrMinor: Number(a[11]),
    newCustomers: Number(a[12]),
    churnedCustomers: Number(a[13]),
    reactivatedCustomers: Number(a[14])
  })),
  search: tuplesOf<SearchTuple>(r.search).map((a) => ({
    day: a[0],
    clicks: a[1],
    impressions: a[2],
    positionWeighted: a[3]
  })),
  expenses: tuplesOf<ExpenseTuple>(r.expenses).map((a) => ({
    amountMinor: Number(a[0]),
    currency: a[1],
    incurredOn: a[2],
    recurrence: a[3]
  }))
})

const EPOCH = "0001-01-01"
const SERIES_CACHE_ENTRIES = 1000

export class MetricsRepo extends Context.Service<MetricsRepo, MetricsRepoShape>()("sitehealth/MetricsRepo") {
  static readonly sql = Layer.effect(
    MetricsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      /**
       * Daily rows per (project, first day), tagged with the project's data_version at load time. Every
       * write to a project's data bumps that version in the same statement or transaction, so a hit is
       * exactly what a fresh read would return; the check costs one primary-key lookup instead of
       * aggregating months of rows. Bounded, least recently used out first.
       */
      const seriesCache = new Map<string, { readonly version: string; readonly series: ProjectSeries }>()
      const remember = (key: string, version: string, series: ProjectSeries) => {
        seriesCache.delete(key)
        seriesCache.set(key, { version, series })
        if (seriesCache.size > SERIES_CACHE_ENTRIES) seriesCache.delete(seriesCache.keys().next().value!)
      }
      // Rows travel as JSON arrays (positional), which costs Postgres about half of json_build_object.
      const seriesColumns = (projectRef: string | Statement.Fragment, from: string) =>
        sql`
        (SELECT coalesce(json_agg(json_build_array(day, visitors, pageviews, sessions, bounces, duration_seconds)
            ORDER BY day), '[]'::json)
          FROM traffic_daily WHERE project_id = ${projectRef} AND day >= ${from}::date) AS traffic,
        (SELECT coalesce(json_agg(json_build_array(day, gross_minor, refunds_minor, failed_payments, failed_minor,
            mrr_minor, customers, new_mrr_minor, expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor,
            reactivation_mrr_minor, new_customers, churned_customers, reactivated_customers) ORDER BY day), '[]'::json)
          FROM revenue_daily WHERE project_id = ${projectRef} AND (day >= ${from}::date
            -- the last row before the range too: MRR and customers are states that carry forward over days
            -- without a row, so the start of any window in the range is known.
            OR day = (SELECT max(b.day) FROM revenue_daily b WHERE b.project_id = ${projectRef} AND b.day <
              ${from}::date))) AS revenue,
        (SELECT coalesce(json_agg(json_build_array(day, clicks, impressions, position_weighted) ORDER BY day),
          '[]'::json)
          FROM search_daily WHERE project_id = ${projectRef} AND day >= ${from}::date) AS search,
        (SELECT coalesce(json_agg(json_build_array(amount_minor, currency, incurred_on, recurrence)), '[]'::json)
          FROM expenses WHERE project_id = ${projectRef} AND deleted_at IS NULL) AS expenses`
      const decodeProject = firstOf("projects", ProjectWithVersion)
      const decodeSeries = singleOf("traffic_daily, revenue_daily, search_daily, expenses", SeriesRow)
      const decodeVersions = rowsOf("projects", VersionRow)
      const decodeSeriesById = rowsOf("traffic_daily, revenue_daily, search_daily, expenses", SeriesRowWithId)
      return MetricsRepo.of({
        loadProject: Effect.fn("MetricsRepo.loadProject")(function*(projectId, fromDay) {
          if (!looksLikeId(projectId)) return null
          const row = yield* sql`SELECT *, data_version::text AS version FROM projects WHERE id = ${projectId}`
            .pipe(Effect.flatMap(decodeProject))
          if (row === null) return null
          const project = toProjectRecord(row)
          const version = row.version
          const key = `${projectId}|${fromDay ?? EPOCH}`
          const cached = seriesCache.get(key)
          if (cached !== undefined && cached.version === version) {
            seriesCache.delete(key)
            seriesCache.set(key, cached) // most recently used last
            return { project, series: cached.series }
          }
          // A write landing between the two reads leaves newer rows under the older version: the next
          // read sees the newer version, misses, and reloads. Never stale, at worst one reload more.
          const loaded = yield* sql`SELECT ${seriesColumns(projectId, fromDay ?? EPOCH)}`.pipe(
            Effect.flatMap(decodeSeries)
          )
          const series = toSeries(loaded)
          remember(key, version, series)
          return { project, series }
        }, dieOnSqlError),
        loadSeries: Effect.fn("MetricsRepo.loadSeries")(function*(projectIds, fromDay) {
          if (projectIds.length === 0) return new Map<string, ProjectSeries>()
          // Same cache as loadProject: versions first, then one query for the projects that changed.
          const versions = yield* sql`SELECT id, data_version::text AS version FROM projects
              WHERE id = ANY(${[...projectIds]})`.pipe(Effect.flatMap(decodeVersions))
          const result = new Map<string, ProjectSeries>()
          const stale = new Map<ProjectId, string>() // id → its current version
          for (const row of versions) {
            const cached = seriesCache.get(`${row.id}|${fromDay}`)
            if (cached !== undefined && cached.version === row.version) result.set(row.id, cached.series)
            else stale.set(row.id, row.version)
          }
          if (stale.size > 0) {
            const rows = yield* sql`SELECT p.id, ${seriesColumns(sql`p.id`, fromDay)} FROM projects p
                WHERE p.id = ANY(${[...stale.keys()]})`.pipe(Effect.flatMap(decodeSeriesById))
            for (const r of rows) {
              const series = toSeries(r)
              result.set(r.id, series)
              remember(`${r.id}|${fromDay}`, stale.get(r.id) ?? "", series)
            }
          }
          return result
        }, dieOnSqlError),
        writeDays: Effect.fn("MetricsRepo.writeDays")(
          function*(projectId, rows) {
            yield* sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`
            for (const t of rows.traffic ?? []) {
              yield* sql`INSERT INTO traffic_daily VALUES (${projectId}, ${t.day}::date, ${t.visitors}, ${t.pageviews},
                ${t.sessions}, ${t.bounces}, ${t.durationSeconds})
              ON CONFLICT (project_id, day) DO UPDATE SET visitors = EXCLUDED.visitors, pageviews = EXCLUDED.pageviews,
                sessions = EXCLUDED.sessions, bounces = EXCLUDED.bounces, duration_seconds = EXCLUDED.duration_seconds`
            }
            // Revenue rows are normally derived by the payments rollup (PaymentsRepo.write), which replaces
            // them all; this direct path stays for tests of the health and signals figures.
            for (const r of rows.revenue ?? []) {
              const c = revenueColumns(projectId, r)
              yield* sql`INSERT INTO revenue_daily ${sql.insert(c)}
              ON CONFLICT (project_id, day) DO UPDATE SET ${sql.update(c, ["project_id", "day"])}`
            }
            for (const s of rows.search ?? []) {
              yield* sql`INSERT INTO search_daily VALUES (${projectId}, ${s.day}::date, ${s.clicks}, ${s.impressions},
                ${s.positionWeighted})
              ON CONFLICT (project_id, day) DO UPDATE SET clicks = EXCLUDED.clicks, impressions = EXCLUDED.impressions,
                position_weighted = EXCLUDED.position_weighted`
            }
          },
          sql.withTransaction,
          dieOnSqlError
        )
      })
    })
  )

  static readonly memory = Layer.effect(
    MetricsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const since = <A extends { readonly day: string }>(m: Map<string, A> | undefined, from: string) =>
        [...(m?.values() ?? [])].filter((r) => r.day >= from).sort((a, b) => (a.day < b.day ? -1 : 1))
      // As in SQL: the revenue rows from `from` on, plus the last one before it (MRR and customers carry).
      const sinceWithCarry = (m: Map<string, RevenueDay> | undefined, from: string) => {
        const all = since(m, EPOCH)
        const carry = all.filter((r) => r.day < from).pop()
        return carry === undefined ? since(m, from) : [carry, ...since(m, from)]
      }
      const seriesOf = (projectId: string, from: string): ProjectSeries => ({
        traffic: since(db.traffic.get(projectId), from),
        revenue: sinceWithCarry(db.revenue.get(projectId), from),
        search: since(db.search.get(projectId), from),
        expenses: [...db.expenses.values()]
          .filter((e) => e.projectId === projectId && e.deletedAt === null)
          .map((e) => ({
            amountMinor: e.amountMinor,
            currency: e.currency,
            incurredOn: e.incurredOn,
            recurrence: e.recurrence
          }))
      })
      const put = <A extends { readonly day: string }>(
        table: Map<string, Map<string, A>>,
        projectId: string,
        rows: ReadonlyArray<A> | undefined
      ) => {
        if (!rows) return
        const m = table.get(projectId) ?? new Map<string, A>()
        for (const r of rows) m.set(r.day, r)
        table.set(projectId, m)
      }
      return MetricsRepo.of({
        loadProject: Effect.fn("MetricsRepo.loadProject")((projectId, fromDay) =>
          Effect.sync(() => {
            const project = db.projects.get(projectId)
            return project ? { project, series: seriesOf(projectId, fromDay ?? EPOCH) } : null
          })
        ),
        loadSeries: Effect.fn("MetricsRepo.loadSeries")((projectIds, fromDay) =>
          Effect.sync(() => new Map(projectIds.map((id) => [id, seriesOf(id, fromDay)] as const)))
        ),
        writeDays: Effect.fn("MetricsRepo.writeDays")((projectId, rows) =>
          Effect.sync(() => {
            put(db.traffic, projectId, rows.traffic)
            put(db.revenue, projectId, rows.revenue)
            put(db.search, projectId, rows.search)
          })
        )
      })
    })
  )
}
