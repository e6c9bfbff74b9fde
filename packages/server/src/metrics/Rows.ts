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

export interface RevenueDay {
  readonly day: string
  readonly grossMinor: number // charges captured that day, minor units, project currency
  readonly refundsMinor: number // refunds issued that day
  readonly mrrMinor: number // MRR at the end of the day (yearly plans count 1/12)
  readonly activeSubscriptions: number // at the end of the day
  readonly newSubscriptions: number // started that day
  readonly churnedSubscriptions: number // ended that day
  readonly churnedMrrMinor: number // MRR of the subscriptions that ended that day
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
