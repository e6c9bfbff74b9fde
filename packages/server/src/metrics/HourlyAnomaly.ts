/**
 * Hourly traffic anomalies (docs/metrics.md, "Hourly traffic anomalies"): one complete UTC hour of a website against
 * the same local hour of day and weekday of the previous weeks, on the website's own clock — so the hour before a
 * DST change is compared with the same wall-clock hour, not the same UTC hour. The same robust model as the daily
 * signals (Anomaly.ts: median and MAD, modified z-score), with two guards for hourly counts: the spread is at least
 * what Poisson noise of the usual count gives, and a minimum volume, so a 2 → 5 visitor blip is not a spike. Then
 * the likely cause (the source or page whose share of the day moved most against its usual share, else a lost
 * ranking) and the money at stake. Pure: no clock, no store.
 */
import { mad, MAD_FLOOR_SHARE, MAD_TO_Z, median, robustZ, Z_CRITICAL, Z_WARNING } from "./Anomaly.ts"
import { addDays, localTimeIn, zonedInstant } from "./Dates.ts"
import { roundTo } from "./Numbers.ts"

/** Previous same local weekday and hour compared against (1 to 8 weeks back). */
export const HOURLY_BASELINE_WEEKS = 8
/** Fewer baseline hours than this (tracking too recent): no verdict. */
export const HOURLY_MIN_POINTS = 4
/** Neither the usual value nor the hour's reaches this: too little traffic to tell (a 2 → 5 blip). */
export const HOURLY_MIN_VOLUME = 20
/** An hour must differ from the usual value by at least this many visitors (pageviews) to count. */
export const HOURLY_MIN_CHANGE = 10
/** A source's or page's share must have moved by at least this much (5 points) to be named as the cause. */
export const CAUSE_MIN_SHARE_MOVE = 0.05

const HOUR_MS = 3_600_000

export type HourlyMetric = "visitors" | "pageviews"

export interface HourCount {
  readonly hour: string // ISO instant of the UTC hour start
  readonly visitors: number
  readonly pageviews: number
}

export interface HourAnomaly {
  readonly hour: string // ISO
  readonly localDay: string // the website's day the hour belongs to
  readonly localHour: string // "YYYY-MM-DD HH:MM", the hour's start on the website's clock
  readonly metric: HourlyMetric
  readonly direction: "spike" | "drop"
  readonly severity: "info" | "warning" | "critical"
  readonly actual: number
  readonly expected: number
  readonly low: number
  readonly high: number
  readonly z: number
  readonly weeks: number // baseline points used
}

const pad2 = (n: number) => String(n).padStart(2, "0")

/**
 * The UTC starts of the same local weekday and wall time as `hourMs`, 1 to `weeks` weeks back, newest first. A wall
 * time that did not exist that week (the DST gap) is left out; one that happened twice (fall back) is its first.
 */
export const sameLocalHours = (hourMs: number, timezone: string, weeks: number): Array<number> => {
  const local = localTimeIn(timezone, hourMs)
  const minutes = local.hour * 60 + local.minute
  const out: Array<number> = []
  for (let w = 1; w <= weeks; w++) {
    const day = addDays(local.day, -7 * w)
    const t = zonedInstant(day, minutes, timezone)
    const back = localTimeIn(timezone, t)
    if (back.day === day && back.hour * 60 + back.minute === minutes) out.push(t)
  }
  return out
}

/**
 * The verdict on the hour starting at `hourIso` for `metric`: null when the hour has no row (its data may not have
 * arrived yet), fewer than HOURLY_MIN_POINTS baseline hours, too little volume, or |z| < Z_WARNING. A baseline hour
 * without a row counts as 0 once the website has any hour stored at or before it (hours with no visit are not
 * stored); before its first stored hour it is no point at all (not tracked yet).
 */
export const hourlyAnomaly = (
  rows: ReadonlyArray<HourCount>,
  hourIso: string,
  timezone: string,
  metric: HourlyMetric
): HourAnomaly | null => {
  const at = Date.parse(hourIso)
  const byHour = new Map(rows.map((r) => [Date.parse(r.hour), r] as const))
  const row = byHour.get(at)
  if (row === undefined) return null
  const first = Math.min(...byHour.keys())
  const baseline = sameLocalHours(at, timezone, HOURLY_BASELINE_WEEKS).filter((t) => t >= first)
    .map((t) => byHour.get(t)?.[metric] ?? 0)
  if (baseline.length < HOURLY_MIN_POINTS) return null
  const center = median(baseline)!
  const actual = row[metric]
  if (Math.max(center, actual) < HOURLY_MIN_VOLUME || Math.abs(actual - center) < HOURLY_MIN_CHANGE) return null
  // Poisson noise of a count c has a standard deviation √c, i.e. a MAD of about 0.6745 × √c.
  const scale = Math.max(mad(baseline, center)!, MAD_FLOOR_SHARE * center, MAD_TO_Z * Math.sqrt(center), 1)
  const z = robustZ(actual, center, scale)
  if (z === null || Math.abs(z) < Z_WARNING) return null
  const half = (Z_WARNING * scale) / MAD_TO_Z
  const local = localTimeIn(timezone, at)
  const drop = z < 0
  return {
    hour: new Date(at).toISOString(),
    localDay: local.day,
    localHour: `${local.day} ${pad2(local.hour)}:${pad2(local.minute)}`,
    metric,
    direction: drop ? "drop" : "spike",
    severity: !drop ? "info" : Math.abs(z) >= Z_CRITICAL ? "critical" : "warning",
    actual,
    expected: roundTo(center, 2),
    low: roundTo(Math.max(0, center - half), 2),
    high: roundTo(center + half, 2),
    z: roundTo(z, 2),
    weeks: baseline.length
  }
}

/** Visitors first; pageviews only when visitors show nothing (one alert per hour). */
export const detectHour = (rows: ReadonlyArray<HourCount>, hourIso: string, timezone: string): HourAnomaly | null =>
  hourlyAnomaly(rows, hourIso, timezone, "visitors") ?? hourlyAnomaly(rows, hourIso, timezone, "pageviews")

/** The complete UTC hours to check at `nowMs`: the last `count` of them, oldest first (late data gets its turn). */
export const hoursToCheck = (nowMs: number, count: number): Array<string> => {
  const last = Math.floor(nowMs / HOUR_MS) * HOUR_MS - HOUR_MS
  return Array.from({ length: count }, (_, i) => new Date(last - (count - 1 - i) * HOUR_MS).toISOString())
}

export interface Share {
  readonly name: string
  readonly visitors: number
}

export interface LikelyCause {
  readonly kind: "source" | "page" | "ranking"
  readonly name: string
  readonly change: number
}

/** Each name's share of the day minus its usual share (over the union of names; a missing name has 0). */
export const shareMoves = (
  day: ReadonlyArray<Share>,
  usual: ReadonlyArray<Share>
): Array<{ readonly name: string; readonly change: number }> => {
  const total = (xs: ReadonlyArray<Share>) => xs.reduce((s, x) => s + x.visitors, 0)
  const dayTotal = total(day)
  const usualTotal = total(usual)
  if (dayTotal <= 0 || usualTotal <= 0) return []
  const names = new Set([...day.map((x) => x.name), ...usual.map((x) => x.name)])
  const of = (xs: ReadonlyArray<Share>, name: string) => xs.find((x) => x.name === name)?.visitors ?? 0
  return [...names].map((name) => ({
    name,
    change: roundTo(of(day, name) / dayTotal - of(usual, name) / usualTotal, 4)
  }))
}

/**
 * The likely cause of an anomaly: among the sources and pages, the one whose share of the hour's local day moved
 * most in the anomaly's direction against its usual share (up for a spike, down for a drop), if by at least
 * CAUSE_MIN_SHARE_MOVE; else, for a drop, the search query that lost the most places; else null.
 */
export const likelyCause = (input: {
  readonly direction: "spike" | "drop"
  readonly sources: { readonly day: ReadonlyArray<Share>; readonly usual: ReadonlyArray<Share> }
  readonly pages: { readonly day: ReadonlyArray<Share>; readonly usual: ReadonlyArray<Share> }
  readonly rankings: ReadonlyArray<{ readonly query: string; readonly placesLost: number }>
}): LikelyCause | null => {
  const sign = input.direction === "spike" ? 1 : -1
  const moves = [
    ...shareMoves(input.sources.day, input.sources.usual).map((m) => ({ kind: "source" as const, ...m })),
    ...shareMoves(input.pages.day, input.pages.usual).map((m) => ({ kind: "page" as const, ...m }))
  ].filter((m) => sign * m.change >= CAUSE_MIN_SHARE_MOVE)
    .sort((a, b) =>
      sign * (b.change - a.change) || (a.kind === b.kind ? 0 : a.kind === "source" ? -1 : 1) ||
      (a.name < b.name ? -1 : 1)
    )
  if (moves.length > 0) return moves[0]
  if (input.direction === "drop") {
    const lost = [...input.rankings].sort((a, b) => b.placesLost - a.placesLost || (a.query < b.query ? -1 : 1))[0]
    if (lost !== undefined) return { kind: "ranking", name: lost.query, change: lost.placesLost }
  }
  return null
}

/**
 * The money at stake (minor units): for a drop of visitors, the lost visitors (expected − actual) × the website's
 * revenue per visitor (Signals.ts revenuePerVisitor, as the daily signals use); null for a spike, for pageviews,
 * or without revenue data.
 */
export const hourlyMoneyAtStake = (a: HourAnomaly, perVisitor: number | null): number | null =>
  a.direction !== "drop" || a.metric !== "visitors" || perVisitor === null
    ? null
    : Math.round(Math.max(0, a.expected - a.actual) * perVisitor)
