/**
 * Generated Stripe accounts a new owner might connect, for the first-five-minutes tests and the journey bench
 * (docs/first-five-minutes.md): `crisis` — 220 paying customers a month ago of whom 23 cancelled in the last three
 * days, and 8 renewals that failed in the same days (churn 10.5 % over 30 days: a critical signal with its money
 * at stake); `calm` — the same customers, nobody cancelled in the last 60 days, every renewal paid. Deterministic
 * (no randomness): each customer's plan, start and name follow from its index. Customers carry a name and an
 * email, as Stripe holds them.
 */
import { charge, fromArray, invoice, line, type Obj, price, subscription } from "./FakeStripe.ts"
import type { FakeStripeData } from "./FakeStripe.ts"

const DAY = 86_400
const PERIOD = 30 * DAY
const PLANS = [price("price_starter", 1_900), price("price_growth", 4_900), price("price_pro", 9_900)]
const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Radia", "Ken", "Margaret"]
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Perlman", "Thompson"]

export interface AccountShape {
  /** Unix seconds of "now" as the account sees it (the sync's now). */
  readonly now: number
  /** Customers paying at the start of the last 30 days. */
  readonly customers: number
  /** Of them, how many cancelled in the 3 days before now. */
  readonly churnedRecently: number
  /** Renewals that failed in the 3 days before now (customers who stay, their card declined). */
  readonly failedRecently: number
}

export const CRISIS: Omit<AccountShape, "now"> = { customers: 220, churnedRecently: 23, failedRecently: 8 }
export const CALM: Omit<AccountShape, "now"> = { customers: 220, churnedRecently: 0, failedRecently: 0 }

/** Customer i's name, as the account holds it: "Ada Lovelace 7". */
export const customerName = (i: number) => `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]} ${i}`

export const generatedAccount = (shape: AccountShape): FakeStripeData => {
  const customers: Array<Obj> = []
  const subscriptions: Array<Obj> = []
  const invoices: Array<Obj> = []
  const charges: Array<Obj> = []
  for (let i = 0; i < shape.customers; i++) {
    const id = `cus_gen_${i}`
    const plan = PLANS[i % PLANS.length]!
    // Started 2 to 13 periods ago, at a time of day that varies with i.
    const created = shape.now - (2 + (i % 12)) * PERIOD - (i % 20) * DAY - (i % 24) * 3_600
    const churned = i < shape.churnedRecently
    // Cancelled ones ended on one of the 3 days before now's (complete days: what the churn rule reads).
    const endedAt = churned ? shape.now - DAY * (1 + (i % 3)) + ((i * 7_919) % 3_600) : undefined
    const until = endedAt ?? shape.now
    const periods = Math.floor((until - created) / PERIOD)
    const currentPeriodStart = created + periods * PERIOD
    customers.push({
      id,
      object: "customer",
      created,
      name: customerName(i),
      email: `${customerName(i).toLowerCase().replaceAll(" ", ".")}@example.com`
    })
    subscriptions.push(subscription({
      id: `sub_gen_${i}`,
      customer: id,
      status: churned ? "canceled" : "active",
      created,
      currentPeriodStart,
      items: [{ price: plan }],
      ...(endedAt === undefined
        ? {}
        : { endedAt, cancellation: { reason: "cancellation_requested", feedback: "too_expensive" } })
    }))
    // Every period's renewal: an invoice with its line, and the charge that paid it.
    for (let k = 0; k <= periods; k++) {
      const start = created + k * PERIOD
      if (start > until) break
      invoices.push(invoice(`in_gen_${i}_${k}`, `sub_gen_${i}`, start, [
        line({ id: `il_gen_${i}_${k}`, subscription: `sub_gen_${i}`, price: plan, start, end: start + PERIOD })
      ]))
      charges.push(charge(`ch_gen_${i}_${k}`, id, start + 60, plan.unit_amount as number))
    }
  }
  // Failed renewals: customers who stay (past the churned ones), declined in the last 3 days.
  for (let j = 0; j < shape.failedRecently; j++) {
    const i = shape.churnedRecently + j
    const plan = PLANS[i % PLANS.length]!
    const at = shape.now - DAY * (1 + (j % 3)) + 600
    charges.push(charge(`ch_gen_failed_${j}`, `cus_gen_${i}`, at, plan.unit_amount as number, "failed"))
  }
  return {
    customers: fromArray(customers),
    subscriptions: fromArray(subscriptions),
    invoices: fromArray(invoices),
    charges: fromArray(charges),
    refunds: fromArray([])
  }
}
