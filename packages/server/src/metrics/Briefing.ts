/**
 * The morning briefing for the project's local date: a headline (bad news first), yesterday's key
 * figures against the usual, what changed, and priorities. Pure: the caller passes the stored health and
 * signals and `now`; snapshots/ stores the result once per local date. Definitions: docs/metrics.md, "Briefing".
 */
import { PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import type { Briefing, DataSources, DataState, Health, KeyFigure, Priority, Signal } from "@sitehealth/domain/Projects"
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
  /** Where each kind of data stands (metrics/Sources.ts): a figure of a kind not connected is null, not 0. */
  readonly sources: DataSources
  /** Set when the day's briefing is recomposed: the first edition's generatedAt, and now. */
  readonly edition?: { readonly generatedAt: string; readonly updatedAt: string }
}

/** Weeks of same-weekday values the "usual" is the median of. */
export const USUAL_WEEKS = 4
export const MAX_PRIORITIES = 5

/** `value` on `day` (0 without a row) against the median of the same weekday over the previous 4 weeks. */
export const keyFigure = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  day: string,
  f: (r: R) => number
): Omit<KeyFigure, "state"> => {
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

/**
 * A figure of a kind whose state is `state`: the figure itself when connected; otherwise no usual, no change, and a
 * value of 0 that its state says is not data (v1's value stays a number: docs/api.md, Versioning).
 */
const figureOf = (state: DataState, figure: () => Omit<KeyFigure, "state">): KeyFigure =>
  state === "connected" ? { ...figure(), state } : { value: 0, usual: null, change: null, state }

const KIND_NAMES: Record<keyof DataSources, string> = {
  analytics: PROVIDER_NAMES.plausible,
  payments: PROVIDER_NAMES.stripe,
  search: PROVIDER_NAMES["google-search-console"]
}
/** "Stripe is still on its first sync", "Stripe and Plausible are still on their first sync". */
const syncingText = (sources: DataSources): string => {
  const names = (Object.keys(sources) as Array<keyof DataSources>).filter((k) => sources[k] === "syncing")
    .map((k) => KIND_NAMES[k])
  return names.length <= 1
    ? `${names.join("")} is still on its first sync`
    : `${names.slice(0, -1).join(", ")} and ${names.at(-1)} are still on their first sync`
}

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
  const { sources } = input
  const states = Object.values(sources)
  const headline = bad.length > 0
    ? `${bad[0].title}` + (bad.length > 1 ? ` and ${bad.length - 1} more issue${bad.length > 2 ? "s" : ""}` : "") +
      `; ${scoreText}.`
    : top !== undefined
    ? `Good news: ${top.title.charAt(0).toLowerCase()}${top.title.slice(1)}; ${scoreText}.`
    : states.includes("syncing")
    ? `Importing your data: ${syncingText(sources)}; this briefing is rewritten as soon as it lands.`
    : states.every((s) => s === "not_connected")
    ? "No data yet: connect Stripe, Plausible or Search Console and the briefing follows within a minute."
    : `All quiet: ${scoreText}, nothing unusual yesterday.`

  // MRR is a level, not a flow: a day without a row carries the last MRR over.
  const mrrRows = [0, 1, 2, 3, 4].map((w) => ({
    day: addDays(y, -7 * w),
    mrr: mrrAt(series.revenue, addDays(y, -7 * w))
  }))
  const hasRevenue = series.revenue.some((r) => r.day <= y)
  const analytics = sources.analytics
  const payments = sources.payments

  return {
    projectId: input.projectId,
    date: input.today,
    generatedAt: input.edition?.generatedAt ?? input.now,
    updatedAt: input.edition?.updatedAt ?? null,
    headline,
    health: snapshot(h),
    sources,
    yesterday: {
      date: y,
      currency,
      visitors: figureOf(analytics, () => keyFigure(series.traffic, y, (r) => r.visitors)),
      pageviews: figureOf(analytics, () => keyFigure(series.traffic, y, (r) => r.pageviews)),
      netRevenue: figureOf(payments, () => keyFigure(series.revenue, y, (r) => r.grossMinor - r.refundsMinor)),
      newCustomers: figureOf(payments, () => keyFigure(series.revenue, y, (r) => r.newCustomers)),
      churnedCustomers: figureOf(payments, () => keyFigure(series.revenue, y, (r) => r.churnedCustomers)),
      mrr: figureOf(
        payments,
        () => (hasRevenue ? keyFigure(mrrRows, y, (r) => r.mrr) : { value: 0, usual: null, change: null })
      )
    },
    whatChanged,
    priorities
  }
}

/**
 * Why today's stored briefing `b` no longer tells the truth, or null when it still does (and must not be
 * recomposed): a kind of data whose state changed since (a provider connected, its first sync landed), a first
 * health score where there was none, or a critical signal active now that the briefing does not name.
 */
export const recomposeReason = (
  b: Briefing,
  next: { readonly health: Health; readonly sources: DataSources; readonly signals: ReadonlyArray<Signal> }
): string | null => {
  for (const kind of Object.keys(next.sources) as Array<keyof DataSources>) {
    if (b.sources[kind] !== next.sources[kind]) return `${kind}: ${b.sources[kind]} → ${next.sources[kind]}`
  }
  if (b.health.status === "no_data" && next.health.status !== "no_data") return "a first health score"
  const named = new Set([...b.priorities.map((p) => p.signalId), ...b.whatChanged.map((s) => s.id)])
  const fresh = next.signals.find((s) => s.active && s.severity === "critical" && !named.has(s.id))
  return fresh === undefined ? null : `a new critical signal: ${fresh.title}`
}
