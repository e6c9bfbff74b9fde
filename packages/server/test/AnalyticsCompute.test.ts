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

