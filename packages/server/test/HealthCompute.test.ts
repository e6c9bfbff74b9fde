/** Golden tests of the health score (fixtures/health.ts has the hand arithmetic). */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import { health } from "../src/metrics/Health.ts"
import { HEALTH_TODAY, healthSeries } from "./fixtures/health.ts"

const input = (series = healthSeries()) => ({
  projectId: "prj_test" as ProjectId,
  today: HEALTH_TODAY,
  now: "2026-11-20T12:00:00.000Z",
  series,
  currency: "USD"
})

describe("health", () => {
  it("scores the dimensions with data, leaves seo out and renormalises the weights", () => {
    const h = health(input())
    expect(h.window).toEqual({
      current: { from: "2026-10-21", to: "2026-11-19" }, // ends YESTERDAY: today is partial
      previous: { from: "2026-09-21", to: "2026-10-20" }
    })
    const by = Object.fromEntries(h.dimensions.map((d) => [d.name, d]))
    expect(by.traffic.score).toBe(60)
    expect(by.traffic.figures).toEqual({ visitors: 3300, previousVisitors: 3000, change: 0.1 })
    expect(by.revenue.score).toBe(60)
    expect(by.revenue.figures).toEqual({ mrr: 104_000, mrrStart: 100_000, mrrGrowth: 0.04, netNewMrr: 4_000 })
    expect(by.retention.score).toBe(45)
    expect(by.retention.figures).toEqual({
      customersStart: 20,
      churnedCustomers: 1,
      logoChurn: 0.05,
      mrrStart: 100_000,
      churnedMrr: 6_000,
      netMrrChurn: 0.06
    })
    expect(by.profitability.score).toBe(90)
    expect(by.profitability.figures).toEqual({ netRevenue: 105_000, expenses: 63_000, profit: 42_000, margin: 0.4 })
    expect(by.seo.score).toBeNull()
    expect(by.seo.status).toBe("no_data")
    expect(by.seo.weight).toBe(0)
    expect([by.traffic.weight, by.revenue.weight, by.retention.weight, by.profitability.weight])
      .toEqual([0.3529, 0.3529, 0.1765, 0.1176])
    expect(h.score).toBe(61) // 51.75 / 0.85 = 60.88
    expect(h.status).toBe("watch")
    expect(h.confidenceFactors).toEqual({ value: 0.85, coverage: 0.85, freshness: 1, history: 1 })
    expect(h.confidence).toBe(0.85)
    expect(by.retention.reason).toBe("1 of 20 customers churned (5.0%), net MRR churn 6.0%")
  })

  it("stale traffic (last row 4 days before today) halves its freshness and lowers confidence", () => {
    const h = health(input(healthSeries({ trafficThrough: "2026-11-16" })))
    const traffic = h.dimensions.find((d) => d.name === "traffic")!
    expect(traffic.stale).toBe(true)
    expect(traffic.lastDataOn).toBe("2026-11-16")
    // visitors 10-21 … 11-16 = 27 × 110 = 2970 vs 3000 → −0.01 → 50 − 1 = 49
    expect(traffic.score).toBe(49)
    // freshness (0.3 × 0.5 + 0.3 + 0.15 + 0.1) / 0.85 = 0.70 / 0.85 = 0.8235; 0.85 × 0.8235 × 1 = 0.699975 → 0.7
    expect(h.confidenceFactors.freshness).toBe(0.8235)
    expect(h.confidence).toBe(0.7)
    // (0.3×49 + 0.3×60 + 0.15×45 + 0.1×90) / 0.85 = (14.7 + 18 + 6.75 + 9) / 0.85 = 48.45 / 0.85 = 57.0 → 57
    expect(h.score).toBe(57)
  })

  it("short history lowers confidence: rows from 2026-10-21 only (30 days before today)", () => {
    const s = healthSeries()
    const short = {
      ...s,
      traffic: s.traffic.filter((r) => r.day >= "2026-10-21"),
      revenue: s.revenue.filter((r) => r.day >= "2026-10-21")
    }
    const h = health(input(short))
    // history: daysBetween(10-21, 11-20) = 30 → 30/60 = 0.5 for every scored dimension
    expect(h.confidenceFactors.history).toBe(0.5)
    // traffic grows from 0 → 75; revenue: MRR start 0 → 75; retention: no customers at start → null (left out)
    const by = Object.fromEntries(h.dimensions.map((d) => [d.name, d.score]))
    expect(by).toEqual({ traffic: 75, revenue: 75, retention: null, seo: null, profitability: 90 })
    // coverage (0.3 + 0.3 + 0.1) / 1 = 0.7; confidence 0.7 × 1 × 0.5 = 0.35
    expect(h.confidence).toBe(0.35)
    // (0.3×75 + 0.3×75 + 0.1×90) / 0.7 = 54 / 0.7 = 77.14 → 77
    expect(h.score).toBe(77)
  })

  it("no data at all: score null, confidence 0, every dimension no_data", () => {
    const h = health(input({ traffic: [], revenue: [], search: [], expenses: [] }))
    expect(h.score).toBeNull()
    expect(h.status).toBe("no_data")
    expect(h.confidence).toBe(0)
    expect(h.dimensions.every((d) => d.score === null && d.weight === 0)).toBe(true)
  })
})
