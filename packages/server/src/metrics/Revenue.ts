/**
 * The revenue report, from the rows the payments rollup derived (payments/Rollup.ts). Pure: the caller
 * passes `today` (the project's local day). See Compute.ts for the conventions and docs/metrics.md
 * ("Revenue") for every definition.
 *
 * MRR and customers are STATES: on a day without a row they are those of the last row before it (the
 * rows handed in include the last row before the loaded range for that reason). Flows (movements, gross,
 * refunds, failed payments) are sums over the days of a window; a day without a row is zero.
 */
import type { Period, ProjectId } from "@sitehealth/domain/Common"
import type { Revenue } from "@sitehealth/domain/Revenue"
import type { FxRate } from "../fx/Fx.ts"
import type { CohortRow, ExpenseRow, FailedCharge, RevenueDay, UnconvertedDay } from "../store/Series.ts"
import { addDays, addMonths, startOfMonth } from "./Dates.ts"
import { mrrForecast, profitRunRate } from "./Forecast.ts"
import type { DayWindow } from "./Numbers.ts"
import { changeOf, lastDays, lastRowUpTo, money, num, periodWindow, previousWindow, ratio, sumIn } from "./Numbers.ts"
import { profitability } from "./Profitability.ts"

/** What the revenue and churn reports are of: one project's payments over a period, in its time zone and currency. */
export interface PaymentsReportScope {
  readonly projectId: ProjectId
  readonly period: Period
  readonly today: string
  readonly timezone: string
  readonly currency: string
}

export interface RevenueInput extends PaymentsReportScope {
  /** Revenue rows from some day on, plus the last row before it (MetricsRepo loads them so). */
  readonly revenue: ReadonlyArray<RevenueDay>
  /** Customers paying at the end of the day before the period's window, with their MRR then and at its end. */
  readonly cohort: ReadonlyArray<CohortRow>
  /** Unconverted rows of the last 30 days plus the last one before them per currency. */
  readonly unconverted: ReadonlyArray<UnconvertedDay>
  /** The project's expenses (not deleted) and the FX rates: the period's profitability. None → no expenses. */
  readonly expenses?: ReadonlyArray<ExpenseRow>
  readonly rates?: ReadonlyArray<FxRate>
  /**
   * The newest failed charges of the last 30 days (at most RECENT_FAILED_PAYMENTS, newest first: the repository
   * reads them so), listed as they are. None → an empty list.
   */
  readonly failedCharges?: ReadonlyArray<FailedCharge>
}

/** The first day with payment data (the start of period `all`), or null. */
export const firstRevenueDay = (rows: ReadonlyArray<RevenueDay>): string | null =>
  rows.reduce<string | null>((first, r) => (first === null || r.day < first ? r.day : first), null)

/** The period's window; `all` starts at the first day with payment data. */
export const revenuePeriodWindow = (period: Period, today: string, rows: ReadonlyArray<RevenueDay>): DayWindow =>
  periodWindow(period, today, firstRevenueDay(rows))

/** MRR at the end of `day` (0 before any data). */
export const mrrAtEndOf = (rows: ReadonlyArray<RevenueDay>, day: string): number =>
  Math.round(num(lastRowUpTo(rows, day)?.mrrMinor ?? 0))

/** Paying customers at the end of `day`. */
export const payingCustomersAtEndOf = (rows: ReadonlyArray<RevenueDay>, day: string): number =>
  Math.round(num(lastRowUpTo(rows, day)?.customers ?? 0))

export interface MovementTotals {
  readonly start: number
  readonly new: number
  readonly expansion: number
  readonly contraction: number
  readonly churned: number
  readonly reactivation: number
  readonly netNew: number
  readonly end: number
  readonly newCustomers: number
  readonly churnedCustomers: number
  readonly reactivatedCustomers: number
}

/**
 * The MRR movements of a window. start is the MRR at the end of the day before it, end the MRR at the end
 * of its last day; the rollup guarantees end = start + netNew, which is asserted by the tests rather than
 * forced here, so inconsistent rows would show.
 */
export const movementsIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): MovementTotals => {
  const sum = (f: (r: RevenueDay) => number) => Math.round(sumIn(rows, w, f))
  const added = {
    new: sum((r) => r.newMrrMinor),
    expansion: sum((r) => r.expansionMrrMinor),
    reactivation: sum((r) => r.reactivationMrrMinor)
  }
  const lost = { contraction: sum((r) => r.contractionMrrMinor), churned: sum((r) => r.churnedMrrMinor) }
  return {
    start: mrrAtEndOf(rows, addDays(w.from, -1)),
    ...added,
    ...lost,
    netNew: added.new + added.expansion + added.reactivation - lost.contraction - lost.churned,
    end: mrrAtEndOf(rows, w.to),
    newCustomers: sum((r) => r.newCustomers),
    churnedCustomers: sum((r) => r.churnedCustomers),
    reactivatedCustomers: sum((r) => r.reactivatedCustomers)
  }
}

/**
 * Logo churn rate of a window: churn events in it ÷ paying customers at the end of the day before it.
 * Null with no customers at the start.
 */
export const customerChurnRate = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): number | null =>
  ratio(Math.round(sumIn(rows, w, (r) => r.churnedCustomers)), payingCustomersAtEndOf(rows, addDays(w.from, -1)))

const cashIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow, currency: string) => {
  const gross = Math.round(sumIn(rows, w, (r) => r.grossMinor))
  const refunds = Math.round(sumIn(rows, w, (r) => r.refundsMinor))
  return {
    window: w,
    gross: money(gross, currency),
    refunds: money(refunds, currency),
    net: money(gross - refunds, currency)
  }
}

/** NRR and GRR of a cohort: Σ end ÷ Σ start, and Σ min(end, start) ÷ Σ start; null when Σ start is 0. */
export const retention = (cohort: ReadonlyArray<CohortRow>) => {
  let start = 0
  let end = 0
  let kept = 0
  for (const c of cohort) {
    start += c.startMinor
    end += c.endMinor
    kept += Math.min(c.endMinor, c.startMinor)
  }
  return { nrr: ratio(end, start), grr: ratio(kept, start) }
}

/** Month-end MRR of the last 12 calendar months (the current month at `today`), oldest first. */
export const monthlyMrrSeries = (rows: ReadonlyArray<RevenueDay>, today: string, currency: string) => {
  const thisMonth = startOfMonth(today)
  return Array.from({ length: 12 }, (_, i) => {
    const monthStart = addMonths(thisMonth, i - 11)
    const monthEnd = i === 11 ? today : addDays(addMonths(monthStart, 1), -1)
    return { month: monthStart.slice(0, 7), mrr: money(mrrAtEndOf(rows, monthEnd), currency) }
  })
}

/** Per currency: MRR at `today` and gross/refunds over `w`, native minor units; currencies all zero left out. */
export const unconvertedSummary = (rows: ReadonlyArray<UnconvertedDay>, w: DayWindow, today: string) => {
  const currencies = [...new Set(rows.map((r) => r.currency))].sort()
  return currencies.flatMap((currency) => {
    const own = rows.filter((r) => r.currency === currency)
    const mrr = Math.round(num(lastRowUpTo(own, today)?.mrrMinor ?? 0))
    const gross = Math.round(sumIn(own, w, (r) => r.grossMinor))
    const refunds = Math.round(sumIn(own, w, (r) => r.refundsMinor))
    if (mrr === 0 && gross === 0 && refunds === 0) return []
    return [{ currency, mrr: money(mrr, currency), gross: money(gross, currency), refunds: money(refunds, currency) }]
  })
}

export const revenue = (input: RevenueInput): Revenue => {
  const { currency, revenue: rows, today } = input
  const window = revenuePeriodWindow(input.period, today, rows)
  const mrr = mrrAtEndOf(rows, today)
  const customers = payingCustomersAtEndOf(rows, today)
  const lastDay = lastRowUpTo(rows, today)?.day ?? null

  // LTV's churn window: the last 30 days, whatever the period, so LTV does not swing with the period.
  const last30 = lastDays(today, 30)
  const prev30 = previousWindow(last30)
  const monthlyChurnRate = customerChurnRate(rows, last30)
  const churnedLast30 = Math.round(sumIn(rows, last30, (r) => r.churnedCustomers))
  const customers30Ago = payingCustomersAtEndOf(rows, addDays(last30.from, -1))
  // ARPU ÷ (churned ÷ customers30Ago), from the unrounded figures, rounded once.
  const ltv = customers === 0 || churnedLast30 === 0 || customers30Ago === 0
    ? null
    : money((mrr / customers) * (customers30Ago / churnedLast30), currency)

  const m = movementsIn(rows, window)
  const { grr, nrr } = retention(input.cohort)
  const cur = cashIn(rows, last30, currency)
  const prev = cashIn(rows, prev30, currency)
  const arpu = ratio(mrr, customers, 6)
  const mrrSeries = monthlyMrrSeries(rows, today, currency)

  return {
    projectId: input.projectId,
    period: input.period,
    window,
    timezone: input.timezone,
    currency,
    asOf: today,
    dataThrough: lastDay,
    mrr: money(mrr, currency),
    arr: money(12 * mrr, currency),
    customers,
    arpu: arpu === null ? null : money(arpu, currency),
    monthlyChurnRate,
    ltv,
    movements: {
      start: money(m.start, currency),
      new: money(m.new, currency),
      expansion: money(m.expansion, currency),
      contraction: money(m.contraction, currency),
      churned: money(m.churned, currency),
      reactivation: money(m.reactivation, currency),
      netNew: money(m.netNew, currency),
      end: money(m.end, currency),
      newCustomers: m.newCustomers,
      churnedCustomers: m.churnedCustomers,
      reactivatedCustomers: m.reactivatedCustomers
    },
    nrr,
    grr,
    quickRatio: ratio(m.new + m.expansion + m.reactivation, m.contraction + m.churned),
    last30Days: cur,
    previous30Days: prev,
    change: { net: changeOf(cur.net.amount, prev.net.amount) },
    failedPayments: {
      count: Math.round(sumIn(rows, last30, (r) => r.failedPayments)),
      amount: money(sumIn(rows, last30, (r) => r.failedMinor), currency),
      recent: (input.failedCharges ?? []).map((f) => ({
        chargeId: f.chargeId,
        customerId: f.customerId,
        name: f.name,
        email: f.email,
        amount: money(f.amountMinor, f.currency),
        day: f.day
      }))
    },
    mrrSeries,
    unconverted: unconvertedSummary(input.unconverted, last30, today),
    profitability: profitability(rows, input.expenses ?? [], window, currency, input.rates ?? []),
    forecast: mrrForecast(mrrSeries, mrr, today, currency),
    profitRunRate: profitRunRate(rows, input.expenses ?? [], today, currency, input.rates ?? [])
  }
}
