/**
 * Plausible Stats API v2 rows → the traffic store's rows. Pure: no I/O, no clock (the caller passes the
 * days and `nowMs`). Plausible reports days and hours in the SITE's time zone, which we take to be the
 * project's: days are stored as they come, hours become the UTC instant their local wall-clock start
 * names (metrics/Dates.ts zonedInstant), so a DST day covers 23 or 25 UTC hours.
 *
 * Plausible gives rates and averages; the store keeps additive sums so any window can be re-aggregated:
 *   sessions = visits, bounces = round(bounce_rate% × visits / 100), durationSeconds = round(visit_duration × visits)
 */
import { addDays, addMonths, eachDay, startOfDayIn, startOfMonth, zonedInstant } from "../../metrics/Dates.ts"
import type {
  TrafficCountryDay,
  TrafficDay,
  TrafficHour,
  TrafficPageDay,
  TrafficSourceDay,
  TrafficUniques
} from "../../traffic/Types.ts"
import { TOP_PER_DAY } from "../../traffic/Types.ts"

/** One result row of POST /api/v2/query: dimension values and metric values, in the order asked. */
export interface PlausibleRow {
  readonly dimensions: ReadonlyArray<string>
  readonly metrics: ReadonlyArray<number | null>
}

/** The metrics of the day, hour and month queries, in this order. */
export const TRAFFIC_METRICS = ["visitors", "visits", "pageviews", "bounce_rate", "visit_duration"] as const
export const PAGE_METRICS = ["visitors", "pageviews"] as const
export const SOURCE_METRICS = ["visitors", "visits"] as const
export const COUNTRY_METRICS = ["visitors"] as const

/** Plausible's label for visits without a referrer; the store calls those "direct". */
export const PLAUSIBLE_DIRECT = "Direct / None"

const HOUR_MS = 3_600_000
const HOUR_LABEL = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}):00(:00)?$/

const count = (v: number | null | undefined): number => (v === null || v === undefined ? 0 : Math.round(v))
const value = (v: number | null | undefined): number => (v === null || v === undefined ? 0 : v)

type Sums = Omit<TrafficDay, "day">

/** The additive sums of one row of TRAFFIC_METRICS. */
export const sumsOf = (metrics: ReadonlyArray<number | null>): Sums => {
  const [visitors, visits, pageviews, bounceRate, visitDuration] = metrics
  const sessions = count(visits)
  return {
    visitors: count(visitors),
    pageviews: count(pageviews),
    sessions,
    // bounce_rate is a percentage of visits; dividing last keeps 33.33 × 3 / 100 at 0.9999 → 1.
    bounces: Math.round((value(bounceRate) * sessions) / 100),
    // visit_duration is the mean visit length in seconds.
    durationSeconds: Math.round(value(visitDuration) * sessions)
  }
}

const zeroSums: Sums = { visitors: 0, pageviews: 0, sessions: 0, bounces: 0, durationSeconds: 0 }

const addSums = (a: Sums, b: Sums): Sums => ({
  visitors: a.visitors + b.visitors,
  pageviews: a.pageviews + b.pageviews,
  sessions: a.sessions + b.sessions,
  bounces: a.bounces + b.bounces,
  durationSeconds: a.durationSeconds + b.durationSeconds
})

/**
 * Every local day of [from, to], from the ["time:day"] rows. Plausible leaves out days without visits:
 * those are written as zeros, so a day revised down to nothing does not keep its old figures.
 */
export const dayRows = (rows: ReadonlyArray<PlausibleRow>, from: string, to: string): Array<TrafficDay> => {
  const byDay = new Map<string, Sums>()
  for (const r of rows) byDay.set(r.dimensions[0].slice(0, 10), sumsOf(r.metrics))
  return eachDay(from, to).map((day) => ({ day, ...(byDay.get(day) ?? zeroSums) }))
}

/** The UTC instant (ms) of a local hour label "YYYY-MM-DD HH:00:00"; null when the label is not one. */
export const hourInstant = (label: string, timezone: string): number | null => {
  const m = HOUR_LABEL.exec(label)
  if (m === null) return null
  const hour = Number(m[2])
  return hour > 23 ? null : zonedInstant(m[1], hour * 60, timezone)
}

/**
 * Every UTC hour from local midnight of `from` up to the hour holding `nowMs` (or the end of `to`), from
 * the ["time:hour"] rows; hours without a row are zeros. On the autumn DST change Plausible has one
 * label for the repeated local hour: it lands on the earlier UTC hour (the day's total is unchanged).
 */
export const hourRows = (
  rows: ReadonlyArray<PlausibleRow>,
  from: string,
  to: string,
  timezone: string,
  nowMs: number
): Array<TrafficHour> => {
  const byHour = new Map<number, Sums>()
  for (const r of rows) {
    const at = hourInstant(r.dimensions[0], timezone)
    if (at === null) continue
    byHour.set(at, addSums(byHour.get(at) ?? zeroSums, sumsOf(r.metrics)))
  }
  const start = startOfDayIn(from, timezone)
  const end = Math.min(startOfDayIn(addDays(to, 1), timezone), Math.floor(nowMs / HOUR_MS) * HOUR_MS + HOUR_MS)
  const out: Array<TrafficHour> = []
  for (let t = start; t < end; t += HOUR_MS) {
    out.push({ hour: new Date(t).toISOString(), ...(byHour.get(t) ?? zeroSums) })
  }
  // A row outside the span (a clock that disagrees with ours) is still the provider's figure: keep it.
  for (const [t, s] of byHour) if (t < start || t >= end) out.push({ hour: new Date(t).toISOString(), ...s })
  return out
}

/** The top TOP_PER_DAY rows of each day, by `rank` (then key), as the store keeps them. */
const topPerDay = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  compare: (a: R, b: R) => number
): Array<R> => {
  const byDay = new Map<string, Array<R>>()
  for (const r of rows) {
    const list = byDay.get(r.day)
    if (list === undefined) byDay.set(r.day, [r])
    else list.push(r)
  }
  const out: Array<R> = []
  for (const list of byDay.values()) out.push(...list.sort(compare).slice(0, TOP_PER_DAY))
  return out
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Rows of ["time:day", <dimension>] summed per (day, key): the key is `keyOf` the second dimension, and the
 * two metrics are added up, first and second, for duplicates of a key.
 */
const sumPerDay = (rows: ReadonlyArray<PlausibleRow>, keyOf: (dimension: string) => string) => {
  const merged = new Map<
    string,
    { readonly day: string; readonly key: string; readonly first: number; readonly second: number }
  >()
  for (const r of rows) {
    const day = r.dimensions[0].slice(0, 10)
    const key = keyOf(r.dimensions[1])
    const id = `${day}\u0000${key}`
    const prev = merged.get(id)
    merged.set(id, {
      day,
      key,
      first: (prev?.first ?? 0) + count(r.metrics[0]),
      second: (prev?.second ?? 0) + count(r.metrics[1])
    })
  }
  return [...merged.values()]
}

/** Top pages per day, from ["time:day", "event:page"] rows of PAGE_METRICS; duplicates of a key are summed. */
export const pageRows = (rows: ReadonlyArray<PlausibleRow>): Array<TrafficPageDay> =>
  topPerDay(
    sumPerDay(rows, (path) => path).map(({ day, first, key, second }) => ({
      day,
      path: key,
      visitors: first,
      pageviews: second
    })),
    (a, b) => b.pageviews - a.pageviews || b.visitors - a.visitors || byText(a.path, b.path)
  )

/** Top sources per day, from ["time:day", "visit:source"] rows of SOURCE_METRICS; "Direct / None" → "direct". */
export const sourceRows = (rows: ReadonlyArray<PlausibleRow>): Array<TrafficSourceDay> =>
  topPerDay(
    sumPerDay(rows, (raw) => (raw === PLAUSIBLE_DIRECT || raw === "" ? "direct" : raw))
      .map(({ day, first, key, second }) => ({ day, source: key, visitors: first, sessions: second })),
    (a, b) => b.visitors - a.visitors || b.sessions - a.sessions || byText(a.source, b.source)
  )

const COUNTRY_CODE = /^[A-Z]{2}$/

/**
 * Top countries per day, from ["time:day", "visit:country"] rows of COUNTRY_METRICS. Plausible names a
 * country by its ISO 3166-1 alpha-2 code; a value that is not one (visits it could not locate) is left out,
 * so the countries of a day can add up to fewer visitors than the day. Duplicates of a key are summed.
 */
export const countryRows = (rows: ReadonlyArray<PlausibleRow>): Array<TrafficCountryDay> => {
  const merged = new Map<string, TrafficCountryDay>()
  for (const r of rows) {
    const day = r.dimensions[0].slice(0, 10)
    const country = r.dimensions[1].toUpperCase()
    if (!COUNTRY_CODE.test(country)) continue
    const key = `${day}\u0000${country}`
    merged.set(key, { day, country, visitors: (merged.get(key)?.visitors ?? 0) + count(r.metrics[0]) })
  }
  return topPerDay([...merged.values()], (a, b) => b.visitors - a.visitors || byText(a.country, b.country))
}

/**
 * The calendar months whose uniques a sync asks for: every month touching [from, to], each clipped at
 * `to` (the current month runs to today, as the analytics report's month bucket does).
 */
export const monthSpans = (from: string, to: string): Array<{ readonly from: string; readonly to: string }> => {
  const out: Array<{ from: string; to: string }> = []
  for (let m = startOfMonth(from); m <= to; m = addMonths(m, 1)) {
    const end = addDays(addMonths(m, 1), -1)
    out.push({ from: m, to: end < to ? end : to })
  }
  return out
}

/** One month's uniques from the aggregate query (no dimension: one row, or none when there were no visits). */
export const uniquesRow = (
  span: { readonly from: string; readonly to: string },
  rows: ReadonlyArray<PlausibleRow>
): TrafficUniques => ({
  from: span.from,
  to: span.to,
  visitors: count(rows[0]?.metrics[0])
})
