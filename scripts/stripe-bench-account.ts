/**
 * scripts/stripe-sync-bench.ts's command line and the account its child process serves: N subscriptions
 * generated on demand from their index, as of TODAY and as of YESTERDAY (see that script's header).
 */
import { event, fromArray, type ListSource, type Obj } from "@sitehealth/fakes/FakeStripe"

export const args = process.argv.slice(2)
export const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback
}
export const N = Number(arg("subscriptions", "100000"))
export const NOW = Date.parse("2026-11-20T12:00:00Z") / 1000
export const DAY = 86_400
const PERIOD = 30 * DAY
const LEVELS = [1900, 4900, 9900, 19900, 49900]
export const log = (m: string) => process.stderr.write(`stripe-bench: ${m}\n`)

// ---------------------------------------------------------------------------------------------------
// The generated account (child process)
// ---------------------------------------------------------------------------------------------------

const periodsOf = (i: number) => 1 + (i % 12)
const canceled = (i: number) => i % 10 === 0
/** The moment of subscription i's renewal, or of refund r, in the 24 h before NOW. */
const at = (n: number) => NOW - DAY + ((n * 7919) % DAY)
// Every 30th subscription renews in the 24 h before NOW (i ≡ 1 mod 30: never canceled): its last period starts
// then. The others are in their current period; canceled ones ended a period ago.
const renews = (i: number) => i % 30 === 1
const startOf = (i: number) =>
  renews(i)
    ? at(i) - (periodsOf(i) - 1) * PERIOD
    : NOW - periodsOf(i) * PERIOD - (canceled(i) ? PERIOD : 0) + (i % 28) * 3600
const priceOf = (level: number): Obj => ({
  id: `price_${level}`,
  object: "price",
  currency: "usd",
  unit_amount: LEVELS[level % LEVELS.length],
  recurring: { interval: "month", interval_count: 1 }
})
const upgraded = (i: number) => i % 13 === 0 && periodsOf(i) >= 3
const levelAt = (i: number, k: number) => (upgraded(i) && k >= 2 ? (i % 5) + 1 : i % 5)
const trial = (i: number) => i % 7 === 0
/** Every 30th refund is issued in the 24 h before NOW (the others 3 days after their charge). */
const refundedToday = (r: number) => r % 30 === 0

type Account = {
  customers: ListSource
  subscriptions: ListSource
  invoices: ListSource
  charges: ListSource
  refunds: ListSource
  events: ListSource
}

/**
 * The account TODAY (at NOW: the day's renewals and refunds done, with their events) and as it was YESTERDAY
 * (at NOW − 24 h: what the full sync lists — the renewing subscriptions one period behind, without their new
 * invoice and charge, the day's refunds not issued yet, no events). The incremental run then brings real
 * changes: new invoices, charges and refunds, and subscriptions whose current period moved on.
 */
export const generated = (): { today: Account; yesterday: Account } => {
  const offsets = new Int32Array(N + 1)
  for (let i = 0; i < N; i++) offsets[i + 1] = offsets[i]! + periodsOf(i)
  const total = offsets[N]!
  const locate = (j: number) => {
    let lo = 0
    let hi = N - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (offsets[mid]! <= j) lo = mid
      else hi = mid - 1
    }
    return [lo, j - offsets[lo]!] as const
  }
  const parse = (id: string, prefix: string) => {
    const m = new RegExp(`^${prefix}_(\\d+)_(\\d+)$`).exec(id)
    return m === null ? undefined : offsets[Number(m[1])]! + Number(m[2])
  }
  const invoiceAt = (j: number): Obj => {
    const [i, k] = locate(j)
    const start = startOf(i) + k * PERIOD
    const lines: Array<Obj> = []
    if (upgraded(i) && k === 2) {
      const change = start - PERIOD / 2
      lines.push({
        id: `il_${i}_${k}_u`,
        type: "invoiceitem",
        subscription: `sub_${i}`,
        proration: true,
        period: { start: change, end: start },
        price: priceOf(levelAt(i, 1)),
        quantity: 1,
        amount: -Math.round(LEVELS[levelAt(i, 1) % 5]! / 2),
        discount_amounts: []
      })
      lines.push({
        id: `il_${i}_${k}_r`,
        type: "invoiceitem",
        subscription: `sub_${i}`,
        proration: true,
        period: { start: change, end: start },
        price: priceOf(levelAt(i, 2)),
        quantity: 1,
        amount: Math.round(LEVELS[levelAt(i, 2) % 5]! / 2),
        discount_amounts: []
      })
    }
    const p = priceOf(levelAt(i, k))
    const amount = trial(i) && k === 0 ? 0 : p.unit_amount
    lines.push({
      id: `il_${i}_${k}`,
      type: "subscription",
      subscription: `sub_${i}`,
      proration: false,
      period: { start, end: start + PERIOD },
      price: p,
      quantity: 1,
      amount,
      discount_amounts: i % 11 === 0 && amount > 0 ? [{ amount: Math.round(amount * 0.2), discount: `di_${i}` }] : []
    })
    return {
      id: `in_${i}_${k}`,
      object: "invoice",
      subscription: `sub_${i}`,
      created: start,
      status: "paid",
      lines: { object: "list", data: lines, has_more: false }
    }
  }
  const chargeAt = (j: number): Obj => {
    const [i, k] = locate(j)
    const inv = invoiceAt(j)
    const amount = inv.lines.data.reduce((s: number, l: Obj) => s + l.amount, 0)
    return {
      id: `ch_${i}_${k}`,
      object: "charge",
      customer: `cus_${i}`,
      created: inv.created + 60,
      amount: Math.max(50, amount),
      currency: "usd",
      status: j % 50 === 49 ? "failed" : "succeeded"
    }
  }
  /** Subscription i with `periods` periods begun (yesterday a renewing one had one fewer). */
  const subscriptionAt = (i: number, periods = periodsOf(i)): Obj => {
    const last = startOf(i) + (periods - 1) * PERIOD
    return {
      // In its trial until its second period begins.
      id: `sub_${i}`,
      object: "subscription",
      customer: `cus_${i}`,
      status: canceled(i) ? "canceled" : trial(i) && periods === 1 ? "trialing" : "active",
      created: startOf(i),
      start_date: startOf(i),
      current_period_start: last,
      trial_start: trial(i) ? startOf(i) : null,
      trial_end: trial(i) ? startOf(i) + PERIOD : null,
      ended_at: canceled(i) ? last + PERIOD : null,
      canceled_at: canceled(i) ? last + PERIOD : null,
      cancellation_details: {
        reason: canceled(i) ? "cancellation_requested" : null,
        feedback: canceled(i) ? "too_expensive" : null
      },
      discount: i % 11 === 0 ? { object: "discount", coupon: { percent_off: 20, amount_off: null } } : null,
      discounts: [],
      items: {
        object: "list",
        data: [{ id: `si_${i}`, price: priceOf(levelAt(i, periods - 1)), quantity: 1 }],
        has_more: false
      }
    }
  }
  const indexed = (size: number, get: (j: number) => Obj, indexOf: (id: string) => number | undefined): ListSource => ({
    size,
    get,
    indexOf
  })
  const single = (prefix: string) => (id: string) => {
    const m = new RegExp(`^${prefix}_(\\d+)$`).exec(id)
    return m === null ? undefined : Number(m[1])
  }
  const refunds = Math.floor(total / 100)
  const refundAt = (r: number): Obj => {
    const c = chargeAt(r * 100)
    // Issued today: after its charge (which may itself be today's).
    const created = refundedToday(r) ? Math.max(at(r), c.created + 60) : c.created + 3 * DAY
    return {
      id: `re_${r}`,
      object: "refund",
      charge: c.id,
      created,
      amount: Math.round(c.amount / 2),
      currency: "usd",
      status: "succeeded"
    }
  }
  /** A source without the given (ascending) indices: yesterday's lists. */
  const without = (source: ListSource, hidden: Int32Array): ListSource => {
    // Hidden entries before visible index v: those h with hidden[h] - h <= v.
    const before = (v: number) => {
      let lo = 0
      let hi = hidden.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (hidden[mid]! - mid <= v) lo = mid + 1
        else hi = mid
      }
      return lo
    }
    const isHidden = (j: number) => {
      let lo = 0
      let hi = hidden.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (hidden[mid]! < j) lo = mid + 1
        else hi = mid
      }
      return [lo, lo < hidden.length && hidden[lo] === j] as const
    }
    return {
      size: source.size - hidden.length,
      get: (v) => source.get(v + before(v)),
      indexOf: (id) => {
        const j = source.indexOf(id)
        if (j === undefined) return undefined
        const [below, hit] = isHidden(j)
        return hit ? undefined : j - below
      }
    }
  }
  // The day's events, in the 24 h before NOW: each renewal (its new invoice paid, its charge, the subscription
  // updated) and each refund issued — a monthly account's share of a day.
  const events: Array<Obj> = []
  const newInvoices: Array<number> = []
  for (let i = 1; i < N; i += 30) {
    const j = offsets[i]! + periodsOf(i) - 1
    newInvoices.push(j)
    const charge = chargeAt(j)
    events.push(event(`evt_in_${j}`, "invoice.paid", at(i), invoiceAt(j)))
    events.push(
      event(`evt_ch_${j}`, charge.status === "failed" ? "charge.failed" : "charge.succeeded", charge.created, charge)
    )
    events.push(event(`evt_sub_${i}`, "customer.subscription.updated", at(i) + 2, subscriptionAt(i)))
  }
  const newRefunds: Array<number> = []
  for (let r = 0; r < refunds; r += 30) {
    newRefunds.push(r)
    const refund = refundAt(r)
    events.push(event(`evt_re_${r}`, "refund.created", refund.created, refund))
  }
  const customers = indexed(N, (i) => ({ id: `cus_${i}`, object: "customer", created: startOf(i) - 60 }), single("cus"))
  const invoices = indexed(total, invoiceAt, (id) => parse(id, "in"))
  const charges = indexed(total, chargeAt, (id) => parse(id, "ch"))
  const refundList = indexed(refunds, refundAt, single("re"))
  const today: Account = {
    customers,
    invoices,
    charges,
    refunds: refundList,
    subscriptions: indexed(N, (i) => subscriptionAt(i), single("sub")),
    events: fromArray(events)
  }
  const yesterday: Account = {
    customers,
    subscriptions: indexed(N, (i) => subscriptionAt(i, renews(i) ? periodsOf(i) - 1 : periodsOf(i)), single("sub")),
    invoices: without(invoices, Int32Array.from(newInvoices)),
    charges: without(charges, Int32Array.from(newInvoices)),
    refunds: without(refundList, Int32Array.from(newRefunds)),
    events: fromArray([])
  }
  return { today, yesterday }
}
