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

