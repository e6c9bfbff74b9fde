/**
 * What the formulas in metrics/ compute from, declared here with them: the repositories read and write these
 * shapes (they import them from here, never the other way round).
 *
 * The stored daily aggregates every report is computed from. One row per project and calendar day in
 * the project's time zone; providers (and the demo generator) write them, reports only read them.
 */
import type { ProjectId } from "@sitehealth/domain/Common"

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

/** What a computation over one project's series is given (health, briefing): whose, when, in which currency. */
export interface ProjectSeriesInput {
  readonly projectId: ProjectId
  readonly today: string // the project's local date
  readonly now: string // ISO instant, stamped on the result (computedAt, generatedAt)
  readonly currency: string
  readonly series: ProjectSeries
}

// Traffic (traffic/TrafficRepo reads them for the analytics report).

/** One UTC hour of traffic. */
export interface TrafficHour {
  readonly hour: string // ISO instant of the UTC hour start, e.g. "2026-03-29T01:00:00.000Z"
  readonly visitors: number // unique visitors in that hour
  readonly pageviews: number
  readonly sessions: number // sessions that started in that hour
  readonly bounces: number // single-page sessions among them
  readonly durationSeconds: number // total seconds of those sessions
}

/** Unique visitors over a whole inclusive range of local days, as the provider reported them. */
export interface TrafficUniques {
  readonly from: string // YYYY-MM-DD
  readonly to: string // YYYY-MM-DD, inclusive
  readonly visitors: number
}

/** Everything the analytics report reads for one window, in one round trip. */
export interface TrafficWindow {
  readonly hours: ReadonlyArray<TrafficHour> // UTC hours in [hoursFrom, hoursTo)
  readonly days: ReadonlyArray<TrafficDay> // local days in [from, to]
  readonly pages: ReadonlyArray<{ readonly path: string; readonly visitors: number; readonly pageviews: number }>
  readonly sources: ReadonlyArray<{ readonly source: string; readonly visitors: number; readonly sessions: number }>
  readonly countries: ReadonlyArray<{ readonly country: string; readonly visitors: number }>
  readonly uniques: ReadonlyArray<TrafficUniques> // stored ranges inside [from, to]
  /**
   * The same sums over [prevTopFrom, prevTopTo] for the keys of `pages` / `sources` / `countries` only (a
   * key without rows then is absent); empty when the query has no previous range.
   */
  readonly previousPages: ReadonlyArray<
    { readonly path: string; readonly visitors: number; readonly pageviews: number }
  >
  readonly previousSources: ReadonlyArray<
    { readonly source: string; readonly visitors: number; readonly sessions: number }
  >
  readonly previousCountries: ReadonlyArray<{ readonly country: string; readonly visitors: number }>
}

/** What to read: UTC hours in [hoursFrom, hoursTo), local days in [from, to], tops over [topFrom, topTo]. */
export interface TrafficQuery {
  readonly hoursFrom: string // ISO instant
  readonly hoursTo: string // ISO instant, exclusive
  readonly from: string // YYYY-MM-DD; days, uniques inside [from, to]
  readonly to: string
  readonly topFrom: string
  readonly topTo: string
  readonly top: number // how many pages / sources / countries
  /** The previous period's days for the tops' previous figures (absent or null: none, e.g. period=all). */
  readonly prevTopFrom?: string | null
  readonly prevTopTo?: string | null
}

// Search (search/SearchRepo).

export interface SearchQueryDay {
  readonly day: string // YYYY-MM-DD
  readonly query: string
  readonly clicks: number
  readonly impressions: number
  readonly positionWeighted: number // Σ position × impressions
}

export interface SearchPageDay {
  readonly day: string // YYYY-MM-DD
  readonly page: string // the URL as GSC reports it
  readonly clicks: number
  readonly impressions: number
  readonly positionWeighted: number // Σ position × impressions
}

// Payments (derived by payments/Rollup, read by payments/PaymentsRepo).

/** A customer's MRR going to 0 on `day` (local). */
export interface ChurnEvent {
  readonly customerId: string
  readonly day: string
  readonly mrrLostMinor: number
  readonly reason: string | null
}

/**
 * Amounts in `currency` (its own minor units) that could not be converted for lack of a rate. Sparse: a row
 * on each day something changes; `mrrMinor` is the state at the end of that day (carry it forward), the
 * others are that day's flows.
 */
export interface UnconvertedDay {
  readonly day: string
  readonly currency: string
  readonly mrrMinor: number
  readonly grossMinor: number
  readonly refundsMinor: number
  readonly failedMinor: number
}

/** A customer's name and email address as the payment provider holds them (null: it holds none, or not stored). */
export interface CustomerContact {
  readonly customerId: string
  readonly name: string | null
  readonly email: string | null
}

/** A failed charge attempt with its customer's contact (raw facts, read by payments/PaymentsReads). */
export interface FailedCharge {
  readonly chargeId: string
  readonly customerId: string | null // null: a charge without a customer (a guest checkout)
  readonly name: string | null
  readonly email: string | null
  readonly day: string // local day of the attempt
  readonly amountMinor: number
  readonly currency: string // the charge's own
}

/** A customer paying at the start of a window, with its MRR then and at the window's end (0 if gone). */
export interface CohortRow {
  readonly customerId: string
  readonly startMinor: number
  readonly endMinor: number
}
