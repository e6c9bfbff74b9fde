/**
 * Robust anomaly detection on daily series: the checked day against the same weekday of the previous
 * weeks, with the median as the usual value and the MAD (median absolute deviation) as the spread.
 * Medians ignore one or two odd weeks in the baseline (a holiday, an earlier anomaly) where a mean and
 * standard deviation would be dragged by them. Pure: no clock, the caller says which day is complete.
 */
import { addDays } from "./Dates.ts"
import { roundTo } from "./Numbers.ts"

/** Previous same weekdays compared against (day − 7, day − 14, …, day − 56). */
export const BASELINE_WEEKS = 8
/** Fewer same-weekday points than this: no verdict (too little history to know what is usual). */
export const MIN_BASELINE_POINTS = 4
/** Consistency constant: 0.6745 × (x − median) / MAD is a z-score for normally distributed data. */
export const MAD_TO_Z = 0.6745
/**
 * MAD floor, as a share of the median (and at least 1 unit): a perfectly regular baseline (MAD 0, or
 * nearly) must not turn a 3% wobble into an alarm. With it, a day must move ≥ 3.5 × 0.05 / 0.6745 ≈ 26%
 * from a flat baseline to be flagged.
 */
export const MAD_FLOOR_SHARE = 0.05
/** |z| from here on is an anomaly (Iglewicz & Hoaglin's cut-off for the modified z-score). */
export const Z_WARNING = 3.5
/** |z| from here on a drop is critical. */
export const Z_CRITICAL = 6

export const median = (xs: ReadonlyArray<number>): number | null => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** Median absolute deviation from `center`; null for an empty list. */
export const mad = (xs: ReadonlyArray<number>, center: number): number | null =>
  median(xs.map((x) => Math.abs(x - center)))

/** 0.6745 × (x − median) / max(MAD, floor); null when the scale is 0 (cannot happen with floor ≥ 1). */
export const robustZ = (x: number, center: number, spread: number): number | null => {
  if (spread <= 0 || !Number.isFinite(spread)) return null
  return (MAD_TO_Z * (x - center)) / spread
}

export interface DayValue {
  readonly day: string
  readonly value: number
}

export interface Anomaly {
  readonly day: string
  readonly actual: number
  readonly expected: { readonly value: number; readonly low: number; readonly high: number }
  readonly z: number // rounded to 2 decimals
  readonly direction: "drop" | "spike"
  readonly points: number // baseline points used
}

/**
 * The verdict for `day` (which the caller guarantees is complete): null when there is no row for it,
 * fewer than MIN_BASELINE_POINTS same-weekday rows in the previous BASELINE_WEEKS weeks, a baseline
 * median ≤ 0 (no usual level), or |z| < Z_WARNING. Days without a row are not baseline points (a
 * provider that was not connected yet is not a zero). The normal range is median ± Z_WARNING × scale / 0.6745.
 */
export const anomalyOn = (rows: ReadonlyArray<DayValue>, day: string): Anomaly | null => {
  const byDay = new Map(rows.map((r) => [r.day, r.value] as const))
  const actual = byDay.get(day)
  if (actual === undefined || !Number.isFinite(actual)) return null
  const baseline: Array<number> = []
  for (let w = 1; w <= BASELINE_WEEKS; w++) {
    const v = byDay.get(addDays(day, -7 * w))
    if (v !== undefined && Number.isFinite(v)) baseline.push(v)
  }
  if (baseline.length < MIN_BASELINE_POINTS) return null
  const center = median(baseline)!
  if (center <= 0) return null
  const scale = Math.max(mad(baseline, center)!, MAD_FLOOR_SHARE * center, 1)
  const z = robustZ(actual, center, scale)
  if (z === null || Math.abs(z) < Z_WARNING) return null
  const half = (Z_WARNING * scale) / MAD_TO_Z
  return {
    day,
    actual,
    expected: {
      value: roundTo(center, 2),
      low: roundTo(Math.max(0, center - half), 2),
      high: roundTo(center + half, 2)
    },
    z: roundTo(z, 2),
    direction: z < 0 ? "drop" : "spike",
    points: baseline.length
  }
}
