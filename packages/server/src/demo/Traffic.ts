/**
 * Demo traffic as an analytics provider (Plausible) reports it: local-day totals, UTC hours, top pages and
 * sources and countries per day, and unique visitors per calendar month. Additive figures (pageviews, sessions,
 * bounces, duration) of the hours, pages and sources add up to the day exactly; unique visitors do not add up
 * (an hour's uniques summed over a day exceed the day's, a month's uniques are below the sum of its days),
 * as with real data.
 */
import { addDays, dayOfWeek } from "../metrics/Dates.ts"
import type { TrafficDay } from "../store/Series.ts"
import type {
  TrafficCountryDay,
  TrafficHour,
  TrafficPageDay,
  TrafficSourceDay,
  TrafficUniques,
  TrafficWrite
} from "../traffic/Types.ts"
import type { DemoProjectSpec } from "./Profiles.ts"
import { apportion, jitter, mulberry32, type Rand } from "./Random.ts"
import { daysBeforeEpoch, dayStartIn, type DemoTimeline, localHours } from "./Timeline.ts"

const MS_PER_HOUR = 3_600_000

/** Visitors by weekday (0 = Sunday): weekends are quieter. */
const WEEKDAY_FACTOR = [0.72, 1.04, 1.08, 1.06, 1.02, 0.93, 0.68]

/** Share of a day's visits by local hour: quiet nights, a morning and an evening peak. */
const HOUR_WEIGHT = [
  0.6,
  0.4,
  0.3,
  0.25,
  0.25,
  0.4,
  0.9,
  1.8,
  3.2,
  4.6,
  5.4,
  5.6,
  5.5,
  5.6,
  5.5,
  5.2,
  4.9,
  4.6,
  4.4,
  4.7,
  5.0,
  4.4,
  3.0,
  1.6
]

/** Month uniques ≈ this share of the sum of daily uniques (returning visitors). */
const MONTH_UNIQUES_SHARE = 0.74

export interface DemoDay {
  readonly day: string
  readonly visitors: number
  readonly googleVisitors: number
}

/**
 * The expected visitors of a day `daysAgo` before T (the epoch's day; negative after it), before noise: trend × weekday
 * × planted events.
 */
const expectedVisitors = (spec: DemoProjectSpec, day: string, daysAgo: number) => {
  const t = spec.traffic
  const trend = t.baseVisitors * t.yearGrowth ** (-daysAgo / 365)
  const level = trend * WEEKDAY_FACTOR[dayOfWeek(day)]
  const googleShare = t.sources.find(([s]) => s === "Google")![1] / t.sources.reduce((s, [, w]) => s + w, 0)
  const googleFactor = t.googleDrop !== undefined && daysAgo <= t.googleDrop.fromDaysAgo ? t.googleDrop.factor : 1
  const dip = t.dip !== undefined && t.dip.daysAgo === daysAgo ? t.dip.factor : 1
  return { visitors: level * (1 - googleShare + googleShare * googleFactor) * dip, googleFactor }
}

export const generateTraffic = (
  spec: DemoProjectSpec,
  rand: Rand,
  timeline: DemoTimeline,
  nowMs: number
): { readonly write: TrafficWrite; readonly days: ReadonlyArray<DemoDay> } => {
  const t = spec.traffic
  const tz = spec.timezone
  const dayRows: Array<TrafficDay> = []
  const hours: Array<TrafficHour> = []
  const pages: Array<TrafficPageDay> = []
  const sources: Array<TrafficSourceDay> = []
  const countries: Array<TrafficCountryDay> = []
  // Countries draw from their own sequence, so adding them changed none of the other figures.
  const countryRand = mulberry32(spec.seed * 17 + 3)
  const demoDays: Array<DemoDay> = []
  const localHour = localHours(tz)

  for (let day = timeline.firstDay; day <= timeline.today; day = addDays(day, 1)) {
    const daysAgo = daysBeforeEpoch(timeline, day)
    const isToday = day === timeline.today
    const start = dayStartIn(day, tz)
    const end = dayStartIn(addDays(day, 1), tz)
    // Today is partial: only the hours that have begun, the current one pro rata.
    const elapsed = Math.min(1, Math.max(0, (nowMs - start) / (end - start)))
    const { visitors: expected, googleFactor } = expectedVisitors(spec, day, daysAgo)
    const hourStarts: Array<number> = []
    for (let h = start; h < end && h < nowMs; h += MS_PER_HOUR) hourStarts.push(h)
    const weights = hourStarts.map((h) => {
      const w = HOUR_WEIGHT[localHour(h).hour]
      return h + MS_PER_HOUR > nowMs ? (w * (nowMs - h)) / MS_PER_HOUR : w
    })
    const dayShare = weights.reduce((s, w) => s + w, 0) / HOUR_WEIGHT.reduce((s, w) => s + w, 0)
    const visitors = Math.round(expected * jitter(rand, 0.07) * (isToday ? Math.min(dayShare, elapsed + 0.05) : 1))
    if (visitors <= 0 && isToday) continue
    const sessions = Math.round(visitors * 1.14 * jitter(rand, 0.03))
    const pageviews = Math.round(sessions * (t.pagesPerVisitor / 1.14) * jitter(rand, 0.05))
    const bounces = Math.round(sessions * t.bounceRate * jitter(rand, 0.05))
    const durationSeconds = Math.round(sessions * t.sessionSeconds * jitter(rand, 0.08))
    dayRows.push({ day, visitors, pageviews, sessions, bounces, durationSeconds })

    const hourVisitors = apportion(Math.round(visitors * 1.12), weights)
    const hourPageviews = apportion(pageviews, weights)
    const hourSessions = apportion(sessions, weights)
    const hourBounces = apportion(bounces, weights)
    const hourDuration = apportion(durationSeconds, weights)
    hourStarts.forEach((h, i) => {
      if (hourSessions[i] === 0 && hourPageviews[i] === 0) return
      hours.push({
        hour: new Date(h).toISOString(),
        visitors: Math.max(Math.min(hourVisitors[i], hourSessions[i]), hourSessions[i] > 0 ? 1 : 0),
        pageviews: hourPageviews[i],
        sessions: hourSessions[i],
        bounces: hourBounces[i],
        durationSeconds: hourDuration[i]
      })
    })

    const pageWeights = t.pages.map(([, w]) => w * jitter(rand, 0.15))
    apportion(pageviews, pageWeights).forEach((pv, i) => {
      if (pv > 0) pages.push({ day, path: t.pages[i][0], pageviews: pv, visitors: Math.max(1, Math.round(pv * 0.78)) })
    })
    const sourceWeights = t.sources.map(([s, w]) => w * (s === "Google" ? googleFactor : 1) * jitter(rand, 0.12))
    const sourceSessions = apportion(sessions, sourceWeights)
    sourceSessions.forEach((n, i) => {
      if (n > 0) {
        sources.push({ day, source: t.sources[i][0], sessions: n, visitors: Math.max(1, Math.round(n * 0.88)) })
      }
    })
    const countryWeights = t.countries.map(([, w]) => w * jitter(countryRand, 0.2))
    apportion(visitors, countryWeights).forEach((n, i) => {
      if (n > 0) countries.push({ day, country: t.countries[i][0], visitors: n })
    })
    const googleIndex = t.sources.findIndex(([s]) => s === "Google")
    demoDays.push({ day, visitors, googleVisitors: Math.round((sourceSessions[googleIndex] ?? 0) * 0.88) })
  }

  // Unique visitors per calendar month (the current month to date), as the provider's aggregate reports them.
  const uniques: Array<TrafficUniques> = []
  const byMonth = new Map<string, { from: string; to: string; sum: number }>()
  for (const d of dayRows) {
    const key = d.day.slice(0, 7)
    const m = byMonth.get(key) ?? { from: d.day, to: d.day, sum: 0 }
    m.to = d.day
    m.sum += d.visitors
    byMonth.set(key, m)
  }
  for (const m of byMonth.values()) {
    // Only whole months (or the month to date): a month cut by the start of history is not a month.
    if (m.from.endsWith("-01")) {
      uniques.push({ from: m.from, to: m.to, visitors: Math.round(m.sum * MONTH_UNIQUES_SHARE) })
    }
  }

  return { write: { days: dayRows, hours, pages, sources, countries, uniques }, days: demoDays }
}
