/**
 * The aggregation rules of self-collected traffic, in plain TypeScript: which buckets a batch of events
 * touches, and the rows of those buckets. The in-memory store aggregates with these functions; the SQL
 * store runs the same rules as INSERT … SELECT … GROUP BY (traffic/Rollup.ts), and the ingest tests
 * assert that both give the same rows.
 *
 * Rules (also in docs/metrics.md, "Analytics"):
 * - A session counts in the hour / local day of its FIRST event; it bounced when it has exactly one
 *   event; its duration is the sum of its events' durationSeconds.
 * - visitors of a bucket = distinct visitorIds among the bucket's events (per local day, not per UTC day).
 * - Pages per local day: distinct visitors and events per path; the TOP_PER_DAY paths by pageviews
 *   (ties by path) are kept. Sources likewise per source ("direct" when null), with
 *   sessions = distinct sessionIds among that day's events from that source.
 * - Month uniques: distinct visitors over a whole local calendar month, stored as a TrafficUniques range.
 */
import { addDays, addMonths, localTimeIn, startOfDayIn } from "../metrics/Dates.ts"
import type { TrafficDay } from "../store/Series.ts"
import type { TrafficEvent, TrafficHour, TrafficPageDay, TrafficSourceDay, TrafficUniques } from "./Types.ts"
import { TOP_PER_DAY } from "./Types.ts"

const HOUR_MS = 3_600_000

export const hourOf = (instantMs: number): string => new Date(Math.floor(instantMs / HOUR_MS) * HOUR_MS).toISOString()

/** Buckets to re-aggregate; hours are ISO instants, days local dates, months "YYYY-MM". */
export interface Affected {
  readonly hours: ReadonlyArray<string>
  readonly days: ReadonlyArray<string>
  readonly months: ReadonlyArray<string>
}

/** The buckets holding any of these instants (event times, and the start times of their sessions). */
export const affectedBy = (instantsMs: Iterable<number>, timezone: string): Affected => {
  const hours = new Set<string>()
  const days = new Set<string>()
  for (const t of instantsMs) {
    hours.add(hourOf(t))
    days.add(localTimeIn(timezone, t).day)
  }
  const months = new Set([...days].map((d) => d.slice(0, 7)))
  return { hours: [...hours].sort(), days: [...days].sort(), months: [...months].sort() }
}

/** Instant bounds [lo, hi) covering every event a rollup of `affected` reads. */
export const boundsOf = (affected: Affected, timezone: string) => {
  const hourTimes = affected.hours.map((h) => Date.parse(h))
  const dayStarts = affected.days.map((d) => startOfDayIn(d, timezone))
  const dayEnds = affected.days.map((d) => startOfDayIn(addDays(d, 1), timezone))
  const monthStarts = affected.months.map((m) => startOfDayIn(`${m}-01`, timezone))
  const monthEnds = affected.months.map((m) => startOfDayIn(addMonths(`${m}-01`, 1), timezone))
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    hours: { lo: iso(Math.min(...hourTimes)), hi: iso(Math.max(...hourTimes) + HOUR_MS) },
    days: { lo: iso(Math.min(...dayStarts)), hi: iso(Math.max(...dayEnds)) },
    months: { lo: iso(Math.min(...monthStarts)), hi: iso(Math.max(...monthEnds)) }
  }
}

/** Last day of the month of `monthStart` ("YYYY-MM-01"). */
export const monthEnd = (month: string): string => addDays(addMonths(`${month}-01`, 1), -1)

interface Session {
  readonly start: number
  readonly events: number
  readonly duration: number
}

const sessionsOf = (events: ReadonlyArray<TrafficEvent>): Map<string, Session> => {
  const out = new Map<string, Session>()
  for (const e of events) {
    const t = Date.parse(e.at)
    const s = out.get(e.sessionId)
    out.set(e.sessionId, {
      start: s === undefined ? t : Math.min(s.start, t),
      events: (s?.events ?? 0) + 1,
      duration: (s?.duration ?? 0) + (e.durationSeconds ?? 0)
    })
  }
  return out
}

interface Bucket {
  readonly visitors: Set<string>
  pageviews: number
  sessions: number
  bounces: number
  durationSeconds: number
}

const bucketsBy = (
  events: ReadonlyArray<TrafficEvent>,
  sessions: Map<string, Session>,
  keyOf: (instantMs: number) => string,
  wanted: ReadonlySet<string>
): Map<string, Bucket> => {
  const out = new Map<string, Bucket>()
  const get = (key: string) => {
    let b = out.get(key)
    if (b === undefined) {
      out.set(key, b = { visitors: new Set(), pageviews: 0, sessions: 0, bounces: 0, durationSeconds: 0 })
    }
    return b
  }
  for (const e of events) {
    const key = keyOf(Date.parse(e.at))
    if (!wanted.has(key)) continue
    const b = get(key)
    b.visitors.add(e.visitorId)
    b.pageviews += 1
  }
  for (const s of sessions.values()) {
    const key = keyOf(s.start)
    if (!wanted.has(key)) continue
    const b = get(key)
    b.sessions += 1
    if (s.events === 1) b.bounces += 1
    b.durationSeconds += s.duration
  }
  return out
}

const topPerDay = <R extends { readonly day: string; readonly pageviews?: number; readonly sessions?: number }>(
  rows: Array<R>,
  rank: (r: R) => number,
  name: (r: R) => string
): Array<R> => {
  const byDay = new Map<string, Array<R>>()
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r])
  return [...byDay.values()].flatMap((list) =>
    list.sort((a, b) => rank(b) - rank(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0)).slice(0, TOP_PER_DAY)
  )
}

/** The rows of the affected buckets, from ALL stored events of the project. */
export const aggregateEvents = (events: ReadonlyArray<TrafficEvent>, timezone: string, affected: Affected) => {
  const sessions = sessionsOf(events)
  const dayOf = (t: number) => localTimeIn(timezone, t).day
  const hourBuckets = bucketsBy(events, sessions, hourOf, new Set(affected.hours))
  const dayBuckets = bucketsBy(events, sessions, dayOf, new Set(affected.days))
  const hours: Array<TrafficHour> = [...hourBuckets].map(([hour, b]) => ({
    hour,
    visitors: b.visitors.size,
    pageviews: b.pageviews,
    sessions: b.sessions,
    bounces: b.bounces,
    durationSeconds: b.durationSeconds
  }))
  const days: Array<TrafficDay> = [...dayBuckets].map(([day, b]) => ({
    day,
    visitors: b.visitors.size,
    pageviews: b.pageviews,
    sessions: b.sessions,
    bounces: b.bounces,
    durationSeconds: b.durationSeconds
  }))

  const wantedDays = new Set(affected.days)
  const wantedMonths = new Set(affected.months)
  const pages = new Map<string, { day: string; path: string; visitors: Set<string>; pageviews: number }>()
  const sources = new Map<string, { day: string; source: string; visitors: Set<string>; sessions: Set<string> }>()
  const months = new Map<string, Set<string>>()
  for (const e of events) {
    const day = dayOf(Date.parse(e.at))
    if (wantedMonths.has(day.slice(0, 7))) {
      months.set(day.slice(0, 7), (months.get(day.slice(0, 7)) ?? new Set()).add(e.visitorId))
    }
    if (!wantedDays.has(day)) continue
    const p = pages.get(`${day}|${e.path}`) ?? { day, path: e.path, visitors: new Set<string>(), pageviews: 0 }
    p.visitors.add(e.visitorId)
    p.pageviews += 1
    pages.set(`${day}|${e.path}`, p)
    const source = e.source ?? "direct"
    const s = sources.get(`${day}|${source}`) ??
      { day, source, visitors: new Set<string>(), sessions: new Set<string>() }
    s.visitors.add(e.visitorId)
    s.sessions.add(e.sessionId)
    sources.set(`${day}|${source}`, s)
  }
  const pageRows: Array<TrafficPageDay> = topPerDay(
    [...pages.values()].map((p) => ({ day: p.day, path: p.path, visitors: p.visitors.size, pageviews: p.pageviews })),
    (r) => r.pageviews,
    (r) => r.path
  )
  const sourceRows: Array<TrafficSourceDay> = topPerDay(
    [...sources.values()].map((s) => ({
      day: s.day,
      source: s.source,
      visitors: s.visitors.size,
      sessions: s.sessions.size
    })),
    (r) => r.visitors,
    (r) => r.source
  )
  const uniques: Array<TrafficUniques> = [...months].map(([m, v]) => ({
    from: `${m}-01`,
    to: monthEnd(m),
    visitors: v.size
  }))
  return { hours, days, pages: pageRows, sources: sourceRows, uniques }
}
