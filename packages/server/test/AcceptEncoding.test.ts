import { describe, expect, it } from "@effect/vitest"
import { acceptsGzip } from "../src/http/AcceptEncoding.ts"

describe("Accept-Encoding: may the answer be gzip", () => {
  it("yes for what node's fetch, curl --compressed and browsers send", () => {
    expect(acceptsGzip("gzip, deflate")).toBe(true)
    expect(acceptsGzip("deflate, gzip;q=1.0, *;q=0.5")).toBe(true)
    expect(acceptsGzip("gzip, deflate, br, zstd")).toBe(true)
    expect(acceptsGzip("GZIP")).toBe(true)
    expect(acceptsGzip("x-gzip")).toBe(true)
    expect(acceptsGzip("br;q=1, *;q=0.1")).toBe(true)
  })
  it("no when absent, empty, not listed, or refused by weight", () => {
    expect(acceptsGzip(undefined)).toBe(false)
    expect(acceptsGzip("")).toBe(false)
    expect(acceptsGzip("identity")).toBe(false)
    expect(acceptsGzip("deflate, br")).toBe(false)
    expect(acceptsGzip("gzip;q=0")).toBe(false)
    expect(acceptsGzip("gzip; q=0.000, *")).toBe(false)
    expect(acceptsGzip("*;q=0")).toBe(false)
    expect(acceptsGzip("gzip;q=abc")).toBe(false)
  })
})
