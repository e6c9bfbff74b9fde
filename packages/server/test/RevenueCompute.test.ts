/**
 * Golden tests of the payments rollup (payments/Rollup.ts) and the revenue and churn reports
 * (metrics/Revenue.ts, metrics/Churn.ts). Every expected figure is worked out by hand in the comments here
 * or in fixtures/payments.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Period } from "@sitehealth/domain/Common"
import type { ProjectId } from "@sitehealth/domain/Common"
import { churn, revenue } from "../src/metrics/Compute.ts"
import { eachDay } from "../src/metrics/Dates.ts"
import type { CohortRow } from "../src/payments/PaymentsRepo.ts"
import { monthlyAmount, rollup, type RollupOutput } from "../src/payments/Rollup.ts"
import {
  charge,
  EXPECTED_CHURN_30D,
  EXPECTED_REVENUE_30D,
  GOLDEN,
  RATES,
  refund,
  TODAY,
  version
} from "./fixtures/payments.ts"

const UTC_USD = { timezone: "UTC", currency: "USD", rates: RATES }
const golden = rollup(GOLDEN, UTC_USD)

/** The cohort query of PaymentsRepo, over the rollup's spans (the repo does the same in SQL). */
const cohortOf = (out: RollupOutput, startDay: string, endDay: string): Array<CohortRow> => {
  const at = (customerId: string, day: string) =>
    out.customerMrr.find((s) => s.customerId === customerId && s.fromDay <= day && (s.toDay === null || s.toDay > day))
  return out.customerMrr
    .filter((s) => s.fromDay <= startDay && (s.toDay === null || s.toDay > startDay))
    .map((s) => ({
      customerId: s.customerId,
      startMinor: s.mrrMinor,
      endMinor: at(s.customerId, endDay)?.mrrMinor ?? 0
    }))
}

const day = (out: RollupOutput, d: string) => out.revenueDays.find((r) => r.day === d)
/** MRR of one customer at the end of a day, from its spans. */
const customerMrr = (out: RollupOutput, customerId: string, d: string) =>
  out.customerMrr.find((s) => s.customerId === customerId && s.fromDay <= d && (s.toDay === null || s.toDay > d))
    ?.mrrMinor ?? 0

describe("monthly normalisation", () => {
  const mrrOf = (fields: Parameters<typeof version>[4]) => {
    const f = monthlyAmount(version("s", "c", "2026-01-01T00:00:00Z", null, fields))
    return Number(f.num) / Number(f.den)
  }
  it("annual plans count 1/12", () => expect(mrrOf({ unitAmountMinor: 120000, interval: "year" })).toBe(10000))
  it("weekly plans count 52/12", () => expect(mrrOf({ unitAmountMinor: 1200, interval: "week" })).toBe(5200)) // 1 200 × 52 / 12
  it("daily plans count 365/12", () => expect(mrrOf({ unitAmountMinor: 120, interval: "day" })).toBe(3650)) // 120 × 365 / 12
  it("intervalCount divides", () => expect(mrrOf({ unitAmountMinor: 9000, intervalCount: 3 })).toBe(3000)) // quarterly
  it("quantity multiplies", () => expect(mrrOf({ unitAmountMinor: 2500, quantity: 3 })).toBe(7500))
  it("percent off", () => expect(mrrOf({ unitAmountMinor: 5000, discountPercentOff: 20 })).toBe(4000))
  it("amount off per interval is normalised like the price", () =>
    // (60 000 − 1 500) / 12 = 4 875
    expect(mrrOf({ unitAmountMinor: 60000, interval: "year", discountAmountOffMinor: 1500 })).toBe(4875))
  it("an amount off above the price floors at 0", () =>
    expect(mrrOf({ unitAmountMinor: 1000, discountAmountOffMinor: 5000 })).toBe(0))
  it("trialing, unpaid, canceled and incomplete count 0; past_due counts", () => {
    for (const status of ["trialing", "unpaid", "canceled", "incomplete"] as const) expect(mrrOf({ status })).toBe(0)
    expect(mrrOf({ status: "past_due", unitAmountMinor: 4000 })).toBe(4000)
  })
  it("rounds once per customer, after summing exactly", () => {
    // Three weekly 1 000 plans: each 4 333.33…; summed exactly 13 000 → 13 000 (rounding each first would give 12 999).
    const out = rollup({
      subscriptionVersions: [1, 2, 3].map((i) =>
        version(`s${i}`, "cus_1", "2026-11-01T00:00:00Z", null, { unitAmountMinor: 1000, interval: "week" })
      )
    }, UTC_USD)
    expect(day(out, "2026-11-01")?.mrrMinor).toBe(13000)
    // One weekly 1 000 alone: 4 333.33 → 4 333.
    const one = rollup({
      subscriptionVersions: [version("s", "c", "2026-11-01T00:00:00Z", null, { interval: "week" })]
    }, UTC_USD)
    expect(day(one, "2026-11-01")?.mrrMinor).toBe(4333)
  })
})

describe("the rollup of the golden dataset", () => {
  it("puts each movement on its day with its amount", () => {
    expect(day(golden, "2026-10-01")).toMatchObject({
      newMrrMinor: 8000,
      newCustomers: 2,
      mrrMinor: 8000,
      customers: 2
    }) // A 5 000 + D 3 000
    expect(day(golden, "2026-10-05")).toMatchObject({ newMrrMinor: 10000, grossMinor: 120000 }) // B annual ÷ 12
    expect(day(golden, "2026-10-10")).toMatchObject({ newMrrMinor: 1100 }) // G 1 000 EUR × 1.1
    expect(day(golden, "2026-10-20")).toMatchObject({ newMrrMinor: 4000, mrrMinor: 23100, customers: 5 }) // E past_due counts
    expect(day(golden, "2026-11-01")).toMatchObject({ newMrrMinor: 0, grossMinor: 5000 }) // C trialing: nothing
    expect(day(golden, "2026-11-02")).toMatchObject({ newMrrMinor: 0, grossMinor: 0 }) // H GBP: unconverted
    expect(day(golden, "2026-11-03")).toMatchObject({ newMrrMinor: 7800, refundsMinor: 1000 }) // F weekly ×2 −10 %; D's refund
    expect(day(golden, "2026-11-05")).toMatchObject({ churnedMrrMinor: 3000, churnedCustomers: 1, customers: 5 }) // D canceled
    expect(day(golden, "2026-11-08")).toMatchObject({ newMrrMinor: 2000, newCustomers: 1 }) // C converts
    expect(day(golden, "2026-11-10")).toMatchObject({ expansionMrrMinor: 3000, grossMinor: 1100 }) // A upgrade; G's EUR charge
    expect(day(golden, "2026-11-12")).toMatchObject({ contractionMrrMinor: 5000 }) // B 10 000 → 5 000
    expect(day(golden, "2026-11-15")).toMatchObject({
      reactivationMrrMinor: 3000,
      reactivatedCustomers: 1,
      newCustomers: 0
    })
    expect(day(golden, "2026-11-18")).toMatchObject({
      churnedMrrMinor: 4000,
      failedPayments: 1,
      failedMinor: 4000,
      mrrMinor: 26900,
      customers: 6
    })
    expect(golden.revenueDays.at(-1)?.day).toBe("2026-11-18") // dense from the first to the last day with news
    expect(golden.revenueDays.map((r) => r.day)).toEqual(eachDay("2026-10-01", "2026-11-18"))
  })

  it("keeps mrr(end) = mrr(start) + new + expansion + reactivation − contraction − churned for EVERY window", () => {
    const rows = golden.revenueDays
    for (let i = 0; i < rows.length; i++) {
      const start = i === 0 ? 0 : rows[i - 1]!.mrrMinor
      let sum = start
      for (let j = i; j < rows.length; j++) {
        const r = rows[j]!
        sum += r.newMrrMinor + r.expansionMrrMinor + r.reactivationMrrMinor - r.contractionMrrMinor - r.churnedMrrMinor
        expect(sum).toBe(r.mrrMinor)
      }
    }
  })

  it("records churn events with the MRR lost and the cancel reason", () => {
    expect(golden.churnEvents).toEqual([
      { customerId: "cus_D", day: "2026-11-05", mrrLostMinor: 3000, reason: "too_expensive" },
      { customerId: "cus_E", day: "2026-11-18", mrrLostMinor: 4000, reason: null }
    ])
  })

  it("stores customer MRR spans (from inclusive, to exclusive)", () => {
    expect(golden.customerMrr.filter((s) => s.customerId === "cus_A")).toEqual([
      { customerId: "cus_A", fromDay: "2026-10-01", toDay: "2026-11-10", mrrMinor: 5000 },
      { customerId: "cus_A", fromDay: "2026-11-10", toDay: null, mrrMinor: 8000 }
    ])
    expect(golden.customerMrr.filter((s) => s.customerId === "cus_D").map((s) => [s.fromDay, s.toDay])).toEqual([
      ["2026-10-01", "2026-11-05"],
      ["2026-11-15", null]
    ])
    expect(customerMrr(golden, "cus_H", TODAY)).toBe(0) // unconverted: not a paying customer in USD figures
  })

  it("reports amounts without a rate apart, never summed", () => {
    expect(golden.unconverted).toEqual([
      { day: "2026-11-02", currency: "GBP", mrrMinor: 2000, grossMinor: 2000, refundsMinor: 0, failedMinor: 0 }
    ])
  })
})

describe("the revenue report (30d) on the golden dataset", () => {
  const report = (period: Period = "30d") => {
    const input = {
      projectId: "prj_1" as ProjectId,
      period,
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: golden.revenueDays
    }
    return revenue({
      ...input,
      cohort: cohortOf(golden, "2026-10-21", TODAY),
      unconverted: golden.unconverted,
      // What PaymentsRepo.failedCharges reads for the last 30 days (the contract suite checks that read).
      failedCharges: EXPECTED_REVENUE_30D.failedRecent.map(({ amount, ...f }) => ({ ...f, amountMinor: amount }))
    })
  }
  const e = EXPECTED_REVENUE_30D
  const usd = (amount: number) => ({ amount, currency: "USD" })

  it("has every figure to the cent", () => {
    const r = report()
    expect(r.window).toEqual(e.window)
    expect(r.asOf).toBe(TODAY)
    expect(r.dataThrough).toBe("2026-11-18")
    expect(r.mrr).toEqual(usd(e.mrr))
    expect(r.arr).toEqual(usd(e.arr))
    expect(r.customers).toBe(e.customers)
    expect(r.arpu).toEqual(usd(e.arpu))
    expect(r.monthlyChurnRate).toBe(e.monthlyChurnRate)
    expect(r.ltv).toEqual(usd(e.ltv))
    const m = e.movements
    expect(r.movements).toEqual({
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
    })
    expect(r.movements.start.amount + r.movements.netNew.amount).toBe(r.movements.end.amount)
    expect(r.nrr).toBe(e.nrr)
    expect(r.grr).toBe(e.grr)
    expect(r.quickRatio).toBe(e.quickRatio)
    expect(r.last30Days).toEqual({
      window: { from: "2026-10-22", to: TODAY },
      gross: usd(6100),
      refunds: usd(1000),
      net: usd(5100)
    })
    expect(r.previous30Days).toEqual({
      window: { from: "2026-09-22", to: "2026-10-21" },
      gross: usd(123000),
      refunds: usd(0),
      net: usd(123000)
    })
    expect(r.change.net).toBe(e.changeNet)
    expect(r.failedPayments).toEqual({
      count: 1,
      amount: usd(4000),
      recent: [{
        chargeId: "ch_E1",
        customerId: "cus_E",
        name: null,
        email: "ap@e-corp.example",
        amount: usd(4000),
        day: "2026-11-18"
      }]
    })
    expect(r.unconverted).toEqual([{
      currency: "GBP",
      mrr: { amount: 2000, currency: "GBP" },
      gross: { amount: 2000, currency: "GBP" },
      refunds: { amount: 0, currency: "GBP" }
    }])
  })

  it("has a zero-filled month-end MRR series of 12 calendar months", () => {
    const s = report().mrrSeries
    expect(s.map((p) => p.month)).toEqual([
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
    ])
    expect(s.map((p) => p.mrr.amount)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 23100, 26900]) // 10-31: A+B+D+E+G; today
  })

  it("applies the period: 7d = 11-14..11-20", () => {
    // Start = end of 11-13 = 26 900 − 3 000 (D back 11-15) + 4 000 (E left 11-18) = 27 900; D +3 000 reactivation, E −4
    // 000.
    const r = report("7d")
    expect(r.window).toEqual({ from: "2026-11-14", to: TODAY })
    expect(r.movements.start.amount).toBe(27900)
    expect(r.movements.reactivation.amount).toBe(3000)
    expect(r.movements.churned.amount).toBe(4000)
    expect(r.movements.end.amount).toBe(26900)
    expect(r.quickRatio).toBe(0.75) // 3 000 / 4 000
  })

  it("gives null ratios for zero denominators", () => {
    const empty = revenue({
      projectId: "p" as ProjectId,
      period: "30d",
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: [],
      cohort: [],
      unconverted: []
    })
    expect(empty.mrr.amount).toBe(0)
    expect(empty.arpu).toBeNull()
    expect(empty.ltv).toBeNull()
    expect(empty.monthlyChurnRate).toBeNull()
    expect(empty.nrr).toBeNull()
    expect(empty.grr).toBeNull()
    expect(empty.quickRatio).toBeNull()
    expect(empty.change.net).toBeNull()
    expect(empty.dataThrough).toBeNull()
  })

  it("LTV is null when nobody churned in the last 30 days", () => {
    const calm = rollup({
      subscriptionVersions: [version("s", "c", "2026-09-01T00:00:00Z", null, { unitAmountMinor: 5000 })]
    }, UTC_USD)
    const r = revenue({
      projectId: "p" as ProjectId,
      period: "30d",
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: calm.revenueDays,
      cohort: [],
      unconverted: []
    })
    expect(r.monthlyChurnRate).toBe(0) // 0 churned ÷ 1 customer
    expect(r.arpu?.amount).toBe(5000)
    expect(r.ltv).toBeNull()
  })
})

describe("the revenue report's profitability", () => {
  it("revenue minus expenses over the period, recurring expenses spread over the months they cover", () => {
    // 30d window 2026-10-22 … 2026-11-20. Net revenue: 11-01 charge 50 000, refunded 1 000 on 11-03 → 49 000.
    const rows = rollup({
      subscriptionVersions: [version("s", "c", "2026-09-01T00:00:00Z", null, { unitAmountMinor: 5000 })],
      charges: [
        charge("ch_1", "c", "2026-11-01T10:00:00Z", 50_000),
        charge("ch_0", "c", "2026-10-15T10:00:00Z", 99_999)
      ],
      refunds: [refund("re_1", "ch_1", "2026-11-03T10:00:00Z", 1_000)]
    }, UTC_USD).revenueDays
    // Monthly 3 000 from 10-05: [10-05, 11-05) has 31 days, 14 in the window (10-22…11-04) → 3 000 × 14/31 = 1 354.84;
    // [11-05, 12-05) has 30 days, 16 in the window (11-05…11-20) → 3 000 × 16/30 = 1 600. One-off 2 000 on 11-20
    // (the last day, included). 2 954.84 + 2 000 = 4 954.84 → 4 955. A EUR expense with no rate is reported apart.
    const expenses = [
      { amountMinor: 3_000, currency: "USD", incurredOn: "2026-10-05", recurrence: "monthly" as const },
      { amountMinor: 2_000, currency: "USD", incurredOn: "2026-11-20", recurrence: "one_off" as const },
      { amountMinor: 700, currency: "EUR", incurredOn: "2026-11-10", recurrence: "one_off" as const }
    ]
    const r = revenue({
      projectId: "p" as ProjectId,
      period: "30d",
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: rows,
      cohort: [],
      unconverted: [],
      expenses
    })
    expect(r.profitability).toEqual({
      window: { from: "2026-10-22", to: "2026-11-20" },
      revenueNet: { amount: 49_000, currency: "USD" },
      expenses: { amount: 4_955, currency: "USD" },
      unconvertedExpenses: [{ amount: 700, currency: "EUR" }],
      profit: { amount: 44_045, currency: "USD" },
      margin: 0.8989 // 44 045 / 49 000 = 0.898877…
    })
    const none = revenue({
      projectId: "p" as ProjectId,
      period: "7d",
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: [],
      cohort: [],
      unconverted: [],
      expenses
    })
    expect(none.profitability.margin).toBeNull() // no revenue: a margin of nothing is undefined
    expect(none.profitability.profit.amount).toBe(-(2_000 + Math.round(3_000 * 7 / 30)))
  })
})

describe("the churn report (30d) on the golden dataset", () => {
  const r = churn({
    projectId: "prj_1" as ProjectId,
    period: "30d",
    today: TODAY,
    timezone: "UTC",
    currency: "USD",
    revenue: golden.revenueDays,
    churnEvents: golden.churnEvents,
    contacts: GOLDEN.customers.map((c) => ({ customerId: c.id, name: c.name ?? null, email: c.email ?? null }))
  })
  const e = EXPECTED_CHURN_30D
  const usd = (amount: number) => ({ amount, currency: "USD" })
  it("has every rate and amount", () => {
    expect(r.window).toEqual({ from: "2026-10-22", to: TODAY })
    expect(r.customersAtStart).toBe(e.customersAtStart)
    expect(r.churnedCustomers).toBe(e.churnedCustomers)
    expect(r.customerChurnRate).toBe(e.customerChurnRate)
    expect(r.mrrAtStart).toEqual(usd(e.mrrAtStart))
    expect(r.churnedMrr).toEqual(usd(e.churnedMrr))
    expect(r.contractionMrr).toEqual(usd(e.contractionMrr))
    expect(r.expansionMrr).toEqual(usd(e.expansionMrr))
    expect(r.reactivationMrr).toEqual(usd(e.reactivationMrr))
    expect(r.grossMrrChurnRate).toBe(e.grossMrrChurnRate)
    expect(r.netMrrChurnRate).toBe(e.netMrrChurnRate)
    expect(r.churned).toEqual(e.churned.map((c) => ({ ...c, mrrLost: usd(c.mrrLost) })))
  })
  it("names each churned customer as stored: name and email, null where the provider holds none", () => {
    expect(r.churned.map((c) => [c.customerId, c.name, c.email])).toEqual([
      ["cus_D", "Dora Ruiz", "dora@ruiz.example"],
      ["cus_E", null, "ap@e-corp.example"]
    ])
    // A customer the store does not know (no contact read for it) has neither.
    const unknown = churn({
      projectId: "prj_1" as ProjectId,
      period: "30d",
      today: TODAY,
      timezone: "UTC",
      currency: "USD",
      revenue: golden.revenueDays,
      churnEvents: golden.churnEvents,
      contacts: [{ customerId: "cus_D", name: "Dora Ruiz", email: null }]
    })
    expect(unknown.churned.map((c) => [c.customerId, c.name, c.email])).toEqual([
      ["cus_D", "Dora Ruiz", null],
      ["cus_E", null, null]
    ])
  })
  it("has null rates in a previous window that started with no customers", () => {
    expect(r.previous).toMatchObject({ window: { from: "2026-09-22", to: "2026-10-21" }, ...e.previous })
  })
})

describe("day boundaries in Europe/Berlin", () => {
  const berlin = { timezone: "Europe/Berlin", currency: "USD", rates: [] }
  it("a change at 23:30 UTC lands on the next local day", () => {
    const out = rollup({
      subscriptionVersions: [
        // 2026-11-14T23:30Z = 00:30 on the 15th in Berlin (CET, UTC+1)
        version("s1", "c1", "2026-11-14T23:30:00Z", "2026-11-17T22:59:00Z", { unitAmountMinor: 5000 }), // ends 23:59 on the 17th
        version("s2", "c2", "2026-11-14T22:30:00Z", "2026-11-17T23:30:00Z", { unitAmountMinor: 7000 }) // 23:30 on the 14th … 00:30 on the 18th
      ],
      charges: [charge("ch1", "c1", "2026-11-14T23:30:00Z", 5000), charge("ch2", "c2", "2026-11-14T22:59:00Z", 7000)]
    }, berlin)
    expect(day(out, "2026-11-14")).toMatchObject({ newMrrMinor: 7000, grossMinor: 7000 })
    expect(day(out, "2026-11-15")).toMatchObject({ newMrrMinor: 5000, grossMinor: 5000, mrrMinor: 12000 })
    // s1 is not in force at the end of the 17th (it ended at 23:59 local): churned ON the 17th; s2 on the 18th.
    expect(out.churnEvents.map((e) => [e.customerId, e.day])).toEqual([["c1", "2026-11-17"], ["c2", "2026-11-18"]])
  })
  it("the DST change of 2026-10-25 (CEST → CET) keeps local days right", () => {
    const out = rollup({
      subscriptionVersions: [version("s", "c", "2026-10-24T22:30:00Z", null, { unitAmountMinor: 1000 })], // 00:30 CEST on the 25th
      charges: [charge("ch", "c", "2026-10-25T22:30:00Z", 1000)] // 23:30 CET on the 25th (25 hours later)
    }, berlin)
    expect(out.revenueDays.map((r) => [r.day, r.newMrrMinor, r.grossMinor])).toEqual([["2026-10-25", 1000, 1000]])
  })
})

describe("currencies", () => {
  it("converts a charge and a refund at their day's rate and MRR at the rate of the version's start day", () => {
    const rates = [
      { day: "2026-11-01", base: "EUR", quote: "USD", rate: 1.1 },
      { day: "2026-11-10", base: "EUR", quote: "USD", rate: 1.2 }
    ]
    const out = rollup({
      subscriptionVersions: [
        version("s", "c", "2026-11-05T00:00:00Z", null, { unitAmountMinor: 1000, currency: "EUR" })
      ],
      charges: [charge("ch", "c", "2026-11-05T00:00:00Z", 1000, "EUR")],
      refunds: [refund("re", "ch", "2026-11-12T00:00:00Z", 500, "EUR")]
    }, { timezone: "UTC", currency: "USD", rates })
    expect(day(out, "2026-11-05")).toMatchObject({ newMrrMinor: 1100, grossMinor: 1100 }) // 1 000 × 1.1
    expect(day(out, "2026-11-12")).toMatchObject({ refundsMinor: 600, mrrMinor: 1100, expansionMrrMinor: 0 }) // 500 × 1.2; no FX drift
  })
  it("leaves out an amount with no rate and reports it apart", () => {
    const out = rollup({
      subscriptionVersions: [
        version("s", "c", "2026-11-05T00:00:00Z", "2026-11-09T00:00:00Z", { unitAmountMinor: 3000, currency: "CHF" })
      ],
      charges: [
        charge("ch", "c", "2026-11-05T00:00:00Z", 3000, "CHF"),
        charge("ch2", "c", "2026-11-06T00:00:00Z", 3000, "CHF", "failed")
      ],
      refunds: [refund("re", "ch", "2026-11-07T00:00:00Z", 1000, "CHF")]
    }, UTC_USD)
    expect(out.revenueDays.every((r) => r.mrrMinor === 0 && r.grossMinor === 0 && r.refundsMinor === 0)).toBe(true)
    expect(day(out, "2026-11-06")?.failedPayments).toBe(1) // the attempt counts; its amount is apart
    expect(out.unconverted).toEqual([
      { day: "2026-11-05", currency: "CHF", mrrMinor: 3000, grossMinor: 3000, refundsMinor: 0, failedMinor: 0 },
      { day: "2026-11-06", currency: "CHF", mrrMinor: 3000, grossMinor: 0, refundsMinor: 0, failedMinor: 3000 },
      { day: "2026-11-07", currency: "CHF", mrrMinor: 3000, grossMinor: 0, refundsMinor: 1000, failedMinor: 0 },
      { day: "2026-11-09", currency: "CHF", mrrMinor: 0, grossMinor: 0, refundsMinor: 0, failedMinor: 0 }
    ])
  })
})
