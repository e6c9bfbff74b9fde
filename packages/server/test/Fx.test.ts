/** FX conversion, worked out by hand. Rates: 1 base = rate quote, from `day` until the pair's next rate. */
import { describe, expect, it } from "@effect/vitest"
import { convertMinor, type FxRate, minorUnitExponent, rateOn } from "../src/fx/Fx.ts"

const RATES: ReadonlyArray<FxRate> = [
  { day: "2026-10-01", base: "EUR", quote: "USD", rate: 1.1 },
  { day: "2026-11-01", base: "EUR", quote: "USD", rate: 1.08 },
  { day: "2026-01-01", base: "USD", quote: "JPY", rate: 150 },
  { day: "2026-01-01", base: "USD", quote: "KWD", rate: 0.3075 }
]

describe("convertMinor", () => {
  it("knows each currency's minor unit", () => {
    expect([minorUnitExponent("JPY"), minorUnitExponent("USD"), minorUnitExponent("KWD"), minorUnitExponent("eur")])
      .toEqual([0, 2, 3, 2])
  })

  it("uses the latest rate of the pair on or before the day", () => {
    expect(convertMinor(1000, "EUR", "USD", "2026-10-31", RATES)).toBe(1100) // 10.00 EUR × 1.10
    expect(convertMinor(1000, "EUR", "USD", "2026-11-01", RATES)).toBe(1080) // the new rate applies from its day
    expect(convertMinor(1000, "EUR", "USD", "2027-05-05", RATES)).toBe(1080) // and holds until the next one
    expect(convertMinor(1000, "EUR", "USD", "2026-09-30", RATES)).toBeNull() // before the first rate
  })

  it("uses 1 / rate of the inverse pair when only it is stored", () => {
    expect(rateOn("USD", "EUR", "2026-11-05", RATES)).toBeCloseTo(1 / 1.08, 12)
    expect(convertMinor(1080, "USD", "EUR", "2026-11-05", RATES)).toBe(1000) // 10.80 USD ÷ 1.08
  })

  it("handles minor-unit exponents: JPY (0) ↔ USD (2) ↔ KWD (3)", () => {
    // 1000 JPY ÷ 150 = 6.6666… USD = 666.67 cents → 667
    expect(convertMinor(1000, "JPY", "USD", "2026-06-01", RATES)).toBe(667)
    // 12.34 USD × 150 = 1851 JPY
    expect(convertMinor(1234, "USD", "JPY", "2026-06-01", RATES)).toBe(1851)
    // 100.00 USD × 0.3075 = 30.750 KWD = 30750 fils
    expect(convertMinor(10000, "USD", "KWD", "2026-06-01", RATES)).toBe(30750)
  })

  it("rounds half away from zero", () => {
    const rates: ReadonlyArray<FxRate> = [{ day: "2026-01-01", base: "EUR", quote: "USD", rate: 1.5 }]
    expect(convertMinor(5, "EUR", "USD", "2026-01-01", rates)).toBe(8) // 7.5 → 8
    expect(convertMinor(-5, "EUR", "USD", "2026-01-01", rates)).toBe(-8) // −7.5 → −8
    expect(convertMinor(3, "EUR", "USD", "2026-01-01", rates)).toBe(5) // 4.5 → 5
    // 1.15 × 100 is 114.99999999999999 in binary floating point; the decimal half still rounds up.
    expect(
      convertMinor(100, "EUR", "USD", "2026-01-01", [{ day: "2026-01-01", base: "EUR", quote: "USD", rate: 0.01155 }])
    ).toBe(1)
    expect(convertMinor(1, "EUR", "USD", "2026-01-01", [{ day: "2026-01-01", base: "EUR", quote: "USD", rate: 1.15 }]))
      .toBe(1)
    expect(convertMinor(10, "EUR", "USD", "2026-01-01", [{ day: "2026-01-01", base: "EUR", quote: "USD", rate: 1.15 }]))
      .toBe(12) // 11.5 → 12
  })

  it("returns the amount unchanged for the same currency, and null when no rate applies", () => {
    expect(convertMinor(123, "usd", "USD", "2026-01-01", [])).toBe(123)
    expect(convertMinor(123, "GBP", "USD", "2026-11-05", RATES)).toBeNull()
    // No triangulation: EUR→USD and USD→JPY are stored, EUR→JPY is not.
    expect(convertMinor(100, "EUR", "JPY", "2026-11-05", RATES)).toBeNull()
  })
})
