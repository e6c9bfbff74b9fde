/** The morning briefing: headline, yesterday, priorities. See Compute.ts for the conventions. */
import type { Briefing, Health, Signal } from "../../../domain/src/Projects.ts"
import { addDays } from "./Dates.ts"
import { money, sumIn } from "./Numbers.ts"
import type { HealthStatus } from "./Numbers.ts"
import { netIn, revenue } from "./Reports.ts"
import { health, snapshot } from "./Health.ts"
import type { HealthInput } from "./Health.ts"
import { signalId, signals, sortSignals } from "./Signals.ts"

// ---------------------------------------------------------------------------------------------------
// Briefing
// ---------------------------------------------------------------------------------------------------

export interface BriefingInput extends HealthInput {
  readonly signals: ReadonlyArray<Signal>
}

export const STATUS_WORDS: Record<HealthStatus, string> = {
  healthy: "healthy",
  watch: "worth watching",
  at_risk: "at risk",
  critical: "critical",
  no_data: "no data"
}

export const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1)

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

