/**
 * The revenue report's forecasts over the real router, both stores (metrics/Forecast.ts; the formulas' golden
 * tests are ForecastCompute.test.ts): month-end MRR written as revenue rows gives the hand-worked forecast of the
 * "erratic months" case, in JSON, in the stored answer and as the `forecast` CSV table. Today is 2026-11-20.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import type { RevenueDay } from "../../src/store/Series.ts"
import { h, TestApp } from "../support/TestApp.ts"

const row = (day: string, mrrMinor: number, grossMinor = 0): RevenueDay => ({
  day,
  grossMinor,
  refundsMinor: 0,
  failedPayments: 0,
  failedMinor: 0,
  mrrMinor,
  customers: 1,
  newMrrMinor: 0,
  expansionMrrMinor: 0,
  contractionMrrMinor: 0,
  churnedMrrMinor: 0,
  reactivationMrrMinor: 0,
  newCustomers: 0,
  churnedCustomers: 0,
  reactivatedCustomers: 0
})
const usd = (amount: number) => ({ amount, currency: "USD" })

layer(TestApp.layer())("the revenue report's forecasts", (it) => {
  it.effect("MRR 3, 6, 12 months ahead with its range, and the profit run-rate, in JSON and CSV", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      // Month-ends 06 1 000, 07 1 300, 08 1 200, 09 1 500, 10 1 400; today (as of 11-19) 1 450: movements
      // +300, −100, +300, −100 — ForecastCompute.test.ts's erratic case. Cash: 9 000 on 09-01 (in the 90 days).
      yield* h.run(Effect.flatMap(MetricsRepo, (m) =>
        m.writeDays(id, {
          revenue: [
            row("2026-06-30", 1000),
            row("2026-07-31", 1300),
            row("2026-08-31", 1200),
            row("2026-09-01", 1200, 9000),
            row("2026-09-30", 1500),
            row("2026-10-31", 1400),
            row("2026-11-19", 1450)
          ]
        })))
      const expected = {
        level: 0.8,
        basis: { months: 4, from: "2026-07", to: "2026-10", averageChange: usd(100), standardDeviation: usd(231) },
        points: [
          { months: 3, month: "2027-02", mrr: usd(1750), low: usd(1072), high: usd(2428) },
          { months: 6, month: "2027-05", mrr: usd(2050), low: usd(904), high: usd(3196) },
          { months: 12, month: "2027-11", mrr: usd(2650), low: usd(599), high: usd(4701) }
        ]
      }
      const first = yield* h.raw("GET", `/api/v1/projects/${id}/revenue`, { token: secret })
      expect(first.status, first.text).toBe(200)
      expect(first.json.data.forecast).toEqual(expected)
      // 9 000 × 30.4375 ÷ 90 = 3 043.75 → 3 044.
      expect(first.json.data.profitRunRate).toEqual({
        window: { from: "2026-08-23", to: "2026-11-20" },
        revenueNet: usd(9000),
        expenses: usd(0),
        unconvertedExpenses: [],
        profit: usd(9000),
        perMonth: usd(3044)
      })
      // The stored answer carries them too.
      const again = yield* h.raw("GET", `/api/v1/projects/${id}/revenue`, { token: secret })
      expect(again.text).toBe(first.text)
      const csv = yield* h.raw("GET", `/api/v1/projects/${id}/revenue?format=csv&table=forecast`, { token: secret })
      expect(csv.text).toBe(
        "months_ahead,month,mrr,low,high,level,currency\r\n" +
          "3,2027-02,1750,1072,2428,0.8,USD\r\n" +
          "6,2027-05,2050,904,3196,0.8,USD\r\n" +
          "12,2027-11,2650,599,4701,0.8,USD\r\n"
      )
    }))
})
