/** The briefing's pure part: priorities by severity then money at stake, bad news first, key figures vs usual. */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import type { Signal } from "@sitehealth/domain/Projects"
import { briefing, recomposeReason } from "../src/metrics/Briefing.ts"
import { eachDay } from "../src/metrics/Dates.ts"
import { health } from "../src/metrics/Health.ts"
import { dataSources } from "../src/metrics/Sources.ts"
import { plantedTraffic, revenue, TODAY, YESTERDAY } from "./fixtures/signals.ts"

const PRJ_X = "prj_x" as ProjectId

const NOW = "2026-11-20T07:00:00.000Z"
const sig = (
  id: string,
  severity: Signal["severity"],
  money: number | null,
  kind = "mrr_decline",
  detectedAt = NOW
): Signal => ({
  id,
  dimension: "revenue",
  severity,
  kind,
  subject: null,
  title: `${id} title`,
  detail: "",
  metric: "m",
  day: YESTERDAY,
  actual: null,
  expected: null,
  change: null,
  moneyAtStake: money === null ? null : { amount: money, currency: "USD" },
  detectedAt,
  lastSeenAt: NOW,
  active: true,
  resolvedAt: null
})

describe("briefing", () => {
  const series = {
    traffic: plantedTraffic(30),
    // MRR 50 000 until 11-12, 45 000 from 11-13; 2 000 net revenue on Thursdays, 1 000 other days; 1 new customer
    // yesterday.
    revenue: eachDay("2026-09-20", YESTERDAY).map((d) =>
      revenue(d, {
        mrrMinor: d <= "2026-11-12" ? 50_000 : 45_000,
        grossMinor: new Date(`${d}T00:00:00Z`).getUTCDay() === 4 ? 2_000 : 1_000,
        ...(d === YESTERDAY ? { newCustomers: 1, refundsMinor: 500 } : {})
      })
    ),
    search: [],
    expenses: []
  }
  const h = health({ projectId: PRJ_X, today: TODAY, now: NOW, series, currency: "USD" })
  const sources = dataSources(series, [])

  it("ranks priorities by severity, then money at stake (unknown last), and leads with the worst", () => {
    const b = briefing({
      projectId: PRJ_X,
      today: TODAY,
      now: NOW,
      currency: "USD",
      series,
      health: h,
      sources,
      signals: [
        sig("sig_info", "info", 1_000_000, "anomaly_spike"),
        sig("sig_warnSmall", "warning", 100),
        sig("sig_critNull", "critical", null),
        sig("sig_warnBig", "warning", 9_000, "churn_spike", "2026-11-10T07:00:00.000Z"),
        sig("sig_critBig", "critical", 5_000, "failed_payments")
      ]
    })
    expect(b.priorities.map((p) => [p.rank, p.signalId])).toEqual([
      [1, "sig_critBig"],
      [2, "sig_critNull"],
      [3, "sig_warnBig"],
      [4, "sig_warnSmall"],
      [5, "sig_info"]
    ])
    expect(b.priorities[0].action).toBe(
      "Turn on payment retries and dunning emails, and ask affected customers to update their card."
    )
    expect(b.priorities[0].moneyAtStake).toEqual({ amount: 5_000, currency: "USD" })
    expect(b.headline).toBe(
      `sig_critBig title and 3 more issues; health ${h.score}/100 (${
        {
          healthy: "healthy",
          watch: "worth watching",
          at_risk: "at risk",
          critical: "critical",
          no_data: "no data yet"
        }[h.status]
      }).`
    )
    // What changed: active signals first seen in the last 24 h (sig_warnBig is ten days old).
    expect(b.whatChanged.map((s) => s.id)).toEqual(["sig_critBig", "sig_critNull", "sig_warnSmall", "sig_info"])
  })

  it("yesterday's figures against the median of the same weekday over the previous 4 weeks", () => {
    const b = briefing({
      projectId: PRJ_X,
      today: TODAY,
      now: NOW,
      currency: "USD",
      series,
      health: h,
      signals: [],
      sources
    })
    expect(b.yesterday.date).toBe(YESTERDAY)
    // Thursdays 11-12, 11-05, 10-29, 10-22 → 100, 104, 96, 102 → median (100 + 102) / 2 = 101; (30 − 101) / 101 =
    // −0.70297
    expect(b.yesterday.visitors).toEqual({ value: 30, usual: 101, change: -0.703, state: "connected" })
    // Thursdays net 2 000 each; yesterday 2 000 − 500 refund = 1 500 → (1 500 − 2 000) / 2 000 = −0.25
    expect(b.yesterday.netRevenue).toEqual({ value: 1_500, usual: 2_000, change: -0.25, state: "connected" })
    expect(b.yesterday.newCustomers).toEqual({ value: 1, usual: 0, change: null, state: "connected" })
    // MRR at 11-19 45 000; at 11-12, 11-05, 10-29, 10-22: 50 000 ×4 → usual 50 000, change −0.1
    expect(b.yesterday.mrr).toEqual({ value: 45_000, usual: 50_000, change: -0.1, state: "connected" })
    expect(b.priorities).toEqual([])
    expect(b.headline).toBe(
      `All quiet: health ${h.score}/100 (${
        h.status === "watch" ? "worth watching" : h.status.replace("_", " ")
      }), nothing unusual yesterday.`
    )
  })

  const base = { projectId: PRJ_X, today: TODAY, now: NOW, currency: "USD" } as const

  it("no data is not zero: a figure whose source is not connected or still syncing says so, with no usual", () => {
    const noRevenue = { ...series, revenue: [] }
    // Stripe connected, its first sync not landed yet; Plausible's rows are there.
    const syncing = dataSources(noRevenue, [{ provider: "stripe", lastSyncedAt: null }])
    expect(syncing).toEqual({ analytics: "connected", payments: "syncing", search: "not_connected" })
    const b = briefing({ ...base, series: noRevenue, health: h, signals: [], sources: syncing })
    expect(b.sources).toEqual(syncing)
    for (const key of ["netRevenue", "newCustomers", "churnedCustomers", "mrr"] as const) {
      expect(b.yesterday[key]).toEqual({ value: 0, usual: null, change: null, state: "syncing" })
    }
    expect([b.yesterday.visitors.value, b.yesterday.visitors.state]).toEqual([30, "connected"])
    expect(b.headline).toBe(
      "Importing your data: Stripe is still on its first sync; this briefing is rewritten as soon as it lands."
    )
    // Nothing connected at all.
    const empty = { traffic: [], revenue: [], search: [], expenses: [] }
    const none = dataSources(empty, [])
    expect(none).toEqual({ analytics: "not_connected", payments: "not_connected", search: "not_connected" })
    const nothing = briefing({ ...base, series: empty, health: h, signals: [], sources: none })
    expect(nothing.yesterday.visitors.state).toBe("not_connected")
    expect(nothing.yesterday.mrr.state).toBe("not_connected")
    expect(nothing.headline).toMatch(/^No data yet: connect Stripe, Plausible or Search Console/)
    // A provider that synced and found nothing: its zeros are true zeros.
    const synced = dataSources(empty, [{ provider: "stripe", lastSyncedAt: new Date(NOW) }])
    expect(synced.payments).toBe("connected")
    expect(briefing({ ...base, series: empty, health: h, signals: [], sources: synced }).yesterday.mrr).toEqual({
      value: 0,
      usual: null,
      change: null,
      state: "connected"
    })
  })

  it("is recomposed when its data changed under it, and only then", () => {
    const first = briefing({ ...base, series, health: h, signals: [], sources })
    // Nothing changed: same sources, a score, no signal it does not name.
    expect(recomposeReason(first, { health: h, sources, signals: [] })).toBeNull()
    // A warning that opened since does not rewrite the morning's briefing; a critical one does.
    expect(recomposeReason(first, { health: h, sources, signals: [sig("sig_w", "warning", 10)] })).toBeNull()
    expect(recomposeReason(first, { health: h, sources, signals: [sig("sig_c", "critical", 10)] })).toBe(
      "a new critical signal: sig_c title"
    )
    // A critical signal it already names (a priority) does not.
    const named = briefing({ ...base, series, health: h, signals: [sig("sig_c", "critical", 10)], sources })
    expect(recomposeReason(named, { health: h, sources, signals: [sig("sig_c", "critical", 10)] })).toBeNull()
    // Written before a sync landed.
    const before = briefing({ ...base, series, health: h, signals: [], sources: { ...sources, payments: "syncing" } })
    expect(recomposeReason(before, { health: h, sources, signals: [] })).toBe("payments: syncing → connected")
    // Written before any score.
    const blind = { ...first, health: { ...first.health, score: null, status: "no_data" as const } }
    expect(recomposeReason(blind, { health: h, sources, signals: [] })).toBe("a first health score")
    // A recomposed edition keeps the first edition's time and says when it was updated.
    const edition = { generatedAt: NOW, updatedAt: "2026-11-20T10:42:00.000Z" }
    const again = briefing({ ...base, now: edition.updatedAt, series, health: h, signals: [], sources, edition })
    expect([again.generatedAt, again.updatedAt]).toEqual([NOW, edition.updatedAt])
    expect(first.updatedAt).toBeNull()
  })
})
