/**
 * The analytics report, computed from stored traffic aggregates (traffic/TrafficRepo.ts). Pure: the
 * caller passes `now`; `planAnalytics` says what to read, `analytics` computes from what was read.
 * Definitions: docs/metrics.md, "Analytics".
 */
import type { Analytics, TrafficTotals, VisitorsMethod } from "@sitehealth/domain/Analytics"
import type { Period, ProjectId } from "@sitehealth/domain/Common"
import type { TrafficDay, TrafficHour, TrafficQuery, TrafficUniques, TrafficWindow } from "../store/Series.ts"
import {
  addDays,
  addMonths,
  eachDay,
  localLabel,
  localTimeIn,
  startOfDayIn,
  startOfMonth,
  zonedInstant
} from "./Dates.ts"
import { changeOf, type DayWindow, inWindow, num, periodWindow, previousWindow, ratio } from "./Numbers.ts"

const HOUR_MS = 3_600_000
const EPOCH_DAY = "0001-01-01"
export const TOP_N = 10

/** A range of local days with its instants; `end` is exclusive. */
export interface InstantRange extends DayWindow {
  readonly start: number
  readonly end: number
}

export interface AnalyticsPlan {
  readonly period: Period
  readonly timezone: string
  readonly granularity: "hour" | "day" | "month"
  /** null for `all`: its first day is the first stored day, known after the read. */
  readonly current: InstantRange | null
  readonly previous: InstantRange | null
  readonly query: TrafficQuery
}

const iso = (ms: number) => new Date(ms).toISOString()

const rangeOf = (w: DayWindow, timezone: string, end?: number): InstantRange => ({
  ...w,
  start: startOfDayIn(w.from, timezone),
  end: end ?? startOfDayIn(addDays(w.to, 1), timezone)
})

/** What the report covers for `period` at `nowMs`, and the one read it needs. */
export const planAnalytics = (period: Period, timezone: string, nowMs: number): AnalyticsPlan => {
  const today = localTimeIn(timezone, nowMs).day
  const yesterday = addDays(today, -1)
  const top = (w: DayWindow) => ({ topFrom: w.from, topTo: w.to, top: TOP_N })
  // The tops' previous figures: their daily rows over the previous range's days (for today, all of yesterday).
  const prevTop = (w: DayWindow) => ({ prevTopFrom: w.from, prevTopTo: w.to })
  if (period === "today") {
    const current = rangeOf({ from: today, to: today }, timezone, nowMs)
    // The same local wall-clock time yesterday (seconds included); see "partial-hour rule" in docs/metrics.md.
    const wall = localTimeIn(timezone, nowMs)
    const cutoff = Math.min(
      zonedInstant(yesterday, wall.hour * 60 + wall.minute, timezone) + (nowMs % 60_000),
      current.start
    )
    const previous = rangeOf({ from: yesterday, to: yesterday }, timezone, cutoff)
    const query = {
      hoursFrom: iso(previous.start),
      hoursTo: iso(nowMs),
      from: yesterday,
      to: today,
      ...top(current),
      ...prevTop(previous)
    }
    return { period, timezone, granularity: "hour", current, previous, query }
  }
  if (period === "yesterday") {
    const current = rangeOf({ from: yesterday, to: yesterday }, timezone)
    const previous = rangeOf(previousWindow(current), timezone)
    // From the day before's first hour: the previous period's series is by hour too.
    const query = {
      hoursFrom: iso(previous.start),
      hoursTo: iso(current.end),
      from: previous.from,
      to: yesterday,
      ...top(current),
      ...prevTop(previous)
    }
    return { period, timezone, granularity: "hour", current, previous, query }
  }
  // An empty, constant hour range: the query (and so TrafficRepo's cache key) does not move with the clock.
  const noHours = { hoursFrom: iso(0), hoursTo: iso(0) }
  const granularity = period === "12m" || period === "all" ? "month" : "day"
  if (period === "all") {
    const query = { ...noHours, from: EPOCH_DAY, to: today, ...top({ from: EPOCH_DAY, to: today }) }
    return { period, timezone, granularity, current: null, previous: null, query }
  }
  const current = rangeOf(periodWindow(period, today, null), timezone)
  const previous = rangeOf(previousWindow(current), timezone)
  const query = { ...noHours, from: previous.from, to: today, ...top(current), ...prevTop(previous) }
  return { period, timezone, granularity, current, previous, query }
}

// ---------------------------------------------------------------------------------------------------
// Totals
// ---------------------------------------------------------------------------------------------------

interface Sums {
  visitors: number
  pageviews: number
  sessions: number
  bounces: number
  durationSeconds: number
}

const totalsOf = (s: Sums, visitorsMethod: VisitorsMethod): TrafficTotals => ({
  visitors: Math.round(s.visitors),
  visitorsMethod,
  pageviews: Math.round(s.pageviews),
  sessions: Math.round(s.sessions),
  bounceRate: ratio(s.bounces, s.sessions),
  avgSessionSeconds: ratio(s.durationSeconds, s.sessions, 1),
  pagesPerSession: ratio(s.pageviews, s.sessions)
})

const addRow = (s: Sums, r: Omit<Sums, never>, weight = 1) => {
  s.visitors += num(r.visitors) * weight
  s.pageviews += num(r.pageviews) * weight
  s.sessions += num(r.sessions) * weight
  s.bounces += num(r.bounces) * weight
  s.durationSeconds += num(r.durationSeconds) * weight
}

const zero = (): Sums => ({ visitors: 0, pageviews: 0, sessions: 0, bounces: 0, durationSeconds: 0 })

/** The provider's uniques for exactly [from, to], if it gave them. */
const rangeUniques = (uniques: ReadonlyArray<TrafficUniques>, w: DayWindow): number | null =>
  uniques.find((u) => u.from === w.from && u.to === w.to)?.visitors ?? null

/**
 * Totals of local days in `w`: sums of the daily rows; visitors are the provider's range uniques when it
 * gave them for exactly `w`, else the sum of daily uniques (and the report says which).
 */
export const trafficTotals = (
  days: ReadonlyArray<TrafficDay>,
  w: DayWindow,
  uniques: ReadonlyArray<TrafficUniques> = []
): TrafficTotals => {
  const s = zero()
  for (const r of days) if (inWindow(r.day, w)) addRow(s, r)
  const exact = rangeUniques(uniques, w)
  if (exact !== null) s.visitors = exact
  return totalsOf(s, exact !== null ? "range_uniques" : "sum_of_daily_uniques")
}

/**
 * Totals of the UTC hours starting in [start, end). The hour containing `end` counts pro rata (the
 * elapsed fraction of it), assuming traffic is even within an hour: `today` at 10:30 compares with
 * yesterday's 00:00–10:00 plus half of 10:00–11:00. When the range ends at `now`, the current hour is
 * counted whole, since its row only holds what happened so far.
 */
export const hourTotals = (
  hours: ReadonlyArray<TrafficHour>,
  start: number,
  end: number,
  endIsNow: boolean
): TrafficTotals => totalsOf(hourSums(hours, start, end, endIsNow), "sum_of_hourly_uniques")

/** The unrounded, weighted sums behind hourTotals. */
const hourSums = (hours: ReadonlyArray<TrafficHour>, start: number, end: number, endIsNow: boolean): Sums => {
  const s = zero()
  for (const h of hours) {
    const t = Date.parse(h.hour)
    if (t < start || t >= end) continue
    const weight = endIsNow || t + HOUR_MS <= end ? 1 : (end - t) / HOUR_MS
    addRow(s, h, weight)
  }
  return s
}

// ---------------------------------------------------------------------------------------------------
// Series
// ---------------------------------------------------------------------------------------------------

type Point = Analytics["series"][number]

const pointOf = (label: string, start: number, w: DayWindow, t: TrafficTotals): Point => ({
  label,
  start: iso(start),
  from: w.from,
  to: w.to,
  visitors: t.visitors,
  visitorsMethod: t.visitorsMethod,
  pageviews: t.pageviews,
  sessions: t.sessions
})

/** One point per UTC hour starting inside the local day(s) of `r` and before `r.end`: 23 or 25 on DST days. */
const hourSeries = (hours: ReadonlyArray<TrafficHour>, r: InstantRange, timezone: string): Array<Point> => {
  const byStart = new Map(hours.map((h) => [Date.parse(h.hour), h]))
  const out: Array<Point> = []
  for (let t = Math.ceil(r.start / HOUR_MS) * HOUR_MS; t < r.end; t += HOUR_MS) {
    const h = byStart.get(t)
    const s = zero()
    if (h !== undefined) addRow(s, h)
    const day = localTimeIn(timezone, t).day
    out.push(pointOf(localLabel(t, timezone), t, { from: day, to: day }, totalsOf(s, "sum_of_hourly_uniques")))
  }
  return out
}

const daySeries = (data: TrafficWindow, r: DayWindow, timezone: string): Array<Point> =>
  eachDay(r.from, r.to).map((day) =>
    pointOf(day, startOfDayIn(day, timezone), { from: day, to: day }, trafficTotals(data.days, { from: day, to: day }))
  )

/** One point per calendar month, clipped to the range; visitors from month uniques when stored for that exact span. */
const monthSeries = (data: TrafficWindow, r: DayWindow, timezone: string): Array<Point> => {
  const out: Array<Point> = []
  for (let m = startOfMonth(r.from); m <= r.to; m = addMonths(m, 1)) {
    const w = {
      from: m < r.from ? r.from : m,
      to: addDays(addMonths(m, 1), -1) < r.to ? addDays(addMonths(m, 1), -1) : r.to
    }
    out.push(pointOf(m.slice(0, 7), startOfDayIn(w.from, timezone), w, trafficTotals(data.days, w, data.uniques)))
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// Tops with their previous figures
// ---------------------------------------------------------------------------------------------------

/**
 * How much of yesterday's whole-day top figures the previous period holds: 1 when it is whole days; for
 * `today`, yesterday's hourly pageviews (pages) or visitors (sources, countries) before the cutoff (the
 * partial-hour rule included) ÷ those of the whole of yesterday — daily tops have no hours, so each key is
 * taken to be spread over yesterday as the total was. null when yesterday has no hourly figure to go by.
 */
interface TopScale {
  readonly pageviews: number | null
  readonly visitors: number | null
}

const topScale = (plan: AnalyticsPlan, data: TrafficWindow, currentStart: number): TopScale => {
  if (plan.period !== "today" || plan.previous === null) return { pageviews: 1, visitors: 1 }
  const part = hourSums(data.hours, plan.previous.start, plan.previous.end, false)
  const whole = hourSums(data.hours, plan.previous.start, currentStart, false)
  return {
    pageviews: whole.pageviews > 0 ? part.pageviews / whole.pageviews : null,
    visitors: whole.visitors > 0 ? part.visitors / whole.visitors : null
  }
}

/** The previous figure of one top row: 0 when the key had no rows then; null when there is no previous. */
const previousOf = (hasPrevious: boolean, scale: number | null, value: number | undefined): number | null =>
  !hasPrevious || scale === null ? null : Math.round((value ?? 0) * scale)

// ---------------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------------

export interface AnalyticsInput {
  readonly projectId: ProjectId
  readonly plan: AnalyticsPlan
  readonly now: number
  readonly data: TrafficWindow
}

const rangeOut = (r: InstantRange, timezone: string) => ({
  start: iso(r.start),
  end: iso(r.end),
  timezone,
  from: r.from,
  to: r.to
})

export const analytics = ({ data, now, plan, projectId }: AnalyticsInput): Analytics => {
  const { timezone } = plan
  const today = localTimeIn(timezone, now).day
  // `all` starts on the first stored day (today when there is none).
  const current = plan.current ??
    rangeOf({ from: data.days.find((d) => d.day <= today)?.day ?? today, to: today }, timezone)

  const totals = plan.period === "today"
    ? hourTotals(data.hours, current.start, current.end, true)
    : trafficTotals(data.days, current, data.uniques)
  const prev = plan.previous === null ? null : plan.period === "today"
    ? hourTotals(data.hours, plan.previous.start, plan.previous.end, false)
    : trafficTotals(data.days, plan.previous, data.uniques)

  const seriesOf = (r: InstantRange) =>
    plan.granularity === "hour"
      ? hourSeries(data.hours, r, timezone)
      : plan.granularity === "day"
      ? daySeries(data, r, timezone)
      : monthSeries(data, r, timezone)
  const series = seriesOf(current)

  const hasPrevious = plan.previous !== null && prev !== null
  const scale = topScale(plan, data, current.start)
  const prevPages = new Map(data.previousPages.map((p) => [p.path, p.pageviews]))
  const prevSources = new Map(data.previousSources.map((s) => [s.source, s.visitors]))
  const prevCountries = new Map(data.previousCountries.map((c) => [c.country, c.visitors]))

  const change = (
    key: "visitors" | "pageviews" | "sessions" | "bounceRate" | "avgSessionSeconds" | "pagesPerSession"
  ) => changeOf(totals[key], prev === null ? null : prev[key])

  return {
    projectId,
    period: plan.period,
    granularity: plan.granularity,
    range: rangeOut(current, timezone),
    totals,
    previous: plan.previous === null || prev === null
      ? null
      : { range: rangeOut(plan.previous, timezone), totals: prev, series: seriesOf(plan.previous) },
    change: {
      visitors: change("visitors"),
      pageviews: change("pageviews"),
      sessions: change("sessions"),
      bounceRate: change("bounceRate"),
      avgSessionSeconds: change("avgSessionSeconds"),
      pagesPerSession: change("pagesPerSession")
    },
    series,
    topPages: data.pages.map((p) => {
      const previousPageviews = previousOf(hasPrevious, scale.pageviews, prevPages.get(p.path))
      return {
        ...p,
        share: ratio(p.pageviews, totals.pageviews),
        previousPageviews,
        pageviewsChange: changeOf(p.pageviews, previousPageviews)
      }
    }),
    topSources: data.sources.map((s) => {
      const previousVisitors = previousOf(hasPrevious, scale.visitors, prevSources.get(s.source))
      return {
        ...s,
        share: ratio(s.visitors, totals.visitors),
        previousVisitors,
        visitorsChange: changeOf(s.visitors, previousVisitors)
      }
    }),
    topCountries: data.countries.map((c) => {
      const previousVisitors = previousOf(hasPrevious, scale.visitors, prevCountries.get(c.country))
      return {
        ...c,
        share: ratio(c.visitors, totals.visitors),
        previousVisitors,
        visitorsChange: changeOf(c.visitors, previousVisitors)
      }
    })
  }
}
