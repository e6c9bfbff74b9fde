/**
 * What a payments provider (Stripe) gives us, as stored by migration 0004_payments. Amounts are integer
 * minor units of `currency`; instants are ISO-8601 strings. These are the RAW facts: revenue_daily,
 * customer_mrr and churn_events are derived from them by the rollup (Rollup.ts) on every write.
 */

export interface Customer {
  readonly id: string // provider id, unique per project
  readonly createdAt: string // ISO instant
  /**
   * Name and email address as the provider holds them (null: it holds none). Absent: the writer does not know
   * them (the demo's generator), stored as null. Shown beside the id (churned customers, failed payments).
   */
  readonly name?: string | null
  readonly email?: string | null
}

export type SubscriptionStatus = "trialing" | "active" | "past_due" | "unpaid" | "canceled" | "incomplete"
export type BillingInterval = "day" | "week" | "month" | "year"

/**
 * A subscription's state over one time range. A subscription is a sequence of non-overlapping versions;
 * a price, quantity, status or discount change starts a new version. In force on [validFrom, validTo)
 * (validTo null = still in force).
 */
export interface SubscriptionVersion {
  readonly subscriptionId: string
  readonly customerId: string
  readonly validFrom: string // ISO instant
  readonly validTo: string | null // ISO instant, exclusive; null = open
  readonly status: SubscriptionStatus
  readonly currency: string
  readonly unitAmountMinor: number // price per unit per interval
  readonly quantity: number
  readonly interval: BillingInterval
  readonly intervalCount: number // billed every intervalCount intervals
  readonly discountPercentOff: number | null // 0–100
  readonly discountAmountOffMinor: number | null // per interval, in `currency`
  readonly cancelReason: string | null
}

export interface Charge {
  readonly id: string // provider id, unique per project
  readonly customerId: string
  readonly at: string // ISO instant
  readonly amountMinor: number
  readonly currency: string
  readonly status: "succeeded" | "failed"
}

export interface Refund {
  readonly id: string // provider id, unique per project
  readonly chargeId: string
  readonly at: string // ISO instant
  readonly amountMinor: number
  readonly currency: string
}

export interface PaymentsData {
  readonly customers: ReadonlyArray<Customer>
  readonly subscriptionVersions: ReadonlyArray<SubscriptionVersion>
  readonly charges: ReadonlyArray<Charge>
  readonly refunds: ReadonlyArray<Refund>
}
