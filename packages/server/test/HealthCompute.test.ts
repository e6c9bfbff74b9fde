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
