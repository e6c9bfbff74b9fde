/** The dashboard's settings (platform/Config.ts): defaults, normalisation, and one clear sentence per bad value. */
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { readConfig } from "../src/platform/Config.ts"

describe("dashboard settings", () => {
  it("defaults: no PUBLIC_URL, no SMTP, a random signing key, ASVS level 2 sessions (30 min idle, 12 h), 14 days when staying signed in", () => {
    const config = readConfig({})
    expect(config).toMatchObject({
      publicUrl: null,
      smtpUrl: null,
      signingKey: null,
      sessionIdleMinutes: 30,
      sessionMaxHours: 12,
      sessionRememberDays: 14
    })
  })

  it("PUBLIC_URL is kept as its origin", () => {
    expect(readConfig({ PUBLIC_URL: "https://health.example.com/some/path/" }).publicUrl).toBe(
      "https://health.example.com"
    )
    expect(() => readConfig({ PUBLIC_URL: "health.example.com" })).toThrow(/PUBLIC_URL must be an http or https URL/)
    expect(() => readConfig({ PUBLIC_URL: "ftp://health.example.com" })).toThrow(
      /PUBLIC_URL must be an http or https URL/
    )
  })

  it("SMTP_URL and SITEHEALTH_SIGNING_KEY are redacted and checked without echoing their value", () => {
    const config = readConfig({ SMTP_URL: "smtp://user:hunter2@mail:587", SITEHEALTH_SIGNING_KEY: "k".repeat(32) })
    expect(Redacted.value(config.smtpUrl!)).toBe("smtp://user:hunter2@mail:587")
    expect(String(config.smtpUrl)).not.toContain("hunter2")
    expect(() => readConfig({ SMTP_URL: "mail.example.com:hunter2" })).toThrow(/SMTP_URL must look like/)
    try {
      readConfig({ SMTP_URL: "mail.example.com:hunter2", SITEHEALTH_SIGNING_KEY: "short-secret" })
      expect.unreachable()
    } catch (error) {
      const message = String((error as Error).message)
      expect(message).toMatch(/SITEHEALTH_SIGNING_KEY must be at least 32 characters/)
      expect(message).toMatch(/SMTP_URL/)
      expect(message).not.toContain("hunter2")
      expect(message).not.toContain("short-secret")
    }
  })

  it("session lifetimes are bounded integers", () => {
    expect(readConfig({
      SITEHEALTH_SESSION_IDLE_MINUTES: "15",
      SITEHEALTH_SESSION_MAX_HOURS: "8",
      SITEHEALTH_SESSION_REMEMBER_DAYS: "30"
    })).toMatchObject({ sessionIdleMinutes: 15, sessionMaxHours: 8, sessionRememberDays: 30 })
    expect(() => readConfig({ SITEHEALTH_SESSION_MAX_HOURS: "0" })).toThrow(
      /SITEHEALTH_SESSION_MAX_HOURS must be an integer/
    )
    expect(() => readConfig({ SITEHEALTH_SESSION_IDLE_MINUTES: "0" })).toThrow(
      /SITEHEALTH_SESSION_IDLE_MINUTES must be an integer/
    )
  })
})
