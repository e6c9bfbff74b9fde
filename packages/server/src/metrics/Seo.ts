/**
 * The SEO report, computed from Search Console rows. See Compute.ts for the conventions.
 *
 * Search data lags 2–3 days, so the window ends at `dataThrough` (the last day with data), not today:
 * a window ending today would compare two empty days against two full ones and show a false drop. The last days
 * with data are provisional (`provisionalFrom`): Google still revises them, and the next sync fetches them again.
 */
import type { Period, ProjectId } from "@sitehealth/domain/Common"
import { SEARCH_REVISED_DAYS, type Seo } from "@sitehealth/domain/Seo"
import type { SearchDay, SearchPageDay, SearchQueryDay } from "../store/Series.ts"
import { addDays, daysBetween, eachDay } from "./Dates.ts"
import { changeOf, inWindow, num, periodWindow, previousWindow, ratio, roundTo, sumIn } from "./Numbers.ts"
import type { DayWindow } from "./Numbers.ts"

/** Rows shown in topQueries / topPages. */
export const SEO_TOP_ROWS = 10

export interface SeoTotalsFigures {
  readonly clicks: number
  readonly impressions: number
  readonly ctr: number | null
  readonly averagePosition: number | null
}

/** Σ clicks, Σ impressions, CTR = clicks ÷ impressions, position = Σ(position × impressions) ÷ Σ impressions. */
export const seoTotals = (rows: ReadonlyArray<SearchDay>, w: DayWindow): SeoTotalsFigures => {
  const clicks = Math.round(sumIn(rows, w, (r) => r.clicks))
  const impressions = Math.round(sumIn(rows, w, (r) => r.impressions))
  const positionWeighted = sumIn(rows, w, (r) => r.positionWeighted)
  return {
    clicks,
    impressions,
    ctr: ratio(clicks, impressions),
    averagePosition: ratio(positionWeighted, impressions, 2)
  }
}

export interface SeoWindows {
  readonly window: DayWindow
  readonly previous: DayWindow
  readonly dataThrough: string | null
  readonly lagDays: number | null
  /** dataThrough − SEARCH_REVISED_DAYS: from this day on, Google may still revise the figures. */
  readonly provisionalFrom: string | null
}

/**
 * The period's window, computed as if "today" were the last day with data (never later than today):
 * today → [anchor, anchor]; yesterday → [min(today − 1, dataThrough)]; 7d/30d → the last 7/30 days to the
 * anchor; 3m/12m → calendar months to date of the anchor; all → the first stored day to the anchor.
 * Without data the anchor is today; a stored day after today counts as today. The previous window has the same number
 * of days, just before.
 */
export const seoWindows = (
  period: Period,
  today: string,
  stored: string | null,
  firstDay: string | null
): SeoWindows => {
  // A row dated after today (a provider in a zone ahead of the project's) never stretches the window.
  const dataThrough = stored !== null && stored > today ? today : stored
  const anchor = dataThrough ?? today
  const window = period === "yesterday"
    ? (() => {
      const y = addDays(today, -1)
      const d = y < anchor ? y : anchor
      return { from: d, to: d }
    })()
    : periodWindow(period, anchor, firstDay)
  return {
    window,
    previous: previousWindow(window),
    dataThrough,
    lagDays: dataThrough === null ? null : daysBetween(dataThrough, today),
    provisionalFrom: dataThrough === null ? null : addDays(dataThrough, -SEARCH_REVISED_DAYS)
  }
}

export interface TopRowChange {
  readonly clicks: number
  readonly impressions: number
  readonly ctr: number | null
  readonly position: number | null
  readonly previousClicks: number
  readonly previousImpressions: number
  readonly previousPosition: number | null
  readonly clicksChange: number | null
  readonly positionChange: number | null
}

export interface Sums {
  clicks: number
  impressions: number
  positionWeighted: number
}

type Keyed = {
  readonly day: string
  readonly clicks: number
  readonly impressions: number
  readonly positionWeighted: number
}

const sumsByKey = <R extends Keyed>(rows: ReadonlyArray<R>, keyOf: (r: R) => string, w: DayWindow) => {
  const out = new Map<string, Sums>()
  for (const r of rows) {
    if (!inWindow(r.day, w)) continue
    const key = keyOf(r)
    const s = out.get(key) ?? { clicks: 0, impressions: 0, positionWeighted: 0 }
    s.clicks += num(r.clicks)
    s.impressions += num(r.impressions)
    s.positionWeighted += num(r.positionWeighted)
    out.set(key, s)
  }
  return out
}

/** Most clicks first, then most impressions, then the key in code-unit order (the store sorts the same). */
const byTraffic = (a: readonly [string, Sums], b: readonly [string, Sums]) =>
  b[1].clicks - a[1].clicks || b[1].impressions - a[1].impressions || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)

/** The `limit` keys with the most clicks in `current` (only keys with a row in it), with both windows' sums. */
const topKeys = <R extends Keyed>(
  rows: ReadonlyArray<R>,
  keyOf: (r: R) => string,
  current: DayWindow,
  previous: DayWindow,
  limit: number
) => {
  const cur = sumsByKey(rows, keyOf, current)
  const prev = sumsByKey(rows, keyOf, previous)
  const top = [...cur.entries()].sort(byTraffic).slice(0, Math.max(0, limit))
  return top.map(([key, c]) => ({
    key,
    current: c,
    previous: prev.get(key) ?? { clicks: 0, impressions: 0, positionWeighted: 0 }
  }))
}

const changeRow = (c: Sums, p: Sums): TopRowChange => {
  const position = ratio(c.positionWeighted, c.impressions, 2)
  const previousPosition = ratio(p.positionWeighted, p.impressions, 2)
  // From the unrounded positions, so the change is exact to its own 2 decimals.
  const rawNow = c.impressions > 0 ? c.positionWeighted / c.impressions : null
  const rawBefore = p.impressions > 0 ? p.positionWeighted / p.impressions : null
  return {
    clicks: Math.round(c.clicks),
    impressions: Math.round(c.impressions),
    ctr: ratio(c.clicks, c.impressions),
    position,
    previousClicks: Math.round(p.clicks),
    previousImpressions: Math.round(p.impressions),
    previousPosition,
    clicksChange: changeOf(c.clicks, p.clicks),
    positionChange: rawNow === null || rawBefore === null ? null : roundTo(rawNow - rawBefore, 2)
  }
}

/**
 * The `limit` queries with the most clicks in `current` (ties: more impressions, then the query), each with
 * its figures in `current` and `previous`. A query with no row in `current` is not listed (call again with
 * the windows swapped to find queries that vanished). positionChange > 0 means the query ranks lower now.
 */
export const topQueryChanges = (
  rows: ReadonlyArray<SearchQueryDay>,
  current: DayWindow,
  previous: DayWindow,
  limit: number
): Array<TopRowChange & { readonly query: string }> =>
  topKeys(rows, (r) => r.query, current, previous, limit).map((t) => ({
    query: t.key,
    ...changeRow(t.current, t.previous)
  }))

/** As topQueryChanges, for landing pages. */
export const topPageChanges = (
  rows: ReadonlyArray<SearchPageDay>,
  current: DayWindow,
  previous: DayWindow,
  limit: number
): Array<TopRowChange & { readonly page: string }> =>
  topKeys(rows, (r) => r.page, current, previous, limit).map((t) => ({
    page: t.key,
    ...changeRow(t.current, t.previous)
  }))

/**
 * The rows of the top `limit` keys collapsed to one row per (key, window), dated at the window's first day:
 * what SearchRepo.loadTopQueries / loadTopPages return (the in-memory store uses this; Postgres does the same
 * in SQL). topQueryChanges on these rows equals topQueryChanges on the raw days.
 */
export const collapseTop = <R extends Keyed>(
  rows: ReadonlyArray<R>,
  keyOf: (r: R) => string,
  make: (key: string, day: string, s: Sums) => R,
  current: DayWindow,
  previous: DayWindow,
  limit: number
): Array<R> =>
  topKeys(rows, keyOf, current, previous, limit).flatMap((t) => [
    make(t.key, current.from, t.current),
    ...(t.previous.clicks === 0 && t.previous.impressions === 0 && t.previous.positionWeighted === 0
      ? []
      : [make(t.key, previous.from, t.previous)])
  ])

export interface SeoInput {
  readonly projectId: ProjectId
  readonly period: Period
  /** Today in the project's time zone. */
  readonly today: string
  /** The last day with search data, or null. */
  readonly dataThrough: string | null
  /** The first stored day (for period "all"), or null. */
  readonly firstDay: string | null
  /** The property's daily totals covering both windows. */
  readonly totals: ReadonlyArray<SearchDay>
  /** Query rows covering both windows (raw days or SearchRepo.loadTopQueries' collapsed rows). */
  readonly queries: ReadonlyArray<SearchQueryDay>
  readonly pages: ReadonlyArray<SearchPageDay>
}

/** One point per day of `w` (zero-filled), each the day's seoTotals. */
export const seoSeries = (rows: ReadonlyArray<SearchDay>, w: DayWindow): Seo["series"] => {
  const byDay = new Map<string, Array<SearchDay>>()
  for (const r of rows) {
    if (r.day < w.from || r.day > w.to) continue
    const list = byDay.get(r.day)
    if (list === undefined) byDay.set(r.day, [r])
    else list.push(r)
  }
  return eachDay(w.from, w.to).map((day) => ({ day, ...seoTotals(byDay.get(day) ?? [], { from: day, to: day }) }))
}

const difference = (a: number | null, b: number | null, decimals: number): number | null =>
  a === null || b === null ? null : roundTo(a - b, decimals)

export const seo = (input: SeoInput): Seo => {
  const { window, previous, dataThrough, lagDays, provisionalFrom } = seoWindows(
    input.period,
    input.today,
    input.dataThrough,
    input.firstDay
  )
  const totals = seoTotals(input.totals, window)
  const prev = seoTotals(input.totals, previous)
  const rawPosition = (w: DayWindow) => {
    const impressions = sumIn(input.totals, w, (r) => r.impressions)
    return impressions > 0 ? sumIn(input.totals, w, (r) => r.positionWeighted) / impressions : null
  }
  const rawCtr = (t: SeoTotalsFigures) => (t.impressions > 0 ? t.clicks / t.impressions : null)
  return {
    projectId: input.projectId,
    period: input.period,
    window,
    dataThrough,
    lagDays,
    provisionalFrom,
    totals,
    previous: { window: previous, totals: prev, series: seoSeries(input.totals, previous) },
    change: {
      clicks: changeOf(totals.clicks, prev.clicks),
      impressions: changeOf(totals.impressions, prev.impressions),
      ctr: difference(rawCtr(totals), rawCtr(prev), 4),
      averagePosition: difference(rawPosition(window), rawPosition(previous), 2)
    },
    series: seoSeries(input.totals, window),
    topQueries: topQueryChanges(input.queries, window, previous, SEO_TOP_ROWS),
    topPages: topPageChanges(input.pages, window, previous, SEO_TOP_ROWS)
  }
}
