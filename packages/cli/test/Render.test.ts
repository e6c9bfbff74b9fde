/**
 * People, not ids, in the text output: churned customers and recent failed payments show the customer's name,
 * else its email address, else its id (a guest checkout when there is no customer), with the id beside a name or
 * an address; text from the payment provider cannot drive the terminal.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import { Churn, Revenue } from "@sitehealth/domain/Revenue"
import { Schema } from "effect"
import { makeStyle, printable } from "../src/Format.ts"
import * as Render from "../src/Render.ts"

const s = makeStyle(false)
const usd = (amount: number) => ({ amount, currency: "USD" })
const window = { from: "2026-10-22", to: "2026-11-20" }
const rates = {
  window,
  customersAtStart: 5,
  churnedCustomers: 3,
  customerChurnRate: 0.6,
  mrrAtStart: usd(10000),
  churnedMrr: usd(6000),
  contractionMrr: usd(0),
  expansionMrr: usd(0),
  reactivationMrr: usd(0),
  grossMrrChurnRate: 0.6,
  netMrrChurnRate: 0.6
}
const projectId = "prj_3kTMd9qXyVbN2LwP" as ProjectId

/** The lines of the table under `title`, split into columns (two spaces or more apart). */
const rowsUnder = (text: string, title: string) => {
  const lines = text.split("\n")
  const from = lines.indexOf(title) + 1
  const end = lines.findIndex((l, i) => i > from && l === "")
  return lines.slice(from, end === -1 ? undefined : end).map((l) => l.split(/ {2,}/))
}

describe("churn", () => {
  it("names each churned customer: name, else email, else id; the id beside a name or an email", () => {
    const churn = Schema.decodeUnknownSync(Churn)({
      projectId,
      period: "30d",
      timezone: "UTC",
      currency: "USD",
      ...rates,
      churned: [
        { customerId: "cus_a", name: "Ada Park", email: "ada@park.example", date: "2026-11-01", mrrLost: usd(1000) },
        { customerId: "cus_b", name: null, email: "b@example.com", date: "2026-11-02", mrrLost: usd(2000) },
        { customerId: "cus_c", name: null, email: null, date: "2026-11-03", mrrLost: usd(3000) }
      ].map((c) => ({ ...c, reason: null })),
      previous: rates
    })
    expect(rowsUnder(Render.churn(s, churn), "Churned customers")).toEqual([
      ["DATE", "CUSTOMER", "ID", "MRR LOST", "REASON"],
      ["2026-11-01", "Ada Park", "cus_a", "USD 10.00", "—"],
      ["2026-11-02", "b@example.com", "cus_b", "USD 20.00", "—"],
      ["2026-11-03", "cus_c", "USD 30.00", "—"]
    ])
  })
})

describe("revenue", () => {
  it("lists the recent failed payments by customer, saying when they are the newest of more", () => {
    const zero = usd(0)
    const revenue = Schema.decodeUnknownSync(Revenue)({
      projectId,
      period: "30d",
      window,
      timezone: "UTC",
      currency: "USD",
      asOf: "2026-11-20",
      dataThrough: "2026-11-20",
      mrr: zero,
      arr: zero,
      customers: 0,
      arpu: null,
      monthlyChurnRate: null,
      ltv: null,
      movements: {
        start: zero,
        new: zero,
        expansion: zero,
        contraction: zero,
        churned: zero,
        reactivation: zero,
        netNew: zero,
        end: zero,
        newCustomers: 0,
        churnedCustomers: 0,
        reactivatedCustomers: 0
      },
      nrr: null,
      grr: null,
      quickRatio: null,
      last30Days: { window, gross: zero, refunds: zero, net: zero },
      previous30Days: { window, gross: zero, refunds: zero, net: zero },
      change: { net: null },
      failedPayments: {
        count: 4,
        amount: usd(7000),
        recent: [
          { chargeId: "ch_3", customerId: "cus_e", name: "Eve\u001b[2J\u202e", email: null, amount: usd(4000) },
          { chargeId: "ch_2", customerId: null, name: null, email: null, amount: { amount: 1500, currency: "EUR" } },
          { chargeId: "ch_1", customerId: "cus_f", name: null, email: null, amount: usd(1500) }
        ].map((f, i) => ({ ...f, day: `2026-11-1${3 - i}` }))
      },
      mrrSeries: [],
      unconverted: [],
      profitability: {
        window,
        revenueNet: zero,
        expenses: zero,
        unconvertedExpenses: [],
        profit: zero,
        margin: null
      },
      forecast: null,
      profitRunRate: {
        window,
        revenueNet: zero,
        expenses: zero,
        unconvertedExpenses: [],
        profit: zero,
        perMonth: zero
      }
    })
    const text = Render.revenue(s, revenue)
    expect(text).not.toContain("\u001b")
    expect(rowsUnder(text, "Failed payments, the newest 3")).toEqual([
      ["DAY", "CUSTOMER", "ID", "AMOUNT"],
      ["2026-11-13", "Eve\uFFFD[2J\uFFFD", "cus_e", "USD 40.00"],
      ["2026-11-12", "guest checkout", "EUR 15.00"],
      ["2026-11-11", "cus_f", "USD 15.00"]
    ])
  })

  it("printable: control characters and bidirectional overrides become U+FFFD; other text stays", () => {
    expect(printable("Zoë\u0007 Ødegaard\u009b\u2066")).toBe("Zoë\uFFFD Ødegaard\uFFFD\uFFFD")
    expect(printable("株式会社 (ｶﾌﾞ)")).toBe("株式会社 (ｶﾌﾞ)")
  })
})
