/**
 * Every report the service returns, computed from the stored daily rows (see Rows.ts).
 *
 * Pure functions: no I/O, no clock. The caller passes `today` (YYYY-MM-DD in the project's time zone)
 * and `now` (the ISO instant stamped as computedAt / generatedAt).
 *
 * Conventions used throughout:
 * - Windows are inclusive ranges of calendar days; a day without a row counts as zeros.
 * - Every ratio goes through `ratio`, which returns null for a zero (or non-finite) denominator, so no
 *   NaN / Infinity can ever leave this module. Rates are rounded to 4 decimals.
 * - A change is (current − previous) / |previous| — identical to (current − previous) / previous for
 *   the usual positive previous value, but keeps the sign meaningful ("down" stays negative) when the
 *   previous value is negative (e.g. net revenue after refunds, or a negative profit margin).
 * - Money is integer minor units (Math.round) plus the currency.
 */
import type { Money, Period } from "../../../domain/src/Common.ts"
import type {
  Briefing,
  Dimension,
  Health,
  HealthDimension,
  HealthSnapshot,
  Severity,
  Signal
} from "../../../domain/src/Projects.ts"
import type { Analytics, Churn, Revenue, Seo, TrafficTotals } from "../../../domain/src/Reports.ts"
import { addDays, addMonths, daysBetween, eachDay, startOfMonth } from "./Dates.ts"
import type { ExpenseRow, ProjectSeries, RevenueDay, SearchDay, TrafficDay } from "./Rows.ts"

// ---------------------------------------------------------------------------------------------------
// Small numeric helpers
// ---------------------------------------------------------------------------------------------------

export interface DayWindow {
  readonly from: string
  readonly to: string
}

type HealthStatus = Health["status"]

/** A finite number or 0 — rows are trusted, but a stray NaN must not poison a whole report. */
const num = (x: number): number => (Number.isFinite(x) ? x : 0)

/** Rounds to `decimals` places; never returns -0. */
const roundTo = (x: number, decimals: number): number => {
  const f = 10 ** decimals
  return Math.round(x * f) / f + 0
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x))

/** a / b rounded, or null when b is 0 or the result would not be finite. */
const ratio = (a: number, b: number, decimals = 4): number | null => {
  if (b === 0 || !Number.isFinite(a) || !Number.isFinite(b)) return null
  const r = a / b
  return Number.isFinite(r) ? roundTo(r, decimals) : null
}

/** (cur − prev) / |prev|, rounded to 4 decimals; null when prev is 0 or missing. */
const changeOf = (cur: number | null, prev: number | null): number | null => {
  if (cur === null || prev === null) return null
  return ratio(cur - prev, Math.abs(prev))
}

const money = (amount: number, currency: string): Money => ({ amount: Math.round(num(amount)) + 0, currency })

const inWindow = (day: string, w: DayWindow): boolean => day >= w.from && day <= w.to

const windowLength = (w: DayWindow): number => Math.max(0, daysBetween(w.from, w.to) + 1)

/** The last `n` days ending on (and including) `to`. */
const lastDays = (to: string, n: number): DayWindow => ({ from: addDays(to, -(n - 1)), to })

/** The row with the greatest day ≤ `day` (or < `day` when strict), or undefined. */
const lastRowUpTo = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  day: string,
  strict = false
): R | undefined => {
  let best: R | undefined
  for (const r of rows) {
    if (strict ? r.day >= day : r.day > day) continue
    if (best === undefined || r.day > best.day) best = r
  }
  return best
}

const sumIn = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  w: DayWindow,
  f: (r: R) => number
): number => {
  let total = 0
  for (const r of rows) if (inWindow(r.day, w)) total += num(f(r))
  return total
}

/** Number of distinct days in `w` that have at least one row. */
const daysWithRows = (rows: ReadonlyArray<{ readonly day: string }>, w: DayWindow): number => {
  const days = new Set<string>()
  for (const r of rows) if (inWindow(r.day, w)) days.add(r.day)
  return days.size
}

const pct = (x: number): string => `${Math.round(Math.abs(x) * 100)}%`
const pct1 = (x: number): string => `${roundTo(x * 100, 1).toFixed(1)}%`
const fmtInt = (x: number): string => Math.round(x).toLocaleString("en-US")

const moneyFormats = new Map<string, Intl.NumberFormat>()

const formatMoney = (minor: number, currency: string): string => {
  try {
    let fmt = moneyFormats.get(currency)
    if (fmt === undefined) {
      fmt = new Intl.NumberFormat("en-US", { style: "currency", currency })
      moneyFormats.set(currency, fmt)
    }
    const digits = fmt.resolvedOptions().maximumFractionDigits ?? 2
    return fmt.format(Math.round(minor) / 10 ** digits)
  } catch {
    return `${(Math.round(minor) / 100).toFixed(2)} ${currency}`
  }
}

// ---------------------------------------------------------------------------------------------------
// Periods
// ---------------------------------------------------------------------------------------------------

/**
 * The inclusive window of a reporting period ending today.
 * - today: [today, today]; yesterday: [today−1, today−1]
 * - 7d / 30d: the last 7 / 30 days including today
 * - 3m: the first day of the month two months before this one → today (3 calendar months to date)
 * - 12m: the first day of the month 11 months before this one → today (12 calendar months to date)
 * - all: firstDay (or today when null, or when firstDay is after today) → today
 */
export const periodWindow = (period: Period, today: string, firstDay: string | null): DayWindow => {
  switch (period) {
    case "today":
      return { from: today, to: today }
    case "yesterday": {
      const y = addDays(today, -1)
      return { from: y, to: y }
    }
    case "7d":
      return lastDays(today, 7)
    case "30d":
      return lastDays(today, 30)
    case "3m":
      return { from: startOfMonth(addMonths(startOfMonth(today), -2)), to: today }
    case "12m":
      return { from: startOfMonth(addMonths(startOfMonth(today), -11)), to: today }
    case "all":
      return { from: firstDay !== null && firstDay < today ? firstDay : today, to: today }
  }
}

/** The window of the same number of days just before `w`. */
export const previousWindow = (w: DayWindow): DayWindow => {
  const n = windowLength(w)
  return { from: addDays(w.from, -n), to: addDays(w.from, -1) }
}

// ---------------------------------------------------------------------------------------------------
// Analytics
// ---------------------------------------------------------------------------------------------------

export interface AnalyticsInput {
  readonly projectId: string
  readonly period: Period
  readonly today: string
  readonly timezone: string
  readonly traffic: ReadonlyArray<TrafficDay>
  readonly firstDay: string | null
}

const trafficTotals = (rows: ReadonlyArray<TrafficDay>, w: DayWindow): TrafficTotals => {
  const visitors = Math.round(sumIn(rows, w, (r) => r.visitors))
  const pageviews = Math.round(sumIn(rows, w, (r) => r.pageviews))
  const sessions = Math.round(sumIn(rows, w, (r) => r.sessions))
  const bounces = sumIn(rows, w, (r) => r.bounces)
  const duration = sumIn(rows, w, (r) => r.durationSeconds)
  return {
    visitors,
    pageviews,
    sessions,
    bounceRate: ratio(bounces, sessions),
    pagesPerSession: ratio(pageviews, sessions),
    avgSessionSeconds: ratio(duration, sessions, 1)
  }
}

export const analytics = (input: AnalyticsInput): Analytics => {
  const window = periodWindow(input.period, input.today, input.firstDay)
  const totals = trafficTotals(input.traffic, window)
  const prevWindow = input.period === "all" ? null : previousWindow(window)
  const previous = prevWindow === null ? null : { window: prevWindow, totals: trafficTotals(input.traffic, prevWindow) }

  const byDay = new Map<string, { visitors: number; pageviews: number; sessions: number }>()
  for (const r of input.traffic) {
    if (!inWindow(r.day, window)) continue
    const p = byDay.get(r.day) ?? { visitors: 0, pageviews: 0, sessions: 0 }
    p.visitors += num(r.visitors)
    p.pageviews += num(r.pageviews)
    p.sessions += num(r.sessions)
    byDay.set(r.day, p)
  }
  const series = eachDay(window.from, window.to).map((date) => {
    const p = byDay.get(date)
    return {
      date,
      visitors: Math.round(p?.visitors ?? 0),
      pageviews: Math.round(p?.pageviews ?? 0),
      sessions: Math.round(p?.sessions ?? 0)
    }
  })

  const pt = previous?.totals ?? null
  return {
    projectId: input.projectId,
    period: input.period,
    window,
    timezone: input.timezone,
    totals,
    previous,
    change: {
      visitors: changeOf(totals.visitors, pt?.visitors ?? null),
      pageviews: changeOf(totals.pageviews, pt?.pageviews ?? null),
      sessions: changeOf(totals.sessions, pt?.sessions ?? null)
    },
    series
  }
}

// ---------------------------------------------------------------------------------------------------
// Revenue
// ---------------------------------------------------------------------------------------------------

export interface RevenueInput {
  readonly projectId: string
  readonly currency: string
  readonly today: string
  readonly revenue: ReadonlyArray<RevenueDay>
}

const netIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): number =>
  sumIn(rows, w, (r) => r.grossMinor) - sumIn(rows, w, (r) => r.refundsMinor)

const revenueWindow = (rows: ReadonlyArray<RevenueDay>, w: DayWindow, currency: string) => {
  const gross = sumIn(rows, w, (r) => r.grossMinor)
  const refunds = sumIn(rows, w, (r) => r.refundsMinor)
  return {
    window: w,
    gross: money(gross, currency),
    refunds: money(refunds, currency),
    net: money(gross - refunds, currency),
    newSubscriptions: Math.round(sumIn(rows, w, (r) => r.newSubscriptions)),
    churnedSubscriptions: Math.round(sumIn(rows, w, (r) => r.churnedSubscriptions))
  }
}

export const revenue = (input: RevenueInput): Revenue => {
  const { currency, revenue: rows, today } = input
  const last = lastRowUpTo(rows, today)
  const mrr = Math.round(num(last?.mrrMinor ?? 0))
  const active = Math.round(num(last?.activeSubscriptions ?? 0))
  const arpu = ratio(mrr, active, 6)

  const current = lastDays(today, 30)
  const previous = previousWindow(current)
  const cur = revenueWindow(rows, current, currency)
  const prev = revenueWindow(rows, previous, currency)
  const mrrAtPreviousEnd = Math.round(num(lastRowUpTo(rows, previous.to)?.mrrMinor ?? 0))

  return {
    projectId: input.projectId,
    currency,
    asOf: last?.day ?? null,
    mrr: money(mrr, currency),
    arr: money(12 * mrr, currency),
    activeSubscriptions: active,
    arpu: arpu === null ? null : money(arpu, currency),
    last30Days: cur,
    previous30Days: prev,
    change: {
      net: changeOf(cur.net.amount, prev.net.amount),
      mrr: changeOf(mrr, mrrAtPreviousEnd)
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Churn
// ---------------------------------------------------------------------------------------------------

interface ChurnFigures {
  readonly window: DayWindow
  readonly subscriptionsAtStart: number
  readonly mrrAtStart: number
  readonly newSubscriptions: number
  readonly churnedSubscriptions: number
  readonly churnedMrr: number
  readonly customerChurnRate: number | null
  readonly revenueChurnRate: number | null
}

/** Start state = the last row strictly before the window (zeros when none); flows = sums in the window. */
const churnFigures = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): ChurnFigures => {
  const before = lastRowUpTo(rows, w.from, true)
  const subscriptionsAtStart = Math.round(num(before?.activeSubscriptions ?? 0))
  const mrrAtStart = Math.round(num(before?.mrrMinor ?? 0))
  const churnedSubscriptions = Math.round(sumIn(rows, w, (r) => r.churnedSubscriptions))
  const churnedMrr = Math.round(sumIn(rows, w, (r) => r.churnedMrrMinor))
  return {
    window: w,
    subscriptionsAtStart,
    mrrAtStart,
    newSubscriptions: Math.round(sumIn(rows, w, (r) => r.newSubscriptions)),
    churnedSubscriptions,
    churnedMrr,
    customerChurnRate: ratio(churnedSubscriptions, subscriptionsAtStart),
    revenueChurnRate: ratio(churnedMrr, mrrAtStart)
  }
}

export const churn = (input: RevenueInput): Churn => {
  const current = lastDays(input.today, 30)
  const c = churnFigures(input.revenue, current)
  const p = churnFigures(input.revenue, previousWindow(current))
  return {
    projectId: input.projectId,
    window: current,
    subscriptionsAtStart: c.subscriptionsAtStart,
    newSubscriptions: c.newSubscriptions,
    churnedSubscriptions: c.churnedSubscriptions,
    // Not clamped: if the rows are inconsistent this shows it rather than hiding it.
    subscriptionsAtEnd: c.subscriptionsAtStart + c.newSubscriptions - c.churnedSubscriptions,
    customerChurnRate: c.customerChurnRate,
    mrrAtStart: money(c.mrrAtStart, input.currency),
    churnedMrr: money(c.churnedMrr, input.currency),
    revenueChurnRate: c.revenueChurnRate,
    previous: { window: p.window, customerChurnRate: p.customerChurnRate, revenueChurnRate: p.revenueChurnRate }
  }
}

// ---------------------------------------------------------------------------------------------------
// SEO
// ---------------------------------------------------------------------------------------------------

export interface SeoInput {
  readonly projectId: string
  readonly today: string
  readonly search: ReadonlyArray<SearchDay>
}

const seoTotals = (rows: ReadonlyArray<SearchDay>, w: DayWindow) => {
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

export const seo = (input: SeoInput): Seo => {
  const current = lastDays(input.today, 28)
  const previous = previousWindow(current)
  const totals = seoTotals(input.search, current)
  const prev = seoTotals(input.search, previous)
  return {
    projectId: input.projectId,
    window: current,
    totals,
    previous: { window: previous, totals: prev },
    change: {
      clicks: changeOf(totals.clicks, prev.clicks),
      impressions: changeOf(totals.impressions, prev.impressions)
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------------

export interface HealthInput {
  readonly projectId: string
  readonly today: string
  readonly now: string
  readonly series: ProjectSeries
  readonly currency: string
}

/** Configured weights, in dimension order. Renormalised over the dimensions that have a score. */
export const DIMENSION_WEIGHTS: ReadonlyArray<readonly [Dimension, number]> = [
  ["traffic", 0.3],
  ["revenue", 0.3],
  ["retention", 0.15],
  ["seo", 0.15],
  ["profitability", 0.1]
]

export const statusOf = (score: number | null): HealthStatus => {
  if (score === null) return "no_data"
  if (score >= 75) return "healthy"
  if (score >= 55) return "watch"
  if (score >= 35) return "at_risk"
  return "critical"
}

/**
 * Expenses (in the project currency) attributed to the window: one-off ones on their day, recurring
 * ones spread per day (monthly: amount × 12 / 365; yearly: amount / 365) from incurredOn onwards.
 */
export const expensesIn = (expenses: ReadonlyArray<ExpenseRow>, w: DayWindow, currency: string): number => {
  let total = 0
  for (const e of expenses) {
    if (e.currency.toUpperCase() !== currency.toUpperCase()) continue
    const amount = num(e.amountMinor)
    if (e.recurrence === "one_off") {
      if (inWindow(e.incurredOn, w)) total += amount
      continue
    }
    const from = e.incurredOn > w.from ? e.incurredOn : w.from
    const days = Math.max(0, daysBetween(from, w.to) + 1)
    total += e.recurrence === "monthly" ? (amount * 12 * days) / 365 : (amount * days) / 365
  }
  return total
}

/** Higher-is-better score from a change: 50 + 100 × change, clamped; 75 when growing from 0; null when both 0. */
const growthScore = (cur: number, prev: number, change: number | null): number | null => {
  if (prev === 0) {
    if (cur === 0) return null
    return cur > 0 ? 75 : 25
  }
  if (change === null) return null
  return clamp(Math.round(50 + 100 * change), 0, 100)
}

/** Everything one dimension was scored on, plus the extra figures signals need. */
interface DimensionFacts {
  readonly name: Dimension
  readonly weight: number // as configured
  readonly metric: string
  readonly hasData: boolean
  readonly confidence: number // raw share of the 60 days with a row
  readonly score: number | null
  readonly current: number | null
  readonly previous: number | null
  readonly change: number | null
  readonly summary: string
  /** profitability only: net revenue ≤ 0 while there are expenses (margin undefined, clearly unprofitable). */
  readonly lossWithoutRevenue?: boolean
}

interface Assessment {
  readonly current: DayWindow
  readonly previous: DayWindow
  readonly dimensions: ReadonlyArray<DimensionFacts>
}

const noData = (name: Dimension, weight: number, metric: string, what: string): DimensionFacts => ({
  name,
  weight,
  metric,
  hasData: false,
  confidence: 0,
  score: null,
  current: null,
  previous: null,
  change: null,
  summary: `No ${what} data in the last 60 days`
})

const changeSentence = (label: string, cur: number, prev: number, change: number | null): string => {
  if (prev === 0 && cur === 0) return `No ${label.toLowerCase()} in the last 60 days`
  if (prev === 0) return `${label} ${cur > 0 ? "started" : "went negative"} this period (none in the previous 30 days)`
  if (change === null) return `${label} unchanged on the previous 30 days`
  if (Math.abs(change) < 0.005) return `${label} flat on the previous 30 days`
  return `${label} ${change > 0 ? "up" : "down"} ${pct(change)} on the previous 30 days`
}

const growthDimension = <R extends { readonly day: string }>(
  name: Dimension,
  weight: number,
  metric: string,
  label: string,
  what: string,
  rows: ReadonlyArray<R>,
  value: (rows: ReadonlyArray<R>, w: DayWindow) => number,
  current: DayWindow,
  previous: DayWindow
): DimensionFacts => {
  const days = daysWithRows(rows, current) + daysWithRows(rows, previous)
  if (days === 0) return noData(name, weight, metric, what)
  const cur = Math.round(value(rows, current))
  const prev = Math.round(value(rows, previous))
  const change = changeOf(cur, prev)
  return {
    name,
    weight,
    metric,
    hasData: true,
    confidence: days / 60,
    score: growthScore(cur, prev, change),
    current: cur,
    previous: prev,
    change,
    summary: changeSentence(label, cur, prev, change)
  }
}

const assess = (input: HealthInput): Assessment => {
  const { series, currency, today } = input
  const current = lastDays(today, 30)
  const previous = previousWindow(current)
  const weightOf = (d: Dimension): number => DIMENSION_WEIGHTS.find(([n]) => n === d)?.[1] ?? 0

  const traffic = growthDimension(
    "traffic", weightOf("traffic"), "visitors", "Visitors", "traffic",
    series.traffic, (rows, w) => sumIn(rows, w, (r) => r.visitors), current, previous
  )
  const revenueDim = growthDimension(
    "revenue", weightOf("revenue"), "net_revenue", "Net revenue", "revenue",
    series.revenue, netIn, current, previous
  )
  const seoDim = growthDimension(
    "seo", weightOf("seo"), "clicks", "Search clicks", "search",
    series.search, (rows, w) => sumIn(rows, w, (r) => r.clicks), current, previous
  )

  // Retention: customer churn rate of each window (lower is better).
  const revenueDays = daysWithRows(series.revenue, current) + daysWithRows(series.revenue, previous)
  let retention: DimensionFacts
  if (revenueDays === 0) {
    retention = noData("retention", weightOf("retention"), "customer_churn_rate", "subscription")
  } else {
    const c = churnFigures(series.revenue, current)
    const p = churnFigures(series.revenue, previous)
    const rate = c.customerChurnRate
    const change = changeOf(rate, p.customerChurnRate)
    retention = {
      name: "retention",
      weight: weightOf("retention"),
      metric: "customer_churn_rate",
      hasData: true,
      confidence: revenueDays / 60,
      score: rate === null ? null : clamp(Math.round(100 - rate * 1000), 0, 100),
      current: rate,
      previous: p.customerChurnRate,
      change,
      summary:
        rate === null
          ? "No active subscriptions at the start of the last 30 days"
          : `Customer churn ${pct1(rate)} over the last 30 days` +
            (p.customerChurnRate === null ? "" : ` (previous 30 days: ${pct1(p.customerChurnRate)})`)
    }
  }

  // Profitability: (net revenue − expenses) / net revenue of each window.
  let profitability: DimensionFacts
  if (revenueDays === 0) {
    profitability = noData("profitability", weightOf("profitability"), "profit_margin", "revenue")
  } else {
    const marginOf = (w: DayWindow) => {
      const net = netIn(series.revenue, w)
      const expenses = expensesIn(series.expenses, w, currency)
      return { net, expenses, margin: net > 0 ? ratio(net - expenses, net) : null }
    }
    const c = marginOf(current)
    const p = marginOf(previous)
    const lossWithoutRevenue = c.net <= 0 && c.expenses > 0
    const score = c.margin !== null
      ? clamp(Math.round(50 + 100 * c.margin), 0, 100)
      : lossWithoutRevenue
        ? 0
        : null
    profitability = {
      name: "profitability",
      weight: weightOf("profitability"),
      metric: "profit_margin",
      hasData: true,
      confidence: revenueDays / 60,
      score,
      current: c.margin,
      previous: p.margin,
      change: changeOf(c.margin, p.margin),
      summary: c.margin !== null
        ? `Profit margin ${pct1(c.margin)} after ${formatMoney(c.expenses, currency)} of expenses in the last 30 days`
        : lossWithoutRevenue
          ? `Expenses of ${formatMoney(c.expenses, currency)} with no net revenue in the last 30 days`
          : "No net revenue or expenses in the last 30 days",
      lossWithoutRevenue
    }
  }

  return { current, previous, dimensions: [traffic, revenueDim, retention, seoDim, profitability] }
}

export const health = (input: HealthInput): Health => {
  const a = assess(input)
  const scored = a.dimensions.filter((d) => d.score !== null)
  const totalWeight = scored.reduce((s, d) => s + d.weight, 0)
  const score = totalWeight > 0
    ? Math.round(scored.reduce((s, d) => s + d.weight * (d.score ?? 0), 0) / totalWeight)
    : null
  const confidence = roundTo(a.dimensions.reduce((s, d) => s + d.weight * d.confidence, 0), 2)

  const dimensions: Array<HealthDimension> = a.dimensions.map((d) => ({
    name: d.name,
    score: d.score,
    weight: d.score === null || totalWeight === 0 ? 0 : roundTo(d.weight / totalWeight, 4),
    confidence: roundTo(d.confidence, 2),
    status: statusOf(d.score),
    metric: d.metric,
    current: d.current,
    previous: d.previous,
    change: d.change,
    summary: d.summary
  }))

  return {
    projectId: input.projectId,
    score,
    confidence,
    status: statusOf(score),
    computedAt: input.now,
    window: { current: a.current, previous: a.previous },
    dimensions
  }
}

export const snapshot = (h: Health): HealthSnapshot => ({
  score: h.score,
  confidence: h.confidence,
  status: h.status,
  computedAt: h.computedAt
})

// ---------------------------------------------------------------------------------------------------
// Signals
// ---------------------------------------------------------------------------------------------------

/** FNV-1a (32-bit) of a string, in base 36. */
export const fnv1a = (s: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(36)
}

export const signalId = (projectId: string, kind: string, today: string): string =>
  `sig_${fnv1a(`${projectId}|${kind}|${today}`)}`

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 }

/** critical, warning, info; then by |change| descending (no change last); then by kind. */
export const compareSignals = (a: Signal, b: Signal): number =>
  SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
  (b.change === null ? -1 : Math.abs(b.change)) - (a.change === null ? -1 : Math.abs(a.change)) ||
  (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0)

export const sortSignals = (signals: ReadonlyArray<Signal>): Array<Signal> => [...signals].sort(compareSignals)

const GROWTH_LABELS: Partial<Record<Dimension, { noun: string; drop: string; growth: string }>> = {
  traffic: { noun: "Visitors", drop: "traffic_drop", growth: "traffic_growth" },
  revenue: { noun: "Net revenue", drop: "revenue_drop", growth: "revenue_growth" },
  seo: { noun: "Search clicks", drop: "seo_drop", growth: "seo_growth" }
}

export const signals = (input: HealthInput): Array<Signal> => {
  const a = assess(input)
  const { projectId, today, currency } = input
  const out: Array<Signal> = []
  const make = (
    d: { name: Dimension; metric: string },
    severity: Severity,
    kind: string,
    title: string,
    detail: string,
    current: number | null,
    previous: number | null,
    change: number | null,
    window: DayWindow
  ): Signal => ({
    id: signalId(projectId, kind, today),
    dimension: d.name,
    severity,
    kind,
    title,
    detail,
    metric: d.metric,
    current,
    previous,
    change,
    window,
    detectedOn: today
  })
  const show = (d: DimensionFacts, v: number): string =>
    d.name === "revenue" ? formatMoney(v, currency) : fmtInt(v)

  for (const d of a.dimensions) {
    if (!d.hasData) continue
    const labels = GROWTH_LABELS[d.name]
    if (labels !== undefined) {
      const change = d.change
      if (change === null || d.current === null || d.previous === null) continue
      const detail = `${labels.noun}: ${show(d, d.current)} in the last 30 days vs ${show(d, d.previous)} in the 30 days before.`
      if (change <= -0.2) {
        out.push(make(d, change <= -0.4 ? "critical" : "warning", labels.drop,
          `${labels.noun} down ${pct(change)} on the previous 30 days`, detail, d.current, d.previous, change, a.current))
      } else if (change >= 0.2) {
        out.push(make(d, "info", labels.growth,
          `${labels.noun} up ${pct(change)} on the previous 30 days`, detail, d.current, d.previous, change, a.current))
      }
    } else if (d.name === "retention") {
      const rate = d.current
      if (rate === null) continue
      const severity: Severity | null = rate >= 0.08
        ? "critical"
        : rate >= 0.04 || (d.change !== null && d.change >= 0.5)
          ? "warning"
          : null
      if (severity === null) continue
      const was = d.previous === null ? "" : ` (previous 30 days: ${pct1(d.previous)})`
      out.push(make(d, severity, "churn_spike", `Customer churn at ${pct1(rate)} over the last 30 days`,
        `${pct1(rate)} of the subscriptions active at the start of the last 30 days were cancelled${was}.`,
        rate, d.previous, d.change, a.current))
    } else if (d.name === "profitability") {
      const margin = d.current
      if (margin === null) {
        if (d.lossWithoutRevenue === true) {
          out.push(make(d, "critical", "unprofitable", "Expenses with no net revenue",
            "The last 30 days had expenses but no positive net revenue.", null, d.previous, null, a.current))
        }
        continue
      }
      if (margin < 0) {
        out.push(make(d, "critical", "unprofitable", `Unprofitable at a ${pct1(margin)} margin`,
          `Expenses exceeded net revenue over the last 30 days (profit margin ${pct1(margin)}).`,
          margin, d.previous, d.change, a.current))
      } else if (margin < 0.2) {
        out.push(make(d, "warning", "thin_margin", `Thin margin of ${pct1(margin)}`,
          `Only ${pct1(margin)} of net revenue was left after expenses over the last 30 days.`,
          margin, d.previous, d.change, a.current))
      }
    }
  }

  // Short-term traffic check: the last 7 days vs the 7 before.
  const week = lastDays(today, 7)
  const weekBefore = previousWindow(week)
  const cur7 = Math.round(sumIn(input.series.traffic, week, (r) => r.visitors))
  const prev7 = Math.round(sumIn(input.series.traffic, weekBefore, (r) => r.visitors))
  const change7 = changeOf(cur7, prev7)
  if (change7 !== null && change7 <= -0.3) {
    out.push(make({ name: "traffic", metric: "visitors" }, "warning", "traffic_drop_week",
      `Visitors down ${pct(change7)} this week`,
      `Visitors: ${fmtInt(cur7)} in the last 7 days vs ${fmtInt(prev7)} in the 7 days before.`,
      cur7, prev7, change7, week))
  }

  return sortSignals(out)
}

// ---------------------------------------------------------------------------------------------------
// Briefing
// ---------------------------------------------------------------------------------------------------

export interface BriefingInput extends HealthInput {
  readonly signals: ReadonlyArray<Signal>
}

const STATUS_WORDS: Record<HealthStatus, string> = {
  healthy: "healthy",
  watch: "worth watching",
  at_risk: "at risk",
  critical: "critical",
  no_data: "no data"
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1)

export const actionFor = (s: Signal): string => {
  switch (s.kind) {
    case "traffic_drop":
      return "Check tracking, recent deploys and broken pages, then compare top referrers and landing pages with the previous 30 days."
    case "traffic_drop_week":
      return "Look at this week: verify the tracking snippet is still installed and find which referrer or page stopped sending visitors."
    case "traffic_growth":
      return "Find the channels and pages behind the extra visitors and invest more in them."
    case "revenue_drop":
      return "Review failed payments, refunds and downgrades, and check whether sign-ups fell."
    case "revenue_growth":
      return "Work out what lifted revenue (pricing, plan mix, a campaign) and make it repeatable."
    case "seo_drop":
      return "Open Search Console: look for lost queries, de-indexed pages and ranking drops on your top pages."
    case "seo_growth":
      return "See which queries gained clicks and strengthen those pages with fresh content and internal links."
    case "churn_spike":
      return "Contact recently cancelled customers, collect their reasons and fix the most common one."
    case "unprofitable":
      return "Expenses exceed revenue: cut or pause the largest recurring expenses and revisit pricing."
    case "thin_margin":
      return "Review recurring expenses for savings and consider a price increase."
    default:
      return `Review the ${s.dimension} figures.`
  }
}

export const briefing = (input: BriefingInput): Briefing => {
  const h = health(input)
  const { today, currency, series } = input
  const y = addDays(today, -1)
  const t = { from: y, to: y }
  const sorted = sortSignals(input.signals)

  const top = sorted[0]
  const headline = h.score === null
    ? top === undefined
      ? "All quiet: not enough data for a health score yet."
      : `Not enough data for a health score yet; ${lowerFirst(top.title)}.`
    : top === undefined
      ? `All quiet: health ${h.score}/100 (${STATUS_WORDS[h.status]}), no notable changes.`
      : `Health ${h.score}/100 (${STATUS_WORDS[h.status]}): ${lowerFirst(top.title)}.`

  const urgent = sorted.filter((s) => s.severity !== "info")
  const info = sorted.filter((s) => s.severity === "info")
  const picked = urgent.length < 3 ? [...urgent, ...info.slice(0, 3 - urgent.length)] : urgent
  const priorities = picked.slice(0, 5).map((s, i) => ({
    rank: i + 1,
    dimension: s.dimension,
    severity: s.severity,
    title: s.title,
    action: actionFor(s),
    signalId: s.id
  }))

  return {
    projectId: input.projectId,
    date: today,
    generatedAt: input.now,
    headline,
    health: snapshot(h),
    yesterday: {
      date: y,
      visitors: Math.round(sumIn(series.traffic, t, (r) => r.visitors)),
      pageviews: Math.round(sumIn(series.traffic, t, (r) => r.pageviews)),
      revenue: money(netIn(series.revenue, t), currency),
      newSubscriptions: Math.round(sumIn(series.revenue, t, (r) => r.newSubscriptions)),
      churnedSubscriptions: Math.round(sumIn(series.revenue, t, (r) => r.churnedSubscriptions))
    },
    priorities
  }
}
