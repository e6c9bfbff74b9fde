/**
 * Currency conversion with operator-supplied rates. sitehealth never invents a rate: rates come from the
 * admin CLI (`npm run admin -- fx set …`) or the demo seed, and an amount with no applicable rate is
 * reported apart (convertMinor returns null), never guessed.
 *
 * A rate `{ day, base, quote, rate }` means 1 unit of `base` = `rate` units of `quote`, valid from `day`
 * until the next stored rate of the same pair. The inverse pair is used (1 / rate) when only it is stored;
 * there is no triangulation through a third currency (EUR→JPY needs an EUR/JPY or JPY/EUR rate).
 */

export interface FxRate {
  readonly day: string // YYYY-MM-DD, first day the rate applies
  readonly base: string // ISO 4217, e.g. "EUR"
  readonly quote: string // ISO 4217, e.g. "USD"
  readonly rate: number // 1 base = rate quote
}

const exponents = new Map<string, number>()

/** Digits after the decimal point of a currency's minor unit (JPY 0, USD 2, KWD 3); 2 when unknown. */
export const minorUnitExponent = (currency: string): number => {
  const code = currency.toUpperCase()
  let e = exponents.get(code)
  if (e === undefined) {
    try {
      e = new Intl.NumberFormat("en-US", { style: "currency", currency: code }).resolvedOptions()
        .maximumFractionDigits ?? 2
    } catch {
      e = 2
    }
    exponents.set(code, e)
  }
  return e
}

/** Rounds half away from zero (2.5 → 3, −2.5 → −3); never returns −0. */
export const roundHalfAwayFromZero = (x: number): number => (x < 0 ? -Math.round(-x) : Math.round(x)) + 0

/**
 * Units of `to` per unit of `from` on `day`: the latest rate of the pair dated on or before `day`; if the
 * direct pair has none, 1 / the latest rate of the inverse pair. A direct rate wins over an inverse one
 * whatever their days (stored pairs are normally one direction only). Null when neither applies.
 */
export const rateOn = (from: string, to: string, day: string, rates: ReadonlyArray<FxRate>): number | null => {
  const f = from.toUpperCase()
  const t = to.toUpperCase()
  if (f === t) return 1
  let direct: FxRate | undefined
  let inverse: FxRate | undefined
  for (const r of rates) {
    if (r.day > day || !(r.rate > 0) || !Number.isFinite(r.rate)) continue
    const b = r.base.toUpperCase()
    const q = r.quote.toUpperCase()
    if (b === f && q === t) {
      if (direct === undefined || r.day > direct.day) direct = r
    } else if (b === t && q === f) {
      if (inverse === undefined || r.day > inverse.day) inverse = r
    }
  }
  if (direct !== undefined) return direct.rate
  if (inverse !== undefined) return 1 / inverse.rate
  return null
}

/**
 * `amountMinor` minor units of `from` in minor units of `to` on `day`, rounded half away from zero to an
 * integer; the amount unchanged when the currencies are equal; null when no rate applies.
 *   result = round(amountMinor ÷ 10^exp(from) × rate × 10^exp(to))
 * e.g. 1000 JPY (exp 0) at 1 USD = 150 JPY → 1000 ÷ 150 × 100 = 666.67 → 667 US cents.
 */
export const convertMinor = (
  amountMinor: number,
  from: string,
  to: string,
  day: string,
  rates: ReadonlyArray<FxRate>
): number | null => {
  if (from.toUpperCase() === to.toUpperCase()) return amountMinor
  const rate = rateOn(from, to, day, rates)
  if (rate === null) return null
  const shift = minorUnitExponent(to) - minorUnitExponent(from)
  const converted = amountMinor * rate * 10 ** shift
  // A product like 1.15 × 100 lands on 114.99999999999999: nudge by a relative epsilon before rounding so
  // a decimal half is treated as the half it means.
  const nudged = converted + Math.sign(converted) * Math.abs(converted) * 1e-12
  return Number.isFinite(nudged) ? roundHalfAwayFromZero(nudged) : null
}
