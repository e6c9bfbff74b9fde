/**
 * The traffic store: provider aggregates (write), self-collected events aggregated on write
 * (ingestEvents, rollup), and the one bounded read the analytics report needs (read). Reads never
 * touch traffic_events: their cost is O(hours + days in the window), whatever the raw volume.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { addDays, localTimeIn } from "../metrics/Dates.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { TrafficDay, TrafficQuery } from "../store/Series.ts"
import { dieOnSqlError, firstOf, Instant, JsonArray, rowsOf, singleOf, tuplesOf } from "../store/Sql.ts"
import { type Affected, affectedBy, aggregateEvents } from "./Aggregate.ts"
import { rollupSql } from "./Rollup.ts"

export type { TrafficQuery }
import type {
  TrafficCountryDay,
  TrafficEvent,
  TrafficHour,
  TrafficPageDay,
  TrafficSourceDay,
  TrafficUniques,
  TrafficWindow,
  TrafficWrite
} from "./Types.ts"

export interface TrafficRepoShape {
  /** Upserts provider rows (each replaces the stored row with the same key) and bumps data_version. */
  readonly write: (projectId: string, rows: TrafficWrite) => Effect.Effect<void>
  /** Stores raw events and re-aggregates the hours / local days / local months they touch, in one transaction. */
  readonly ingestEvents: (
    projectId: string,
    events: ReadonlyArray<TrafficEvent>,
    timezone: string
  ) => Effect.Effect<void>
  /** Re-aggregates every bucket between two instants from the stored events (after a bulk load). */
  readonly rollup: (projectId: string, timezone: string, fromIso: string, toIso: string) => Effect.Effect<void>
  /**
   * Everything the analytics report reads, in one round trip. `knownVersion`: the project's data_version
   * when the caller read it already (the authentication lookup), so the cache check needs no query.
   */
  readonly read: (projectId: string, query: TrafficQuery, knownVersion?: string | null) => Effect.Effect<TrafficWindow>
}

const HOUR_MS = 3_600_000
const INSERT_CHUNK = 5000
const CACHE_ENTRIES = 1000

/** Every hour, local day and month between two instants (a rollup over a range). */
export const affectedBetween = (fromIso: string, toIso: string, timezone: string): Affected => {
  const from = Math.floor(Date.parse(fromIso) / HOUR_MS) * HOUR_MS
  const to = Date.parse(toIso)
  const hours: Array<string> = []
  for (let t = from; t < to; t += HOUR_MS) hours.push(new Date(t).toISOString())
  const days: Array<string> = []
  if (to > from) {
    const last = localTimeIn(timezone, to - 1).day
    for (let d = localTimeIn(timezone, from).day; d <= last; d = addDays(d, 1)) days.push(d)
  }
  return { hours, days, months: [...new Set(days.map((d) => d.slice(0, 7)))] }
}

const toIso = (value: string): string => new Date(value).toISOString()
const dayText = (value: string): string => String(value).slice(0, 10)

/**
 * readWindow's columns: JSON arrays of positional tuples (tuplesOf). Timestamps and dates arrive as JSON
 * text; sums of int columns as numbers, of bigint columns as numbers or text — Number() takes both.
 */
type Num = number | string
type HourTuple = readonly [
  hour: string,
  visitors: Num,
  pageviews: Num,
  sessions: Num,
  bounces: Num,
  durationSeconds: Num
]
type DayTuple = readonly [day: string, visitors: Num, pageviews: Num, sessions: Num, bounces: Num, durationSeconds: Num]
type PageTuple = readonly [path: string, visitors: Num, pageviews: Num]
type SourceTuple = readonly [source: string, visitors: Num, sessions: Num]
type UniquesTuple = readonly [from: string, to: string, visitors: Num]
type CountryTuple = readonly [country: string, visitors: Num]
const WindowRow = Schema.Struct({
  hours: JsonArray,
  days: JsonArray,
  pages: JsonArray,
  sources: JsonArray,
  countries: JsonArray,
  uniques: JsonArray,
  previous_pages: JsonArray,
  previous_sources: JsonArray,
  previous_countries: JsonArray
})
const decodeWindow = singleOf(
  "traffic_hourly, traffic_daily, traffic_pages_daily, traffic_sources_daily, traffic_countries_daily, traffic_uniques",
  WindowRow
)
const decodeStarts = rowsOf("traffic_events", Schema.Struct({ started: Instant }))
const decodeVersion = firstOf("projects", Schema.Struct({ version: Schema.String }))

export class TrafficRepo extends Context.Service<TrafficRepo, TrafficRepoShape>()("sitehealth/TrafficRepo") {
  static readonly sql = Layer.effect(
    TrafficRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bump = (projectId: string) =>
        sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`
      const json = (rows: ReadonlyArray<unknown>) => JSON.stringify(rows)
      const readWindow = (projectId: string, q: TrafficQuery): Effect.Effect<TrafficWindow> => {
        const prevFrom = q.prevTopFrom ?? null
        const prevTo = q.prevTopTo ?? null
        return sql`WITH
          top_pages AS (SELECT path, sum(visitors) AS visitors, sum(pageviews) AS pageviews FROM traffic_pages_daily
              WHERE project_id = ${projectId} AND day >= ${q.topFrom}::date AND day <= ${q.topTo}::date
              GROUP BY path ORDER BY sum(pageviews) DESC, path COLLATE "C" LIMIT ${q.top}),
          top_sources AS (SELECT source, sum(visitors) AS visitors, sum(sessions) AS sessions FROM traffic_sources_daily
              WHERE project_id = ${projectId} AND day >= ${q.topFrom}::date AND day <= ${q.topTo}::date
              GROUP BY source ORDER BY sum(visitors) DESC, source COLLATE "C" LIMIT ${q.top}),
          top_countries AS (SELECT country, sum(visitors) AS visitors FROM traffic_countries_daily
              WHERE project_id = ${projectId} AND day >= ${q.topFrom}::date AND day <= ${q.topTo}::date
              GROUP BY country ORDER BY sum(visitors) DESC, country COLLATE "C" LIMIT ${q.top})
          SELECT
          (SELECT coalesce(json_agg(json_build_array(hour, visitors, pageviews, sessions, bounces, duration_seconds)
              ORDER BY hour), '[]'::json) FROM traffic_hourly
            WHERE project_id = ${projectId} AND hour >= ${q.hoursFrom}::timestamptz AND hour <
              ${q.hoursTo}::timestamptz) AS hours,
          (SELECT coalesce(json_agg(json_build_array(day, visitors, pageviews, sessions, bounces, duration_seconds)
              ORDER BY day), '[]'::json) FROM traffic_daily
            WHERE project_id = ${projectId} AND day >= ${q.from}::date AND day <= ${q.to}::date) AS days,
          (SELECT coalesce(json_agg(json_build_array(path, visitors, pageviews) ORDER BY pageviews DESC, path COLLATE
            "C"), '[]'::json)
            FROM top_pages) AS pages,
          (SELECT coalesce(json_agg(json_build_array(source, visitors, sessions) ORDER BY visitors DESC, source COLLATE
            "C"), '[]'::json)
            FROM top_sources) AS sources,
          (SELECT coalesce(json_agg(json_build_array(country, visitors) ORDER BY visitors DESC, country COLLATE "C"),
            '[]'::json)
            FROM top_countries) AS countries,
          (SELECT coalesce(json_agg(json_build_array(from_day, to_day, visitors)), '[]'::json) FROM traffic_uniques
            WHERE project_id = ${projectId} AND from_day >= ${q.from}::date AND to_day <= ${q.to}::date) AS uniques,
          (SELECT coalesce(json_agg(json_build_array(path, visitors, pageviews)), '[]'::json)
            FROM (SELECT path, sum(visitors) AS visitors, sum(pageviews) AS pageviews FROM traffic_pages_daily
              WHERE project_id = ${projectId} AND day >= ${prevFrom}::date AND day <= ${prevTo}::date
                AND path IN (SELECT path FROM top_pages) GROUP BY path) t) AS previous_pages,
          (SELECT coalesce(json_agg(json_build_array(source, visitors, sessions)), '[]'::json)
            FROM (SELECT source, sum(visitors) AS visitors, sum(sessions) AS sessions FROM traffic_sources_daily
              WHERE project_id = ${projectId} AND day >= ${prevFrom}::date AND day <= ${prevTo}::date
                AND source IN (SELECT source FROM top_sources) GROUP BY source) t) AS previous_sources,
          (SELECT coalesce(json_agg(json_build_array(country, visitors)), '[]'::json)
            FROM (SELECT country, sum(visitors) AS visitors FROM traffic_countries_daily
              WHERE project_id = ${projectId} AND day >= ${prevFrom}::date AND day <= ${prevTo}::date
                AND country IN (SELECT country FROM top_countries) GROUP BY country) t) AS previous_countries`.pipe(
          Effect.flatMap(decodeWindow),
          Effect.map((r): TrafficWindow => {
            const n = Number
            const pages = (v: string | ReadonlyArray<unknown>) =>
              tuplesOf<PageTuple>(v).map((a) => ({ path: a[0], visitors: n(a[1]), pageviews: n(a[2]) }))
            const sources = (v: string | ReadonlyArray<unknown>) =>
              tuplesOf<SourceTuple>(v).map((a) => ({ source: a[0], visitors: n(a[1]), sessions: n(a[2]) }))
            const countries = (v: string | ReadonlyArray<unknown>) =>
              tuplesOf<CountryTuple>(v).map((a) => ({ country: a[0], visitors: n(a[1]) }))
            return {
              hours: tuplesOf<HourTuple>(r.hours).map((a): TrafficHour => ({
                hour: toIso(a[0]),
                visitors: n(a[1]),
                pageviews: n(a[2]),
                sessions: n(a[3]),
                bounces: n(a[4]),
                durationSeconds: n(a[5])
              })),
              days: tuplesOf<DayTuple>(r.days).map((a): TrafficDay => ({
                day: dayText(a[0]),
                visitors: n(a[1]),
                pageviews: n(a[2]),
                sessions: n(a[3]),
                bounces: n(a[4]),
                durationSeconds: n(a[5])
              })),
              pages: pages(r.pages),
              sources: sources(r.sources),
              countries: countries(r.countries),
              uniques: tuplesOf<UniquesTuple>(r.uniques).map((a): TrafficUniques => ({
                from: dayText(a[0]),
                to: dayText(a[1]),
                visitors: n(a[2])
              })),
              previousPages: pages(r.previous_pages),
              previousSources: sources(r.previous_sources),
              previousCountries: countries(r.previous_countries)
            }
          }),
          dieOnSqlError
        )
      }
      const cache = new Map<string, { readonly version: string; readonly window: TrafficWindow }>()
      return TrafficRepo.of({
        write: Effect.fn("TrafficRepo.write")(
          function*(projectId, rows) {
            yield* bump(projectId)
            if (rows.hours?.length) {
              yield* sql`INSERT INTO traffic_hourly SELECT ${projectId}, x.hour, x.visitors, x.pageviews, x.sessions,
                  x.bounces,
                x."durationSeconds" FROM json_to_recordset(${
                json(rows.hours)
              }::json) AS x(hour timestamptz, visitors int,
                pageviews int, sessions int, bounces int, "durationSeconds" bigint)
              ON CONFLICT (project_id, hour) DO UPDATE SET visitors = EXCLUDED.visitors, pageviews = EXCLUDED.pageviews,
                sessions = EXCLUDED.sessions, bounces = EXCLUDED.bounces, duration_seconds = EXCLUDED.duration_seconds`
            }
            if (rows.days?.length) {
              yield* sql`INSERT INTO traffic_daily SELECT ${projectId}, x.day, x.visitors, x.pageviews, x.sessions,
                  x.bounces,
                x."durationSeconds" FROM json_to_recordset(${json(rows.days)}::json) AS x(day date, visitors int,
                pageviews int, sessions int, bounces int, "durationSeconds" bigint)
              ON CONFLICT (project_id, day) DO UPDATE SET visitors = EXCLUDED.visitors, pageviews = EXCLUDED.pageviews,
                sessions = EXCLUDED.sessions, bounces = EXCLUDED.bounces, duration_seconds = EXCLUDED.duration_seconds`
            }
            if (rows.pages?.length) {
              yield* sql`INSERT INTO traffic_pages_daily SELECT ${projectId}, x.day, x.path, x.visitors, x.pageviews
              FROM json_to_recordset(${json(rows.pages)}::json) AS x(day date, path text, visitors int, pageviews int)
              ON CONFLICT (project_id, day, path) DO UPDATE SET visitors = EXCLUDED.visitors, pageviews =
                EXCLUDED.pageviews`
            }
            if (rows.sources?.length) {
              yield* sql`INSERT INTO traffic_sources_daily SELECT ${projectId}, x.day, x.source, x.visitors, x.sessions
              FROM json_to_recordset(${
                json(rows.sources)
              }::json) AS x(day date, source text, visitors int, sessions int)
              ON CONFLICT (project_id, day, source) DO UPDATE SET visitors = EXCLUDED.visitors, sessions =
                EXCLUDED.sessions`
            }
            if (rows.countries?.length) {
              yield* sql`INSERT INTO traffic_countries_daily SELECT ${projectId}, x.day, x.country, x.visitors
              FROM json_to_recordset(${json(rows.countries)}::json) AS x(day date, country text, visitors int)
              ON CONFLICT (project_id, day, country) DO UPDATE SET visitors = EXCLUDED.visitors`
            }
            if (rows.uniques?.length) {
              yield* sql`INSERT INTO traffic_uniques SELECT ${projectId}, x."from", x."to", x.visitors
              FROM json_to_recordset(${json(rows.uniques)}::json) AS x("from" date, "to" date, visitors int)
              ON CONFLICT (project_id, from_day, to_day) DO UPDATE SET visitors = EXCLUDED.visitors`
            }
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        ingestEvents: Effect.fn("TrafficRepo.ingestEvents")(function*(projectId, events, timezone) {
          if (events.length === 0) return
          return yield* sql.withTransaction(Effect.gen(function*() {
            yield* bump(projectId)
            for (let i = 0; i < events.length; i += INSERT_CHUNK) {
              const chunk = events.slice(i, i + INSERT_CHUNK).map((e) => ({
                ...e,
                durationSeconds: e.durationSeconds ?? 0
              }))
              yield* sql`INSERT INTO traffic_events (project_id, occurred_at, visitor_id, session_id, path, source,
                  duration_seconds)
                SELECT ${projectId}, x.at, x."visitorId", x."sessionId", x.path, x.source, x."durationSeconds"
                FROM json_to_recordset(${json(chunk)}::json) AS x(at timestamptz, "visitorId" text, "sessionId" text,
                  path text, source text, "durationSeconds" int)`
            }
            // A session continued by this batch counts where it started: that bucket changes too.
            const sessions = [...new Set(events.map((e) => e.sessionId))]
            const starts = yield* sql`SELECT min(occurred_at) AS started FROM traffic_events
              WHERE project_id = ${projectId} AND session_id IN (SELECT value FROM json_array_elements_text(${
              json(sessions)
            }::json))
              GROUP BY session_id`.pipe(Effect.flatMap(decodeStarts))
            const instants = [...events.map((e) => Date.parse(e.at)), ...starts.map((r) => r.started.getTime())]
            yield* rollupSql(sql, projectId, timezone, affectedBy(instants, timezone))
          })).pipe(dieOnSqlError)
        }),
        rollup: Effect.fn("TrafficRepo.rollup")(
          function*(projectId, timezone, fromIso, toIso) {
            yield* bump(projectId)
            yield* rollupSql(sql, projectId, timezone, affectedBetween(fromIso, toIso, timezone))
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        read: Effect.fn("TrafficRepo.read")(function*(projectId, q, knownVersion) {
          // Day and month reports (no hour range) are cached per query, tagged with data_version: every
          // traffic write bumps it in its transaction, so a hit is what a fresh read would return. A write
          // between the two reads leaves newer rows under the older version: the next read reloads.
          if (q.hoursFrom !== q.hoursTo) return yield* readWindow(projectId, q)
          const key = `${projectId}|${q.from}|${q.to}|${q.topFrom}|${q.topTo}|${q.top}|${q.prevTopFrom ?? ""}|${
            q.prevTopTo ?? ""
          }`
          const version = knownVersion ??
            (yield* sql`SELECT data_version::text AS version FROM projects WHERE id = ${projectId}`
              .pipe(Effect.flatMap(decodeVersion), Effect.map((r) => r?.version ?? "")))
          const hit = cache.get(key)
          if (hit !== undefined && hit.version === version) return hit.window
          const window = yield* readWindow(projectId, q)
          cache.delete(key)
          cache.set(key, { version, window })
          if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
          return window
        }, dieOnSqlError)
      })
    })
  )

  static readonly memory = Layer.effect(
    TrafficRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb // daily rows live in db.traffic, shared with MetricsRepo.memory
      const hours = new Map<string, Map<string, TrafficHour>>()
      const pages = new Map<string, Map<string, TrafficPageDay>>()
      const sources = new Map<string, Map<string, TrafficSourceDay>>()
      const countries = new Map<string, Map<string, TrafficCountryDay>>()
      const uniques = new Map<string, Map<string, TrafficUniques>>()
      const events = new Map<string, Array<TrafficEvent>>()
      const table = <A>(m: Map<string, Map<string, A>>, projectId: string) => {
        let t = m.get(projectId)
        if (t === undefined) m.set(projectId, t = new Map())
        return t
      }
      const put = (projectId: string, rows: TrafficWrite) => {
        for (const h of rows.hours ?? []) table(hours, projectId).set(toIso(h.hour), { ...h, hour: toIso(h.hour) })
        for (const d of rows.days ?? []) table(db.traffic, projectId).set(d.day, d)
        for (const p of rows.pages ?? []) table(pages, projectId).set(`${p.day}|${p.path}`, p)
        for (const s of rows.sources ?? []) table(sources, projectId).set(`${s.day}|${s.source}`, s)
        for (const c of rows.countries ?? []) table(countries, projectId).set(`${c.day}|${c.country}`, c)
        for (const u of rows.uniques ?? []) table(uniques, projectId).set(`${u.from}|${u.to}`, u)
      }
      const rollup = (projectId: string, timezone: string, affected: Affected) => {
        const rows = aggregateEvents(events.get(projectId) ?? [], timezone, affected)
        // Pages and sources are replaced per affected day, as in SQL.
        const days = new Set(affected.days)
        for (const m of [table(pages, projectId), table(sources, projectId)] as Array<Map<string, { day: string }>>) {
          for (const [k, v] of m) if (days.has(v.day)) m.delete(k)
        }
        put(projectId, rows)
      }
      const sum = <A>(list: Iterable<A>, key: (a: A) => string, add: (a: A) => Array<number>) => {
        const out = new Map<string, Array<number>>()
        for (const a of list) {
          const prev = out.get(key(a))
          const next = add(a)
          out.set(key(a), prev === undefined ? next : prev.map((x, i) => x + next[i]))
        }
        return [...out]
      }
      const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
      return TrafficRepo.of({
        write: Effect.fn("TrafficRepo.write")((projectId, rows) => Effect.sync(() => put(projectId, rows))),
        ingestEvents: Effect.fn("TrafficRepo.ingestEvents")((projectId, batch, timezone) =>
          Effect.sync(() => {
            if (batch.length === 0) return
            const all = events.get(projectId) ?? []
            all.push(...batch)
            events.set(projectId, all)
            const sessions = new Set(batch.map((e) => e.sessionId))
            const starts = new Map<string, number>()
            for (const e of all) {
              if (!sessions.has(e.sessionId)) continue
              const t = Date.parse(e.at)
              starts.set(e.sessionId, Math.min(starts.get(e.sessionId) ?? t, t))
            }
            rollup(
              projectId,
              timezone,
              affectedBy([...batch.map((e) => Date.parse(e.at)), ...starts.values()], timezone)
            )
          })
        ),
        rollup: Effect.fn("TrafficRepo.rollup")((projectId, timezone, fromIso, toIso) =>
          Effect.sync(() => rollup(projectId, timezone, affectedBetween(fromIso, toIso, timezone)))
        ),
        read: Effect.fn("TrafficRepo.read")((projectId, q) =>
          Effect.sync((): TrafficWindow => {
            const inTop = (r: { day: string }) => r.day >= q.topFrom && r.day <= q.topTo
            const prevFrom = q.prevTopFrom ?? null
            const prevTo = q.prevTopTo ?? null
            const inPrev = (r: { day: string }) =>
              prevFrom !== null && prevTo !== null && r.day >= prevFrom && r.day <= prevTo
            const pagesIn = (keep: (r: TrafficPageDay) => boolean) =>
              sum([...table(pages, projectId).values()].filter(keep), (p) => p.path, (p) => [p.visitors, p.pageviews])
                .map(([path, [visitors, pageviews]]) => ({ path, visitors, pageviews }))
            const sourcesIn = (keep: (r: TrafficSourceDay) => boolean) =>
              sum(
                [...table(sources, projectId).values()].filter(keep),
                (s) => s.source,
                (s) => [s.visitors, s.sessions]
              )
                .map(([source, [visitors, sessions]]) => ({ source, visitors, sessions }))
            const countriesIn = (keep: (r: TrafficCountryDay) => boolean) =>
              sum([...table(countries, projectId).values()].filter(keep), (c) => c.country, (c) => [c.visitors])
                .map(([country, [visitors]]) => ({ country, visitors }))
            const topPages = pagesIn(inTop).sort((a, b) => b.pageviews - a.pageviews || byName(a.path, b.path)).slice(
              0,
              q.top
            )
            const topSources = sourcesIn(inTop).sort((a, b) => b.visitors - a.visitors || byName(a.source, b.source))
              .slice(0, q.top)
            const topCountries = countriesIn(inTop).sort((a, b) =>
              b.visitors - a.visitors || byName(a.country, b.country)
            ).slice(0, q.top)
            const pageKeys = new Set(topPages.map((p) => p.path))
            const sourceKeys = new Set(topSources.map((s) => s.source))
            const countryKeys = new Set(topCountries.map((c) => c.country))
            return {
              hours: [...table(hours, projectId).values()]
                .filter((h) => h.hour >= toIso(q.hoursFrom) && h.hour < toIso(q.hoursTo))
                .sort((a, b) => byName(a.hour, b.hour)),
              days: [...table(db.traffic, projectId).values()]
                .filter((d) => d.day >= q.from && d.day <= q.to)
                .sort((a, b) => byName(a.day, b.day)),
              pages: topPages,
              sources: topSources,
              countries: topCountries,
              uniques: [...table(uniques, projectId).values()].filter((u) => u.from >= q.from && u.to <= q.to),
              previousPages: pagesIn((p) => inPrev(p) && pageKeys.has(p.path)),
              previousSources: sourcesIn((s) => inPrev(s) && sourceKeys.has(s.source)),
              previousCountries: countriesIn((c) => inPrev(c) && countryKeys.has(c.country))
            }
          })
        )
      })
    })
  )
}
