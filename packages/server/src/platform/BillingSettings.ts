/**
 * The subscription billing settings (docs/billing.md), read with the others in platform/Config.ts:
 *
 *   BILLING_STRIPE_SECRET_KEY      the service's own Stripe secret key (`sk_…`, or a restricted `rk_…`)
 *   BILLING_STRIPE_WEBHOOK_SECRET  the webhook endpoint's signing secret (`whsec_…`)
 *   BILLING_PRICE_ID               the monthly price (`price_…`)
 *   BILLING_PRICE_ID_YEARLY        optional: the yearly price
 *   STRIPE_API_BASE                Stripe's API (the connector's variable too): a fake or a proxy in tests
 *
 * All of the first three, or none: without them billing is off and subscriptions are the operator's (the admin
 * CLI). A partial set is a start-up error naming what is missing, never a half-working checkout.
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { providerUrl } from "./ProviderUrls.ts"
import { collect, parsed, secret, SettingsError } from "./Settings.ts"

export const STRIPE_API = "https://api.stripe.com"

export interface BillingSettings {
  readonly secretKey: Redacted.Redacted<string>
  readonly webhookSecret: Redacted.Redacted<string>
  readonly priceId: string
  /** null: monthly only. */
  readonly priceIdYearly: string | null
  /** Without a trailing slash. */
  readonly apiBase: string
}

const prefixed = (name: string, prefixes: ReadonlyArray<string>, example: string) => (value: string) =>
  prefixes.some((p) => value.startsWith(p)) && !/\s/.test(value)
    ? null
    : `${name} must start with ${prefixes.join(" or ")} (${example})`

const priceId = (name: string) =>
  parsed<string | null>(name, null, (raw) =>
    /^price_[A-Za-z0-9_]+$/.test(raw)
      ? Result.succeed(raw)
      : Result.fail(`${name} must be a Stripe price id such as price_1Q2w3E4r, got "${raw}"`))

/** null: billing is off (operator-managed subscriptions). */
export const billingSettings: Effect.Effect<BillingSettings | null, SettingsError> = collect({
  secretKey: secret(
    "BILLING_STRIPE_SECRET_KEY",
    prefixed("BILLING_STRIPE_SECRET_KEY", ["sk_", "rk_"], "a key from the Stripe dashboard's API keys")
  ),
  webhookSecret: secret(
    "BILLING_STRIPE_WEBHOOK_SECRET",
    prefixed("BILLING_STRIPE_WEBHOOK_SECRET", ["whsec_"], "the webhook endpoint's signing secret")
  ),
  priceId: priceId("BILLING_PRICE_ID"),
  priceIdYearly: priceId("BILLING_PRICE_ID_YEARLY"),
  apiBase: providerUrl("STRIPE_API_BASE")
}).pipe(
  Effect.flatMap(({ apiBase, priceId, priceIdYearly, secretKey, webhookSecret }) => {
    const required = {
      BILLING_STRIPE_SECRET_KEY: secretKey,
      BILLING_STRIPE_WEBHOOK_SECRET: webhookSecret,
      BILLING_PRICE_ID: priceId
    }
    const missing = Object.entries(required).filter(([, v]) => v === null).map(([k]) => k)
    if (missing.length === 3 && priceIdYearly === null) return Effect.succeed(null)
    if (missing.length > 0) {
      return Effect.fail(
        new SettingsError({
          problems: [
            `Billing needs BILLING_STRIPE_SECRET_KEY, BILLING_STRIPE_WEBHOOK_SECRET and BILLING_PRICE_ID together; ` +
            `missing: ${missing.join(", ")}`
          ]
        })
      )
    }
    return Effect.succeed({
      secretKey: secretKey!,
      webhookSecret: webhookSecret!,
      priceId: priceId!,
      priceIdYearly,
      apiBase: (apiBase ?? STRIPE_API).replace(/\/+$/, "")
    })
  })
)
