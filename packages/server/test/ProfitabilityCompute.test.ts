/** Profitability and expense attribution on the hand-worked dataset of fixtures/profitFixtures.ts. */
import { describe, expect, it } from "@effect/vitest"
import { attributeExpenses, expenseShares, expensesIn, profitability } from "../src/metrics/Profitability.ts"
import {
  PROFIT_EXPECTED,
  PROFIT_EXPECTED_EXPENSES,
  PROFIT_EXPENSES,
  PROFIT_RATES,
  PROFIT_REVENUE,
  PROFIT_WINDOW
} from "./fixtures/profitFixtures.ts"

describe("expense attribution", () => {
  it("spreads a monthly expense over a 31-day then a 28-day covered month", () => {
    const shares = expenseShares(PROFIT_EXPENSES[0], PROFIT_WINDOW)
    expect(shares).toEqual([
      { day: "2026-01-10", amountMinor: 3100, fraction: 16 / 31 },
      { day: "2026-02-10", amountMinor: 3100, fraction: 11 / 28 }
    ])
    // 1600 + 1217.857… = 2817.857… → 2818
    expect(expensesIn([PROFIT_EXPENSES[0]], PROFIT_WINDOW, "USD")).toBe(2818)
  })

  it("spreads a yearly expense over its 365 covered days", () => {
    expect(expensesIn([PROFIT_EXPENSES[1]], PROFIT_WINDOW, "USD")).toBe(2700) // 36500 × 27/365
  })

  it("counts a one-off on the window's first and last day, not the day before", () => {
    expect(expensesIn(PROFIT_EXPENSES.slice(2, 5), PROFIT_WINDOW, "USD")).toBe(600) // 100 + 500
  })

  it("counts months from the original day, clamped: Jan 31 → Feb 28 → Mar 31", () => {
    // Covered periods [01-31, 02-28) 28 days, [02-28, 03-31) 31 days, [03-31, 04-30) 30 days.
    // March: 03-01 … 03-30 is 30 of 31 days → 6200 × 30/31 = 6000; 03-31 is 1 of 30 → 206.67; total 6206.67 → 6207
    const e = { amountMinor: 6200, currency: "USD", incurredOn: "2026-01-31", recurrence: "monthly" as const }
    expect(expenseShares(e, { from: "2026-03-01", to: "2026-03-31" })).toEqual([
      { day: "2026-02-28", amountMinor: 6200, fraction: 30 / 31 },
      { day: "2026-03-31", amountMinor: 6200, fraction: 1 / 30 }
    ])
    expect(expensesIn([e], { from: "2026-03-01", to: "2026-03-31" }, "USD")).toBe(6207)
    // Years later, the jump to the window's occurrence lands on the same periods: 2028-03 is k = 25 and 26.
    expect(expenseShares(e, { from: "2028-03-01", to: "2028-03-31" }).map((s) => s.day)).toEqual([
      "2028-02-29",
      "2028-03-31"
    ])
  })

  it("converts another currency with a rate and reports it apart without one", () => {
    expect(attributeExpenses(PROFIT_EXPENSES.slice(6), PROFIT_WINDOW, "USD", PROFIT_RATES)).toEqual({
      convertedMinor: 1100,
      unconverted: [{ amount: 2000, currency: "GBP" }]
    })
    // Without the EUR rate, the euros are apart too (currencies in code order).
    expect(attributeExpenses(PROFIT_EXPENSES.slice(6), PROFIT_WINDOW, "USD", [])).toEqual({
      convertedMinor: 0,
      unconverted: [{ amount: 1000, currency: "EUR" }, { amount: 2000, currency: "GBP" }]
    })
  })
})

describe("profitability", () => {
  it("net revenue − converted expenses, margin on net revenue", () => {
    expect(expensesIn(PROFIT_EXPENSES, PROFIT_WINDOW, "USD", PROFIT_RATES)).toBe(PROFIT_EXPECTED_EXPENSES)
    expect(profitability(PROFIT_REVENUE, PROFIT_EXPENSES, PROFIT_WINDOW, "USD", PROFIT_RATES)).toEqual({
      window: PROFIT_WINDOW,
      ...PROFIT_EXPECTED
    })
  })

  it("zero revenue → margin null, profit negative", () => {
    const p = profitability([], PROFIT_EXPENSES.slice(2, 4), PROFIT_WINDOW, "USD")
    expect(p.revenueNet).toEqual({ amount: 0, currency: "USD" })
    expect(p.profit).toEqual({ amount: -600, currency: "USD" })
    expect(p.margin).toBeNull()
  })
})
