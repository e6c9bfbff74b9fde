/**
 * Profitability: net revenue minus the expenses attributed to a window. See Compute.ts for the conventions.
 *
 * Attribution (every figure in minor units):
 * - one_off: the whole amount on its day (counted when incurredOn is in the window).
 * - monthly, incurred on D: occurrence k (k = 0, 1, 2, …, until the expense is deleted) covers
 *   [addMonths(D, k), addMonths(D, k + 1)) — day of month clamped, always counted from D so Jan 31 gives
 *   Feb 28/29 then Mar 31. Attributed to the window: amount × overlapDays ÷ daysOfThatCoveredPeriod.
 * - yearly: likewise with [addMonths(D, 12k), addMonths(D, 12(k + 1))).
 * Other currencies are converted at the rate of the occurrence's first day (fx/Fx.ts, operator-supplied);
 * an amount with no applicable rate is never guessed — it is reported apart in its own currency.
 * The converted total is rounded once, half away from zero, after summing the fractional pieces.
 */
import type { Money } from "@sitehealth/domain/Common"
import { convertMinor, type FxRate, roundHalfAwayFromZero } from "../fx/Fx.ts"
import type { ExpenseRow, RevenueDay } from "../store/Series.ts"
import { addDays, addMonths, daysBetween } from "./Dates.ts"
import { inWindow, money, num, ratio, sumIn } from "./Numbers.ts"
import type { DayWindow } from "./Numbers.ts"

/** One occurrence's share of a window: the whole occurrence amount and the fraction of it that falls in. */
interface Share {
  readonly day: string // first day of the occurrence (its conversion day)
  readonly amountMinor: number // the whole occurrence
  readonly fraction: number // overlapDays ÷ daysOfThePeriod, 1 for a one-off in the window
}

/** The occurrences of an expense that overlap `w`, with the fraction of each inside it. */
export const expenseShares = (e: ExpenseRow, w: DayWindow): Array<Share> => {
  const amount = num(e.amountMinor)
  if (e.recurrence === "one_off") {
    return inWindow(e.incurredOn, w)
      ? [{ day: e.incurredOn, amountMinor: amount, fraction: 1 }]
      : []
  }
  const step = e.recurrence === "monthly" ? 1 : 12
  if (w.to < e.incurredOn) return []
  // Jump to an occurrence starting at or before the window (a month early: clamping can shift a start back).
  const monthsBefore = (Number(w.from.slice(0, 4)) - Number(e.incurredOn.slice(0, 4))) * 12 +
    (Number(w.from.slice(5, 7)) - Number(e.incurredOn.slice(5, 7))) - 1
  let k = Math.max(0, Math.floor(monthsBefore / step))
  const out: Array<Share> = []
  for (;; k++) {
    const start = addMonths(e.incurredOn, k * step)
    if (start > w.to) break
    const next = addMonths(e.incurredOn, (k + 1) * step)
    const end = addDays(next, -1) // last covered day
    if (end < w.from) continue
    const from = start > w.from ? start : w.from
    const to = end < w.to ? end : w.to
    const overlap = daysBetween(from, to) + 1
    out.push({ day: start, amountMinor: amount, fraction: overlap / daysBetween(start, next) })
  }
  return out
}

export interface ExpensesAttributed {
  /** Converted into `currency` and rounded half away from zero. */
  readonly convertedMinor: number
  /** Shares with no applicable rate, per currency (rounded), in currency order. */
  readonly unconverted: ReadonlyArray<Money>
}

export const attributeExpenses = (
  expenses: ReadonlyArray<ExpenseRow>,
  w: DayWindow,
  currency: string,
  rates: ReadonlyArray<FxRate> = []
): ExpensesAttributed => {
  let converted = 0
  const apart = new Map<string, number>()
  for (const e of expenses) {
    for (const s of expenseShares(e, w)) {
      const amount = convertMinor(s.amountMinor, e.currency, currency, s.day, rates)
      if (amount !== null) converted += amount * s.fraction
      else {
        const code = e.currency.toUpperCase()
        apart.set(code, (apart.get(code) ?? 0) + s.amountMinor * s.fraction)
      }
    }
  }
  return {
    convertedMinor: roundHalfAwayFromZero(converted),
    unconverted: [...apart.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([code, amount]) => money(roundHalfAwayFromZero(amount), code))
  }
}

/**
 * Expenses attributed to the window in `currency`, integer minor units (see the module comment). Amounts
 * with no rate to `currency` are left out here — `attributeExpenses` / `profitability` report them apart.
 */
export const expensesIn = (
  expenses: ReadonlyArray<ExpenseRow>,
  w: DayWindow,
  currency: string,
  rates: ReadonlyArray<FxRate> = []
): number => attributeExpenses(expenses, w, currency, rates).convertedMinor

/** Gross charges minus refunds of the window's revenue rows (already in the reporting currency). */
export const netRevenueMinorIn = (rows: ReadonlyArray<RevenueDay>, w: DayWindow): number =>
  roundHalfAwayFromZero(sumIn(rows, w, (r) => r.grossMinor - r.refundsMinor))

export interface Profitability {
  readonly window: DayWindow
  /** Σ (grossMinor − refundsMinor) of the window's revenue rows. */
  readonly revenueNet: Money
  /** Expenses attributed to the window, converted into the reporting currency. */
  readonly expenses: Money
  /** Attributed expenses with no rate into the reporting currency, per currency — not in `expenses`/`profit`. */
  readonly unconvertedExpenses: ReadonlyArray<Money>
  /** revenueNet − expenses. */
  readonly profit: Money
  /** profit ÷ revenueNet (4 decimals); null when revenueNet ≤ 0 (a margin of nothing is undefined). */
  readonly margin: number | null
}

export const profitability = (
  revenueDays: ReadonlyArray<RevenueDay>,
  expenses: ReadonlyArray<ExpenseRow>,
  window: DayWindow,
  currency: string,
  rates: ReadonlyArray<FxRate> = []
): Profitability => {
  const net = netRevenueMinorIn(revenueDays, window)
  const attributed = attributeExpenses(expenses, window, currency, rates)
  const profit = net - attributed.convertedMinor
  return {
    window,
    revenueNet: money(net, currency),
    expenses: money(attributed.convertedMinor, currency),
    unconvertedExpenses: attributed.unconverted,
    profit: money(profit, currency),
    margin: net > 0 ? ratio(profit, net) : null
  }
}
