/**
 * The raw facts' rows as PostgreSQL gives them back (subscription_versions, charges, refunds), decoded and
 * turned into the provider-neutral facts (Types.ts): what the SQL store's writes compare against
 * (PaymentsFacts.ts) and its rollup computes from (SqlRollup.ts).
 */
import * as Schema from "effect/Schema"
import { bulkRowsOf, Wide } from "../store/Sql.ts"
import type { Charge, Refund, SubscriptionVersion } from "./Types.ts"

export const VersionRow = Schema.Struct({
  subscription_id: Schema.String,
  customer_id: Schema.String,
  valid_from: Schema.Date,
  valid_to: Schema.NullOr(Schema.Date),
  status: Schema.Literals(["trialing", "active", "past_due", "unpaid", "canceled", "incomplete"]),
  currency: Schema.String,
  unit_amount_minor: Wide,
  quantity: Wide,
  interval: Schema.Literals(["day", "week", "month", "year"]),
  interval_count: Wide,
  discount_percent_off: Schema.NullOr(Wide),
  discount_amount_off_minor: Schema.NullOr(Wide),
  cancel_reason: Schema.NullOr(Schema.String)
})
export type VersionRow = typeof VersionRow.Type
const ChargeRow = Schema.Struct({
  id: Schema.String,
  customer_id: Schema.String,
  at: Schema.Date,
  amount_minor: Wide,
  currency: Schema.String,
  status: Schema.Literals(["succeeded", "failed"])
})
const RefundRow = Schema.Struct({
  id: Schema.String,
  charge_id: Schema.String,
  at: Schema.Date,
  amount_minor: Wide,
  currency: Schema.String
})

export const decodeVersions = bulkRowsOf("subscription_versions", VersionRow)
export const decodeCharges = bulkRowsOf("charges", ChargeRow)
export const decodeRefunds = bulkRowsOf("refunds", RefundRow)

const numOrNull = (value: number | bigint | string | null): number | null => (value === null ? null : Number(value))

export const versionOf = (r: VersionRow): SubscriptionVersion => ({
  subscriptionId: r.subscription_id,
  customerId: r.customer_id,
  validFrom: r.valid_from.toISOString(),
  validTo: r.valid_to === null ? null : r.valid_to.toISOString(),
  status: r.status,
  currency: r.currency,
  unitAmountMinor: Number(r.unit_amount_minor),
  quantity: Number(r.quantity),
  interval: r.interval,
  intervalCount: Number(r.interval_count),
  discountPercentOff: numOrNull(r.discount_percent_off),
  discountAmountOffMinor: numOrNull(r.discount_amount_off_minor),
  cancelReason: r.cancel_reason
})

export const chargeOf = (r: typeof ChargeRow.Type): Charge => ({
  id: r.id,
  customerId: r.customer_id,
  at: r.at.toISOString(),
  amountMinor: Number(r.amount_minor),
  currency: r.currency,
  status: r.status
})

export const refundOf = (r: typeof RefundRow.Type): Refund => ({
  id: r.id,
  chargeId: r.charge_id,
  at: r.at.toISOString(),
  amountMinor: Number(r.amount_minor),
  currency: r.currency
})
