/** Signals: what changed enough to mention, with a severity. See Compute.ts for the conventions. */
import type { Dimension, Severity, Signal } from "../../../domain/src/Projects.ts"
import { changeOf, fmtInt, formatMoney, lastDays, pct, pct1, previousWindow, sumIn } from "./Numbers.ts"
import type { DayWindow } from "./Numbers.ts"
import { churn, revenue, seo } from "./Reports.ts"
import { assess } from "./Health.ts"
import type { DimensionFacts, HealthInput } from "./Health.ts"

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

export const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 }

/** critical, warning, info; then by |change| descending (no change last); then by kind. */
export const compareSignals = (a: Signal, b: Signal): number =>
  SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
  (b.change === null ? -1 : Math.abs(b.change)) - (a.change === null ? -1 : Math.abs(a.change)) ||
  (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0)

export const sortSignals = (signals: ReadonlyArray<Signal>): Array<Signal> => [...signals].sort(compareSignals)

export const GROWTH_LABELS: Partial<Record<Dimension, { noun: string; drop: string; growth: string }>> = {
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

