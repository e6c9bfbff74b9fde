/** readConfig: the scale-out settings (SITEHEALTH_WORKER, the shutdown bounds) and their errors. */
import { describe, expect, it } from "@effect/vitest"
import { readConfig } from "../src/platform/Config.ts"

describe("SITEHEALTH_WORKER", () => {
  it("is on when unset or empty: one `npm start` does everything", () => {
    expect(readConfig({}).worker).toBe(true)
    expect(readConfig({ SITEHEALTH_WORKER: "" }).worker).toBe(true)
    expect(readConfig({ SITEHEALTH_WORKER: "  " }).worker).toBe(true)
  })

  it.each(["1", "on", "true", "yes", "ON", "True", " yes "])("%j turns it on", (value) => {
    expect(readConfig({ SITEHEALTH_WORKER: value }).worker).toBe(true)
  })

  it.each(["0", "off", "false", "no", "OFF", "False", " no "])("%j turns it off", (value) => {
    expect(readConfig({ SITEHEALTH_WORKER: value }).worker).toBe(false)
  })

  it.each(["2", "disabled", "of", "n", "-1"])(
    "%j is refused at start-up with the accepted values, not read as on or off",
    (value) => {
      expect(() => readConfig({ SITEHEALTH_WORKER: value })).toThrow(
        `SITEHEALTH_WORKER must be one of 1, on, true, yes (run the background worker in this process) or 0, off, ` +
          `false, no (leave it to \`npm run worker\`), got "${value}"`
      )
    }
  )
})

describe("graceful shutdown bounds", () => {
  it("default to a 10 s drain and no delay", () => {
    const config = readConfig({})
    expect([config.shutdownTimeoutMs, config.shutdownDelayMs]).toEqual([10_000, 0])
  })

  it("are read in milliseconds", () => {
    const config = readConfig({ SITEHEALTH_SHUTDOWN_TIMEOUT_MS: "2500", SITEHEALTH_SHUTDOWN_DELAY_MS: "5000" })
    expect([config.shutdownTimeoutMs, config.shutdownDelayMs]).toEqual([2_500, 5_000])
  })

  it("refuse what is not a whole number of milliseconds in range, naming the variable", () => {
    expect(() => readConfig({ SITEHEALTH_SHUTDOWN_TIMEOUT_MS: "10s" })).toThrow(
      `SITEHEALTH_SHUTDOWN_TIMEOUT_MS must be an integer between 0 and 600000, got "10s"`
    )
    expect(() => readConfig({ SITEHEALTH_SHUTDOWN_DELAY_MS: "-1" })).toThrow(
      `SITEHEALTH_SHUTDOWN_DELAY_MS must be an integer between 0 and 600000, got "-1"`
    )
  })
})

describe("SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS", () => {
  it("defaults to the embedded cluster's 512MB", () => {
    expect(readConfig({}).embeddedPgSharedBuffers).toBe("512MB")
  })

  it.each(["256MB", "1GB", "131072kB"])("%j is passed on as it is", (value) => {
    expect(readConfig({ SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS: value }).embeddedPgSharedBuffers).toBe(value)
  })

  it.each(["512", "0MB", "1.5GB", "lots", "512mb"])(
    "%j is refused at start-up, naming the variable and the form",
    (value) => {
      expect(() => readConfig({ SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS: value })).toThrow(
        `SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS must be a whole number with kB, MB or GB, such as 512MB or 1GB, got ` +
          `"${value}"`
      )
    }
  )
})

describe("SITEHEALTH_DB_POOL_SIZE", () => {
  it("is 20 connections per process unless set; a value outside 1–1000 or not a number is refused by name", () => {
    expect(readConfig({}).databasePoolSize).toBe(20)
    expect(readConfig({ SITEHEALTH_DB_POOL_SIZE: "5" }).databasePoolSize).toBe(5)
    for (const value of ["0", "1001", "ten"]) {
      expect(() => readConfig({ SITEHEALTH_DB_POOL_SIZE: value })).toThrow(/SITEHEALTH_DB_POOL_SIZE/)
    }
  })
})
