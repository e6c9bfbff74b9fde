/**
 * The provider URL variables through Config: checked at start-up with every other setting, and read again
 * where a connection is made (the integration's own base URL first, the provider's default last).
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { resolveBaseUrl } from "../src/integrations/Connector.ts"
import { loadAppConfig } from "../src/platform/Config.ts"
import { SettingsError } from "../src/platform/Settings.ts"

const withEnv = <A, E>(effect: Effect.Effect<A, E>, env: Record<string, string>) =>
  Effect.provideService(effect, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))

const stripe = { baseUrlEnv: "STRIPE_API_BASE", defaultBaseUrl: "https://api.stripe.com" }

describe("provider URLs", () => {
  it.effect("a bad one is listed with the other bad variables at start-up", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        withEnv(loadAppConfig(false), {
          PORT: "eighty",
          STRIPE_API_BASE: "api.stripe.test",
          GOOGLE_TOKEN_URL: "ftp://tokens.test"
        })
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      expect(error?._tag === "Fail" && error.error instanceof SettingsError ? error.error.problems : null).toEqual([
        "PORT must be an integer between 0 and 65535, got \"eighty\"",
        "STRIPE_API_BASE must be an absolute http(s) URL, got \"api.stripe.test\"",
        "GOOGLE_TOKEN_URL must be an absolute http(s) URL, got \"ftp://tokens.test\""
      ])
    }))

  it.effect("good ones and blank ones start", () =>
    Effect.gen(function*() {
      const config = yield* withEnv(loadAppConfig(false), {
        STRIPE_API_BASE: "http://127.0.0.1:9999/stripe",
        PLAUSIBLE_API_BASE: "  "
      })
      expect(config.port).toBe(8787)
      expect(Object.keys(config)).not.toContain("providerUrls")
    }))

  it.effect("override > variable > default, without a trailing slash", () =>
    Effect.gen(function*() {
      const env = { STRIPE_API_BASE: "http://127.0.0.1:9999/stripe/" }
      expect(yield* withEnv(resolveBaseUrl(stripe, "https://sandbox.test/"), env)).toBe("https://sandbox.test")
      expect(yield* withEnv(resolveBaseUrl(stripe, null), env)).toBe("http://127.0.0.1:9999/stripe")
      expect(yield* withEnv(resolveBaseUrl(stripe, null), {})).toBe("https://api.stripe.com")
      expect(yield* withEnv(resolveBaseUrl({ baseUrlEnv: null, defaultBaseUrl: "demo:" }, null), env)).toBe("demo:")
    }))

  it.effect("a bad variable at the point of use is the sentence naming it, not a crash", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(withEnv(resolveBaseUrl(stripe, null), { STRIPE_API_BASE: "stripe" }))
      expect(failure).toBe("STRIPE_API_BASE must be an absolute http(s) URL, got \"stripe\"")
    }))
})
