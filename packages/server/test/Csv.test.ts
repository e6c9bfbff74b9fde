/** CSV cells and text (reports/Csv.ts): RFC 4180 quoting, and formula starts neutralised in text cells only. */
import { describe, expect, it } from "@effect/vitest"
import { csvCell, csvText } from "../src/reports/Csv.ts"

describe("csvCell", () => {
  it("neutralises every formula start in text: = + - @ tab carriage return", () => {
    expect(csvCell("=1+1")).toBe("'=1+1")
    expect(csvCell("+49 30 1234")).toBe("'+49 30 1234")
    expect(csvCell("-2+3")).toBe("'-2+3")
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)")
    expect(csvCell("\t=cmd|' /C calc'!A0")).toBe("'\t=cmd|' /C calc'!A0")
    expect(csvCell("\r=1")).toBe("\"'\r=1\"")
    expect(csvCell("=HYPERLINK(\"http://x\",\"a\")")).toBe("\"'=HYPERLINK(\"\"http://x\"\",\"\"a\"\")\"")
  })
  it("leaves other text, numbers (negative ones too) and booleans as they are; null is empty", () => {
    expect(csvCell("Dora Ruiz")).toBe("Dora Ruiz")
    expect(csvCell("a=b")).toBe("a=b")
    expect(csvCell(-1500)).toBe("-1500")
    expect(csvCell(0.0525)).toBe("0.0525")
    expect(csvCell(true)).toBe("true")
    expect(csvCell(null)).toBe("")
    expect(csvCell("")).toBe("")
  })
  it("quotes a cell with a comma, a quote or a line break, doubling its quotes", () => {
    expect(csvCell("Ruiz, Dora")).toBe("\"Ruiz, Dora\"")
    expect(csvCell("say \"hi\"")).toBe("\"say \"\"hi\"\"\"")
    expect(csvCell("two\nlines")).toBe("\"two\nlines\"")
  })
})

describe("csvText", () => {
  it("a header row and CRLF after every row", () => {
    expect(
      csvText({
        header: ["day", "amount", "currency"],
        rows: [["2026-11-01", 1200, "USD"], ["2026-11-02", null, "EUR"]]
      })
    )
      .toBe("day,amount,currency\r\n2026-11-01,1200,USD\r\n2026-11-02,,EUR\r\n")
    expect(csvText({ header: ["a"], rows: [] })).toBe("a\r\n")
  })
})
