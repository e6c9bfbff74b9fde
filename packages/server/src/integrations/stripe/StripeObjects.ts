/**
 * Stripe objects (API version 2024-06-20, see STRIPE_VERSION) read into the compact rows a sync keeps:
 * each reader returns the row, or a string saying what is wrong (the sync then fails as malformed rather
 * than store a guess). Unknown extra fields are ignored.
 */
import type { BillingInterval, Charge, Customer, Refund } from "../../payments/Types.ts"
import { idOf, int, isoOf, obj, type StripeObject, str } from "./StripeApi.ts"
import type { Plan, SubscriptionLine, SubscriptionNow } from "./Versions.ts"

type Read<A> = A | string

const INTERVALS = new Set<string>(["day", "week", "month", "year"])

export const readCustomer = (o: StripeObject): Read<Customer> => {
  const created = int(o, "created")
  if (created === null) return "no created"
  return { id: o.id as string, createdAt: isoOf(created) }
}

/** A recurring price's interval, or a reason it is not one. */
const recurringOf = (price: StripeObject | null): Read<{ interval: BillingInterval; intervalCount: number; currency: string }> => {
  if (price === null) return "no price"
  const recurring = obj(price, "recurring")
  const interval = recurring === null ? null : str(recurring, "interval")
  const currency = str(price, "currency")
  if (recurring === null || interval === null || !INTERVALS.has(interval)) return "a price that is not recurring"
  if (currency === null) return "a price without a currency"
  return { interval: interval as BillingInterval, intervalCount: Math.max(1, int(recurring, "interval_count") ?? 1), currency: currency.toUpperCase() }
}

/** The coupon(s) of a subscription: `discount` (singular, 2024-06-20) or the expanded `discounts` list. */
const discountOf = (sub: StripeObject): { percentOff: number | null; amountOffMinor: number | null } => {
  const expanded = Array.isArray(sub.discounts) ? (sub.discounts as Array<unknown>).filter((d): d is StripeObject => d !== null && typeof d === "object") : []
  const discounts = obj(sub, "discount") !== null ? [obj(sub, "discount")!] : expanded
  let percentOff: number | null = null
  let amountOffMinor: number | null = null
  for (const d of discounts) {
    const coupon = obj(d, "coupon")
    if (coupon === null) continue
    const percent = typeof coupon.percent_off === "number" ? coupon.percent_off : null
    const amount = int(coupon, "amount_off")
    if (percent !== null) percentOff = percentOff === null ? percent : Math.min(100, percentOff + percent)
    if (amount !== null) amountOffMinor = (amountOffMinor ?? 0) + amount
  }
  return { percentOff, amountOffMinor }
}

/** The subscription's current plan from its items: one item as is, several summed (quantity 1). */
const planOf = (sub: StripeObject): Read<Plan | null> => {
  const items = obj(sub, "items")
  const data = items === null ? null : items.data
  if (!Array.isArray(data)) return "no items list"
  let total = 0
  let first: { interval: BillingInterval; intervalCount: number; currency: string } | null = null
  let unit = 0
  let quantity = 1
  for (const raw of data as Array<StripeObject>) {
    const price = obj(raw, "price")
    const recurring = recurringOf(price)
    if (typeof recurring === "string") return `item ${String(raw?.id)}: ${recurring}`
    const q = int(raw, "quantity") ?? 1
    // Tiered or metered prices have no unit_amount; unit_amount_decimal carries fractional cents.
    const u = int(price!, "unit_amount") ?? (typeof price!.unit_amount_decimal === "string" ? Math.round(Number(price!.unit_amount_decimal)) : 0)
    if (first === null) {
      first = recurring
      unit = u
      quantity = q
    }
    total += u * q
  }
  if (first === null) return null
  const { amountOffMinor, percentOff } = discountOf(sub)
  const single = data.length === 1
  return {
    currency: first.currency,
    unitAmountMinor: single ? unit : total,
    quantity: single ? quantity : 1,
    interval: first.interval,
    intervalCount: first.intervalCount,
    discountPercentOff: percentOff,
    discountAmountOffMinor: amountOffMinor
  }
}

export const readSubscription = (o: StripeObject): Read<SubscriptionNow> => {
  const customerId = idOf(o, "customer")
  const status = str(o, "status")
  const startDate = int(o, "start_date") ?? int(o, "created")
  if (customerId === null) return "no customer"
  if (status === null) return "no status"
  if (startDate === null) return "no start_date"
  const plan = planOf(o)
  if (typeof plan === "string") return plan
  const details = obj(o, "cancellation_details")
  const endedAt = int(o, "ended_at") ?? (status === "canceled" ? int(o, "canceled_at") : null)
  return {
    id: o.id as string,
    customerId,
    status,
    startDate,
    trialStart: int(o, "trial_start"),
    trialEnd: int(o, "trial_end"),
    endedAt,
    currentPeriodStart: int(o, "current_period_start"),
    cancelReason: details === null ? null : str(details, "feedback") ?? str(details, "reason"),
    plan
  }
}

/**
 * A line of an invoice: a SubscriptionLine with its subscription's id, or null for lines that are not
 * about a subscription's recurring price (one-off invoice items).
 */
export const readInvoiceLine = (line: StripeObject, invoiceSubscription: string | null): Read<{ subscriptionId: string; line: SubscriptionLine } | null> => {
  const subscriptionId = idOf(line, "subscription") ?? (str(line, "type") === "subscription" ? invoiceSubscription : null)
  if (subscriptionId === null) return null
  const price = obj(line, "price")
  if (price === null || obj(price, "recurring") === null) return null
  const recurring = recurringOf(price)
  if (typeof recurring === "string") return recurring
  const period = obj(line, "period")
  const start = period === null ? null : int(period, "start")
  const amount = int(line, "amount")
  if (start === null) return "a line without a period"
  if (amount === null) return "a line without an amount"
  const discounts = Array.isArray(line.discount_amounts) ? (line.discount_amounts as Array<StripeObject>) : []
  return {
    subscriptionId,
    line: {
      start,
      proration: line.proration === true,
      currency: recurring.currency,
      interval: recurring.interval,
      intervalCount: recurring.intervalCount,
      priceId: str(price, "id"),
      unitAmountMinor: int(price, "unit_amount"),
      quantity: int(line, "quantity") ?? 1,
      amountMinor: amount,
      discountMinor: discounts.reduce((sum, d) => sum + (d !== null && typeof d === "object" ? int(d, "amount") ?? 0 : 0), 0)
    }
  }
}

/** A charge: succeeded or failed ones only (pending ones are taken when they settle, on a later run). */
export const readCharge = (o: StripeObject): Read<Charge | null> => {
  const status = str(o, "status")
  const amount = int(o, "amount")
  const currency = str(o, "currency")
  const created = int(o, "created")
  if (status === null || amount === null || currency === null || created === null) return "no status, amount, currency or created"
  if (status !== "succeeded" && status !== "failed") return null
  return {
    id: o.id as string,
    // A charge without a customer (a guest checkout) is still revenue; it belongs to no subscription.
    customerId: idOf(o, "customer") ?? "",
    at: isoOf(created),
    amountMinor: amount,
    currency: currency.toUpperCase(),
    status
  }
}

/** A refund: succeeded (and pending, which Stripe counts as issued) ones; failed and canceled ones gave nothing back. */
export const readRefund = (o: StripeObject): Read<Refund | null> => {
  const amount = int(o, "amount")
  const currency = str(o, "currency")
  const created = int(o, "created")
  const status = str(o, "status")
  if (amount === null || currency === null || created === null) return "no amount, currency or created"
  if (status === "failed" || status === "canceled") return null
  const chargeId = idOf(o, "charge")
  if (chargeId === null) return null // a refund of a non-charge payment (e.g. a customer balance) is not revenue we track
  return { id: o.id as string, chargeId, at: isoOf(created), amountMinor: amount, currency: currency.toUpperCase() }
}
