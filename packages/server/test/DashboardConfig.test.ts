/** The dashboard's settings (Config.ts): defaults, normalisation, and one clear sentence per bad value. */
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { readConfig } from "../src/Config.ts"

describe("dashboard settings", () => {
  it("defaults: no PUBLIC_URL, no SMTP, a random signing key, 60 min idle, 14 days absolute", () => {
    const config = readConfig({})
    expect(config).toMatchObject({ publicUrl: null, smtpUrl: null, signingKey: null, sessionIdleMinutes: 60, sessionMaxDays: 14 })
  })

  it("PUBLIC_URL is kept as its origin", () => {
    expect(readConfig({ PUBLIC_URL: "https://health.example.com/some/path/" }).publicUrl).toBe("https://health.example.com")
    expect(() => readConfig({ PUBLIC_URL: "health.example.com" })).toThrow(/PUBLIC_URL must be an http or https URL/)
    expect(() => readConfig({ PUBLIC_URL: "ftp://health.example.com" })).toThrow(/PUBLIC_URL must be an http or https URL/)
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
    expect(readConfig({ SITEHEALTH_SESSION_IDLE_MINUTES: "30", SITEHEALTH_SESSION_MAX_DAYS: "7" })).toMatchObject({
      sessionIdleMinutes: 30,
      sessionMaxDays: 7
    })
    expect(() => readConfig({ SITEHEALTH_SESSION_IDLE_MINUTES: "0" })).toThrow(/SITEHEALTH_SESSION_IDLE_MINUTES must be an integer/)
  })
})
