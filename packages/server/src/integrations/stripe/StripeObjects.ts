/**
 * Stripe objects (API version 2024-06-20, see STRIPE_VERSION): the schemas of the fields a sync uses
 * (unknown fields are ignored; a field of the wrong type fails the run, naming the object and the field),
 * and the readers that turn a decoded object into the compact rows a sync keeps. A reader returns the row,
 * null for an object that is not ours to keep, or a string saying what is wrong beyond types (the sync
 * then fails as malformed rather than store a guess).
 */
import * as Schema from "effect/Schema"
import type { BillingInterval, Charge, Customer, Refund } from "../../payments/Types.ts"
import type { Plan, SubscriptionLine, SubscriptionNow } from "./Versions.ts"

type Read<A> = A | string

const OptNumber = Schema.optional(Schema.NullOr(Schema.Number))
const OptString = Schema.optional(Schema.NullOr(Schema.String))
/** An expandable field: an id, or the expanded object with its id. */
const Expandable = Schema.Union([Schema.String, Schema.Struct({ id: Schema.String })])
const OptExpandable = Schema.optional(Schema.NullOr(Expandable))

const idOf = (v: typeof Expandable.Type | null | undefined): string | null =>
  v === null || v === undefined ? null : typeof v === "string" ? v : v.id

const Recurring = Schema.Struct({
  interval: Schema.Literals(["day", "week", "month", "year"]),
  interval_count: OptNumber
})

const Price = Schema.Struct({
  id: OptString,
  currency: Schema.String,
  recurring: Schema.optional(Schema.NullOr(Recurring)),
  unit_amount: OptNumber,
  unit_amount_decimal: OptString
})
type Price = typeof Price.Type

const Coupon = Schema.Struct({ percent_off: OptNumber, amount_off: OptNumber })
const Discount = Schema.Struct({ coupon: Schema.optional(Schema.NullOr(Coupon)) })

/** `name` and `email` are null when the account holds none (absent on a customer rendered without them). */
export const StripeCustomer = Schema.Struct({
  id: Schema.String,
  created: Schema.Number,
  name: OptString,
  email: OptString
})

export const StripeSubscription = Schema.Struct({
  id: Schema.String,
  customer: Expandable,
  status: Schema.String,
  start_date: OptNumber,
  created: OptNumber,
  trial_start: OptNumber,
  trial_end: OptNumber,
  ended_at: OptNumber,
  canceled_at: OptNumber,
  current_period_start: OptNumber,
  cancellation_details: Schema.optional(Schema.NullOr(Schema.Struct({ feedback: OptString, reason: OptString }))),
  /** The first 10 items; `has_more`: the rest are paged from /v1/subscription_items. */
  items: Schema.Struct({
    data: Schema.Array(Schema.Struct({ id: OptString, quantity: OptNumber, price: Price })),
    has_more: Schema.optional(Schema.NullOr(Schema.Boolean))
  }),
  /** Singular in 2024-06-20; `discounts` is a list of ids unless expanded (the sync expands it). */
  discount: Schema.optional(Schema.NullOr(Discount)),
  discounts: Schema.optional(Schema.NullOr(Schema.Array(Schema.Union([Schema.String, Discount]))))
})
type StripeSubscription = typeof StripeSubscription.Type

/** An item as GET /v1/subscription_items lists it. */
export const StripeSubscriptionItem = Schema.Struct({ id: Schema.String, quantity: OptNumber, price: Price })

const lineFields = {
  id: OptString,
  type: OptString,
  subscription: OptExpandable,
  price: Schema.optional(Schema.NullOr(Price)),
  period: Schema.optional(Schema.NullOr(Schema.Struct({ start: OptNumber }))),
  amount: OptNumber,
  quantity: OptNumber,
  proration: Schema.optional(Schema.NullOr(Schema.Boolean)),
  discount_amounts: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ amount: OptNumber }))))
}
export const StripeInvoiceLine = Schema.Struct(lineFields)
export type StripeInvoiceLine = typeof StripeInvoiceLine.Type
/** A line as an item of GET /v1/invoices/{id}/lines: a list item has an id. */
export const StripeListedInvoiceLine = Schema.Struct({ ...lineFields, id: Schema.String })

export const StripeInvoice = Schema.Struct({
  id: Schema.String,
  subscription: OptExpandable,
  lines: Schema.Struct({ data: Schema.Array(StripeInvoiceLine), has_more: Schema.optional(Schema.Boolean) })
})

export const StripeCharge = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  created: Schema.Number,
  customer: OptExpandable
})

export const StripeRefund = Schema.Struct({
  id: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  created: Schema.Number,
  status: OptString,
  charge: OptExpandable
})

/** Unix seconds → ISO instant. */
export const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString()

const rounded = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : Math.round(v))

export const idOfExpandable = idOf

/** A text Stripe holds, or null when it holds none or only blanks (which name no one). */
const textOrNull = (v: string | null | undefined): string | null =>
  v === null || v === undefined || v.trim() === "" ? null : v

/** A customer, with its name and email as Stripe holds them (null when it holds none). */
export const readCustomer = (o: typeof StripeCustomer.Type): Customer => ({
  id: o.id,
  createdAt: isoOf(Math.round(o.created)),
  name: textOrNull(o.name),
  email: textOrNull(o.email)
})

/** A recurring price's interval, or a reason it is not one. */
const recurringOf = (price: Price): Read<{ interval: BillingInterval; intervalCount: number; currency: string }> => {
  const recurring = price.recurring
  if (recurring === null || recurring === undefined) return "a price that is not recurring"
  return {
    interval: recurring.interval,
    intervalCount: Math.max(1, rounded(recurring.interval_count) ?? 1),
    currency: price.currency.toUpperCase()
  }
}

/** The coupon(s) of a subscription: `discount` (singular, 2024-06-20) or the expanded `discounts` list. */
const discountOf = (sub: StripeSubscription): { percentOff: number | null; amountOffMinor: number | null } => {
  const expanded = (sub.discounts ?? []).filter((d) => typeof d !== "string")
  const discounts = sub.discount !== null && sub.discount !== undefined ? [sub.discount] : expanded
  let percentOff: number | null = null
  let amountOffMinor: number | null = null
  for (const d of discounts) {
    const coupon = d.coupon
    if (coupon === null || coupon === undefined) continue
    const percent = coupon.percent_off ?? null
    const amount = rounded(coupon.amount_off)
    if (percent !== null) percentOff = percentOff === null ? percent : Math.min(100, percentOff + percent)
    if (amount !== null) amountOffMinor = (amountOffMinor ?? 0) + amount
  }
  return { percentOff, amountOffMinor }
}

/** The subscription's current plan from its items: one item as is, several summed (quantity 1). */
const planOf = (sub: StripeSubscription): Read<Plan | null> => {
  const data = sub.items.data
  let total = 0
  let first: { interval: BillingInterval; intervalCount: number; currency: string } | null = null
  let unit = 0
  let quantity = 1
  for (const item of data) {
    const recurring = recurringOf(item.price)
    if (typeof recurring === "string") return `item ${String(item.id)}: ${recurring}`
    const q = rounded(item.quantity) ?? 1
    // Tiered or metered prices have no unit_amount; unit_amount_decimal carries fractional cents.
    const decimal = item.price.unit_amount_decimal
    const u = rounded(item.price.unit_amount) ?? (typeof decimal === "string" ? Math.round(Number(decimal)) : 0)
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

export const readSubscription = (o: StripeSubscription): Read<SubscriptionNow> => {
  const startDate = rounded(o.start_date) ?? rounded(o.created)
  if (startDate === null) return "no start_date"
  const plan = planOf(o)
  if (typeof plan === "string") return plan
  const details = o.cancellation_details
  const endedAt = rounded(o.ended_at) ?? (o.status === "canceled" ? rounded(o.canceled_at) : null)
  return {
    id: o.id,
    customerId: typeof o.customer === "string" ? o.customer : o.customer.id,
    status: o.status,
    startDate,
    trialStart: rounded(o.trial_start),
    trialEnd: rounded(o.trial_end),
    endedAt,
    currentPeriodStart: rounded(o.current_period_start),
    cancelReason: details === null || details === undefined ? null : details.feedback ?? details.reason ?? null,
    plan
  }
}

/**
 * A line of an invoice: a SubscriptionLine with its subscription's id, or null for lines that are not
 * about a subscription's recurring price (one-off invoice items).
 */
export const readInvoiceLine = (
  line: StripeInvoiceLine,
  invoiceSubscription: string | null
): Read<{ subscriptionId: string; line: SubscriptionLine } | null> => {
  const subscriptionId = idOf(line.subscription) ?? (line.type === "subscription" ? invoiceSubscription : null)
  if (subscriptionId === null) return null
  const price = line.price
  if (price === null || price === undefined || price.recurring === null || price.recurring === undefined) return null
  const recurring = recurringOf(price)
  if (typeof recurring === "string") return recurring
  const start = rounded(line.period?.start)
  const amount = rounded(line.amount)
  if (start === null) return "a line without a period"
  if (amount === null) return "a line without an amount"
  return {
    subscriptionId,
    line: {
      start,
      proration: line.proration === true,
      currency: recurring.currency,
      interval: recurring.interval,
      intervalCount: recurring.intervalCount,
      priceId: price.id ?? null,
      unitAmountMinor: rounded(price.unit_amount),
      quantity: rounded(line.quantity) ?? 1,
      amountMinor: amount,
      discountMinor: (line.discount_amounts ?? []).reduce((sum, d) => sum + (rounded(d.amount) ?? 0), 0)
    }
  }
}

/** A charge: succeeded or failed ones only (pending ones are taken when they settle, on a later run). */
export const readCharge = (o: typeof StripeCharge.Type): Charge | null => {
  if (o.status !== "succeeded" && o.status !== "failed") return null
  return {
    id: o.id,
    // A charge without a customer (a guest checkout) is still revenue; it belongs to no subscription.
    customerId: idOf(o.customer) ?? "",
    at: isoOf(Math.round(o.created)),
    amountMinor: Math.round(o.amount),
    currency: o.currency.toUpperCase(),
    status: o.status
  }
}

/**
 * A refund: succeeded (and pending, which Stripe counts as issued) ones; failed and canceled ones gave
 * nothing back.
 */
export const readRefund = (o: typeof StripeRefund.Type): Refund | null => {
  if (o.status === "failed" || o.status === "canceled") return null
  const chargeId = idOf(o.charge)
  // A refund of a non-charge payment (e.g. a customer balance) is not revenue we track.
  if (chargeId === null) return null
  return {
    id: o.id,
    chargeId,
    at: isoOf(Math.round(o.created)),
    amountMinor: Math.round(o.amount),
    currency: o.currency.toUpperCase()
  }
}

/**
 * An event of GET /v1/events: which object changed and its snapshot (`data.object`, decoded by the object's
 * own schema afterwards). `api_version` is the version the snapshot is rendered in (the account's at the
 * event's creation, NOT the request's Stripe-Version): a snapshot in another version is fetched again.
 */
export const StripeEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  created: Schema.Number,
  api_version: OptString,
  data: Schema.Struct({ object: Schema.Unknown })
})
/** What every event's `data.object` has: its id and its kind (`customer`, `subscription`, `invoice`…). */
export const StripeObjectHeader = Schema.Struct({ id: Schema.String, object: Schema.String })
export type StripeEvent = typeof StripeEvent.Type

/** What the connector stages between runs (PaymentsRepo staged docs) and decodes back. */
const Interval = Schema.Literals(["day", "week", "month", "year"])
export const StagedPlan = Schema.Struct({
  currency: Schema.String,
  unitAmountMinor: Schema.Number,
  quantity: Schema.Number,
  interval: Interval,
  intervalCount: Schema.Number,
  discountPercentOff: Schema.NullOr(Schema.Number),
  discountAmountOffMinor: Schema.NullOr(Schema.Number)
})
export const StagedSubscription = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  status: Schema.String,
  startDate: Schema.Number,
  trialStart: Schema.NullOr(Schema.Number),
  trialEnd: Schema.NullOr(Schema.Number),
  endedAt: Schema.NullOr(Schema.Number),
  currentPeriodStart: Schema.NullOr(Schema.Number),
  cancelReason: Schema.NullOr(Schema.String),
  plan: Schema.NullOr(StagedPlan)
})
export const StagedLines = Schema.Array(Schema.Struct({
  start: Schema.Number,
  proration: Schema.Boolean,
  currency: Schema.String,
  interval: Interval,
  intervalCount: Schema.Number,
  priceId: Schema.NullOr(Schema.String),
  unitAmountMinor: Schema.NullOr(Schema.Number),
  quantity: Schema.Number,
  amountMinor: Schema.Number,
  discountMinor: Schema.Number
}))
