/**
 * Golden tests of the forecasts (metrics/Forecast.ts, docs/metrics.md "Forecasts") on series worked out by hand in
 * the comments. Today is 2026-11-20: the series' last entry is November so far, October the last complete month.
 */
import { describe, expect, it } from "@effect/vitest"
import { mrrForecast, profitRunRate } from "../src/metrics/Forecast.ts"
import type { RevenueDay } from "../src/store/Series.ts"

const TODAY = "2026-11-20"
const MONTHS = [
  "2025-12",
  "2026-01",
  "2026-02",
  "2026-03",
  "2026-04",
  "2026-05",
  "2026-06",
  "2026-07",
  "2026-08",
  "2026-09",
  "2026-10",
  "2026-11"
]
/** Twelve month-ends, oldest first, the last one November as of today. */
const series = (amounts: ReadonlyArray<number>) =>
  amounts.map((amount, i) => ({ month: MONTHS[i], mrr: { amount, currency: "USD" } }))
const usd = (amount: number) => ({ amount, currency: "USD" })

describe("mrrForecast", () => {
  it("steady growth: every month +100, so the range is the line itself", () => {
    // Movements of the complete months after the first month-end above 0: 05…10, each +100 (n = 6, s = 0).
    // 3 months: 1 650 + 3 × 100 = 1 950; 6: 2 250; 12: 2 850.
    const f = mrrForecast(series([0, 0, 0, 0, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1650]), 1650, TODAY, "USD")
    expect(f).toEqual({
      level: 0.8,
      basis: { months: 6, from: "2026-05", to: "2026-10", averageChange: usd(100), standardDeviation: usd(0) },
      points: [
        { months: 3, month: "2027-02", mrr: usd(1950), low: usd(1950), high: usd(1950) },
        { months: 6, month: "2027-05", mrr: usd(2250), low: usd(2250), high: usd(2250) },
        { months: 12, month: "2027-11", mrr: usd(2850), low: usd(2850), high: usd(2850) }
      ]
    })
  })

  it("erratic months widen the range with the horizon", () => {
    // Movements 07 +300, 08 −100, 09 +300, 10 −100: n = 4, d = 100, deviations ±200,
    // s² = 4 × 200² ÷ 3, s = 400 ÷ √3 = 230.94 → 231. Spread = 1.2816 × s × √(h + h²/4):
    //   h = 3:  s × √5.25 = 400 × √1.75 = 529.150 → × 1.2816 = 678.159; 1 750 ∓ → 1 071.84 → 1 072, 2 428.16 → 2 428
    //   h = 6:  s × √15 = 400 × √5 = 894.427 → 1 146.298; 2 050 ∓ → 903.70 → 904, 3 196.30 → 3 196
    //   h = 12: s × √48 = 400 × 4 = 1 600 → 2 050.56; 2 650 ∓ → 599.44 → 599, 4 700.56 → 4 701
    const f = mrrForecast(series([0, 0, 0, 0, 0, 0, 1000, 1300, 1200, 1500, 1400, 1450]), 1450, TODAY, "USD")
    expect(f).toEqual({
      level: 0.8,
      basis: { months: 4, from: "2026-07", to: "2026-10", averageChange: usd(100), standardDeviation: usd(231) },
      points: [
        { months: 3, month: "2027-02", mrr: usd(1750), low: usd(1072), high: usd(2428) },
        { months: 6, month: "2027-05", mrr: usd(2050), low: usd(904), high: usd(3196) },
        { months: 12, month: "2027-11", mrr: usd(2650), low: usd(599), high: usd(4701) }
      ]
    })
  })

  it("only the last 6 complete months count", () => {
    // 01's +1 000 is the 10th movement back: left out; 05…10 are +100 each.
    const f = mrrForecast(
      series([100, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, 2000, 2000]),
      2000,
      TODAY,
      "USD"
    )
    expect(f?.basis).toEqual({
      months: 6,
      from: "2026-05",
      to: "2026-10",
      averageChange: usd(100),
      standardDeviation: usd(0)
    })
    expect(f?.points[0].mrr).toEqual(usd(2300))
  })

  it("a decline is floored at 0", () => {
    // 08 −300, 09 −300, 10 −300 (n = 3, s = 0): 100 − 900 < 0 → 0, and so is the range.
    const f = mrrForecast(series([0, 0, 0, 0, 0, 0, 0, 1000, 700, 400, 100, 100]), 100, TODAY, "USD")
    expect(f?.points.map((p) => [p.mrr.amount, p.low.amount, p.high.amount])).toEqual([[0, 0, 0], [0, 0, 0], [0, 0, 0]])
  })

  it("fewer than 3 movements after MRR first went above 0: no forecast; this month's movement never counts", () => {
    // 09 is the first month-end above 0: only 10's movement follows it (November is not complete).
    expect(mrrForecast(series([0, 0, 0, 0, 0, 0, 0, 0, 0, 500, 600, 5000]), 5000, TODAY, "USD")).toBeNull()
    expect(mrrForecast(series(Array.from({ length: 12 }, () => 0)), 0, TODAY, "USD")).toBeNull()
    // Three movements, two of them 0 after a launch: a forecast (a flat business is a forecast too).
    const flat = mrrForecast(series([0, 0, 0, 0, 0, 0, 0, 300, 600, 600, 600, 600]), 600, TODAY, "USD")
    expect(flat?.basis.months).toBe(3) // 08 +300, 09 0, 10 0
    expect(flat?.basis.averageChange).toEqual(usd(100))
  })
})

const revenueDay = (day: string, grossMinor: number, refundsMinor = 0): RevenueDay => ({
  day,
  grossMinor,
  refundsMinor,
  failedPayments: 0,
  failedMinor: 0,
  mrrMinor: 0,
  customers: 0,
  newMrrMinor: 0,
  expansionMrrMinor: 0,
  contractionMrrMinor: 0,
  churnedMrrMinor: 0,
  reactivationMrrMinor: 0,
  newCustomers: 0,
  churnedCustomers: 0,
  reactivatedCustomers: 0
})

describe("profitRunRate", () => {
  it("the last 90 days' net profit, per average month (× 30.4375 ÷ 90)", () => {
    // The window is 08-23…11-20 (90 days). 08-22 is the day before it: left out.
    const rows = [
      revenueDay("2026-08-22", 50_000),
      revenueDay("2026-08-23", 6_000),
      revenueDay("2026-10-01", 4_000, 1_000),
      revenueDay(TODAY, 0)
    ]
    // Net 6 000 + 4 000 − 1 000 = 9 000 → per month 9 000 × 30.4375 ÷ 90 = 3 043.75 → 3 044.
    expect(profitRunRate(rows, [], TODAY, "USD")).toEqual({
      window: { from: "2026-08-23", to: TODAY },
      revenueNet: usd(9000),
      expenses: usd(0),
      unconvertedExpenses: [],
      profit: usd(9000),
      perMonth: usd(3044)
    })
    // A one-off 1 800 expense in the window (and one before it, ignored): 7 200 → 2 435 a month.
    const expenses = [
      { amountMinor: 1800, currency: "USD", incurredOn: "2026-09-15", recurrence: "one_off" as const },
      { amountMinor: 99_999, currency: "USD", incurredOn: "2026-08-01", recurrence: "one_off" as const }
    ]
    const r = profitRunRate(rows, expenses, TODAY, "USD")
    expect([r.expenses, r.profit, r.perMonth]).toEqual([usd(1800), usd(7200), usd(2435)])
    // A loss runs at a negative rate.
    expect(profitRunRate([], [expenses[0]], TODAY, "USD").perMonth).toEqual(usd(-609)) // −1 800 × 30.4375 ÷ 90 = −608.75
  })
})
