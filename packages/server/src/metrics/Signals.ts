/**
 * Signals: conditions worth telling the owner about, detected from the stored daily series (robust
 * anomalies, see Anomaly.ts) and from rules (integrations, MRR, churn, payments, spend, rankings).
 * Pure: returns CANDIDATES (the conditions present now); snapshots/SignalsRepo.ts turns them into stored,
 * de-duplicated signals (same fingerprint = same signal). Thresholds: docs/metrics.md, "Signals".
 */
import { providerName } from "@sitehealth/domain/Integrations"
import type { Dimension, Severity } from "@sitehealth/domain/Projects"
import type { FxRate } from "../fx/Fx.ts"
import type { ProjectSeries, SearchQueryDay } from "../store/Series.ts"
import { anomalyOn, Z_CRITICAL } from "./Anomaly.ts"
import type { DayValue } from "./Anomaly.ts"
import { addDays, daysBetween } from "./Dates.ts"
import { mrrAt, netRevenueIn, retentionIn, STALE_AFTER_DAYS } from "./Health.ts"
import {
  changeOf,
  fmtInt,
  formatMoney,
  lastDays,
  lastRowUpTo,
  pct,
  pct1,
  previousWindow,
  ratio,
  roundTo,
  sumIn
} from "./Numbers.ts"
import { expensesIn } from "./Profitability.ts"

export interface IntegrationState {
  readonly provider: string
  readonly status: "connected" | "error"
  readonly lastSyncedAt: Date | null
  readonly lastError: string | null
  /** When it was connected: a new connection whose first sync is still on its way is not stale. */
  readonly connectedAt?: Date
}

export interface SignalInput {
  readonly today: string // local day; never itself checked (incomplete)
  readonly now: Date
  readonly currency: string
  readonly series: ProjectSeries
  readonly integrations: ReadonlyArray<IntegrationState>
  /** Query rows of the last RANKING_DAYS × 2 days up to the last search day. */
  readonly queries: ReadonlyArray<SearchQueryDay>
  readonly rates?: ReadonlyArray<FxRate>
}

/** A condition present now. `fingerprint` = kind|subject: the identity that de-duplicates it. */
export interface SignalCandidate {
  readonly fingerprint: string
  readonly kind: string
  readonly subject: string | null
  readonly dimension: Dimension
  readonly severity: Severity
  readonly title: string
  readonly detail: string
  readonly metric: string
  readonly day: string | null
  readonly actual: number | null
  readonly expected: { readonly value: number; readonly low: number | null; readonly high: number | null } | null
  readonly change: number | null
  /** Estimated monthly revenue at risk, minor units of the project currency; null when not estimable. */
  readonly moneyAtStake: number | null
}

export const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 }

export const INTEGRATION_STALE_HOURS = 48
export const MRR_DECLINE_WARNING = -0.05
export const MRR_DECLINE_CRITICAL = -0.15
export const CHURN_HIGH = 0.05
export const CHURN_CRITICAL = 0.1
export const RANKING_DAYS = 7
export const RANKING_DROP_WARNING = 3
export const RANKING_DROP_CRITICAL = 10
export const TOP_QUERIES = 10
export const FAILED_PAYMENT_DAYS = 7
export const FAILED_PAYMENTS_WARNING_SHARE = 0.01
export const FAILED_PAYMENTS_CRITICAL_SHARE = 0.1

const PROVIDER_DIMENSION: Record<string, Dimension> = {
  stripe: "revenue",
  plausible: "traffic",
  "google-search-console": "seo"
}

const make = (c: Omit<SignalCandidate, "fingerprint">): SignalCandidate => ({
  ...c,
  fingerprint: `${c.kind}|${c.subject ?? ""}`
})

/** Net revenue per visitor over the last 30 complete days: what a lost visitor is worth; null without visitors. */
export const revenuePerVisitor = (series: ProjectSeries, yesterday: string): number | null => {
  const w = lastDays(yesterday, 30)
  return ratio(netRevenueIn(series.revenue, w), sumIn(series.traffic, w, (r) => r.visitors), 6)
}

const ANOMALY_SERIES = [
  { subject: "visitors", dimension: "traffic", source: "traffic", label: "Visitors", money: false },
  { subject: "pageviews", dimension: "traffic", source: "traffic", label: "Pageviews", money: false },
  { subject: "search_clicks", dimension: "seo", source: "search", label: "Search clicks", money: false },
  { subject: "net_revenue", dimension: "revenue", source: "revenue", label: "Net revenue", money: true }
] as const

const valuesOf = (series: ProjectSeries, subject: (typeof ANOMALY_SERIES)[number]["subject"]): Array<DayValue> => {
  switch (subject) {
    case "visitors":
      return series.traffic.map((r) => ({ day: r.day, value: r.visitors }))
    case "pageviews":
      return series.traffic.map((r) => ({ day: r.day, value: r.pageviews }))
    case "search_clicks":
      return series.search.map((r) => ({ day: r.day, value: r.clicks }))
    case "net_revenue":
      return series.revenue.map((r) => ({ day: r.day, value: r.grossMinor - r.refundsMinor }))
  }
}

/** Weekday anomalies on the latest complete day of each series (yesterday, or the last search day). */
export const anomalySignals = (input: SignalInput): Array<SignalCandidate> => {
  const yesterday = addDays(input.today, -1)
  const perVisitor = revenuePerVisitor(input.series, yesterday)
  const out: Array<SignalCandidate> = []
  for (const s of ANOMALY_SERIES) {
    const rows: ReadonlyArray<{ readonly day: string }> = input.series[s.source]
    // The checked day: the last row up to yesterday (today is never complete), if recent enough to matter.
    const last = lastRowUpTo(rows, yesterday)?.day
    if (last === undefined || daysBetween(last, input.today) > STALE_AFTER_DAYS[s.source]) continue
    const a = anomalyOn(valuesOf(input.series, s.subject), last)
    if (a === null) continue
    const show = (v: number) => (s.money ? formatMoney(v, input.currency) : fmtInt(v))
    const change = changeOf(a.actual, a.expected.value)
    const drop = a.direction === "drop"
    const lost = Math.max(0, a.expected.value - a.actual)
    const moneyAtStake = !drop ?
      null
      : s.money ?
      Math.round(lost)
      : s.subject === "pageviews" || perVisitor === null ?
      null
      : Math.round(lost * perVisitor) // search clicks are visits too
    out.push(make({
      kind: drop ? "anomaly_drop" : "anomaly_spike",
      subject: s.subject,
      dimension: s.dimension,
      severity: !drop ? "info" : Math.abs(a.z) >= Z_CRITICAL ? "critical" : "warning",
      title: `${s.label} ${drop ? "down" : "up"} ${change === null ? "" : pct(change) + " "}on a usual ${
        weekdayName(a.day)
      }`.replace("  ", " "),
      detail: `${s.label} on ${a.day}: ${show(a.actual)} against a usual ${show(a.expected.value)} ` +
        `(normal range ${show(a.expected.low)}–${show(a.expected.high)}, median of the previous ${a.points} ${
          weekdayName(a.day)
        }s; robust z ${a.z}).`,
      metric: s.subject,
      day: a.day,
      actual: a.actual,
      expected: a.expected,
      change,
      moneyAtStake
    }))
  }
  return out
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
const weekdayName = (day: string): string => WEEKDAYS[new Date(`${day}T00:00:00Z`).getUTCDay()]

/**
 * An integration signal's subject (a provider id, kept as the signal's identity) as people read it: "Google
 * Search Console", not `google-search-console`; the briefing's actions (Briefing.ts) say it the same way.
 */
export const integrationName = (subject: string | null): string =>
  subject === null ? "the integration" : providerName(subject)

export const integrationSignals = (input: SignalInput): Array<SignalCandidate> => {
  const out: Array<SignalCandidate> = []
  for (const i of input.integrations) {
    const dimension = PROVIDER_DIMENSION[i.provider] ?? "traffic"
    const name = integrationName(i.provider)
    if (i.status === "error") {
      out.push(
        make({
          kind: "integration_failing",
          subject: i.provider,
          dimension,
          severity: "critical",
          title: `${name} sync is failing`,
          detail: `The last sync of ${name} failed: ${i.lastError ?? "no error message"}.`,
          metric: "integration_status",
          day: null,
          actual: null,
          expected: null,
          change: null,
          moneyAtStake: null
        })
      )
      continue
    }
    const hours = i.lastSyncedAt === null ? null : (input.now.getTime() - i.lastSyncedAt.getTime()) / 3_600_000
    const connectedHours = i.connectedAt === undefined
      ? null
      : (input.now.getTime() - i.connectedAt.getTime()) / 3_600_000
    const stale = hours === null
      ? connectedHours === null || connectedHours > INTEGRATION_STALE_HOURS
      : hours > INTEGRATION_STALE_HOURS
    if (stale) {
      out.push(
        make({
          kind: "integration_stale",
          subject: i.provider,
          dimension,
          severity: "warning",
          title: `${name} has not synced ${hours === null ? "yet" : `for ${Math.floor(hours)} hours`}`,
          detail: i.lastSyncedAt === null ?
            `${name} is connected but has never synced.`
            : `Last successful sync ${i.lastSyncedAt.toISOString()}; figures from ${name} may be out of date.`,
          metric: "hours_since_sync",
          day: null,
          actual: hours === null ? null : roundTo(hours, 1),
          expected: { value: INTEGRATION_STALE_HOURS, low: null, high: INTEGRATION_STALE_HOURS },
          change: null,
          moneyAtStake: null
        })
      )
    }
  }
  return out
}

/** MRR decline, churn spike, failed payments, spend outgrowing revenue: all over complete days. */
export const revenueRuleSignals = (input: SignalInput): Array<SignalCandidate> => {
  const { currency, series } = input
  const yesterday = addDays(input.today, -1)
  const out: Array<SignalCandidate> = []
  if (series.revenue.length === 0 && series.expenses.length === 0) return out
  const current = lastDays(yesterday, 30)
  const previous = previousWindow(current)
  const fmt = (v: number) => formatMoney(v, currency)

  const mrrEnd = mrrAt(series.revenue, yesterday)
  const mrrStart = mrrAt(series.revenue, addDays(current.from, -1))
  const mrrChange = changeOf(mrrEnd, mrrStart)
  if (mrrChange !== null && mrrChange <= MRR_DECLINE_WARNING) {
    out.push(
      make({
        kind: "mrr_decline",
        subject: null,
        dimension: "revenue",
        severity: mrrChange <= MRR_DECLINE_CRITICAL ? "critical" : "warning",
        title: `MRR down ${pct1(Math.abs(mrrChange))} in 30 days`,
        detail: `MRR went from ${fmt(mrrStart)} on ${addDays(current.from, -1)} to ${fmt(mrrEnd)} on ${yesterday}.`,
        metric: "mrr",
        day: yesterday,
        actual: mrrEnd,
        expected: { value: mrrStart, low: null, high: null },
        change: mrrChange,
        moneyAtStake: mrrStart - mrrEnd
      })
    )
  }

  const c = retentionIn(series.revenue, current)
  const p = retentionIn(series.revenue, previous)
  if (c.logoChurn !== null && c.churnedCustomers > 0) {
    const doubled = p.logoChurn !== null && c.churnedCustomers >= 2 && c.logoChurn >= 2 * p.logoChurn
    if (c.logoChurn >= CHURN_HIGH || doubled) {
      out.push(
        make({
          kind: "churn_spike",
          subject: null,
          dimension: "retention",
          severity: c.logoChurn >= CHURN_CRITICAL ? "critical" : "warning",
          title: `Customer churn at ${pct1(c.logoChurn)} over 30 days`,
          detail: `${c.churnedCustomers} of ${c.customersStart} paying customers churned in the last 30 days, ` +
            `taking ${fmt(c.churnedMrr)} of MRR` +
            (p.logoChurn === null ? "." : ` (previous 30 days: ${pct1(p.logoChurn)}).`),
          metric: "logo_churn",
          day: yesterday,
          actual: c.logoChurn,
          expected: p.logoChurn === null ? null : { value: p.logoChurn, low: null, high: null },
          change: changeOf(c.logoChurn, p.logoChurn),
          moneyAtStake: Math.round(c.churnedMrr)
        })
      )
    }
  }

  const week = lastDays(yesterday, FAILED_PAYMENT_DAYS)
  const failed = sumIn(series.revenue, week, (r) => r.failedPayments)
  if (failed > 0) {
    const failedMinor = Math.round(sumIn(series.revenue, week, (r) => r.failedMinor))
    const share = ratio(failedMinor, mrrEnd)
    out.push(make({
      kind: "failed_payments",
      subject: null,
      dimension: "revenue",
      // A single small failure in a large book is routine dunning, not an alarm: info below 1% of MRR.
      // (compared unrounded: `share` is rounded for display)
      severity: mrrEnd > 0 && failedMinor >= FAILED_PAYMENTS_CRITICAL_SHARE * mrrEnd ?
        "critical"
        : mrrEnd > 0 && failedMinor < FAILED_PAYMENTS_WARNING_SHARE * mrrEnd
        ? "info"
        : "warning",
      title: `${failed} failed payment${failed === 1 ? "" : "s"} in the last 7 days`,
      detail: `${failed} charge attempt${failed === 1 ? "" : "s"} failed for ${fmt(failedMinor)}` +
        (share === null ? "." : ` (${pct1(share)} of MRR).`),
      metric: "failed_payments",
      day: yesterday,
      actual: failed,
      expected: { value: 0, low: 0, high: 0 },
      change: null,
      moneyAtStake: failedMinor
    }))
  }

  const netC = netRevenueIn(series.revenue, current)
  const netP = netRevenueIn(series.revenue, previous)
  const expC = Math.round(expensesIn(series.expenses, current, currency, input.rates ?? []))
  const expP = Math.round(expensesIn(series.expenses, previous, currency, input.rates ?? []))
  const expGrowth = changeOf(expC, expP)
  const revGrowth = changeOf(netC, netP)
  const negative = expC > 0 && netC - expC < 0
  const outgrowing = expGrowth !== null && expGrowth > 0.1 && (revGrowth === null || expGrowth > revGrowth)
  if (negative || outgrowing) {
    out.push(
      make({
        kind: "spend_outgrowing_revenue",
        subject: null,
        dimension: "profitability",
        severity: negative ? "critical" : "warning",
        title: negative ?
          `Expenses exceed revenue by ${fmt(expC - netC)} over 30 days`
          : `Expenses up ${pct(expGrowth!)}, revenue ${
            revGrowth === null ? "not growing" : `${revGrowth >= 0 ? "up" : "down"} ${pct(revGrowth)}`
          }`,
        detail: `Last 30 days: ${fmt(netC)} net revenue, ${fmt(expC)} expenses; previous 30 days: ${fmt(netP)} and ${
          fmt(expP)
        }.`,
        metric: "expenses",
        day: yesterday,
        actual: expC,
        expected: { value: expP, low: null, high: null },
        change: expGrowth,
        moneyAtStake: negative ? expC - netC : Math.max(0, (expC - expP) - (netC - netP))
      })
    )
  }
  return out
}

/**
 * Ranking drops: the top TOP_QUERIES queries by clicks of the previous RANKING_DAYS days (up to the last
 * search day) whose impression-weighted position got worse by ≥ RANKING_DROP_WARNING in the last RANKING_DAYS.
 */
export const rankingSignals = (input: SignalInput): Array<SignalCandidate> => {
  if (input.queries.length === 0) return []
  const through = input.queries.reduce((m, q) => (q.day > m ? q.day : m), input.queries[0].day)
  if (through >= input.today || daysBetween(through, input.today) > STALE_AFTER_DAYS.search) return []
  const cur = lastDays(through, RANKING_DAYS)
  const prev = previousWindow(cur)
  const agg = new Map<string, { c: [number, number, number]; p: [number, number, number] }>()
  for (const q of input.queries) {
    const inCur = q.day >= cur.from && q.day <= cur.to
    const inPrev = q.day >= prev.from && q.day <= prev.to
    if (!inCur && !inPrev) continue
    const a = agg.get(q.query) ?? { c: [0, 0, 0], p: [0, 0, 0] }
    const t = inCur ? a.c : a.p
    t[0] += q.clicks
    t[1] += q.impressions
    t[2] += q.positionWeighted
    agg.set(q.query, a)
  }
  const perVisitor = revenuePerVisitor(input.series, addDays(input.today, -1))
  const top = [...agg.entries()].filter(([, a]) => a.p[0] > 0)
    .sort((x, y) => y[1].p[0] - x[1].p[0] || (x[0] < y[0] ? -1 : 1)).slice(0, TOP_QUERIES)
  const out: Array<SignalCandidate> = []
  for (const [query, a] of top) {
    const position = ratio(a.c[2], a.c[1], 1)
    const previousPosition = ratio(a.p[2], a.p[1], 1)
    if (position === null || previousPosition === null) continue
    const drop = roundTo(position - previousPosition, 1)
    if (drop < RANKING_DROP_WARNING) continue
    const lostClicks = Math.max(0, a.p[0] - a.c[0])
    out.push(
      make({
        kind: "ranking_drop",
        subject: query,
        dimension: "seo",
        severity: drop >= RANKING_DROP_CRITICAL ? "critical" : "warning",
        title: `"${query}" fell ${drop} places (from ${previousPosition} to ${position})`,
        detail: `Average position of "${query}" over ${cur.from}–${cur.to}: ${position} (previous 7 days ` +
          `${previousPosition}); ` +
          `clicks ${a.c[0]} vs ${a.p[0]}.`,
        metric: "position",
        day: through,
        actual: position,
        expected: { value: previousPosition, low: null, high: null },
        change: drop,
        moneyAtStake: perVisitor === null ? null : Math.round(lostClicks * perVisitor * (30 / RANKING_DAYS))
      })
    )
  }
  return out
}

/** Every condition present now, most severe first (then money at stake, then fingerprint). */
export const detectSignals = (input: SignalInput): Array<SignalCandidate> =>
  [...anomalySignals(input), ...integrationSignals(input), ...revenueRuleSignals(input), ...rankingSignals(input)]
    .sort(compareCandidates)

export const compareCandidates = (
  a: { severity: Severity; moneyAtStake: number | null; fingerprint?: string; kind: string },
  b: { severity: Severity; moneyAtStake: number | null; fingerprint?: string; kind: string }
): number =>
  SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
  (b.moneyAtStake ?? -1) - (a.moneyAtStake ?? -1) ||
  ((a.fingerprint ?? a.kind) < (b.fingerprint ?? b.kind)
    ? -1
    : (a.fingerprint ?? a.kind) > (b.fingerprint ?? b.kind)
    ? 1
    : 0)
