/**
 * Where revenue is heading (docs/metrics.md, "Forecasts"). Pure: the caller passes the month-end MRR series and
 * today's MRR (metrics/Revenue.ts).
 *
 * MRR forecast — a random walk with drift, fitted on the recent monthly movements:
 * - the movements: Δ_m = MRR(end of m) − MRR(end of m − 1) for each COMPLETE calendar month m (the current month
 *   is still moving) whose previous month ended with MRR > 0 (the months before the business had revenue are no
 *   movements of it), the last FORECAST_MONTHS of them; n = how many;
 * - drift d = mean(Δ), s = their sample standard deviation (n − 1); with n < FORECAST_MIN_MONTHS there is no
 *   forecast (null): too little history to say anything;
 * - h months ahead of today: expected = MRR(today) + d·h; the range is the 80% interval of the walk with the
 *   drift itself estimated: expected ± z·s·√(h + h²/n), z = 1.2816 — it widens with the horizon and with erratic
 *   or few movements, and collapses to the line when every month moved by the same amount;
 * - MRR cannot be negative: expected and low are floored at 0. Each figure is rounded once, half away from zero.
 *
 * Profit run-rate: the net profit of the last PROFIT_RUN_RATE_DAYS days (today included; revenue net of refunds
 * minus the expenses attributed to those days, as Profitability.ts attributes them) per average month:
 * profit × (365.25 ÷ 12) ÷ 90.
 */
import type { Money } from "@sitehealth/domain/Common"
import type { FxRate } from "../fx/Fx.ts"
import { roundHalfAwayFromZero } from "../fx/Fx.ts"
import type { ExpenseRow, RevenueDay } from "../store/Series.ts"
import { addMonths, startOfMonth } from "./Dates.ts"
import { lastDays, money } from "./Numbers.ts"
import { profitability } from "./Profitability.ts"

export const FORECAST_HORIZONS = [3, 6, 12] as const
/** How many of the latest complete months' movements the forecast is fitted on, at most. */
export const FORECAST_MONTHS = 6
/** Fewer movements than this: no forecast. */
export const FORECAST_MIN_MONTHS = 3
/** The range's level, and its two-sided normal quantile. */
export const FORECAST_LEVEL = 0.8
export const Z_80 = 1.2816

export const PROFIT_RUN_RATE_DAYS = 90
/** The average calendar month, in days. */
export const DAYS_PER_MONTH = 365.25 / 12

export interface MrrForecast {
  readonly level: number
  readonly basis: {
    readonly months: number
    readonly from: string
    readonly to: string
    readonly averageChange: Money
    readonly standardDeviation: Money
  }
  readonly points: ReadonlyArray<{
    readonly months: number
    readonly month: string
    readonly mrr: Money
    readonly low: Money
    readonly high: Money
  }>
}

/**
 * The forecast from `series` (month-end MRR, oldest first, the LAST entry the current month as of today, as
 * `monthlyMrrSeries` gives it) and today's MRR; null with fewer than FORECAST_MIN_MONTHS movements.
 */
export const mrrForecast = (
  series: ReadonlyArray<{ readonly month: string; readonly mrr: Money }>,
  mrrToday: number,
  today: string,
  currency: string
): MrrForecast | null => {
  const complete = series.slice(0, -1)
  const movements: Array<{ month: string; change: number }> = []
  for (let i = 1; i < complete.length; i++) {
    if (complete[i - 1].mrr.amount > 0) {
      movements.push({ month: complete[i].month, change: complete[i].mrr.amount - complete[i - 1].mrr.amount })
    }
  }
  const used = movements.slice(-FORECAST_MONTHS)
  const n = used.length
  if (n < FORECAST_MIN_MONTHS) return null
  const drift = used.reduce((sum, m) => sum + m.change, 0) / n
  const variance = used.reduce((sum, m) => sum + (m.change - drift) ** 2, 0) / (n - 1)
  const sd = Math.sqrt(variance)
  const thisMonth = startOfMonth(today)
  return {
    level: FORECAST_LEVEL,
    basis: {
      months: n,
      from: used[0].month,
      to: used[n - 1].month,
      averageChange: money(roundHalfAwayFromZero(drift), currency),
      standardDeviation: money(roundHalfAwayFromZero(sd), currency)
    },
    points: FORECAST_HORIZONS.map((h) => {
      const expected = mrrToday + drift * h
      const spread = Z_80 * sd * Math.sqrt(h + (h * h) / n)
      return {
        months: h,
        month: addMonths(thisMonth, h).slice(0, 7),
        mrr: money(Math.max(0, roundHalfAwayFromZero(expected)), currency),
        low: money(Math.max(0, roundHalfAwayFromZero(expected - spread)), currency),
        high: money(Math.max(0, roundHalfAwayFromZero(expected + spread)), currency)
      }
    })
  }
}

/** The last 90 days' net profit, and per average month. */
export const profitRunRate = (
  revenueDays: ReadonlyArray<RevenueDay>,
  expenses: ReadonlyArray<ExpenseRow>,
  today: string,
  currency: string,
  rates: ReadonlyArray<FxRate> = []
) => {
  const p = profitability(revenueDays, expenses, lastDays(today, PROFIT_RUN_RATE_DAYS), currency, rates)
  return {
    window: p.window,
    revenueNet: p.revenueNet,
    expenses: p.expenses,
    unconvertedExpenses: p.unconvertedExpenses,
    profit: p.profit,
    perMonth: money(roundHalfAwayFromZero((p.profit.amount * DAYS_PER_MONTH) / PROFIT_RUN_RATE_DAYS), currency)
  }
}
