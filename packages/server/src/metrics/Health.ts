/**
 * The health score: five dimensions scored 0–100 over the last 30 COMPLETE days (ending yesterday in the
 * project's time zone: today is partial, and counting it made every morning look like a drop) against the
 * 30 days before. Pure: the caller passes `today` and `now`. Formulas: docs/metrics.md, "Health".
 */
import type { Dimension, Health, HealthDimension, HealthSnapshot, HealthStatus } from "@sitehealth/domain/Projects"
import type { FxRate } from "../fx/Fx.ts"
import type { ProjectSeriesInput, RevenueDay } from "../store/Series.ts"
import { addDays, daysBetween } from "./Dates.ts"
import {
  changeOf,
  clamp,
  formatMoney,
  inWindow,
  lastDays,
  lastRowUpTo,
  num,
  pct,
  pct1,
  previousWindow,
  ratio,
  roundTo,
  sumIn
} from "./Numbers.ts"
import type { DayWindow } from "./Numbers.ts"
import { expensesIn } from "./Profitability.ts"

export interface HealthInput extends ProjectSeriesInput {
  /** Operator-supplied FX rates (FxRepo.all()) for expenses in other currencies. */
  readonly rates?: ReadonlyArray<FxRate>
}

/** Configured weights, in dimension order. Renormalised over the dimensions that have a score. */
export const DIMENSION_WEIGHTS: ReadonlyArray<readonly [Dimension, number]> = [
  ["traffic", 0.3],
  ["revenue", 0.3],
  ["retention", 0.15],
  ["seo", 0.15],
  ["profitability", 0.1]
]
export const weightOf = (d: Dimension): number => DIMENSION_WEIGHTS.find(([n]) => n === d)?.[1] ?? 0

/** Days the 30-over-30 comparison needs. */
export const HISTORY_DAYS = 60
/** A dimension is stale when its last row is more than this many days before today (search lags). */
export const STALE_AFTER_DAYS: Record<"traffic" | "revenue" | "search", number> = { traffic: 2, revenue: 2, search: 4 }
/** Freshness factor of a stale dimension. */
export const STALE_FACTOR = 0.5

export const statusOf = (score: number | null): HealthStatus => {
  if (score === null) return "no_data"
  if (score >= 75) return "healthy"
  if (score >= 55) return "watch"
  if (score >= 35) return "at_risk"
  return "critical"
}

// expensesIn (expenses attributed to a window) lives in Profitability.ts.

/** 50 + k × change, clamped to 0–100; 75 when growing from 0; null when both are 0. */
export const growthScore = (cur: number, prev: number, k: number): number | null => {
  if (prev === 0) return cur === 0 ? null : cur > 0 ? 75 : 25
  const change = (cur - prev) / Math.abs(prev)
  return clamp(Math.round(50 + k * change), 0, 100)
}

/** Net revenue (gross − refunds) booked in the window. */
export const netRevenueIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): number =>
  sumIn(rows, w, (r) => r.grossMinor - r.refundsMinor)

/** MRR at the end of `day`: the last row on or before it (MRR carries over days without a row); 0 before any. */
export const mrrAt = (rows: ReadonlyArray<RevenueDay>, day: string): number =>
  num(lastRowUpTo(rows, day)?.mrrMinor ?? 0)
export const customersAt = (rows: ReadonlyArray<RevenueDay>, day: string): number =>
  num(lastRowUpTo(rows, day)?.customers ?? 0)

/** Retention figures of a window: logo churn and net MRR churn over what existed at its start. */
export const retentionIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow) => {
  const before = addDays(w.from, -1)
  const customersStart = customersAt(rows, before)
  const mrrStart = mrrAt(rows, before)
  const churned = sumIn(rows, w, (r) => r.churnedCustomers)
  const churnedMrr = sumIn(rows, w, (r) => r.churnedMrrMinor)
  const contraction = sumIn(rows, w, (r) => r.contractionMrrMinor)
  const expansion = sumIn(rows, w, (r) => r.expansionMrrMinor)
  return {
    customersStart,
    churnedCustomers: churned,
    logoChurn: ratio(churned, customersStart),
    mrrStart,
    churnedMrr,
    netMrrChurn: ratio(churnedMrr + contraction - expansion, mrrStart)
  }
}

interface Scored {
  readonly name: Dimension
  readonly metric: string
  readonly score: number | null
  readonly reason: string
  readonly figures: Record<string, number | null>
  readonly source: "traffic" | "revenue" | "search"
}

const lastDay = (rows: ReadonlyArray<{ readonly day: string }>, upTo: string): string | null =>
  lastRowUpTo(rows, upTo)?.day ?? null
const firstDay = (rows: ReadonlyArray<{ readonly day: string }>): string | null =>
  rows.reduce<string | null>((m, r) => (m === null || r.day < m ? r.day : m), null)
const hasRowsIn = (rows: ReadonlyArray<{ readonly day: string }>, w: DayWindow): boolean =>
  rows.some((r) => inWindow(r.day, w))

const sentence = (label: string, change: number | null, what: string): string =>
  change === null ? `${label} unchanged on ${what}` : Math.abs(change) < 0.005
    ? `${label} flat on ${what}`
    : `${label} ${change > 0 ? "up" : "down"} ${pct(change)} on ${what}`

/** The dimension scores and the figures behind them. */
type Unscored = Omit<Scored, "score"> & { score: null; noData: true }

export const scoreDimensions = (
  input: HealthInput,
  current: DayWindow,
  previous: DayWindow
): ReadonlyArray<Scored | Unscored> => {
  const { currency, series } = input
  const span: DayWindow = { from: previous.from, to: current.to }
  const out: Array<Scored | Unscored> = []
  const none = (name: Dimension, metric: string, what: string, source: Scored["source"]): Unscored => ({
    name,
    metric,
    score: null,
    reason: `No ${what} data in the last 60 days`,
    figures: {},
    source,
    noData: true
  })

  // Traffic: visitors of the last 30 days vs the 30 before.
  if (!hasRowsIn(series.traffic, span)) out.push(none("traffic", "visitors", "traffic", "traffic"))
  else {
    const cur = Math.round(sumIn(series.traffic, current, (r) => r.visitors))
    const prev = Math.round(sumIn(series.traffic, previous, (r) => r.visitors))
    const change = changeOf(cur, prev)
    out.push({
      name: "traffic",
      metric: "visitors",
      source: "traffic",
      score: growthScore(cur, prev, 100),
      reason: prev === 0 && cur === 0
        ? "No visitors in the last 60 days"
        : sentence("Visitors", change, "the previous 30 days"),
      figures: { visitors: cur, previousVisitors: prev, change }
    })
  }

  // Revenue: MRR growth over the 30 days (MRR, not lumpy daily charges).
  if (!hasRowsIn(series.revenue, span)) out.push(none("revenue", "mrr_growth", "revenue", "revenue"))
  else {
    const end = mrrAt(series.revenue, current.to)
    const start = mrrAt(series.revenue, addDays(current.from, -1))
    const growth = changeOf(end, start)
    out.push({
      name: "revenue",
      metric: "mrr_growth",
      source: "revenue",
      score: growthScore(end, start, 250),
      reason: start === 0 && end === 0 ?
        "No MRR in the last 30 days"
        : `MRR ${formatMoney(end, currency)}, ` + (start === 0 ?
          "started this period"
          : growth === null || Math.abs(growth) < 0.0005
          ? "flat over 30 days"
          : `${growth > 0 ? "up" : "down"} ${pct1(Math.abs(growth))} over 30 days`),
      figures: { mrr: end, mrrStart: start, mrrGrowth: growth, netNewMrr: end - start }
    })
  }

  // Retention: logo churn and net MRR churn over the last 30 days.
  if (!hasRowsIn(series.revenue, span)) out.push(none("retention", "logo_churn", "subscription", "revenue"))
  else {
    const r = retentionIn(series.revenue, current)
    const logoScore = r.logoChurn === null ? null : clamp(100 - 1000 * r.logoChurn, 0, 100)
    const mrrScore = r.netMrrChurn === null ? null : clamp(100 - 1000 * r.netMrrChurn, 0, 100)
    const parts = [logoScore, mrrScore].filter((x): x is number => x !== null)
    const score = parts.length === 0 ? null : Math.round(parts.reduce((s, x) => s + x, 0) / parts.length)
    out.push({
      name: "retention",
      metric: "logo_churn",
      source: "revenue",
      score,
      reason: r.logoChurn === null ?
        "No paying customers at the start of the last 30 days"
        : `${r.churnedCustomers} of ${r.customersStart} customers churned (${pct1(r.logoChurn)})` +
          (r.netMrrChurn === null ? "" : `, net MRR churn ${pct1(r.netMrrChurn)}`),
      figures: {
        customersStart: r.customersStart,
        churnedCustomers: r.churnedCustomers,
        logoChurn: r.logoChurn,
        mrrStart: r.mrrStart,
        churnedMrr: r.churnedMrr,
        netMrrChurn: r.netMrrChurn
      }
    })
  }

  // SEO: clicks of the 30 days ending on the last search day (search data lags 2–3 days: ending the
  // window at yesterday would compare half-empty days with full ones and show a false drop).
  if (!hasRowsIn(series.search, span)) out.push(none("seo", "clicks", "search", "search"))
  else {
    const through = lastDay(series.search, current.to)!
    const cur = lastDays(through, 30)
    const prevW = previousWindow(cur)
    const c = Math.round(sumIn(series.search, cur, (r) => r.clicks))
    const p = Math.round(sumIn(series.search, prevW, (r) => r.clicks))
    const change = changeOf(c, p)
    out.push({
      name: "seo",
      metric: "clicks",
      source: "search",
      score: growthScore(c, p, 100),
      reason: p === 0 && c === 0
        ? "No search clicks in the last 60 days"
        : sentence("Search clicks", change, `the previous 30 days (data through ${through})`),
      figures: { clicks: c, previousClicks: p, change }
    })
  }

  // Profitability: margin of the last 30 days.
  const net = netRevenueIn(series.revenue, current)
  const expenses = Math.round(expensesIn(series.expenses, current, currency, input.rates ?? []))
  if (!hasRowsIn(series.revenue, span) && expenses === 0) {
    out.push(none("profitability", "profit_margin", "revenue", "revenue"))
  } else {
    const margin = net > 0 ? ratio(net - expenses, net) : null
    const score = margin !== null ? clamp(Math.round(50 + 100 * margin), 0, 100) : expenses > 0 ? 0 : null
    out.push({
      name: "profitability",
      metric: "profit_margin",
      source: "revenue",
      score,
      reason: margin !== null ?
        `Margin ${pct1(margin)}: ${formatMoney(net, currency)} net revenue, ${formatMoney(expenses, currency)} expenses`
        : expenses > 0
        ? `Expenses of ${formatMoney(expenses, currency)} with no net revenue`
        : "No net revenue or expenses in the last 30 days",
      figures: { netRevenue: net, expenses, profit: net - expenses, margin }
    })
  }
  return out
}

export const health = (input: HealthInput): Health => {
  const yesterday = addDays(input.today, -1)
  const current = lastDays(yesterday, 30)
  const previous = previousWindow(current)
  const dims = scoreDimensions(input, current, previous)
  const rowsOf = (s: Scored["source"]) => input.series[s]

  const scored = dims.filter((d) => d.score !== null)
  const totalWeight = DIMENSION_WEIGHTS.reduce((s, [, w]) => s + w, 0)
  const scoredWeight = scored.reduce((s, d) => s + weightOf(d.name), 0)
  const score = scoredWeight > 0
    ? Math.round(scored.reduce((s, d) => s + weightOf(d.name) * d.score!, 0) / scoredWeight)
    : null

  const facts = dims.map((d) => {
    const rows = rowsOf(d.source)
    const last = lastDay(rows, input.today)
    const first = firstDay(rows)
    const stale = last === null || daysBetween(last, input.today) > STALE_AFTER_DAYS[d.source]
    const history = first === null ? 0 : Math.min(1, Math.max(0, daysBetween(first, input.today)) / HISTORY_DAYS)
    return { d, last, stale: "noData" in d ? false : stale, history }
  })
  const weighted = (f: (x: (typeof facts)[number]) => number): number =>
    scoredWeight === 0
      ? 0
      : facts.filter((x) => x.d.score !== null).reduce((s, x) => s + weightOf(x.d.name) * f(x), 0) / scoredWeight
  const coverage = roundTo(scoredWeight / totalWeight, 4)
  const freshness = roundTo(weighted((x) => (x.stale ? STALE_FACTOR : 1)), 4)
  const history = roundTo(weighted((x) => x.history), 4)
  // toPrecision first: 0.3 × 0.95 × 100 is 28.499999… in binary and must round to 0.29 like on paper.
  const confidence = Math.round(Number((coverage * freshness * history * 100).toPrecision(12))) / 100 + 0

  const dimensions: Array<HealthDimension> = facts.map(({ d, last, stale }) => ({
    name: d.name,
    score: d.score,
    weight: d.score === null ? 0 : roundTo(weightOf(d.name) / scoredWeight, 4),
    configuredWeight: weightOf(d.name),
    status: statusOf(d.score),
    reason: stale ? `${d.reason} (last data ${last}, stale)` : d.reason,
    metric: d.metric,
    figures: d.figures,
    lastDataOn: last,
    stale
  }))

  return {
    projectId: input.projectId,
    date: input.today,
    score,
    confidence,
    confidenceFactors: { value: confidence, coverage, freshness, history },
    status: statusOf(score),
    computedAt: input.now,
    window: { current, previous },
    dimensions
  }
}

export const snapshot = (h: Health): HealthSnapshot => ({
  score: h.score,
  confidence: h.confidence,
  status: h.status,
  computedAt: h.computedAt
})
