/** The health score: five dimensions, their scores, weights and confidence. See Compute.ts for the conventions. */
import type { Dimension, Health, HealthDimension, HealthSnapshot } from "../../../domain/src/Projects.ts"
import { daysBetween } from "./Dates.ts"
import type { ExpenseRow, ProjectSeries } from "./Rows.ts"
import { changeOf, clamp, daysWithRows, formatMoney, inWindow, lastDays, num, pct, pct1, previousWindow, ratio, roundTo, sumIn } from "./Numbers.ts"
import type { DayWindow, HealthStatus } from "./Numbers.ts"
import { churn, churnFigures, netIn, revenue, seo } from "./Reports.ts"

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
export const growthScore = (cur: number, prev: number, change: number | null): number | null => {
  if (prev === 0) {
    if (cur === 0) return null
    return cur > 0 ? 75 : 25
  }
  if (change === null) return null
  return clamp(Math.round(50 + 100 * change), 0, 100)
}

/** Everything one dimension was scored on, plus the extra figures signals need. */
export interface DimensionFacts {
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

export interface Assessment {
  readonly current: DayWindow
  readonly previous: DayWindow
  readonly dimensions: ReadonlyArray<DimensionFacts>
}

export const noData = (name: Dimension, weight: number, metric: string, what: string): DimensionFacts => ({
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

export const changeSentence = (label: string, cur: number, prev: number, change: number | null): string => {
  if (prev === 0 && cur === 0) return `No ${label.toLowerCase()} in the last 60 days`
  if (prev === 0) return `${label} ${cur > 0 ? "started" : "went negative"} this period (none in the previous 30 days)`
  if (change === null) return `${label} unchanged on the previous 30 days`
  if (Math.abs(change) < 0.005) return `${label} flat on the previous 30 days`
  return `${label} ${change > 0 ? "up" : "down"} ${pct(change)} on the previous 30 days`
}

export const growthDimension = <R extends { readonly day: string }>(
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

export const assess = (input: HealthInput): Assessment => {
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

