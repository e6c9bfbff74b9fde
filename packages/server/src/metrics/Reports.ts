/** Analytics, revenue, churn and SEO reports, computed from daily rows. See Compute.ts for the conventions. */
import type { Period } from "../../../domain/src/Common.ts"
import type { Analytics, Churn, Revenue, Seo, TrafficTotals } from "../../../domain/src/Reports.ts"
import { eachDay } from "./Dates.ts"
import type { RevenueDay, SearchDay, TrafficDay } from "./Rows.ts"
import { changeOf, inWindow, lastDays, lastRowUpTo, money, num, periodWindow, previousWindow, ratio, sumIn } from "./Numbers.ts"
import type { DayWindow } from "./Numbers.ts"

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

export const trafficTotals = (rows: ReadonlyArray<TrafficDay>, w: DayWindow): TrafficTotals => {
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

export const netIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): number =>
  sumIn(rows, w, (r) => r.grossMinor) - sumIn(rows, w, (r) => r.refundsMinor)

export const revenueWindow = (rows: ReadonlyArray<RevenueDay>, w: DayWindow, currency: string) => {
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

export interface ChurnFigures {
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
export const churnFigures = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): ChurnFigures => {
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

export const seoTotals = (rows: ReadonlyArray<SearchDay>, w: DayWindow) => {
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

