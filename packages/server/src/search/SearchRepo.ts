/**
 * Search Console rows: the property's daily totals (search_daily), and the day's top queries and pages.
 * Every write bumps the project's data_version in the same transaction (the series cache relies on it).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { DayWindow } from "../metrics/Numbers.ts"
import { collapseTop } from "../metrics/Seo.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { SearchDay } from "../store/Series.ts"
import { bulkRowsOf, Day, dieOnSqlError, firstOf, rowsOf, Wide } from "../store/Sql.ts"
import { SEARCH_ROWS_PER_DAY, type SearchPageDay, type SearchQueryDay, type SearchRepoShape } from "./Types.ts"

export type { SearchRepoShape } from "./Types.ts"

/** Most clicks first, then impressions, then the key (code-unit order, as `COLLATE "C"` in Postgres). */
const byTraffic =
  <R extends { readonly clicks: number; readonly impressions: number }>(key: (r: R) => string) => (a: R, b: R) =>
    b.clicks - a.clicks || b.impressions - a.impressions || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)

/** The day's rows beyond the cap are dropped: keep the top SEARCH_ROWS_PER_DAY of each day. */
const capPerDay = <R extends { readonly day: string; readonly clicks: number; readonly impressions: number }>(
  rows: Iterable<R>,
  key: (r: R) => string
): Array<R> => {
  const byDay = new Map<string, Array<R>>()
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r])
  return [...byDay.values()].flatMap((day) => day.sort(byTraffic(key)).slice(0, SEARCH_ROWS_PER_DAY))
}

/** The columns every search read selects; sums of int columns arrive as bigint, hence Wide and Number(). */
const SearchRow = Schema.Struct({ day: Day, clicks: Wide, impressions: Wide, position_weighted: Wide })
const KeyedRow = Schema.Struct({ ...SearchRow.fields, key: Schema.String })
const decodeTotals = rowsOf("search_daily", SearchRow)
// A report's query and page rows: up to 500 per day over two windows (store/Sql.ts bulkRowsOf).
const decodeKeyed = (table: string) => bulkRowsOf(table, KeyedRow)
const decodeDataThrough = firstOf("search_daily", Schema.Struct({ day: Schema.NullOr(Day) }))

const rowOf = (r: typeof SearchRow.Type): SearchDay => ({
  day: r.day,
  clicks: Number(r.clicks),
  impressions: Number(r.impressions),
  positionWeighted: Number(r.position_weighted)
})

export class SearchRepo extends Context.Service<SearchRepo, SearchRepoShape>()("sitehealth/SearchRepo") {
  static readonly sql = Layer.effect(
    SearchRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /** Upserts one kind of keyed rows, then trims the days written back to the cap. */
      const writeKeyed = (
        projectId: string,
        table: "search_queries_daily" | "search_pages_daily",
        column: "query" | "page",
        rows: ReadonlyArray<{ day: string; key: string; clicks: number; impressions: number; positionWeighted: number }>
      ) =>
        Effect.gen(function*() {
          if (rows.length === 0) return
          // One multi-row statement per 1000 rows: a day of 500 queries is one round trip, not 500.
          for (let i = 0; i < rows.length; i += 1000) {
            const records = rows.slice(i, i + 1000).map((r): Record<string, unknown> => ({
              project_id: projectId,
              day: r.day,
              [column]: r.key,
              clicks: Math.round(r.clicks),
              impressions: Math.round(r.impressions),
              position_weighted: r.positionWeighted
            }))
            yield* sql`INSERT INTO ${sql(table)} ${
              sql.insert(records as [Record<string, unknown>, ...Array<Record<string, unknown>>])
            }
              ON CONFLICT (project_id, day, ${sql(column)}) DO UPDATE SET clicks = EXCLUDED.clicks,
                impressions = EXCLUDED.impressions, position_weighted = EXCLUDED.position_weighted`
          }
          const days = [...new Set(rows.map((r) => r.day))]
          yield* sql`DELETE FROM ${sql(table)} t USING (
                SELECT day, ${sql(column)} AS key, row_number() OVER (PARTITION BY day
                  ORDER BY clicks DESC, impressions DESC, ${sql(column)} COLLATE "C") AS rank
                FROM ${sql(table)} WHERE project_id = ${projectId} AND day = ANY(${days}::date[])
              ) ranked
              WHERE t.project_id = ${projectId} AND t.day = ranked.day AND t.${sql(column)} = ranked.key
                AND ranked.rank > ${SEARCH_ROWS_PER_DAY}`
        })

      const loadKeyed = (table: string, column: string, projectId: string, fromDay: string, toDay: string) =>
        sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, ${sql(column)} AS key, clicks, impressions, position_weighted
            FROM ${sql(table)} WHERE project_id = ${projectId} AND day BETWEEN ${fromDay}::date AND ${toDay}::date
            ORDER BY day, ${sql(column)} COLLATE "C"`.pipe(Effect.flatMap(decodeKeyed(table)), dieOnSqlError)

      /** Sums per key over the current window (top `limit`) and, for those keys, over the previous one. */
      const loadTop = (
        table: string,
        column: string,
        projectId: string,
        current: DayWindow,
        previous: DayWindow,
        limit: number
      ) =>
        sql`WITH cur AS (
              SELECT ${sql(column)} AS key, sum(clicks) AS clicks, sum(impressions) AS impressions,
                sum(position_weighted) AS position_weighted
              FROM ${sql(table)}
              WHERE project_id = ${projectId} AND day BETWEEN ${current.from}::date AND ${current.to}::date
              GROUP BY ${sql(column)}
              ORDER BY sum(clicks) DESC, sum(impressions) DESC, ${sql(column)} COLLATE "C"
              LIMIT ${limit}
            ), prev AS (
              SELECT ${sql(column)} AS key, sum(clicks) AS clicks, sum(impressions) AS impressions,
                sum(position_weighted) AS position_weighted
              FROM ${sql(table)}
              WHERE project_id = ${projectId} AND day BETWEEN ${previous.from}::date AND ${previous.to}::date
                AND ${sql(column)} IN (SELECT key FROM cur)
              GROUP BY ${sql(column)}
            )
            SELECT ${current.from} AS day, * FROM cur
            UNION ALL SELECT ${previous.from} AS day, * FROM prev`.pipe(
          Effect.flatMap(decodeKeyed(table)),
          dieOnSqlError
        )

      return SearchRepo.of({
        write: Effect.fn("SearchRepo.write")(
          function*(projectId, rows) {
            yield* sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`
            for (const s of rows.totals ?? []) {
              yield* sql`INSERT INTO search_daily VALUES (${projectId}, ${s.day}::date, ${Math.round(s.clicks)},
                ${Math.round(s.impressions)}, ${s.positionWeighted})
              ON CONFLICT (project_id, day) DO UPDATE SET clicks = EXCLUDED.clicks, impressions = EXCLUDED.impressions,
                position_weighted = EXCLUDED.position_weighted`
            }
            // Capped before sending too, so an oversized batch costs no more than the rows it keeps.
            yield* writeKeyed(
              projectId,
              "search_queries_daily",
              "query",
              capPerDay(rows.queries ?? [], (r) => r.query).map((r) => ({ ...r, key: r.query }))
            )
            yield* writeKeyed(
              projectId,
              "search_pages_daily",
              "page",
              capPerDay(rows.pages ?? [], (r) => r.page).map((r) => ({ ...r, key: r.page }))
            )
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        loadTotals: Effect.fn("SearchRepo.loadTotals")(function*(projectId, fromDay, toDay) {
          return yield* sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, clicks, impressions, position_weighted FROM
              search_daily
              WHERE project_id = ${projectId} AND day BETWEEN ${fromDay}::date AND ${toDay}::date ORDER BY day`.pipe(
            Effect.flatMap(decodeTotals),
            Effect.map((rows): ReadonlyArray<SearchDay> => rows.map(rowOf)),
            dieOnSqlError
          )
        }),
        loadQueryDays: Effect.fn("SearchRepo.loadQueryDays")(function*(projectId, fromDay, toDay) {
          const rows = yield* loadKeyed("search_queries_daily", "query", projectId, fromDay, toDay)
          return rows.map((r): SearchQueryDay => ({ ...rowOf(r), query: r.key }))
        }),
        loadPageDays: Effect.fn("SearchRepo.loadPageDays")(function*(projectId, fromDay, toDay) {
          const rows = yield* loadKeyed("search_pages_daily", "page", projectId, fromDay, toDay)
          return rows.map((r): SearchPageDay => ({ ...rowOf(r), page: r.key }))
        }),
        loadTopQueries: Effect.fn("SearchRepo.loadTopQueries")(function*(projectId, current, previous, limit) {
          const rows = yield* loadTop("search_queries_daily", "query", projectId, current, previous, limit)
          return rows.map((r): SearchQueryDay => ({ ...rowOf(r), query: r.key }))
        }),
        loadTopPages: Effect.fn("SearchRepo.loadTopPages")(function*(projectId, current, previous, limit) {
          const rows = yield* loadTop("search_pages_daily", "page", projectId, current, previous, limit)
          return rows.map((r): SearchPageDay => ({ ...rowOf(r), page: r.key }))
        }),
        // Three index-only max lookups on the primary keys' (project_id, day) prefix.
        dataThrough: Effect.fn("SearchRepo.dataThrough")(function*(projectId) {
          return yield* sql`SELECT to_char(GREATEST(
                (SELECT max(day) FROM search_daily WHERE project_id = ${projectId}),
                (SELECT max(day) FROM search_queries_daily WHERE project_id = ${projectId}),
                (SELECT max(day) FROM search_pages_daily WHERE project_id = ${projectId})
              ), 'YYYY-MM-DD') AS day`.pipe(
            Effect.flatMap(decodeDataThrough),
            Effect.map((r) => r?.day ?? null),
            dieOnSqlError
          )
        })
      })
    })
  )

  /** Totals go to MemoryDb.search (shared with MetricsRepo.memory); queries and pages live in this layer. */
  static readonly memory = Layer.effect(
    SearchRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const queries = new Map<string, Map<string, SearchQueryDay>>() // project → day|query → row
      const pages = new Map<string, Map<string, SearchPageDay>>()
      const put = <R extends { readonly day: string; readonly clicks: number; readonly impressions: number }>(
        table: Map<string, Map<string, R>>,
        projectId: string,
        rows: ReadonlyArray<R>,
        key: (r: R) => string
      ) => {
        if (rows.length === 0) return
        const m = table.get(projectId) ?? new Map<string, R>()
        for (const r of rows) m.set(`${r.day}|${key(r)}`, r)
        const days = new Set(rows.map((r) => r.day))
        const kept = capPerDay([...m.values()].filter((r) => days.has(r.day)), key)
        for (const [k, r] of m) if (days.has(r.day)) m.delete(k)
        for (const r of kept) m.set(`${r.day}|${key(r)}`, r)
        table.set(projectId, m)
      }
      const between = <R extends { readonly day: string }>(m: Map<string, R> | undefined, from: string, to: string) =>
        [...(m?.values() ?? [])].filter((r) => r.day >= from && r.day <= to).sort((
          a,
          b
        ) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
      const lastDay = (days: Iterable<{ readonly day: string }>): string | null => {
        let last: string | null = null
        for (const r of days) if (last === null || r.day > last) last = r.day
        return last
      }
      return SearchRepo.of({
        write: Effect.fn("SearchRepo.write")((projectId, rows) =>
          Effect.sync(() => {
            if (rows.totals !== undefined && rows.totals.length > 0) {
              const m = db.search.get(projectId) ?? new Map<string, SearchDay>()
              for (const s of rows.totals) m.set(s.day, s)
              db.search.set(projectId, m)
            }
            put(queries, projectId, rows.queries ?? [], (r) => r.query)
            put(pages, projectId, rows.pages ?? [], (r) => r.page)
          })
        ),
        loadTotals: Effect.fn("SearchRepo.loadTotals")((projectId, fromDay, toDay) =>
          Effect.sync(() => between(db.search.get(projectId), fromDay, toDay))
        ),
        loadQueryDays: Effect.fn("SearchRepo.loadQueryDays")((projectId, fromDay, toDay) =>
          Effect.sync(() => between(queries.get(projectId), fromDay, toDay))
        ),
        loadPageDays: Effect.fn("SearchRepo.loadPageDays")((projectId, fromDay, toDay) =>
          Effect.sync(() => between(pages.get(projectId), fromDay, toDay))
        ),
        loadTopQueries: Effect.fn("SearchRepo.loadTopQueries")((projectId, current, previous, limit) =>
          Effect.sync(() =>
            collapseTop(
              [...(queries.get(projectId)?.values() ?? [])],
              (r) => r.query,
              (query, day, s) => ({ day, query, ...s }),
              current,
              previous,
              limit
            )
          )
        ),
        loadTopPages: Effect.fn("SearchRepo.loadTopPages")((projectId, current, previous, limit) =>
          Effect.sync(() =>
            collapseTop(
              [...(pages.get(projectId)?.values() ?? [])],
              (r) => r.page,
              (page, day, s) => ({ day, page, ...s }),
              current,
              previous,
              limit
            )
          )
        ),
        dataThrough: Effect.fn("SearchRepo.dataThrough")((projectId) =>
          Effect.sync(() => {
            const days = [
              lastDay(db.search.get(projectId)?.values() ?? []),
              lastDay(queries.get(projectId)?.values() ?? []),
              lastDay(pages.get(projectId)?.values() ?? [])
            ].filter((d): d is string => d !== null)
            return days.length === 0 ? null : days.sort().at(-1)!
          })
        )
      })
    })
  )
}
