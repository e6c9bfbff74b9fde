/**
 * The morning briefing for the project's local date: a headline (bad news first), yesterday's key
 * figures against the usual, what changed, and priorities. Pure: the caller passes the stored health and
 * signals and `now`; snapshots/ stores the result once per local date. Definitions: docs/metrics.md, "Briefing".
 */
import type { Briefing, Health, KeyFigure, Priority, Signal } from "@sitehealth/domain/Projects"
import type { ProjectSeriesInput } from "../store/Series.ts"
import { median } from "./Anomaly.ts"
import { addDays } from "./Dates.ts"
import { mrrAt } from "./Health.ts"
import { snapshot } from "./Health.ts"
import { changeOf, roundTo } from "./Numbers.ts"
import { compareCandidates, integrationName } from "./Signals.ts"

export interface BriefingInput extends ProjectSeriesInput {
  readonly health: Health
  /** The stored signals that are active now. */
  readonly signals: ReadonlyArray<Signal>
}

/** Weeks of same-weekday values the "usual" is the median of. */
export const USUAL_WEEKS = 4
export const MAX_PRIORITIES = 5

/** `value` on `day` (0 without a row) against the median of the same weekday over the previous 4 weeks. */
export const keyFigure = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  day: string,
  f: (r: R) => number
): KeyFigure => {
  const byDay = new Map(rows.map((r) => [r.day, f(r)] as const))
  const value = byDay.get(day) ?? 0
  const usualPoints: Array<number> = []
  for (let w = 1; w <= USUAL_WEEKS; w++) {
    const v = byDay.get(addDays(day, -7 * w))
    if (v !== undefined) usualPoints.push(v)
  }
  const usual = median(usualPoints)
  return { value, usual: usual === null ? null : roundTo(usual, 2), change: changeOf(value, usual) }
}

export const actionFor = (s: Pick<Signal, "kind" | "subject" | "dimension">): string => {
  switch (s.kind) {
    case "anomaly_drop":
      return s.subject === "net_revenue"
        ? "Check yesterday's failed payments, refunds and checkout errors."
        : s.subject === "search_clicks"
        ? "Open Search Console: look for de-indexed pages, lost queries and manual actions."
        : "Check the tracking snippet, recent deploys and broken pages, then compare referrers with the usual day."
    case "anomaly_spike":
      return "Find the source of the spike (a campaign, a mention, bots) and make the most of it if it is real."
    case "integration_failing":
      return `Reconnect ${
        integrationName(s.subject)
      } in the dashboard: its last sync failed, so its figures are not updating.`
    case "integration_stale":
      return `Trigger a sync of ${integrationName(s.subject)} and check its credentials.`
    case "mrr_decline":
      return "Review churned and downgraded customers of the last 30 days and reach out to the largest."
    case "churn_spike":
      return "Contact recently churned customers, collect their reasons and fix the most common one."
    case "failed_payments":
      return "Turn on payment retries and dunning emails, and ask affected customers to update their card."
    case "spend_outgrowing_revenue":
      return "Cut or pause the largest recurring expenses that do not bring revenue, and revisit pricing."
    case "ranking_drop":
      return `Refresh the page ranking for "${
        s.subject ?? ""
      }": check for a competitor, content decay or indexing problems.`
    default:
      return `Review the ${s.dimension} figures.`
  }
}

const STATUS_WORDS: Record<Health["status"], string> = {
  healthy: "healthy",
  watch: "worth watching",
  at_risk: "at risk",
  critical: "critical",
  no_data: "no data yet"
}

/** Severity first, then money at stake (larger first, unknown last), then kind and subject. */
export const rankSignals = (signals: ReadonlyArray<Signal>): Array<Signal> =>
  [...signals].sort((a, b) =>
    compareCandidates(
      {
        severity: a.severity,
        moneyAtStake: a.moneyAtStake?.amount ?? null,
        fingerprint: `${a.kind}|${a.subject ?? ""}`,
        kind: a.kind
      },
      {
        severity: b.severity,
        moneyAtStake: b.moneyAtStake?.amount ?? null,
        fingerprint: `${b.kind}|${b.subject ?? ""}`,
        kind: b.kind
      }
    )
  )

export const briefing = (input: BriefingInput): Briefing => {
  const { currency, health: h, series } = input
  const y = addDays(input.today, -1)
  const ranked = rankSignals(input.signals.filter((s) => s.active))
  const dayAgo = new Date(Date.parse(input.now) - 86_400_000).toISOString()
  const whatChanged = ranked.filter((s) => s.detectedAt >= dayAgo)

  const priorities: Array<Priority> = ranked.slice(0, MAX_PRIORITIES).map((s, i) => ({
    rank: i + 1,
    dimension: s.dimension,
    severity: s.severity,
    title: s.title,
    action: actionFor(s),
    moneyAtStake: s.moneyAtStake,
    signalId: s.id
  }))

  const scoreText = h.score === null ? "no health score yet" : `health ${h.score}/100 (${STATUS_WORDS[h.status]})`
  const bad = ranked.filter((s) => s.severity !== "info")
  const top = ranked[0]
  const headline = bad.length > 0
    ? `${bad[0].title}` + (bad.length > 1 ? ` and ${bad.length - 1} more issue${bad.length > 2 ? "s" : ""}` : "") +
      `; ${scoreText}.`
    : top !== undefined
    ? `Good news: ${top.title.charAt(0).toLowerCase()}${top.title.slice(1)}; ${scoreText}.`
    : `All quiet: ${scoreText}, nothing unusual yesterday.`

  // MRR is a level, not a flow: a day without a row carries the last MRR over.
  const mrrRows = [0, 1, 2, 3, 4].map((w) => ({
    day: addDays(y, -7 * w),
    mrr: mrrAt(series.revenue, addDays(y, -7 * w))
  }))
  const hasRevenue = series.revenue.some((r) => r.day <= y)

  return {
    projectId: input.projectId,
    date: input.today,
    generatedAt: input.now,
    headline,
    health: snapshot(h),
    yesterday: {
      date: y,
      currency,
      visitors: keyFigure(series.traffic, y, (r) => r.visitors),
      pageviews: keyFigure(series.traffic, y, (r) => r.pageviews),
      netRevenue: keyFigure(series.revenue, y, (r) => r.grossMinor - r.refundsMinor),
      newCustomers: keyFigure(series.revenue, y, (r) => r.newCustomers),
      churnedCustomers: keyFigure(series.revenue, y, (r) => r.churnedCustomers),
      mrr: hasRevenue ? keyFigure(mrrRows, y, (r) => r.mrr) : { value: 0, usual: null, change: null }
    },
    whatChanged,
    priorities
  }
}
