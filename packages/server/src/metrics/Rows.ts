/**
 * The stored daily aggregates every report is computed from. One row per project and calendar day in
 * the project's time zone; providers (and the demo generator) write them, reports only read them.
 */

export interface TrafficDay {
  readonly day: string // YYYY-MM-DD
  readonly visitors: number // unique visitors that day
  readonly pageviews: number
  readonly sessions: number
  readonly bounces: number // single-page sessions
  readonly durationSeconds: number // total seconds of all sessions
}

/**
 * One day of revenue in the project's reporting currency, DERIVED by the payments rollup
 * (payments/Rollup.ts) from customers, subscription versions, charges and refunds — never written by hand.
 * Movements are per customer and per day, so for any window:
 *   mrr(end) = mrr(day before start) + new + expansion + reactivation − contraction − churned   (exactly)
 */
export interface RevenueDay {
  readonly day: string
  readonly grossMinor: number // succeeded charges that day (converted), minor units
  readonly refundsMinor: number // refunds issued that day (converted)
  readonly failedPayments: number // failed charge attempts that day
  readonly failedMinor: number // their amount (converted)
  readonly mrrMinor: number // MRR at the end of the day
  readonly customers: number // paying customers (MRR > 0) at the end of the day
  readonly newMrrMinor: number // MRR of customers whose first paid MRR started that day
  readonly expansionMrrMinor: number
  readonly contractionMrrMinor: number
  readonly churnedMrrMinor: number // MRR lost by customers who went to 0 that day
  readonly reactivationMrrMinor: number // MRR of customers who came back from 0 that day
  readonly newCustomers: number
  readonly churnedCustomers: number
  readonly reactivatedCustomers: number
}

export interface SearchDay {
  readonly day: string
  readonly clicks: number
  readonly impressions: number
  readonly positionWeighted: number // sum over rows of position × impressions
}

export interface ExpenseRow {
  readonly amountMinor: number
  readonly currency: string
  readonly incurredOn: string
  readonly recurrence: "one_off" | "monthly" | "yearly"
}

/** Everything the health score, signals and briefing of one project need, for a range of days. */
export interface ProjectSeries {
  readonly traffic: ReadonlyArray<TrafficDay>
  readonly revenue: ReadonlyArray<RevenueDay>
  readonly search: ReadonlyArray<SearchDay>
  readonly expenses: ReadonlyArray<ExpenseRow>
}
