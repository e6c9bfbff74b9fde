/** Golden tests of signal detection (fixtures/signals.ts has the baseline arithmetic). */
import { describe, expect, it } from "@effect/vitest"
import { anomalyOn, mad, median } from "../src/metrics/Anomaly.ts"
import { actionFor } from "../src/metrics/Briefing.ts"
import { eachDay } from "../src/metrics/Dates.ts"
import { detectSignals, type SignalInput } from "../src/metrics/Signals.ts"
import type { ProjectSeries } from "../src/store/Series.ts"
import { noisy, plantedTraffic, revenue, TODAY, traffic, YESTERDAY } from "./fixtures/signals.ts"

const NOW = new Date("2026-11-20T12:00:00Z")
const empty: ProjectSeries = { traffic: [], revenue: [], search: [], expenses: [] }
const input = (series: Partial<ProjectSeries>, more: Partial<SignalInput> = {}): SignalInput => ({
  today: TODAY,
  now: NOW,
  currency: "USD",
  series: { ...empty, ...series },
  integrations: [],
  queries: [],
  ...more
})

describe("robust statistics", () => {
  it("median and MAD by hand", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNull()
    expect(mad([96, 98, 99, 100, 101, 102, 103, 104], 100.5)).toBe(2)
  })
})

describe("weekday anomalies", () => {
  it("a Thursday at 30% of its usual → exactly one signal, critical, with the expected range", () => {
    const signals = detectSignals(input({ traffic: plantedTraffic(30) }))
    expect(signals).toHaveLength(1)
    const s = signals[0]
    expect(s.kind).toBe("anomaly_drop")
    expect(s.subject).toBe("visitors")
    expect(s.fingerprint).toBe("anomaly_drop|visitors")
    expect(s.day).toBe(YESTERDAY)
    expect(s.actual).toBe(30)
    // median 100.5, range 100.5 ∓ 26.07487 (see fixture)
    expect(s.expected).toEqual({ value: 100.5, low: 74.43, high: 126.57 })
    // z = 0.6745 × (30 − 100.5) / 5.025 = −9.4628 → |z| ≥ 6 → critical
    expect(s.severity).toBe("critical")
    expect(s.detail).toContain("robust z -9.46")
    // change (30 − 100.5) / 100.5 = −0.70149 → −0.7015
    expect(s.change).toBe(-0.7015)
    expect(s.moneyAtStake).toBe(0) // no revenue in 30 days: a lost visitor is worth 0
  })

  it("a Thursday at 70 → warning (z = 0.6745 × −30.5 / 5.025 = −4.09); at 75 → nothing (z = −3.42)", () => {
    const warn = detectSignals(input({ traffic: plantedTraffic(70) }))
    expect(warn.map((s) => [s.kind, s.severity])).toEqual([["anomaly_drop", "warning"]])
    expect(detectSignals(input({ traffic: plantedTraffic(75) }))).toEqual([])
  })

  it("a spike is info", () => {
    // z = 0.6745 × (200 − 100.5) / 5.025 = 13.36
    expect(detectSignals(input({ traffic: plantedTraffic(200) })).map((s) => [s.kind, s.severity])).toEqual([[
      "anomaly_spike",
      "info"
    ]])
  })

  it("a flat series → none", () => {
    const flat = eachDay("2026-09-01", TODAY).map((d) => traffic(d, 100))
    expect(detectSignals(input({ traffic: flat }))).toEqual([])
  })

  it("a noisy but normal series (±15% uniform noise) → none", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = noisy(1000, 0.15, seed)
      const rows = eachDay("2026-09-01", TODAY).map((d) => traffic(d, next(), next()))
      expect(detectSignals(input({ traffic: rows }))).toEqual([])
    }
  })

  it("fewer than 4 same-weekday points → none, even for a 70% drop", () => {
    expect(detectSignals(input({ traffic: plantedTraffic(30, { weeks: 3 }) }))).toEqual([])
    expect(detectSignals(input({ traffic: plantedTraffic(30, { weeks: 4 }) }))).toHaveLength(1)
  })

  it("today's partial bucket is never flagged (today at 5 visitors vs a usual 200)", () => {
    expect(detectSignals(input({ traffic: plantedTraffic(100, { today: 5 }) }))).toEqual([])
    expect(anomalyOn([{ day: TODAY, value: 5 }], TODAY)).toBeNull() // no baseline either
  })
})

describe("rule signals", () => {
  it("MRR decline, churn spike and failed payments, with money at stake", () => {
    // MRR 100 000 at 10-20 (the day before the 30-day window), 90 000 from 11-01 on: −10% → warning
    // customers 20 → 19 with 1 churn of 10 000: logo churn 1/20 = 5% ≥ 5% → warning
    // 2 failed payments for 4 000 on 11-18 (in the last 7 days): 4 000 / 90 000 = 4.4% of MRR → warning
    const rows = eachDay("2026-09-21", YESTERDAY).map((d) =>
      revenue(d, {
        mrrMinor: d < "2026-11-01" ? 100_000 : 90_000,
        customers: d < "2026-11-01" ? 20 : 19,
        ...(d === "2026-11-01" ? { churnedCustomers: 1, churnedMrrMinor: 10_000 } : {}),
        ...(d === "2026-11-18" ? { failedPayments: 2, failedMinor: 4_000 } : {})
      })
    )
    const signals = detectSignals(input({ revenue: rows }))
    const by = Object.fromEntries(signals.map((s) => [s.kind, s]))
    expect(Object.keys(by).sort()).toEqual(["churn_spike", "failed_payments", "mrr_decline"])
    expect(by.mrr_decline).toMatchObject({ severity: "warning", actual: 90_000, change: -0.1, moneyAtStake: 10_000 })
    expect(by.churn_spike).toMatchObject({ severity: "warning", actual: 0.05, moneyAtStake: 10_000 })
    expect(by.failed_payments).toMatchObject({ severity: "warning", actual: 2, moneyAtStake: 4_000 })
    // ordered by severity, then money at stake: mrr_decline (10 000) and churn_spike (10 000) tie → fingerprint
    expect(signals.map((s) => s.kind)).toEqual(["churn_spike", "mrr_decline", "failed_payments"])
  })

  it("failed payments by their share of MRR: info below 1%, warning from 1%, critical from 10%", () => {
    const severityFor = (failedMinor: number) => {
      // MRR 100 000 throughout; one failed charge of `failedMinor` on 11-18
      const rows = eachDay("2026-09-21", YESTERDAY).map((d) =>
        revenue(d, {
          mrrMinor: 100_000,
          customers: 20,
          ...(d === "2026-11-18" ? { failedPayments: 1, failedMinor } : {})
        })
      )
      return detectSignals(input({ revenue: rows })).find((s) => s.kind === "failed_payments")?.severity
    }
    expect(severityFor(999)).toBe("info") // 0.999%
    expect(severityFor(1_000)).toBe("warning") // 1%
    expect(severityFor(9_999)).toBe("warning")
    expect(severityFor(10_000)).toBe("critical") // 10%
  })

  it("spend outgrowing revenue: negative margin is critical", () => {
    // net revenue 30 × 1 000 = 30 000 in the window; one-off expense 50 000 on 11-10 → loss 20 000
    const rows = eachDay("2026-10-21", YESTERDAY).map((d) => revenue(d, { grossMinor: 1_000 }))
    const signals = detectSignals(input({
      revenue: rows,
      expenses: [{ amountMinor: 50_000, currency: "USD", incurredOn: "2026-11-10", recurrence: "one_off" }]
    }))
    const s = signals.find((x) => x.kind === "spend_outgrowing_revenue")!
    expect(s).toMatchObject({ severity: "critical", actual: 50_000, moneyAtStake: 20_000 })
  })

  it("integrations: failing is critical, no sync for more than 48 h is a warning, a recent sync is nothing", () => {
    const signals = detectSignals(input({}, {
      integrations: [
        { provider: "stripe", status: "error", lastSyncedAt: null, lastError: "invalid api key" },
        { provider: "plausible", status: "connected", lastSyncedAt: new Date("2026-11-18T11:00:00Z"), lastError: null },
        {
          provider: "google-search-console",
          status: "connected",
          lastSyncedAt: new Date("2026-11-19T12:00:00Z"),
          lastError: null
        }
      ]
    }))
    expect(signals.map((s) => [s.fingerprint, s.severity, s.dimension, s.actual])).toEqual([
      ["integration_failing|stripe", "critical", "revenue", null],
      ["integration_stale|plausible", "warning", "traffic", 49] // 2026-11-18T11:00 → 2026-11-20T12:00 = 49 h
    ])
  })

  it("integration signals and their briefing actions name the provider as people do, not by its id", () => {
    const signals = detectSignals(input({}, {
      integrations: [
        { provider: "google-search-console", status: "error", lastSyncedAt: null, lastError: "invalid_grant" },
        { provider: "plausible", status: "connected", lastSyncedAt: null, lastError: null }
      ]
    }))
    // The subject stays the id (the signal's identity); what a person reads says the name.
    expect(signals.map((s) => [s.subject, s.title, s.detail])).toEqual([
      [
        "google-search-console",
        "Google Search Console sync is failing",
        "The last sync of Google Search Console failed: invalid_grant."
      ],
      ["plausible", "Plausible has not synced yet", "Plausible is connected but has never synced."]
    ])
    expect(signals.map(actionFor)).toEqual([
      "Reconnect Google Search Console in the dashboard: its last sync failed, so its figures are not updating.",
      "Trigger a sync of Plausible and check its credentials."
    ])
    // An id this version does not know is written as it is.
    expect(actionFor({ kind: "integration_stale", subject: "matomo", dimension: "traffic" })).toBe(
      "Trigger a sync of matomo and check its credentials."
    )
  })

  it("a connection whose first sync has not come yet is stale only once it is more than 48 h old", () => {
    const never = (connectedAt: string) =>
      detectSignals(input({}, {
        integrations: [{
          provider: "plausible",
          status: "connected",
          lastSyncedAt: null,
          lastError: null,
          connectedAt: new Date(connectedAt)
        }]
      })).map((s) => [s.fingerprint, s.actual])
    expect(never("2026-11-20T10:00:00Z")).toEqual([]) // connected 2 h ago (now 12:00): the first sync is on its way
    expect(never("2026-11-18T11:00:00Z")).toEqual([["integration_stale|plausible", null]]) // 49 h, still nothing
  })

  it("ranking drops: a top query losing ≥ 3 places", () => {
    // search data through 11-18; current 11-12 … 11-18, previous 11-05 … 11-11.
    // "alpha": position 2 → 6 (+4, warning); "beta": 3 → 4 (+1, nothing)
    const q = (day: string, query: string, clicks: number, position: number) => ({
      day,
      query,
      clicks,
      impressions: 100,
      positionWeighted: position * 100
    })
    const queries = eachDay("2026-11-05", "2026-11-18").flatMap((d) => [
      q(d, "alpha", d <= "2026-11-11" ? 20 : 8, d <= "2026-11-11" ? 2 : 6),
      q(d, "beta", 10, d <= "2026-11-11" ? 3 : 4)
    ])
    const signals = detectSignals(input({}, { queries }))
    expect(signals.map((s) => [s.fingerprint, s.severity, s.actual, s.expected?.value, s.change])).toEqual([
      ["ranking_drop|alpha", "warning", 6, 2, 4]
    ])
  })
})
