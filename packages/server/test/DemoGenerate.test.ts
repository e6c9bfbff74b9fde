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
