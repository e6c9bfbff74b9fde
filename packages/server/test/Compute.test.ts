import { describe, expect, it } from "vitest"
import type { Signal } from "../../domain/src/Projects.ts"
import { DEMO_INITIAL_SUBSCRIPTIONS, generateDemoSeries } from "../src/demo/Generate.ts"
import {
  addDays,
  addMonths,
  daysBetween,
  eachDay,
  startOfMonth,
  todayIn
} from "../src/metrics/Dates.ts"
import {
  analytics,
  briefing,
  churn,
  expensesIn,
  health,
  periodWindow,
  previousWindow,
  revenue,
  seo,
  signals,
  snapshot,
  statusOf
} from "../src/metrics/Compute.ts"
import type { ExpenseRow, ProjectSeries, RevenueDay, SearchDay, TrafficDay } from "../src/metrics/Rows.ts"

// All fixtures use TODAY = 2024-03-15 (2024 is a leap year: February has 29 days).
//   30-day current window:  2024-02-15 … 2024-03-15
//   30-day previous window: 2024-01-16 … 2024-02-14
//   28-day SEO window:      2024-02-17 … 2024-03-15, previous 2024-01-20 … 2024-02-16
//   7-day windows:          2024-03-09 … 2024-03-15, previous 2024-03-02 … 2024-03-08
const TODAY = "2024-03-15"
const NOW = "2024-03-15T09:30:00.000Z"
const PID = "prj_test"

const t = (day: string, visitors: number, extra: Partial<TrafficDay> = {}): TrafficDay => ({
  day,
  visitors,
  pageviews: 0,
  sessions: 0,
  bounces: 0,
  durationSeconds: 0,
  ...extra
})

const r = (day: string, extra: Partial<RevenueDay> = {}): RevenueDay => ({
  day,
  grossMinor: 0,
  refundsMinor: 0,
  mrrMinor: 0,
  activeSubscriptions: 0,
  newSubscriptions: 0,
  churnedSubscriptions: 0,
  churnedMrrMinor: 0,
  ...extra
})

const s = (day: string, clicks: number, impressions = 0, positionWeighted = 0): SearchDay => ({
  day,
  clicks,
  impressions,
  positionWeighted
})

const series = (p: Partial<ProjectSeries>): ProjectSeries => ({
  traffic: [],
  revenue: [],
  search: [],
  expenses: [],
  ...p
})

const healthInput = (p: Partial<ProjectSeries>, today = TODAY) => ({
  projectId: PID,
  today,
  now: NOW,
  currency: "USD",
  series: series(p)
})

/** Walks any value and fails on NaN / ±Infinity. */
const assertFiniteDeep = (value: unknown, path = "$"): void => {
  if (typeof value === "number") {
    expect(Number.isFinite(value), `${path} = ${value}`).toBe(true)
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertFiniteDeep(v, `${path}[${i}]`))
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) assertFiniteDeep(v, `${path}.${k}`)
  }
}

// -------------------------------------------------------------------------------------------------
describe("Dates", () => {
  it("does calendar arithmetic on YYYY-MM-DD strings", () => {
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29")
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29")
    expect(addDays("2023-12-31", 1)).toBe("2024-01-01")
    expect(daysBetween("2024-01-01", "2024-03-01")).toBe(60)
    expect(daysBetween("2024-03-01", "2024-01-01")).toBe(-60)
    expect(eachDay("2024-02-27", "2024-03-01")).toEqual(["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"])
    expect(eachDay("2024-03-02", "2024-03-01")).toEqual([])
    expect(startOfMonth("2024-03-15")).toBe("2024-03-01")
    expect(addMonths("2024-03-31", -1)).toBe("2024-02-29")
    expect(addMonths("2024-01-15", -2)).toBe("2023-11-15")
    expect(addMonths("2024-11-30", 3)).toBe("2025-02-28")
  })

  it("todayIn gives the calendar day in the zone", () => {
    const instant = new Date("2024-03-15T02:00:00Z")
    expect(todayIn("UTC", instant)).toBe("2024-03-15")
    expect(todayIn("America/New_York", instant)).toBe("2024-03-14") // 22:00 the day before
    expect(todayIn("Asia/Tokyo", new Date("2024-03-14T16:00:00Z"))).toBe("2024-03-15") // 01:00 JST
  })
})

// -------------------------------------------------------------------------------------------------
describe("periodWindow / previousWindow", () => {
  it("maps every period to its inclusive window", () => {
    expect(periodWindow("today", TODAY, null)).toEqual({ from: "2024-03-15", to: "2024-03-15" })
    expect(periodWindow("yesterday", TODAY, null)).toEqual({ from: "2024-03-14", to: "2024-03-14" })
    expect(periodWindow("7d", TODAY, null)).toEqual({ from: "2024-03-09", to: "2024-03-15" })
    // Mar 15 − 29 days: Mar 1 is −14, Feb 15 is −29 (leap February)
    expect(periodWindow("30d", TODAY, null)).toEqual({ from: "2024-02-15", to: "2024-03-15" })
    // 3 calendar months to date: Jan, Feb, Mar
    expect(periodWindow("3m", TODAY, null)).toEqual({ from: "2024-01-01", to: "2024-03-15" })
    // 12 calendar months to date: Apr 2023 … Mar 2024
    expect(periodWindow("12m", TODAY, null)).toEqual({ from: "2023-04-01", to: "2024-03-15" })
    expect(periodWindow("all", TODAY, "2023-11-20")).toEqual({ from: "2023-11-20", to: "2024-03-15" })
    expect(periodWindow("all", TODAY, null)).toEqual({ from: "2024-03-15", to: "2024-03-15" })
  })

  it("crosses year boundaries for calendar-month periods", () => {
    expect(periodWindow("3m", "2024-01-10", null)).toEqual({ from: "2023-11-01", to: "2024-01-10" })
    expect(periodWindow("12m", "2024-01-31", null)).toEqual({ from: "2023-02-01", to: "2024-01-31" })
    expect(periodWindow("3m", "2024-03-01", null)).toEqual({ from: "2024-01-01", to: "2024-03-01" })
  })

  it("previousWindow is the same number of days just before", () => {
    expect(previousWindow({ from: "2024-03-09", to: "2024-03-15" })).toEqual({ from: "2024-03-02", to: "2024-03-08" })
    expect(previousWindow({ from: "2024-03-15", to: "2024-03-15" })).toEqual({ from: "2024-03-14", to: "2024-03-14" })
    // 3m window Jan 1 … Mar 15 = 31 + 29 + 15 = 75 days → Oct 18 … Dec 31
    expect(previousWindow({ from: "2024-01-01", to: "2024-03-15" })).toEqual({ from: "2023-10-18", to: "2023-12-31" })
  })
})

// -------------------------------------------------------------------------------------------------
describe("analytics", () => {
  // 7d window 03-09 … 03-15 has rows on 03-09, 03-12, 03-15:
  //   visitors 100+50+50 = 200, pageviews 250+100+50 = 400, sessions 120+60+20 = 200,
  //   bounces 60+15+5 = 80 → 0.4, pages/session 400/200 = 2, duration 12000+3000+1000 = 16000 → 80 s
  // previous 03-02 … 03-08 has one row on 03-05: 160 / 300 / 200, bounces 100 → 0.5, 1.5 pps, 20000 s → 100 s
  // change: visitors (200−160)/160 = 0.25; pageviews 100/300 = 0.3333; sessions 0
  const traffic: Array<TrafficDay> = [
    t("2024-03-01", 9999, { pageviews: 9999, sessions: 9999 }), // outside both windows
    t("2024-03-05", 160, { pageviews: 300, sessions: 200, bounces: 100, durationSeconds: 20000 }),
    t("2024-03-09", 100, { pageviews: 250, sessions: 120, bounces: 60, durationSeconds: 12000 }),
    t("2024-03-12", 50, { pageviews: 100, sessions: 60, bounces: 15, durationSeconds: 3000 }),
    t("2024-03-15", 50, { pageviews: 50, sessions: 20, bounces: 5, durationSeconds: 1000 }),
    t("2024-03-16", 7777, { pageviews: 7777, sessions: 7777 }) // after today
  ]
  const input = { projectId: PID, period: "7d" as const, today: TODAY, timezone: "Europe/Paris", traffic, firstDay: "2024-01-01" }

  it("totals the window, with rates", () => {
    const a = analytics(input)
    expect(a.projectId).toBe(PID)
    expect(a.period).toBe("7d")
    expect(a.timezone).toBe("Europe/Paris")
    expect(a.window).toEqual({ from: "2024-03-09", to: "2024-03-15" })
    expect(a.totals).toEqual({
      visitors: 200,
      pageviews: 400,
      sessions: 200,
      bounceRate: 0.4,
      pagesPerSession: 2,
      avgSessionSeconds: 80
    })
  })

  it("compares with the previous window", () => {
    const a = analytics(input)
    expect(a.previous).toEqual({
      window: { from: "2024-03-02", to: "2024-03-08" },
      totals: { visitors: 160, pageviews: 300, sessions: 200, bounceRate: 0.5, pagesPerSession: 1.5, avgSessionSeconds: 100 }
    })
    expect(a.change).toEqual({ visitors: 0.25, pageviews: 0.3333, sessions: 0 })
  })

  it("has one series point per day, zeros for missing days", () => {
    const a = analytics(input)
    expect(a.series.map((p) => p.date)).toEqual(eachDay("2024-03-09", "2024-03-15"))
    expect(a.series.map((p) => p.visitors)).toEqual([100, 0, 0, 50, 0, 0, 50])
    expect(a.series[0]).toEqual({ date: "2024-03-09", visitors: 100, pageviews: 250, sessions: 120 })
  })

  it("returns null rates and changes when sessions / previous are 0", () => {
    const a = analytics({ ...input, period: "today", traffic: [] })
    expect(a.totals).toEqual({ visitors: 0, pageviews: 0, sessions: 0, bounceRate: null, pagesPerSession: null, avgSessionSeconds: null })
    expect(a.change).toEqual({ visitors: null, pageviews: null, sessions: null })
    expect(a.series).toEqual([{ date: TODAY, visitors: 0, pageviews: 0, sessions: 0 }])
    // visitors but no sessions → still null rates
    const b = analytics({ ...input, period: "today", traffic: [t(TODAY, 5, { pageviews: 7 })] })
    expect(b.totals.bounceRate).toBeNull()
    expect(b.totals.pagesPerSession).toBeNull()
    expect(b.change.visitors).toBeNull() // yesterday had 0
  })

  it("rounds rates to 4 decimals and seconds to 1", () => {
    // bounces 1 / sessions 3 = 0.33333 → 0.3333; pages 2/3 → 0.6667; 100 s / 3 = 33.333 → 33.3
    const a = analytics({ ...input, period: "yesterday", traffic: [t("2024-03-14", 3, { pageviews: 2, sessions: 3, bounces: 1, durationSeconds: 100 })] })
    expect(a.window).toEqual({ from: "2024-03-14", to: "2024-03-14" })
    expect(a.totals.bounceRate).toBe(0.3333)
    expect(a.totals.pagesPerSession).toBe(0.6667)
    expect(a.totals.avgSessionSeconds).toBe(33.3)
  })

  it("period all starts at firstDay and has no previous", () => {
    const a = analytics({ ...input, period: "all", firstDay: "2024-03-01" })
    expect(a.window).toEqual({ from: "2024-03-01", to: TODAY })
    expect(a.previous).toBeNull()
    expect(a.change).toEqual({ visitors: null, pageviews: null, sessions: null })
    expect(a.series).toHaveLength(15)
    expect(a.totals.visitors).toBe(9999 + 160 + 200)
  })
})

// -------------------------------------------------------------------------------------------------
// Shared revenue fixture (USD, minor units). last30 = 02-15…03-15, previous30 = 01-16…02-14.
const revenueRows: Array<RevenueDay> = [
  r("2024-01-20", { grossMinor: 10000, mrrMinor: 8000, activeSubscriptions: 4, newSubscriptions: 4 }),
  r("2024-02-10", { grossMinor: 6000, refundsMinor: 1000, mrrMinor: 10000, activeSubscriptions: 5, newSubscriptions: 1 }),
  r("2024-02-20", { grossMinor: 12000, refundsMinor: 2000, mrrMinor: 12000, activeSubscriptions: 6, newSubscriptions: 2, churnedSubscriptions: 1, churnedMrrMinor: 1000 }),
  r("2024-03-10", { grossMinor: 9000, mrrMinor: 15000, activeSubscriptions: 7, newSubscriptions: 1 }),
  r("2024-03-20", { grossMinor: 99999, mrrMinor: 99999, activeSubscriptions: 99 }) // future: ignored
]

describe("revenue", () => {
  it("computes MRR, ARR, ARPU from the last row on or before today", () => {
    const rev = revenue({ projectId: PID, currency: "USD", today: TODAY, revenue: revenueRows })
    expect(rev.asOf).toBe("2024-03-10")
    expect(rev.mrr).toEqual({ amount: 15000, currency: "USD" })
    expect(rev.arr).toEqual({ amount: 180000, currency: "USD" })
    expect(rev.activeSubscriptions).toBe(7)
    expect(rev.arpu).toEqual({ amount: 2143, currency: "USD" }) // 15000 / 7 = 2142.86 → 2143
  })

  it("sums the last 30 days and the 30 before", () => {
    const rev = revenue({ projectId: PID, currency: "USD", today: TODAY, revenue: revenueRows })
    // last30: rows 02-20 and 03-10 → gross 21000, refunds 2000, net 19000, new 3, churned 1
    expect(rev.last30Days).toEqual({
      window: { from: "2024-02-15", to: "2024-03-15" },
      gross: { amount: 21000, currency: "USD" },
      refunds: { amount: 2000, currency: "USD" },
      net: { amount: 19000, currency: "USD" },
      newSubscriptions: 3,
      churnedSubscriptions: 1
    })
    // previous30: rows 01-20 and 02-10 → gross 16000, refunds 1000, net 15000, new 5, churned 0
    expect(rev.previous30Days).toEqual({
      window: { from: "2024-01-16", to: "2024-02-14" },
      gross: { amount: 16000, currency: "USD" },
      refunds: { amount: 1000, currency: "USD" },
      net: { amount: 15000, currency: "USD" },
      newSubscriptions: 5,
      churnedSubscriptions: 0
    })
    // net: (19000 − 15000) / 15000 = 0.26667; mrr: 15000 vs the last row ≤ 02-14 (02-10: 10000) → 0.5
    expect(rev.change).toEqual({ net: 0.2667, mrr: 0.5 })
  })

  it("is all zeros / nulls without data", () => {
    const rev = revenue({ projectId: PID, currency: "EUR", today: TODAY, revenue: [] })
    expect(rev.asOf).toBeNull()
    expect(rev.mrr).toEqual({ amount: 0, currency: "EUR" })
    expect(rev.arr).toEqual({ amount: 0, currency: "EUR" })
    expect(rev.activeSubscriptions).toBe(0)
    expect(rev.arpu).toBeNull()
    expect(rev.change).toEqual({ net: null, mrr: null })
    assertFiniteDeep(rev)
  })
})

describe("churn", () => {
  it("uses the last row strictly before the window as the start", () => {
    const c = churn({ projectId: PID, currency: "USD", today: TODAY, revenue: revenueRows })
    // start = row 02-10: 5 subs, 10000 MRR; in window: new 2+1 = 3, churned 1 (1000 MRR)
    expect(c.window).toEqual({ from: "2024-02-15", to: "2024-03-15" })
    expect(c.subscriptionsAtStart).toBe(5)
    expect(c.mrrAtStart).toEqual({ amount: 10000, currency: "USD" })
    expect(c.newSubscriptions).toBe(3)
    expect(c.churnedSubscriptions).toBe(1)
    expect(c.subscriptionsAtEnd).toBe(7) // 5 + 3 − 1
    expect(c.churnedMrr).toEqual({ amount: 1000, currency: "USD" })
    expect(c.customerChurnRate).toBe(0.2) // 1 / 5
    expect(c.revenueChurnRate).toBe(0.1) // 1000 / 10000
    // previous window 01-16…02-14: no row before 01-16 → start 0 → null rates
    expect(c.previous).toEqual({ window: { from: "2024-01-16", to: "2024-02-14" }, customerChurnRate: null, revenueChurnRate: null })
  })

  it("does not take a row on the window's first day as the start", () => {
    const rows = [
      r("2024-01-10", { activeSubscriptions: 50, mrrMinor: 50000 }),
      r("2024-01-16", { activeSubscriptions: 48, mrrMinor: 48000, churnedSubscriptions: 2, churnedMrrMinor: 2000 }),
      r("2024-02-14", { activeSubscriptions: 10, mrrMinor: 20000 }),
      r("2024-02-15", { activeSubscriptions: 9, mrrMinor: 18000, churnedSubscriptions: 1, churnedMrrMinor: 2000 })
    ]
    const c = churn({ projectId: PID, currency: "USD", today: TODAY, revenue: rows })
    expect(c.subscriptionsAtStart).toBe(10)
    expect(c.customerChurnRate).toBe(0.1)
    expect(c.revenueChurnRate).toBe(0.1) // 2000 / 20000
    expect(c.subscriptionsAtEnd).toBe(9)
    // previous: start row 01-10 (50 subs, 50000), churned 2 / 2000 → 0.04 / 0.04
    expect(c.previous.customerChurnRate).toBe(0.04)
    expect(c.previous.revenueChurnRate).toBe(0.04)
  })
})

describe("seo", () => {
  it("computes CTR and impression-weighted position over 28 days", () => {
    const rows = [
      s("2024-01-19", 999, 999, 999), // before the previous window
      s("2024-02-16", 20, 500, 5000), // previous window (last day)
      s("2024-02-17", 10, 200, 1000), // current window (first day), position 5
      s("2024-03-15", 30, 600, 9000) // position 15
    ]
    const o = seo({ projectId: PID, today: TODAY, search: rows })
    expect(o.window).toEqual({ from: "2024-02-17", to: "2024-03-15" })
    // clicks 40, impressions 800, ctr 0.05, position (1000 + 9000) / 800 = 12.5
    expect(o.totals).toEqual({ clicks: 40, impressions: 800, ctr: 0.05, averagePosition: 12.5 })
    expect(o.previous).toEqual({
      window: { from: "2024-01-20", to: "2024-02-16" },
      totals: { clicks: 20, impressions: 500, ctr: 0.04, averagePosition: 10 }
    })
    expect(o.change).toEqual({ clicks: 1, impressions: 0.6 })
  })

  it("rounds position to 2 decimals and is null without impressions", () => {
    const o = seo({ projectId: PID, today: TODAY, search: [s(TODAY, 1, 100, 1234.567)] })
    expect(o.totals.averagePosition).toBe(12.35)
    expect(o.totals.ctr).toBe(0.01)
    expect(o.previous.totals).toEqual({ clicks: 0, impressions: 0, ctr: null, averagePosition: null })
    expect(o.change).toEqual({ clicks: null, impressions: null })
  })
})

// -------------------------------------------------------------------------------------------------
describe("health", () => {
  // Hand-computed fixture (current 02-15…03-15, previous 01-16…02-14):
  //   traffic: current 650 + 650 = 1300, previous 1000 → change 0.3 → 50 + 30 = 80; rows on 3 days → 3/60
  //   revenue (net): current (90000 − 10000) + 40000 = 120000, previous 100000 → 0.2 → 70; 4 days → 4/60
  //   retention: start of current = row 02-14 (100 subs), churned 3 → 0.03 → 100 − 30 = 70
  //              previous: start row 01-10 (100 subs), churned 2 → 0.02; change 0.5
  //   seo: no rows at all → null, no_data, weight 0, confidence 0
  //   profitability: current expenses 84000 (one-off 03-01) → (120000 − 84000) / 120000 = 0.3 → 80;
  //              previous: one-off 10000 on 01-25 → 0.9; change (0.3 − 0.9) / 0.9 = −0.6667;
  //              the EUR expense is ignored (project currency USD)
  //   weighted mean over the four scored dimensions (total weight 0.85):
  //     (0.3·80 + 0.3·70 + 0.15·70 + 0.1·80) / 0.85 = 63.5 / 0.85 = 74.71 → 75 → healthy
  //     (without renormalisation it would be 64 → watch)
  //   confidence: 0.3·3/60 + 0.3·4/60 + 0.15·4/60 + 0.1·4/60 = 0.0517 → 0.05
  const fixture = {
    traffic: [t("2024-01-20", 1000), t("2024-02-20", 650), t("2024-03-01", 650)],
    revenue: [
      r("2024-01-10", { activeSubscriptions: 100, mrrMinor: 200000 }),
      r("2024-01-20", { grossMinor: 100000, activeSubscriptions: 100, mrrMinor: 200000, newSubscriptions: 2, churnedSubscriptions: 2, churnedMrrMinor: 4000 }),
      r("2024-02-14", { activeSubscriptions: 100, mrrMinor: 200000 }),
      r("2024-02-20", { grossMinor: 90000, refundsMinor: 10000, activeSubscriptions: 98, mrrMinor: 196000, newSubscriptions: 1, churnedSubscriptions: 3, churnedMrrMinor: 6000 }),
      r("2024-03-10", { grossMinor: 40000, activeSubscriptions: 98, mrrMinor: 196000 })
    ],
    expenses: [
      { amountMinor: 84000, currency: "USD", incurredOn: "2024-03-01", recurrence: "one_off" },
      { amountMinor: 10000, currency: "USD", incurredOn: "2024-01-25", recurrence: "one_off" },
      { amountMinor: 999999, currency: "EUR", incurredOn: "2024-03-01", recurrence: "one_off" }
    ] satisfies Array<ExpenseRow>
  }

  it("scores the hand-computed fixture with renormalised weights", () => {
    const h = health(healthInput(fixture))
    expect(h.projectId).toBe(PID)
    expect(h.computedAt).toBe(NOW)
    expect(h.window).toEqual({
      current: { from: "2024-02-15", to: "2024-03-15" },
      previous: { from: "2024-01-16", to: "2024-02-14" }
    })
    expect(h.dimensions.map((d) => d.name)).toEqual(["traffic", "revenue", "retention", "seo", "profitability"])
    expect(h.dimensions.map((d) => d.score)).toEqual([80, 70, 70, null, 80])
    expect(h.dimensions.map((d) => d.weight)).toEqual([0.3529, 0.3529, 0.1765, 0, 0.1176])
    expect(h.dimensions.map((d) => d.status)).toEqual(["healthy", "watch", "watch", "no_data", "healthy"])
    expect(h.dimensions.map((d) => d.metric)).toEqual(["visitors", "net_revenue", "customer_churn_rate", "clicks", "profit_margin"])
    expect(h.dimensions.map((d) => d.confidence)).toEqual([0.05, 0.07, 0.07, 0, 0.07])
    expect(h.score).toBe(75)
    expect(h.status).toBe("healthy")
    expect(h.confidence).toBe(0.05)
  })

  it("reports each dimension's figures", () => {
    const [traffic, rev, retention, seoDim, profit] = health(healthInput(fixture)).dimensions
    expect([traffic.current, traffic.previous, traffic.change]).toEqual([1300, 1000, 0.3])
    expect(traffic.summary).toBe("Visitors up 30% on the previous 30 days")
    expect([rev.current, rev.previous, rev.change]).toEqual([120000, 100000, 0.2])
    expect(rev.summary).toMatch(/Net revenue up 20%/)
    expect([retention.current, retention.previous, retention.change]).toEqual([0.03, 0.02, 0.5])
    expect([seoDim.current, seoDim.previous, seoDim.change, seoDim.confidence]).toEqual([null, null, null, 0])
    expect([profit.current, profit.previous, profit.change]).toEqual([0.3, 0.9, -0.6667])
    for (const d of [traffic, rev, retention, seoDim, profit]) expect(d.summary.length).toBeGreaterThan(0)
  })

  it("has no score without any data", () => {
    const h = health(healthInput({}))
    expect(h.score).toBeNull()
    expect(h.status).toBe("no_data")
    expect(h.confidence).toBe(0)
    for (const d of h.dimensions) {
      expect(d).toMatchObject({ score: null, status: "no_data", confidence: 0, weight: 0 })
    }
    expect(snapshot(h)).toEqual({ score: null, confidence: 0, status: "no_data", computedAt: NOW })
  })

  it("applies the higher-is-better rules: 75 from zero, null when both zero, clamped", () => {
    // Only traffic has data, growing from nothing → 75, the only scored dimension → weight 1
    const fromZero = health(healthInput({ traffic: [t("2024-03-01", 10)] }))
    expect(fromZero.dimensions[0]).toMatchObject({ score: 75, weight: 1, current: 10, previous: 0, change: null })
    expect(fromZero.score).toBe(75)
    // confidence = 0.3 × 1/60 = 0.005 → 0.01
    expect(fromZero.confidence).toBe(0.01)

    // Rows but all zeros → no score, yet some confidence
    const zeros = health(healthInput({ traffic: [t("2024-03-01", 0), t("2024-02-01", 0)] }))
    expect(zeros.dimensions[0]).toMatchObject({ score: null, status: "no_data", confidence: 0.03 })
    expect(zeros.score).toBeNull()

    // −60% → 50 − 60 → clamped to 0 (critical); +80% → 130 → 100
    const down = health(healthInput({ traffic: [t("2024-02-01", 100), t("2024-03-01", 40)] }))
    expect(down.dimensions[0].score).toBe(0)
    expect(down.status).toBe("critical")
    const up = health(healthInput({ search: [s("2024-02-01", 100), s("2024-03-01", 180)] }))
    expect(up.dimensions[3]).toMatchObject({ name: "seo", score: 100, weight: 1, change: 0.8 })
    // −12% → 38
    const slight = health(healthInput({ traffic: [t("2024-02-01", 100), t("2024-03-01", 88)] }))
    expect(slight.score).toBe(38)
    expect(slight.status).toBe("at_risk")
  })

  it("scores retention from the churn rate (1% → 90, 5% → 50)", () => {
    const churnRows = (churned: number) => [
      r("2024-02-14", { activeSubscriptions: 100 }),
      r("2024-03-01", { activeSubscriptions: 100 - churned, churnedSubscriptions: churned })
    ]
    expect(health(healthInput({ revenue: churnRows(1) })).dimensions[2].score).toBe(90)
    expect(health(healthInput({ revenue: churnRows(5) })).dimensions[2].score).toBe(50)
    expect(health(healthInput({ revenue: churnRows(12) })).dimensions[2].score).toBe(0)
    // no subscriptions at the start → null
    const none = health(healthInput({ revenue: [r("2024-03-01", { newSubscriptions: 3, activeSubscriptions: 3 })] }))
    expect(none.dimensions[2]).toMatchObject({ score: null, status: "no_data", current: null })
  })

  it("scores profitability from the margin", () => {
    const rev = [r("2024-03-01", { grossMinor: 100000 })]
    const exp = (amountMinor: number): Array<ExpenseRow> => [{ amountMinor, currency: "USD", incurredOn: "2024-03-02", recurrence: "one_off" }]
    // no expenses → margin 1 → 150 → 100
    expect(health(healthInput({ revenue: rev })).dimensions[4]).toMatchObject({ score: 100, current: 1 })
    // margin (100000 − 75000) / 100000 = 0.25 → 75
    expect(health(healthInput({ revenue: rev, expenses: exp(75000) })).dimensions[4]).toMatchObject({ score: 75, current: 0.25 })
    // margin −0.3 → 20
    expect(health(healthInput({ revenue: rev, expenses: exp(130000) })).dimensions[4]).toMatchObject({ score: 20, current: -0.3 })
    // rows but no net revenue and no expenses → null
    expect(health(healthInput({ revenue: [r("2024-03-01")] })).dimensions[4].score).toBeNull()
    // no net revenue but expenses → 0
    expect(health(healthInput({ revenue: [r("2024-03-01")], expenses: exp(500) })).dimensions[4]).toMatchObject({ score: 0, current: null })
    // expenses without any revenue rows → no data
    expect(health(healthInput({ expenses: exp(500) })).dimensions[4]).toMatchObject({ score: null, status: "no_data", confidence: 0 })
  })

  it("spreads recurring expenses per day", () => {
    const w = { from: "2024-02-15", to: "2024-03-15" }
    const expenses: Array<ExpenseRow> = [
      // monthly 36500 from 03-06: 10 days × 36500 × 12 / 365 = 12000
      { amountMinor: 36500, currency: "USD", incurredOn: "2024-03-06", recurrence: "monthly" },
      // yearly 36500 since 2023: 30 days × 36500 / 365 = 3000
      { amountMinor: 36500, currency: "USD", incurredOn: "2023-01-01", recurrence: "yearly" },
      { amountMinor: 700, currency: "USD", incurredOn: "2024-02-15", recurrence: "one_off" }, // first day: counted
      { amountMinor: 5000, currency: "USD", incurredOn: "2024-02-14", recurrence: "one_off" }, // before: not
      { amountMinor: 5000, currency: "USD", incurredOn: "2024-03-16", recurrence: "monthly" }, // starts after: 0
      { amountMinor: 99999, currency: "EUR", incurredOn: "2024-03-01", recurrence: "monthly" } // other currency
    ]
    expect(expensesIn(expenses, w, "USD")).toBeCloseTo(15700, 6)
  })

  it("maps scores to statuses", () => {
    expect([100, 75, 74, 55, 54, 35, 34, 0, null].map(statusOf)).toEqual([
      "healthy", "healthy", "watch", "watch", "at_risk", "at_risk", "critical", "critical", "no_data"
    ])
  })

  it("snapshot copies the headline figures", () => {
    const h = health(healthInput(fixture))
    expect(snapshot(h)).toEqual({ score: 75, confidence: 0.05, status: "healthy", computedAt: NOW })
  })
})

// -------------------------------------------------------------------------------------------------
describe("signals", () => {
  const kinds = (sigs: ReadonlyArray<Signal>) => sigs.map((x) => `${x.severity}:${x.kind}`)
  // One row per window, away from the 7-day windows: previous 02-01, current 03-01.
  const trafficPair = (prev: number, cur: number) => ({ traffic: [t("2024-02-01", prev), t("2024-03-01", cur)] })
  const revenuePair = (prev: number, cur: number) => ({
    revenue: [r("2024-02-01", { grossMinor: prev }), r("2024-03-01", { grossMinor: cur })]
  })
  const seoPair = (prev: number, cur: number) => ({ search: [s("2024-02-01", prev), s("2024-03-01", cur)] })

  it("grades traffic changes at the thresholds", () => {
    expect(kinds(signals(healthInput(trafficPair(100, 60))))).toEqual(["critical:traffic_drop"]) // −0.40
    expect(kinds(signals(healthInput(trafficPair(100, 61))))).toEqual(["warning:traffic_drop"]) // −0.39
    expect(kinds(signals(healthInput(trafficPair(100, 80))))).toEqual(["warning:traffic_drop"]) // −0.20
    expect(kinds(signals(healthInput(trafficPair(100, 81))))).toEqual([]) // −0.19
    expect(kinds(signals(healthInput(trafficPair(100, 119))))).toEqual([]) // +0.19
    expect(kinds(signals(healthInput(trafficPair(100, 120))))).toEqual(["info:traffic_growth"]) // +0.20
    expect(kinds(signals(healthInput(trafficPair(0, 500))))).toEqual([]) // no previous → no change
  })

  it("grades revenue and SEO the same way", () => {
    expect(kinds(signals(healthInput(revenuePair(100000, 60000))))).toEqual(["critical:revenue_drop"])
    expect(kinds(signals(healthInput(revenuePair(100000, 80000))))).toEqual(["warning:revenue_drop"])
    expect(kinds(signals(healthInput(revenuePair(100000, 90000))))).toEqual([])
    expect(kinds(signals(healthInput(revenuePair(100000, 125000))))).toEqual(["info:revenue_growth"])
    expect(kinds(signals(healthInput(seoPair(100, 55))))).toEqual(["critical:seo_drop"])
    expect(kinds(signals(healthInput(seoPair(100, 75))))).toEqual(["warning:seo_drop"])
    expect(kinds(signals(healthInput(seoPair(100, 130))))).toEqual(["info:seo_growth"])
  })

  it("fills a signal's fields", () => {
    const [sig] = signals(healthInput(trafficPair(100, 60)))
    expect(sig).toMatchObject({
      dimension: "traffic",
      severity: "critical",
      kind: "traffic_drop",
      metric: "visitors",
      current: 60,
      previous: 100,
      change: -0.4,
      window: { from: "2024-02-15", to: "2024-03-15" },
      detectedOn: TODAY
    })
    expect(sig.id).toMatch(/^sig_[0-9a-z]+$/)
    expect(sig.title).toContain("40%")
    // deterministic ids: same project/kind/day → same id; a different day or project → another
    expect(signals(healthInput(trafficPair(100, 50)))[0].id).toBe(sig.id)
    const other = signals({ ...healthInput(trafficPair(100, 60)), projectId: "prj_other" })[0]
    expect(other.id).not.toBe(sig.id)
    const nextDay = signals(healthInput({ traffic: [t("2024-02-02", 100), t("2024-03-02", 60)] }, "2024-03-16"))[0]
    expect(nextDay.kind).toBe("traffic_drop")
    expect(nextDay.id).not.toBe(sig.id)
  })

  it("flags churn by level and by increase", () => {
    // start rows: 01-10 (previous window start) and 02-14 (current start), 100 subscriptions each
    const churnRows = (prevChurned: number, curChurned: number) => ({
      revenue: [
        r("2024-01-10", { activeSubscriptions: 100 }),
        r("2024-01-20", { activeSubscriptions: 100 - prevChurned, churnedSubscriptions: prevChurned }),
        r("2024-02-14", { activeSubscriptions: 100 }),
        r("2024-03-01", { activeSubscriptions: 100 - curChurned, churnedSubscriptions: curChurned })
      ]
    })
    expect(kinds(signals(healthInput(churnRows(8, 8))))).toEqual(["critical:churn_spike"]) // 8%
    expect(kinds(signals(healthInput(churnRows(7, 7))))).toEqual(["warning:churn_spike"]) // 7%
    expect(kinds(signals(healthInput(churnRows(4, 4))))).toEqual(["warning:churn_spike"]) // 4%
    expect(kinds(signals(healthInput(churnRows(3, 3))))).toEqual([]) // 3%, flat
    expect(kinds(signals(healthInput(churnRows(2, 3))))).toEqual(["warning:churn_spike"]) // 3%, +50%
    expect(kinds(signals(healthInput(churnRows(3, 4))))).toEqual(["warning:churn_spike"]) // 4% (+33%)
    const [sig] = signals(healthInput(churnRows(2, 3)))
    expect(sig).toMatchObject({ dimension: "retention", metric: "customer_churn_rate", current: 0.03, previous: 0.02, change: 0.5 })
  })

  it("flags thin and negative margins", () => {
    const rev = { revenue: [r("2024-03-01", { grossMinor: 100000 })] }
    const exp = (amountMinor: number) => ({ ...rev, expenses: [{ amountMinor, currency: "USD", incurredOn: "2024-03-01", recurrence: "one_off" as const }] })
    expect(kinds(signals(healthInput(exp(110000))))).toEqual(["critical:unprofitable"]) // −10%
    expect(kinds(signals(healthInput(exp(100000))))).toEqual(["warning:thin_margin"]) // 0%
    expect(kinds(signals(healthInput(exp(80100))))).toEqual(["warning:thin_margin"]) // 19.9%
    // thresholds apply to the reported (4-decimal) figure: 19.999% is reported, and treated, as 20%
    expect(kinds(signals(healthInput(exp(80000))))).toEqual([]) // 20%
    expect(kinds(signals(healthInput(rev)))).toEqual([])
    // expenses with no revenue at all in the window
    expect(kinds(signals(healthInput({ revenue: [r("2024-03-01")], expenses: exp(1000).expenses })))).toEqual(["critical:unprofitable"])
  })

  it("checks the last 7 days against the 7 before", () => {
    // 30-day comparison has no previous data (change null), so only the weekly check can fire
    const week = (prev7: number, cur7: number) => ({ traffic: [t("2024-03-03", prev7), t("2024-03-10", cur7)] })
    const [sig] = signals(healthInput(week(100, 70))) // −30%
    expect(sig).toMatchObject({
      severity: "warning",
      kind: "traffic_drop_week",
      current: 70,
      previous: 100,
      change: -0.3,
      window: { from: "2024-03-09", to: "2024-03-15" }
    })
    expect(signals(healthInput(week(100, 71)))).toEqual([]) // −29%
  })

  it("sorts critical, warning, info, then by |change|", () => {
    // traffic 100 → 50 (−0.5, critical); seo 100 → 70 (−0.3, warning); revenue 100000 → 130000 (+0.3, info);
    // churn: 100 subs at each start, 5 then 10 churned → 10% (critical), change +1.0;
    // margin (130000 − 110000) / 130000 = 0.1538 (warning), previous margin 1 → change −0.8462
    const input = healthInput({
      traffic: [t("2024-02-01", 100), t("2024-03-01", 50)],
      search: [s("2024-02-01", 100), s("2024-03-01", 70)],
      revenue: [
        r("2024-01-10", { activeSubscriptions: 100 }),
        r("2024-01-20", { grossMinor: 100000, activeSubscriptions: 95, churnedSubscriptions: 5 }),
        r("2024-02-14", { activeSubscriptions: 100 }),
        r("2024-03-01", { grossMinor: 130000, activeSubscriptions: 90, churnedSubscriptions: 10 })
      ],
      expenses: [{ amountMinor: 110000, currency: "USD", incurredOn: "2024-03-05", recurrence: "one_off" }]
    })
    const sigs = signals(input)
    expect(kinds(sigs)).toEqual([
      "critical:churn_spike",
      "critical:traffic_drop",
      "warning:thin_margin",
      "warning:seo_drop",
      "info:revenue_growth"
    ])
    expect(sigs.map((x) => x.change)).toEqual([1, -0.5, -0.8462, -0.3, 0.3])
    expect(new Set(sigs.map((x) => x.id)).size).toBe(5)

    // briefing: the 4 warning/critical ones, ranked; no info since there are ≥ 3
    const b = briefing({ ...input, signals: [...sigs].reverse() })
    expect(b.priorities.map((p) => [p.rank, p.severity, p.signalId])).toEqual(
      sigs.slice(0, 4).map((x, i) => [i + 1, x.severity, x.id])
    )
    expect(b.priorities[0]).toMatchObject({ dimension: "retention", title: sigs[0].title })
    expect(b.priorities[0].action).toMatch(/cancel/i)
    expect(b.headline).toContain(sigs[0].title.toLowerCase())
  })
})

// -------------------------------------------------------------------------------------------------
describe("briefing", () => {
  const sig = (kind: string, severity: Signal["severity"], change: number | null, dimension: Signal["dimension"] = "traffic"): Signal => ({
    id: `sig_${kind}`,
    dimension,
    severity,
    kind,
    title: `Title ${kind}`,
    detail: "",
    metric: "visitors",
    current: null,
    previous: null,
    change,
    window: { from: "2024-02-15", to: TODAY },
    detectedOn: TODAY
  })

  it("reports yesterday's figures from the rows", () => {
    const b = briefing({
      ...healthInput({
        traffic: [t("2024-03-14", 321, { pageviews: 654 }), t(TODAY, 1)],
        revenue: [r("2024-03-14", { grossMinor: 5000, refundsMinor: 1200, newSubscriptions: 2, churnedSubscriptions: 1 })]
      }),
      signals: []
    })
    expect(b.projectId).toBe(PID)
    expect(b.date).toBe(TODAY)
    expect(b.generatedAt).toBe(NOW)
    expect(b.yesterday).toEqual({
      date: "2024-03-14",
      visitors: 321,
      pageviews: 654,
      revenue: { amount: 3800, currency: "USD" },
      newSubscriptions: 2,
      churnedSubscriptions: 1
    })
    expect(b.priorities).toEqual([])
    expect(b.headline).toMatch(/^All quiet/)
  })

  it("is all zeros when yesterday has no rows", () => {
    const b = briefing({ ...healthInput({}), signals: [] })
    expect(b.yesterday).toEqual({
      date: "2024-03-14",
      visitors: 0,
      pageviews: 0,
      revenue: { amount: 0, currency: "USD" },
      newSubscriptions: 0,
      churnedSubscriptions: 0
    })
    expect(b.health).toEqual({ score: null, confidence: 0, status: "no_data", computedAt: NOW })
    expect(b.headline).toMatch(/^All quiet/)
  })

  it("names the status and the top signal in the headline", () => {
    const input = healthInput({ traffic: [t("2024-02-01", 100), t("2024-03-01", 88)] }) // score 38, at risk
    const b = briefing({ ...input, signals: [sig("traffic_drop", "warning", -0.2)] })
    expect(b.health.score).toBe(38)
    expect(b.headline).toContain("38/100")
    expect(b.headline).toContain("at risk")
    expect(b.headline).toContain("title traffic_drop")
    const quiet = briefing({ ...input, signals: [] })
    expect(quiet.headline).toMatch(/^All quiet.*38\/100.*at risk/)
  })

  it("tops up with info signals when there are fewer than 3 warnings", () => {
    const b = briefing({
      ...healthInput({}),
      signals: [
        sig("seo_growth", "info", 0.25, "seo"),
        sig("revenue_growth", "info", 0.2, "revenue"),
        sig("traffic_growth", "info", 0.3043),
        sig("traffic_drop_week", "warning", -0.5)
      ]
    })
    expect(b.priorities.map((p) => `${p.rank}:${p.severity}:${p.signalId}`)).toEqual([
      "1:warning:sig_traffic_drop_week",
      "2:info:sig_traffic_growth",
      "3:info:sig_seo_growth"
    ])
    expect(b.priorities[0].action).not.toBe(b.priorities[1].action)
  })

  it("keeps at most 5 priorities, critical first", () => {
    const b = briefing({
      ...healthInput({}),
      signals: [
        sig("a_warn", "warning", -0.9),
        sig("b_warn", "warning", -0.2),
        sig("c_crit", "critical", -0.4),
        sig("d_crit", "critical", null),
        sig("e_warn", "warning", -0.5),
        sig("f_warn", "warning", 0.3),
        sig("g_info", "info", 5)
      ]
    })
    expect(b.priorities.map((p) => p.signalId)).toEqual(["sig_c_crit", "sig_d_crit", "sig_a_warn", "sig_e_warn", "sig_f_warn"])
    expect(b.priorities.map((p) => p.rank)).toEqual([1, 2, 3, 4, 5])
  })

  it("gives a kind-specific action", () => {
    const all = ["traffic_drop", "traffic_drop_week", "traffic_growth", "revenue_drop", "revenue_growth", "seo_drop", "seo_growth", "churn_spike", "unprofitable", "thin_margin"]
    const actions = all.map((k) => briefing({ ...healthInput({}), signals: [sig(k, "warning", -0.5)] }).priorities[0].action)
    expect(new Set(actions).size).toBe(all.length)
  })
})

// -------------------------------------------------------------------------------------------------
describe("generateDemoSeries", () => {
  const opts = { seed: 42, days: 180, today: TODAY, profile: "steady" as const }

  it("is deterministic", () => {
    expect(generateDemoSeries(opts)).toEqual(generateDemoSeries(opts))
    expect(generateDemoSeries({ ...opts, seed: 43 })).not.toEqual(generateDemoSeries(opts))
  })

  it("produces `days` consecutive days ending today", () => {
    const g = generateDemoSeries(opts)
    for (const rows of [g.traffic, g.revenue, g.search]) {
      expect(rows).toHaveLength(180)
      expect(rows.map((x) => x.day)).toEqual(eachDay(addDays(TODAY, -179), TODAY))
    }
    expect(generateDemoSeries({ ...opts, days: 0 })).toEqual({ traffic: [], revenue: [], search: [] })
  })

  for (const profile of ["growing", "declining", "steady"] as const) {
    it(`keeps its invariants (${profile})`, () => {
      const g = generateDemoSeries({ ...opts, seed: 7, days: 240, profile })
      let active = DEMO_INITIAL_SUBSCRIPTIONS
      let mrr: number | null = null
      for (const x of g.revenue) {
        for (const v of Object.values(x)) {
          if (typeof v === "number") {
            expect(Number.isInteger(v)).toBe(true)
            expect(v).toBeGreaterThanOrEqual(0)
          }
        }
        expect(x.churnedSubscriptions).toBeLessThanOrEqual(active)
        expect(x.activeSubscriptions).toBe(active + x.newSubscriptions - x.churnedSubscriptions)
        expect(x.refundsMinor).toBeLessThanOrEqual(x.grossMinor)
        if (mrr !== null) {
          // mrr moves by the new subscriptions' prices ($19–$99) minus the churned MRR
          const added = x.mrrMinor - mrr + x.churnedMrrMinor
          expect(added).toBeGreaterThanOrEqual(1900 * x.newSubscriptions)
          expect(added).toBeLessThanOrEqual(9900 * x.newSubscriptions)
        }
        active = x.activeSubscriptions
        mrr = x.mrrMinor
      }
      for (const x of g.traffic) {
        for (const v of Object.values(x)) if (typeof v === "number") expect(Number.isInteger(v)).toBe(true)
        expect(x.visitors).toBeGreaterThanOrEqual(200)
        expect(x.visitors).toBeLessThanOrEqual(5000)
        expect(x.pageviews).toBeGreaterThanOrEqual(Math.floor(x.visitors * 1.5))
        expect(x.pageviews).toBeLessThanOrEqual(Math.ceil(x.visitors * 3.5))
        expect(x.sessions).toBeGreaterThanOrEqual(x.visitors)
        expect(x.bounces).toBeGreaterThanOrEqual(Math.floor(x.sessions * 0.35))
        expect(x.bounces).toBeLessThanOrEqual(Math.ceil(x.sessions * 0.6))
        expect(x.durationSeconds).toBeGreaterThanOrEqual(x.sessions * 60 - 1)
        expect(x.durationSeconds).toBeLessThanOrEqual(x.sessions * 180 + 1)
      }
      for (const x of g.search) {
        expect(Number.isInteger(x.clicks) && Number.isInteger(x.impressions)).toBe(true)
        expect(x.clicks).toBeGreaterThanOrEqual(0)
        expect(x.clicks).toBeLessThanOrEqual(x.impressions)
        const position = x.positionWeighted / x.impressions
        expect(position).toBeGreaterThanOrEqual(7.99)
        expect(position).toBeLessThanOrEqual(25.01)
      }
      // and every report over it is finite
      const input = { projectId: PID, today: TODAY, now: NOW, currency: "USD", series: { ...g, expenses: [] } }
      const sigs = signals(input)
      assertFiniteDeep([health(input), sigs, briefing({ ...input, signals: sigs })])
      assertFiniteDeep(revenue({ projectId: PID, currency: "USD", today: TODAY, revenue: g.revenue }))
      assertFiniteDeep(churn({ projectId: PID, currency: "USD", today: TODAY, revenue: g.revenue }))
      assertFiniteDeep(seo({ projectId: PID, today: TODAY, search: g.search }))
      assertFiniteDeep(analytics({ projectId: PID, period: "12m", today: TODAY, timezone: "UTC", traffic: g.traffic, firstDay: g.traffic[0].day }))
    })
  }

  it("follows the profile's trend", () => {
    const lastVsPrevious = (profile: "growing" | "declining" | "steady") => {
      const g = generateDemoSeries({ ...opts, seed: 11, profile })
      const sum = (from: number, to: number) => g.traffic.slice(from, to).reduce((a, x) => a + x.visitors, 0)
      return sum(150, 180) / sum(120, 150)
    }
    expect(lastVsPrevious("declining")).toBeLessThan(0.85)
    expect(lastVsPrevious("growing")).toBeGreaterThan(1.02)
    expect(Math.abs(lastVsPrevious("steady") - 1)).toBeLessThan(0.06)
    const declining = generateDemoSeries({ ...opts, seed: 11, profile: "declining" })
    const sigs = signals({ projectId: PID, today: TODAY, now: NOW, currency: "USD", series: { ...declining, expenses: [] } })
    expect(sigs.map((x) => x.kind)).toContain("traffic_drop")
  })
})
