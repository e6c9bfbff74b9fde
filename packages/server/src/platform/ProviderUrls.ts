/**
 * The provider URL variables (STRIPE_API_BASE, PLAUSIBLE_API_BASE, GSC_API_BASE, GOOGLE_TOKEN_URL): sandboxes
 * and local fakes. Checked with every other setting at start-up (platform/Config.ts), so a typo stops the server with
 * the rest of the list instead of failing each sync later; read again where a connection is made, through the
 * current ConfigProvider, so a process that sets one after start-up (a test, a fault script's child) is heard.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { collect, describeConfigError, parsed } from "./Settings.ts"

export const PROVIDER_URL_VARIABLES = [
  "STRIPE_API_BASE",
  "PLAUSIBLE_API_BASE",
  "GSC_API_BASE",
  "GOOGLE_TOKEN_URL"
] as const

/** An absolute http(s) URL; null when unset or blank. */
export const providerUrl = (name: string) =>
  parsed<string | null>(name, null, (raw) => {
    try {
      const url = new URL(raw)
      if (url.protocol === "http:" || url.protocol === "https:") return Result.succeed(raw)
    } catch {
      // falls through
    }
    return Result.fail(`${name} must be an absolute http(s) URL, got "${raw}"`)
  })

/** Every provider URL variable, for the start-up check. */
export const providerUrlSettings = collect({
  STRIPE_API_BASE: providerUrl("STRIPE_API_BASE"),
  PLAUSIBLE_API_BASE: providerUrl("PLAUSIBLE_API_BASE"),
  GSC_API_BASE: providerUrl("GSC_API_BASE"),
  GOOGLE_TOKEN_URL: providerUrl("GOOGLE_TOKEN_URL")
})

/** One variable's value at the point of use; the failure is the sentence naming it. */
export const readProviderUrl = (name: string): Effect.Effect<string | null, string> =>
  Effect.mapError(providerUrl(name), describeConfigError)
