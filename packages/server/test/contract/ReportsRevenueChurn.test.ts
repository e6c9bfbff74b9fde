/**
 * GET /projects/{id}/revenue and /churn over the real router, both stores, with payment facts written
 * through PaymentsRepo.write (which runs the rollup). Today is 2026-11-20 (harness clock). The golden
 * dataset and its hand arithmetic: fixtures/payments.ts. FX rates live in one table shared by every test
 * file of a run, so this file converts from currencies no other test uses (DKK for the fixture's EUR, HUF
 * for its GBP, which must stay without a rate).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createProject } from "../../src/accounts/Provisioning.ts"
import { FxRepo } from "../../src/fx/FxRepo.ts"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { PaymentsRepo } from "../../src/payments/PaymentsRepo.ts"
import type { PaymentsData } from "../../src/payments/Types.ts"
import { charge, EXPECTED_CHURN_30D, EXPECTED_REVENUE_30D, GOLDEN, TODAY, version } from "../fixtures/payments.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

// The file's app, with the FX rate this file converts by.
const AppWithRates = Layer.effectDiscard(
  h.run(Effect.flatMap(FxRepo, (fx) => fx.put([{ day: "2026-01-01", base: "DKK", quote: "USD", rate: 1.1 }])))
).pipe(Layer.provideMerge(TestApp.layer()))

const recurrency = (c: string) => (c === "EUR" ? "DKK" : c === "GBP" ? "HUF" : c)
const DATA: PaymentsData = {
  ...GOLDEN,
  subscriptionVersions: GOLDEN.subscriptionVersions.map((v) => ({ ...v, currency: recurrency(v.currency) })),
  charges: GOLDEN.charges.map((c) => ({ ...c, currency: recurrency(c.currency) }))
}

const usd = (amount: number) => ({ amount, currency: "USD" })
const write = (projectId: string, data: Partial<PaymentsData>) =>
  h.run(Effect.flatMap(PaymentsRepo, (p) => p.write(projectId, data)))
const get = (path: string, token: string) =>
  Effect.gen(function*() {
    const r = yield* h.raw("GET", path, { token })
    expect(r.status).toBe(200)
    return r.json.data
  })

layer(AppWithRates)("GET /projects/{id}/revenue and /churn", (it) => {
  it.effect("revenue: every figure of the golden dataset to the cent", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* write(id, DATA)
      // An expense through the API, for the period's profitability.
      const created = yield* h.api.expenses.createExpense({
        params: { id: id },
        payload: {
          amount: 1_100,
          category: "software",
          description: "Tools",
          incurredOn: "2026-11-10",
          recurrence: "one_off"
        }
      }, { token: secret })
      expect(created.status, created.text).toBe(201)
      const r = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      const e = EXPECTED_REVENUE_30D
      const m = e.movements
      expect(r).toEqual({
        projectId: id,
        period: "30d",
        window: e.window,
        timezone: "UTC",
        currency: "USD",
        asOf: TODAY,
        dataThrough: "2026-11-18",
        mrr: usd(e.mrr),
        arr: usd(e.arr),
        customers: e.customers,
        arpu: usd(e.arpu),
        monthlyChurnRate: e.monthlyChurnRate,
        ltv: usd(e.ltv),
        movements: {
          start: usd(m.start),
          new: usd(m.new),
          expansion: usd(m.expansion),
          contraction: usd(m.contraction),
          churned: usd(m.churned),
          reactivation: usd(m.reactivation),
          netNew: usd(m.netNew),
          end: usd(m.end),
          newCustomers: 2,
          churnedCustomers: 2,
          reactivatedCustomers: 1
        },
        nrr: e.nrr,
        grr: e.grr,
        quickRatio: e.quickRatio,
        last30Days: { window: { from: "2026-10-22", to: TODAY }, gross: usd(6100), refunds: usd(1000), net: usd(5100) },
        previous30Days: {
          window: { from: "2026-09-22", to: "2026-10-21" },
          gross: usd(123000),
          refunds: usd(0),
          net: usd(123000)
        },
        change: { net: e.changeNet },
        failedPayments: {
          count: 1,
          amount: usd(4000),
          recent: e.failedRecent.map(({ amount, currency, ...f }) => ({ ...f, amount: { amount, currency } }))
        },
        mrrSeries: expect.any(Array),
        unconverted: [{
          currency: "HUF",
          mrr: { amount: 2000, currency: "HUF" },
          gross: { amount: 2000, currency: "HUF" },
          refunds: { amount: 0, currency: "HUF" }
        }],
        // net 5 100 − the 1 100 expense = 4 000; margin 4 000 / 5 100 = 0.78431…
        profitability: {
          window: { from: "2026-10-22", to: TODAY },
          revenueNet: usd(5100),
          expenses: usd(1100),
          unconvertedExpenses: [],
          profit: usd(4000),
          margin: 0.7843
        },
        // MRR went above 0 at the end of 10 (09 ended at 0), and 11 is not complete: no movement to fit yet.
        forecast: null,
        // 08-23…11-20: net 5 100 (last 30 days) + 123 000 (the 30 before; nothing earlier) − the 1 100 expense
        // = 127 000; per month 127 000 × 30.4375 ÷ 90 = 42 950.69 → 42 951.
        profitRunRate: {
          window: { from: "2026-08-23", to: TODAY },
          revenueNet: usd(128100),
          expenses: usd(1100),
          unconvertedExpenses: [],
          profit: usd(127000),
          perMonth: usd(42951)
        }
      })
      expect(r.mrrSeries.slice(-3)).toEqual([
        { month: "2026-09", mrr: usd(0) },
        { month: "2026-10", mrr: usd(23100) },
        { month: "2026-11", mrr: usd(26900) }
      ])
      expect(r.mrrSeries).toHaveLength(12)
    }))

  it.effect("churn: rates, amounts, the churned customers and the previous window", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* write(id, DATA)
      const c = yield* get(`/api/v1/projects/${id}/churn`, secret)
      const e = EXPECTED_CHURN_30D
      expect(c).toMatchObject({
        projectId: id,
        period: "30d",
        window: { from: "2026-10-22", to: TODAY },
        customersAtStart: e.customersAtStart,
        churnedCustomers: e.churnedCustomers,
        customerChurnRate: e.customerChurnRate,
        mrrAtStart: usd(e.mrrAtStart),
        churnedMrr: usd(e.churnedMrr),
        contractionMrr: usd(e.contractionMrr),
        expansionMrr: usd(e.expansionMrr),
        reactivationMrr: usd(e.reactivationMrr),
        grossMrrChurnRate: e.grossMrrChurnRate,
        netMrrChurnRate: e.netMrrChurnRate,
        churned: e.churned.map((x) => ({ ...x, mrrLost: usd(x.mrrLost) })),
        previous: { window: { from: "2026-09-22", to: "2026-10-21" }, ...e.previous }
      })
    }))

  it.effect("takes a period: 7d and 12m", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* write(id, DATA)
      const r = yield* get(`/api/v1/projects/${id}/revenue?period=7d`, secret)
      // End of 11-13: 26 900 − 3 000 (D back on 11-15) + 4 000 (E gone on 11-18) = 27 900.
      expect(r.window).toEqual({ from: "2026-11-14", to: TODAY })
      expect(r.movements).toMatchObject({
        start: usd(27900),
        reactivation: usd(3000),
        churned: usd(4000),
        netNew: usd(-1000),
        end: usd(26900)
      })
      const c = yield* get(`/api/v1/projects/${id}/churn?period=12m`, secret)
      // 12m = 2025-12-01..today: nobody paid at its start, so every rate is null; both churn events are in it.
      expect(c).toMatchObject({
        window: { from: "2025-12-01", to: TODAY },
        customersAtStart: 0,
        customerChurnRate: null,
        grossMrrChurnRate: null
      })
      expect(c.churned.map((x: any) => x.customerId)).toEqual(["cus_D", "cus_E"])
      expectError(
        yield* h.raw("GET", `/api/v1/projects/${id}/revenue?period=2w`, { token: secret }),
        400,
        "invalid_request"
      )
    }))

  it.effect("writes are idempotent upserts, and a later write changes the figures at once", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* write(id, DATA)
      yield* write(id, DATA)
      const before = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      expect(before.mrr).toEqual(usd(26900))
      expect(before.last30Days.gross).toEqual(usd(6100))
      // A new charge and an upgrade of F (new version from 11-19: quantity 3 → 3 000 × 0.9 × 52 / 12 = 11 700).
      yield* write(id, {
        charges: [charge("ch_new", "cus_A", "2026-11-19T12:00:00Z", 2500)],
        subscriptionVersions: [
          version("sub_F", "cus_F", "2026-11-03T00:00:00Z", "2026-11-19T00:00:00Z", {
            quantity: 2,
            interval: "week",
            discountPercentOff: 10
          }),
          version("sub_F", "cus_F", "2026-11-19T00:00:00Z", null, {
            quantity: 3,
            interval: "week",
            discountPercentOff: 10
          })
        ]
      })
      const after = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      expect(after.last30Days.gross).toEqual(usd(8600)) // 6 100 + 2 500
      expect(after.mrr).toEqual(usd(30800)) // 26 900 − 7 800 + 11 700
      expect(after.movements.expansion).toEqual(usd(6900)) // 3 000 (A) + 3 900 (F)
      expect(after.movements.start.amount + after.movements.netNew.amount).toBe(after.movements.end.amount)
    }))

  it.effect("counts days in the project's time zone (Europe/Berlin)", () =>
    Effect.gen(function*() {
      const { account, secret } = yield* h.newAccount({ projects: 0 })
      const p = yield* h.run(
        createProject({ accountId: account.id, name: "Berlin", domain: "berlin.example", timezone: "Europe/Berlin" })
      )
      yield* write(p.id, {
        subscriptionVersions: [
          // 23:30 UTC on 11-14 is 00:30 on the 15th in Berlin; the version ends 00:30 local on the 18th.
          version("s1", "c1", "2026-11-14T23:30:00Z", "2026-11-17T23:30:00Z", {
            unitAmountMinor: 5000,
            status: "active"
          }),
          version("s1", "c1", "2026-11-17T23:30:00Z", null, {
            unitAmountMinor: 5000,
            status: "canceled",
            cancelReason: "switched"
          })
        ]
      })
      const c = yield* get(`/api/v1/projects/${p.id}/churn?period=7d`, secret)
      // c1 was never written as a customer: no name, no email.
      expect(c.churned).toEqual([
        { customerId: "c1", name: null, email: null, date: "2026-11-18", mrrLost: usd(5000), reason: "switched" }
      ])
      const r = yield* get(`/api/v1/projects/${p.id}/revenue?period=7d`, secret)
      expect(r.timezone).toBe("Europe/Berlin")
      expect(r.movements).toMatchObject({ start: usd(0), new: usd(5000), churned: usd(5000), end: usd(0) }) // window 11-14..11-20
    }))

  it.effect("churned customers and failed payments carry the name and email stored last", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* write(id, DATA)
      const churned = (yield* get(`/api/v1/projects/${id}/churn`, secret)).churned
      expect(churned.map((x: any) => [x.customerId, x.name, x.email])).toEqual([
        ["cus_D", "Dora Ruiz", "dora@ruiz.example"],
        ["cus_E", null, "ap@e-corp.example"]
      ])
      // E gives a name and changes its address; D clears its email: both show at once (a write bumps the data).
      const at = "2026-09-30T00:00:00Z"
      yield* write(id, {
        customers: [
          { id: "cus_E", createdAt: at, name: "Elif Demir", email: "elif@e-corp.example" },
          { id: "cus_D", createdAt: at, name: "Dora Ruiz", email: null }
        ]
      })
      const after = yield* get(`/api/v1/projects/${id}/churn`, secret)
      expect(after.churned.map((x: any) => [x.customerId, x.name, x.email])).toEqual([
        ["cus_D", "Dora Ruiz", null],
        ["cus_E", "Elif Demir", "elif@e-corp.example"]
      ])
      const r = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      expect(r.failedPayments.recent).toEqual([{
        chargeId: "ch_E1",
        customerId: "cus_E",
        name: "Elif Demir",
        email: "elif@e-corp.example",
        amount: usd(4000),
        day: "2026-11-18"
      }])
    }))

  it.effect("failed payments: the newest 20 of the last 30 local days, newest first, in their own currency", () =>
    Effect.gen(function*() {
      const { account, secret } = yield* h.newAccount({ projects: 0 })
      const p = yield* h.run(
        createProject({ accountId: account.id, name: "Tokyo", domain: "tokyo.example", timezone: "Asia/Tokyo" })
      )
      // 23 failed attempts of cus_T at 20:00 UTC on 10-20 … 11-11 (05:00 the next day in Tokyo: 10-21 … 11-12),
      // one at 16:00 UTC on 10-21 (01:00 on 10-22 in Tokyo: the window's first local day), a guest's in EUR on
      // 11-19, and a succeeded charge (not listed).
      const failed = (cid: string, customerId: string, at: string, amount: number, currency = "USD") =>
        charge(cid, customerId, at, amount, currency, "failed")
      const series = Array.from({ length: 23 }, (_, i) => {
        const day = new Date(Date.parse("2026-10-20T20:00:00Z") + i * 86_400_000).toISOString()
        return failed(`ch_t${String(i).padStart(2, "0")}`, "cus_T", day, 100 + i)
      })
      yield* write(p.id, {
        customers: [{ id: "cus_T", createdAt: "2026-01-01T00:00:00Z", name: "Taro Sato", email: "taro@sato.example" }],
        charges: [
          ...series,
          failed("ch_edge", "cus_T", "2026-10-21T16:00:00Z", 999),
          failed("ch_guest", "", "2026-11-19T09:00:00Z", 2500, "EUR"),
          // 00:30 on 11-21 in Tokyo: after the window's last local day.
          failed("ch_late", "cus_T", "2026-11-20T15:30:00Z", 50),
          charge("ch_ok", "cus_T", "2026-11-19T10:00:00Z", 700)
        ]
      })
      // The repository's read, unbounded: exactly the window's local days, newest first.
      const all = yield* h.run(
        Effect.flatMap(
          PaymentsRepo,
          (repo) => repo.failedCharges(p.id, { fromDay: "2026-10-22", toDay: TODAY, timezone: "Asia/Tokyo" }, 100)
        )
      )
      expect(all.map((f) => f.chargeId)).toEqual([
        "ch_guest",
        ...Array.from({ length: 22 }, (_, i) => `ch_t${String(22 - i).padStart(2, "0")}`),
        "ch_edge"
      ])
      const r = yield* get(`/api/v1/projects/${p.id}/revenue`, secret)
      // Last 30 local days: 10-22 … 11-20 (Tokyo). In it: ch_t01 … ch_t22 (10-22 … 11-12), ch_edge, the guest's.
      expect(r.failedPayments.count).toBe(24)
      const recent = r.failedPayments.recent
      expect(recent).toHaveLength(20)
      expect(recent[0]).toEqual({
        chargeId: "ch_guest",
        customerId: null,
        name: null,
        email: null,
        amount: { amount: 2500, currency: "EUR" },
        day: "2026-11-19"
      })
      expect(recent[1]).toEqual({
        chargeId: "ch_t22",
        customerId: "cus_T",
        name: "Taro Sato",
        email: "taro@sato.example",
        amount: usd(122),
        day: "2026-11-12"
      })
      // Newest first: ch_t22 … ch_t04; ch_t03 … ch_t01 and ch_edge are older than the 20th.
      expect(recent.slice(1).map((f: any) => f.chargeId)).toEqual(
        Array.from({ length: 19 }, (_, i) => `ch_t${String(22 - i).padStart(2, "0")}`)
      )
      expect(recent.map((f: any) => f.day)).toEqual(recent.map((f: any) => f.day).sort().reverse())
    }))

  it.effect("carries MRR forward from a row older than the loaded range", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      // One row only, on 2026-01-10; the 7d churn report loads ~15 days but must still see 4 000 at its start.
      yield* write(id, {
        subscriptionVersions: [version("s", "c", "2026-01-10T00:00:00Z", null, { unitAmountMinor: 4000 })]
      })
      const c = yield* get(`/api/v1/projects/${id}/churn?period=7d`, secret)
      expect(c).toMatchObject({
        customersAtStart: 1,
        mrrAtStart: usd(4000),
        customerChurnRate: 0,
        grossMrrChurnRate: 0
      })
      const r = yield* get(`/api/v1/projects/${id}/revenue?period=today`, secret)
      expect(r).toMatchObject({ mrr: usd(4000), customers: 1, dataThrough: "2026-01-10", nrr: 1, grr: 1 })
    }))

  it.effect("MetricsRepo.writeDays stores a RevenueDay as is (the health tests' direct path)", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      const row = {
        day: "2026-11-19",
        grossMinor: 700,
        refundsMinor: 100,
        failedPayments: 2,
        failedMinor: 300,
        mrrMinor: 9000,
        customers: 3,
        newMrrMinor: 9000,
        expansionMrrMinor: 0,
        contractionMrrMinor: 0,
        churnedMrrMinor: 0,
        reactivationMrrMinor: 0,
        newCustomers: 3,
        churnedCustomers: 0,
        reactivatedCustomers: 0
      }
      yield* h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(id, { revenue: [row] })))
      yield* h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(id, { revenue: [{ ...row, grossMinor: 800 }] }))) // upsert
      const loaded = yield* h.run(Effect.flatMap(MetricsRepo, (m) => m.loadProject(id, null)))
      expect(loaded?.series.revenue).toEqual([{ ...row, grossMinor: 800 }])
      const r = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      expect(r).toMatchObject({
        mrr: usd(9000),
        customers: 3,
        last30Days: { gross: usd(800), refunds: usd(100), net: usd(700) }
      })
    }))

  it.effect("with no data: zeros, and null for every ratio", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      const r = yield* get(`/api/v1/projects/${id}/revenue`, secret)
      expect(r).toMatchObject({
        asOf: TODAY,
        dataThrough: null,
        mrr: usd(0),
        arr: usd(0),
        customers: 0,
        arpu: null,
        ltv: null,
        monthlyChurnRate: null,
        nrr: null,
        grr: null,
        quickRatio: null,
        change: { net: null },
        unconverted: []
      })
      const c = yield* get(`/api/v1/projects/${id}/churn`, secret)
      expect(c).toMatchObject({
        customersAtStart: 0,
        customerChurnRate: null,
        grossMrrChurnRate: null,
        netMrrChurnRate: null,
        churned: []
      })
    }))

  it.effect("revenue and churn need revenue:read", () =>
    Effect.gen(function*() {
      const { account, projects } = yield* h.newAccount()
      const t = yield* h.mint(account.id, { permissions: ["projects:read", "analytics:read"] })
      for (const report of ["revenue", "churn"]) {
        const r = yield* h.raw("GET", `/api/v1/projects/${projects[0].id}/${report}`, { token: t.secret })
        expectError(r, 403, "missing_permission")
        expect(r.json.error.permission).toBe("revenue:read")
      }
    }))
})
