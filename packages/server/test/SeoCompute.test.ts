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
