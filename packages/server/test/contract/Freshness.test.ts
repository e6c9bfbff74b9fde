/**
 * Reports always reflect the latest stored data: no read path may serve figures older than a write, whichever
 * repository the write went through (traffic, payments, search, expenses, FX rates). Health's windows end
 * yesterday (complete days), so the rows written here are yesterday's and before.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { FxRepo } from "../../src/fx/FxRepo.ts"
import { addDays } from "../../src/metrics/Dates.ts"
import { PaymentsRepo } from "../../src/payments/PaymentsRepo.ts"
import type { PaymentsData } from "../../src/payments/Types.ts"
import { SearchRepo } from "../../src/search/SearchRepo.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("freshness", (it) => {
  const TODAY = "2026-11-20" // the harness clock, UTC project
  const YESTERDAY = addDays(TODAY, -1)
  const trafficDays = (n: number, visitors: number, last = YESTERDAY) =>
    Array.from({ length: n }, (_, i) => ({
      day: addDays(last, -i),
      visitors,
      pageviews: visitors * 2,
      sessions: visitors,
      bounces: 0,
      durationSeconds: visitors * 60
    }))
  /** One customer on a monthly plan of `amountMinor` in `currency` since 90 days ago. */
  const subscription = (customerId: string, amountMinor: number, currency = "USD"): Partial<PaymentsData> => ({
    customers: [{ id: customerId, createdAt: `${addDays(TODAY, -90)}T10:00:00.000Z` }],
    subscriptionVersions: [{
      subscriptionId: `sub_${customerId}`,
      customerId,
      validFrom: `${addDays(TODAY, -90)}T10:00:00.000Z`,
      validTo: null,
      status: "active",
      currency,
      unitAmountMinor: amountMinor,
      quantity: 1,
      interval: "month",
      intervalCount: 1,
      discountPercentOff: null,
      discountAmountOffMinor: null,
      cancelReason: null
    }],
    charges: [{
      id: `ch_${customerId}`,
      customerId,
      at: `${addDays(TODAY, -5)}T10:00:00.000Z`,
      amountMinor,
      currency,
      status: "succeeded"
    }]
  })

  it.effect("every report changes as soon as data is written through any repository, added or deleted", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      const get = (path: string) =>
        Effect.gen(function*() {
          const r = yield* h.raw("GET", `/api/v1/projects/${id}/${path}`, { token: secret })
          expect(r.status, r.text).toBe(200)
          return r.json.data
        })
      const figures = (dimension: string) =>
        Effect.gen(function*() {
          return (yield* get("health")).dimensions.find((d: any) => d.name === dimension).figures
        })
      const snapshot = () =>
        Effect.gen(function*() {
          return (yield* h.api.projects.listProjects({ query: {} }, { token: secret })).json.data.projects.find((
            p: any
          ) => p.id === id).health
        })

      expect((yield* get("health")).status).toBe("no_data")
      expect((yield* snapshot()).status).toBe("no_data")

      // Traffic.
      yield* h.run(Effect.flatMap(TrafficRepo, (t) => t.write(id, { days: trafficDays(60, 100) })))
      expect((yield* snapshot()).status).not.toBe("no_data")
      expect((yield* figures("traffic")).visitors).toBe(3000)
      expect((yield* get("analytics?period=7d")).totals.visitors).toBe(600) // 6 complete days + today (no row)
      const listed = yield* snapshot()
      yield* h.run(Effect.flatMap(TrafficRepo, (t) => t.write(id, { days: trafficDays(1, 500) })))
      expect((yield* figures("traffic")).visitors).toBe(3400)
      expect((yield* get("analytics?period=7d")).totals.visitors).toBe(1000)
      expect((yield* snapshot()).score).not.toBe(listed.score)

      // Payments (the rollup runs on write).
      yield* h.run(Effect.flatMap(PaymentsRepo, (p) => p.write(id, subscription("cus_a", 10_000))))
      expect((yield* get("revenue")).mrr.amount).toBe(10_000)
      expect((yield* figures("revenue")).mrr).toBe(10_000)
      yield* h.run(Effect.flatMap(PaymentsRepo, (p) => p.write(id, subscription("cus_b", 5_000))))
      expect((yield* get("revenue")).mrr.amount).toBe(15_000)
      expect((yield* figures("revenue")).mrr).toBe(15_000)

      // FX: a SEK customer counts once a rate exists and the rollup ran again (SEK: a currency no other test
      // rates — the suite shares one database, and rates are global). A rerun on a kept database (a reused
      // DATABASE_URL) finds the rate an earlier run put: it is taken away first.
      if (h.store === "postgres") {
        yield* h.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM fx_rates WHERE base = 'SEK'`))
      }
      yield* h.run(Effect.flatMap(PaymentsRepo, (p) => p.write(id, subscription("cus_sek", 10_000, "SEK"))))
      expect((yield* get("revenue")).mrr.amount).toBe(15_000)
      yield* h.run(Effect.gen(function*() {
        yield* (yield* FxRepo).put([{ day: addDays(TODAY, -365), base: "SEK", quote: "USD", rate: 0.11 }])
        const payments = yield* PaymentsRepo
        for (const p of yield* payments.projectsWithPaymentsIn(["SEK", "USD"])) yield* payments.rebuild(p)
      }))
      expect((yield* get("revenue")).mrr.amount).toBe(16_100) // 10 000 SEK öre × 0.11 = 1 100 US cents

      // Search.
      yield* h.run(
        Effect.flatMap(
          SearchRepo,
          (s) =>
            s.write(id, {
              totals: [{ day: addDays(TODAY, -3), clicks: 40, impressions: 1000, positionWeighted: 8000 }]
            })
        )
      )
      expect((yield* get("seo")).totals.clicks).toBe(40)
      yield* h.run(
        Effect.flatMap(
          SearchRepo,
          (s) =>
            s.write(id, {
              totals: [{ day: addDays(TODAY, -3), clicks: 55, impressions: 1000, positionWeighted: 8000 }]
            })
        )
      )
      expect((yield* get("seo")).totals.clicks).toBe(55)

      // Expenses through the API.
      const before = yield* figures("profitability")
      const created = yield* h.api.expenses.createExpense({
        params: { id: id },
        payload: {
          amount: 15_000,
          category: "advertising",
          description: "Ads",
          incurredOn: YESTERDAY,
          recurrence: "one_off"
        }
      }, { token: secret })
      expect(created.status).toBe(201)
      expect((yield* figures("profitability")).expenses).toBe(before.expenses + 15_000)
      const del = yield* h.api.expenses.deleteExpense({ params: { id: id, expenseId: created.json.data.expense.id } }, {
        token: secret
      })
      expect(del.status).toBe(200)
      expect(yield* figures("profitability")).toEqual(before)
    }))
})
