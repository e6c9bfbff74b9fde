/**
 * The service's own Stripe account, for its subscriptions (docs/billing.md): customers, Checkout Sessions,
 * Customer Portal sessions, and reading a subscription's current state. Over the providers' HTTP client
 * (integrations/ProviderHttp.ts: timeouts, polite retries); the secret key travels in the Authorization header
 * only. Creating a customer sends an Idempotency-Key per account, so a retried or doubled request makes one.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { StripeSubscriptionStatus, SubscriptionFacts } from "../accounts/Billing.ts"
import { makeProviderHttp, type ProviderHttpShape } from "../integrations/ProviderHttp.ts"
import type { BillingSettings } from "../platform/BillingSettings.ts"
import { AppConfig } from "../platform/Config.ts"

/** A Stripe call that failed (after the client's retries), or an answer we cannot read. */
export class StripeBillingError extends Schema.TaggedError<StripeBillingError>()("StripeBillingError", {
  message: Schema.String
}) {}

const Created = Schema.Struct({ id: Schema.String, url: Schema.optionalKey(Schema.NullOr(Schema.String)) })

const Unix = Schema.NullOr(Schema.Finite)
const SubscriptionJson = Schema.Struct({
  id: Schema.String,
  customer: Schema.Union([Schema.String, Schema.Struct({ id: Schema.String })]),
  status: Schema.Literals([
    "incomplete",
    "incomplete_expired",
    "trialing",
    "active",
    "past_due",
    "canceled",
    "unpaid",
    "paused"
  ]),
  cancel_at_period_end: Schema.optionalKey(Schema.Boolean),
  // Before API 2025-03-31 on the subscription; since, on each item.
  current_period_end: Schema.optionalKey(Unix),
  ended_at: Schema.optionalKey(Unix),
  items: Schema.optionalKey(Schema.Struct({
    data: Schema.Array(Schema.Struct({
      price: Schema.optionalKey(Schema.NullOr(Schema.Struct({ id: Schema.String }))),
      current_period_end: Schema.optionalKey(Unix)
    }))
  }))
})

const dateOf = (seconds: number | null | undefined): Date | null =>
  seconds === null || seconds === undefined ? null : new Date(seconds * 1000)

export const subscriptionFacts = (json: typeof SubscriptionJson.Type): SubscriptionFacts => {
  const item = json.items?.data[0]
  return {
    id: json.id,
    customer: typeof json.customer === "string" ? json.customer : json.customer.id,
    status: json.status as StripeSubscriptionStatus,
    priceId: item?.price?.id ?? null,
    currentPeriodEnd: dateOf(json.current_period_end ?? item?.current_period_end),
    cancelAtPeriodEnd: json.cancel_at_period_end ?? false,
    endedAt: dateOf(json.ended_at)
  }
}

export interface CheckoutInput {
  readonly accountId: string
  readonly customerId: string
  readonly priceId: string
  readonly successUrl: string
  readonly cancelUrl: string
  /** Stripe starts the subscription as trialing until then (the rest of our trial): no charge before. */
  readonly trialEnd: Date | null
}

export interface StripeBillingShape {
  /** null: billing is off (operator-managed subscriptions). */
  readonly settings: BillingSettings | null
  readonly createCustomer: (
    input: { readonly accountId: string; readonly email: string }
  ) => Effect.Effect<string, StripeBillingError>
  /** The Checkout page's URL. */
  readonly createCheckout: (input: CheckoutInput) => Effect.Effect<string, StripeBillingError>
  /** The Customer Portal's URL. */
  readonly createPortal: (
    input: { readonly customerId: string; readonly returnUrl: string }
  ) => Effect.Effect<string, StripeBillingError>
  readonly getSubscription: (id: string) => Effect.Effect<SubscriptionFacts, StripeBillingError>
}

const off = (): Effect.Effect<never, StripeBillingError> =>
  Effect.fail(new StripeBillingError({ message: "billing is not configured" }))

export const makeStripeBilling = (settings: BillingSettings | null, http: ProviderHttpShape): StripeBillingShape => {
  if (settings === null) {
    return { settings, createCustomer: off, createCheckout: off, createPortal: off, getSubscription: off }
  }
  const call = <S extends Schema.Top>(
    what: string,
    schema: S,
    request: { method: "GET" | "POST"; path: string; form?: Record<string, string>; idempotencyKey?: string }
  ): Effect.Effect<S["Type"], StripeBillingError> =>
    http.request({
      method: request.method,
      url: `${settings.apiBase}${request.path}`,
      headers: {
        authorization: `Bearer ${Redacted.value(settings.secretKey)}`,
        ...(request.idempotencyKey === undefined ? {} : { "idempotency-key": request.idempotencyKey })
      },
      ...(request.form === undefined ? {} : { form: request.form })
    }).pipe(
      Effect.flatMap((response) => Schema.decodeUnknownEffect(schema as any)(response.json)),
      Effect.mapError((e) =>
        new StripeBillingError({
          message: e._tag === "ProviderError" ? `${what}: ${e.message}` : `${what}: Stripe's answer is not as expected`
        })
      ),
      Effect.withSpan(`StripeBilling.${what}`)
    ) as any

  const urlOf = (what: string) => (created: typeof Created.Type) =>
    typeof created.url === "string"
      ? Effect.succeed(created.url)
      : Effect.fail(new StripeBillingError({ message: `${what}: Stripe's answer has no url` }))

  return {
    settings,
    createCustomer: ({ accountId, email }) =>
      Effect.map(
        call("createCustomer", Created, {
          method: "POST",
          path: "/v1/customers",
          form: { email, "metadata[account_id]": accountId },
          idempotencyKey: `sitehealth-customer-${accountId}`
        }),
        (c) => c.id
      ),
    createCheckout: (input) =>
      Effect.flatMap(
        call("createCheckout", Created, {
          method: "POST",
          path: "/v1/checkout/sessions",
          form: {
            mode: "subscription",
            customer: input.customerId,
            client_reference_id: input.accountId,
            "line_items[0][price]": input.priceId,
            "line_items[0][quantity]": "1",
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
            "subscription_data[metadata][account_id]": input.accountId,
            ...(input.trialEnd === null
              ? {}
              : { "subscription_data[trial_end]": String(Math.floor(input.trialEnd.getTime() / 1000)) })
          }
        }),
        urlOf("createCheckout")
      ),
    createPortal: ({ customerId, returnUrl }) =>
      Effect.flatMap(
        call("createPortal", Created, {
          method: "POST",
          path: "/v1/billing_portal/sessions",
          form: { customer: customerId, return_url: returnUrl }
        }),
        urlOf("createPortal")
      ),
    getSubscription: (id) =>
      Effect.map(
        call("getSubscription", SubscriptionJson, {
          method: "GET",
          path: `/v1/subscriptions/${encodeURIComponent(id)}`
        }),
        subscriptionFacts
      )
  }
}

export class StripeBilling extends Context.Service<StripeBilling, StripeBillingShape>()("sitehealth/StripeBilling") {
  /** Over the config's billing settings. Short waits: an owner watches the checkout, Stripe the webhook. */
  static readonly layer = Layer.effect(
    StripeBilling,
    Effect.map(
      AppConfig,
      (config) =>
        makeStripeBilling(config.billing, makeProviderHttp({ timeoutMs: 15_000, maxAttempts: 2, maxWaitMs: 5_000 }))
    )
  )
}
