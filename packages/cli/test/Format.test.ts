/** The pure formatting: sparkline rendering (snapshot), colour rules, money and rates. */
import { describe, expect, it } from "@effect/vitest"
import { colorEnabled, makeStyle, money, percent, sparkline, table } from "../src/Format.ts"
import { isLoopback, maskSecret } from "../src/Settings.ts"

describe("sparkline", () => {
  it("renders a series between its min and max (snapshot)", () => {
    // min 0, max 70, 8 levels: level = round(v / 70 × 7) → 0 1 2 3 4 5 6 7 then 3, 0
    expect(sparkline([0, 10, 20, 30, 40, 50, 60, 70, 30, 0])).toBe("▁▂▃▄▅▆▇█▄▁")
    // an MRR series in cents: min 100000, max 250000; (v − min) / 150000 × 7, rounded
    expect(sparkline([100000, 125000, 150000, 250000, 237500])).toMatchInlineSnapshot(`"▁▂▃█▇"`)
  })
  it("a flat series is all ▁, a missing value is a gap, no data is blank", () => {
    expect(sparkline([5, 5, 5])).toBe("▁▁▁")
    expect(sparkline([1, null, 3])).toBe("▁ █")
    expect(sparkline([null, null])).toBe("  ")
    expect(sparkline([])).toBe("")
  })
})

describe("colour", () => {
  it("only on a terminal, never with NO_COLOR (any value) or TERM=dumb", () => {
    expect(colorEnabled({}, true)).toBe(true)
    expect(colorEnabled({}, false)).toBe(false)
    expect(colorEnabled({ NO_COLOR: "" }, true)).toBe(false)
    expect(colorEnabled({ NO_COLOR: "1" }, true)).toBe(false)
    expect(colorEnabled({ TERM: "dumb" }, true)).toBe(false)
    expect(makeStyle(false).red("x")).toBe("x")
    expect(makeStyle(true).red("x")).toBe("\u001b[31mx\u001b[0m")
  })
  it("tables align on printed width, ignoring colour codes", () => {
    const s = makeStyle(true)
    const out = table(makeStyle(false), ["A", "B"], [[s.red("x"), "1"], ["yy", "22"]], ["l", "r"]).split("\n")
    expect(out[0]).toBe("A    B")
    expect(out[2]).toBe("yy  22")
  })
})

describe("figures", () => {
  it("money in minor units, by the currency's digits; null rates are a dash", () => {
    expect(money({ amount: 123456, currency: "USD" })).toBe("USD 1,234.56")
    expect(money({ amount: 1500, currency: "JPY" })).toBe("JPY 1,500")
    expect(money(null)).toBe("—")
    expect(percent(0.0512)).toBe("5.1%")
    expect(percent(null)).toBe("—")
  })
  it("masks a secret to svc_ + its last 4; knows loopback hosts", () => {
    expect(maskSecret("svc_abcdefghijklmnopqrstuvwxyz0123456789")).toBe("svc_…6789")
    for (const h of ["localhost", "127.0.0.1", "127.9.9.9", "[::1]", "app.localhost"]) {
      expect(isLoopback(h), h).toBe(true)
    }
    for (const h of ["example.com", "10.0.0.1", "128.0.0.1", "localhost.evil.com"]) expect(isLoopback(h), h).toBe(false)
  })
})
