/**
 * Versions.ts on its own (a pure function): a mid-period change of one item of a multi-item subscription
 * keeps the items it did not change (the exact figure the period's invoice gives), and a one-item change
 * is what it always was.
 */
import { describe, expect, it } from "vitest"
import {
  type SubscriptionLine,
  type SubscriptionNow,
  subscriptionVersions
} from "../src/integrations/stripe/Versions.ts"

const at = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000
const line = (
  start: string,
  priceId: string,
  unit: number,
  quantity: number,
  amount: number,
  proration = false
): SubscriptionLine => ({
  start: at(start),
  proration,
  currency: "usd",
  interval: "month",
  intervalCount: 1,
  priceId,
  unitAmountMinor: unit,
  quantity,
  amountMinor: amount,
  discountMinor: 0
})
const sub = (plan: { unit: number; quantity: number }): SubscriptionNow => ({
  id: "sub_1",
  customerId: "cus_1",
  status: "active",
  startDate: at("2026-10-01"),
  trialStart: null,
  trialEnd: null,
  endedAt: null,
  currentPeriodStart: at("2026-11-01"),
  cancelReason: null,
  plan: {
    currency: "USD",
    unitAmountMinor: plan.unit,
    quantity: plan.quantity,
    interval: "month",
    intervalCount: 1,
    discountPercentOff: null,
    discountAmountOffMinor: null
  }
})
const shown = (versions: ReturnType<typeof subscriptionVersions>) =>
  versions.map((v) => [v.validFrom.slice(0, 10), v.unitAmountMinor, v.quantity])

describe("a mid-period change", () => {
  it("of one item of several: the other items stay as invoiced (3 seats + the new add-on, not the add-on alone)", () => {
    const lines = [
      line("2026-10-01", "price_seat", 1000, 3, 3000),
      line("2026-10-01", "price_addon", 500, 1, 500),
      // On 10-15 the add-on becomes the premium add-on: the unused add-on credited, the premium one charged.
      line("2026-10-15", "price_addon", 500, 1, -274, true),
      line("2026-10-15", "price_premium", 900, 1, 494, true),
      line("2026-11-01", "price_seat", 1000, 3, 3000),
      line("2026-11-01", "price_premium", 900, 1, 900)
    ]
    expect(shown(subscriptionVersions(sub({ unit: 3900, quantity: 1 }), lines))).toEqual([
      ["2026-10-01", 3500, 1],
      ["2026-10-15", 3900, 1],
      ["2026-11-01", 3900, 1]
    ])
  })

  it("of a one-item subscription: the new price and quantity", () => {
    const lines = [
      line("2026-10-01", "price_seat", 1000, 3, 3000),
      line("2026-10-15", "price_seat", 1000, 3, -1645, true),
      line("2026-10-15", "price_seat", 1000, 5, 2742, true),
      line("2026-11-01", "price_seat", 1000, 5, 5000)
    ]
    expect(shown(subscriptionVersions(sub({ unit: 1000, quantity: 5 }), lines))).toEqual([
      ["2026-10-01", 1000, 3],
      ["2026-10-15", 1000, 5],
      ["2026-11-01", 1000, 5]
    ])
  })

  it("whose credit matches no invoiced item: the charged items alone, as the invoices say for sure", () => {
    const lines = [
      line("2026-10-01", "price_seat", 1000, 3, 3000),
      line("2026-10-01", "price_addon", 500, 1, 500),
      line("2026-10-15", "price_other", 700, 1, -300, true),
      line("2026-10-15", "price_premium", 900, 1, 494, true)
    ]
    expect(shown(subscriptionVersions(sub({ unit: 3900, quantity: 1 }), lines)).slice(0, 2)).toEqual([[
      "2026-10-01",
      3500,
      1
    ], ["2026-10-15", 900, 1]])
  })
})
