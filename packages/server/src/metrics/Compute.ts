/**
 * Every report the service returns, computed from the stored daily rows (see Rows.ts).
 *
 * Pure functions: no I/O, no clock. The caller passes `today` (YYYY-MM-DD in the project's time zone)
 * and `now` (the ISO instant stamped as computedAt / generatedAt).
 *
 * Conventions used throughout:
 * - Windows are inclusive ranges of calendar days; a day without a row counts as zeros.
 * - Every ratio goes through `ratio`, which returns null for a zero (or non-finite) denominator, so no
 *   NaN / Infinity can ever leave this module. Rates are rounded to 4 decimals.
 * - A change is (current − previous) / |previous| — identical to (current − previous) / previous for
 *   the usual positive previous value, but keeps the sign meaningful ("down" stays negative) when the
 *   previous value is negative (e.g. net revenue after refunds, or a negative profit margin).
 * - Money is integer minor units (Math.round) plus the currency.
 */
export * from "./Analytics.ts"
export * from "./Briefing.ts"
export * from "./Churn.ts"
export * from "./Health.ts"
export * from "./Numbers.ts"
export * from "./Profitability.ts"
export * from "./Revenue.ts"
export * from "./Seo.ts"
export * from "./Signals.ts"
