/**
 * Shared helpers of the reports: windows, ratios, changes, rounding, formatting. See Compute.ts for the conventions.
 */
import type { Money, Period } from "@sitehealth/domain/Common"
import type { Health } from "@sitehealth/domain/Projects"
import { addDays, addMonths, daysBetween, startOfMonth } from "./Dates.ts"

// ---------------------------------------------------------------------------------------------------
// Small numeric helpers
// ---------------------------------------------------------------------------------------------------

export interface DayWindow {
  readonly from: string
  readonly to: string
}

export type HealthStatus = Health["status"]

/** A finite number or 0 — rows are trusted, but a stray NaN must not poison a whole report. */
export const num = (x: number): number => (Number.isFinite(x) ? x : 0)

/** Rounds to `decimals` places; never returns -0. */
export const roundTo = (x: number, decimals: number): number => {
  const f = 10 ** decimals
  return Math.round(x * f) / f + 0
}

export const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x))

/** a / b rounded, or null when b is 0 or the result would not be finite. */
export const ratio = (a: number, b: number, decimals = 4): number | null => {
  if (b === 0 || !Number.isFinite(a) || !Number.isFinite(b)) return null
  const r = a / b
  return Number.isFinite(r) ? roundTo(r, decimals) : null
}

/** (cur − prev) / |prev|, rounded to 4 decimals; null when prev is 0 or missing. */
export const changeOf = (cur: number | null, prev: number | null): number | null => {
  if (cur === null || prev === null) return null
  return ratio(cur - prev, Math.abs(prev))
}

export const money = (amount: number, currency: string): Money => ({ amount: Math.round(num(amount)) + 0, currency })

export const inWindow = (day: string, w: DayWindow): boolean => day >= w.from && day <= w.to

export const windowLength = (w: DayWindow): number => Math.max(0, daysBetween(w.from, w.to) + 1)

/** The last `n` days ending on (and including) `to`. */
export const lastDays = (to: string, n: number): DayWindow => ({ from: addDays(to, -(n - 1)), to })

/** The row with the greatest day ≤ `day` (or < `day` when strict), or undefined. */
export const lastRowUpTo = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  day: string,
  strict = false
): R | undefined => {
  let best: R | undefined
  for (const r of rows) {
    if (strict ? r.day >= day : r.day > day) continue
    if (best === undefined || r.day > best.day) best = r
  }
  return best
}

export const sumIn = <R extends { readonly day: string }>(
  rows: ReadonlyArray<R>,
  w: DayWindow,
  f: (r: R) => number
): number => {
  let total = 0
  for (const r of rows) if (inWindow(r.day, w)) total += num(f(r))
  return total
}

/** Number of distinct days in `w` that have at least one row. */
export const daysWithRows = (rows: ReadonlyArray<{ readonly day: string }>, w: DayWindow): number => {
  const days = new Set<string>()
  for (const r of rows) if (inWindow(r.day, w)) days.add(r.day)
  return days.size
}

export const pct = (x: number): string => `${Math.round(Math.abs(x) * 100)}%`
export const pct1 = (x: number): string => `${roundTo(x * 100, 1).toFixed(1)}%`
export const fmtInt = (x: number): string => Math.round(x).toLocaleString("en-US")

export const moneyFormats = new Map<string, Intl.NumberFormat>()

export const formatMoney = (minor: number, currency: string): string => {
  try {
    let fmt = moneyFormats.get(currency)
    if (fmt === undefined) {
      fmt = new Intl.NumberFormat("en-US", { style: "currency", currency })
      moneyFormats.set(currency, fmt)
    }
    const digits = fmt.resolvedOptions().maximumFractionDigits ?? 2
    return fmt.format(Math.round(minor) / 10 ** digits)
  } catch {
    return `${(Math.round(minor) / 100).toFixed(2)} ${currency}`
  }
}

// ---------------------------------------------------------------------------------------------------
// Periods
// ---------------------------------------------------------------------------------------------------

/**
 * The inclusive window of a reporting period ending today.
 * - today: [today, today]; yesterday: [today−1, today−1]
 * - 7d / 30d: the last 7 / 30 days including today
 * - 3m: the first day of the month two months before this one → today (3 calendar months to date)
 * - 12m: the first day of the month 11 months before this one → today (12 calendar months to date)
 * - all: firstDay (or today when null, or when firstDay is after today) → today
 */
export const periodWindow = (period: Period, today: string, firstDay: string | null): DayWindow => {
  switch (period) {
    case "today":
      return { from: today, to: today }
    case "yesterday": {
      const y = addDays(today, -1)
      return { from: y, to: y }
    }
    case "7d":
      return lastDays(today, 7)
    case "30d":
      return lastDays(today, 30)
    case "3m":
      return { from: startOfMonth(addMonths(startOfMonth(today), -2)), to: today }
    case "12m":
      return { from: startOfMonth(addMonths(startOfMonth(today), -11)), to: today }
    case "all":
      return { from: firstDay !== null && firstDay < today ? firstDay : today, to: today }
  }
}

/** The window of the same number of days just before `w`. */
export const previousWindow = (w: DayWindow): DayWindow => {
  const n = windowLength(w)
  return { from: addDays(w.from, -n), to: addDays(w.from, -1) }
}
