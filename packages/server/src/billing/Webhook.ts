/**
 * A verified Stripe event applied to its account (docs/billing.md). The event says only WHICH subscription
 * changed: its state is read from Stripe (`GET /v1/subscriptions/{id}`) and applied as it is now, so events
 * arriving late, twice or out of order cannot set an old state. Each event id is stored in the same transaction
 * as the state it led to: a duplicate delivery changes nothing, and a failure (Stripe unreachable) stores
 * nothing, so Stripe's retry processes it again.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { follows, transition } from "../accounts/Billing.ts"
import { BillingRepo } from "../accounts/BillingRepo.ts"
import { StripeBilling } from "./StripeBilling.ts"

export const HANDLED_EVENTS: ReadonlySet<string> = new Set([
  "checkout.session.completed",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "invoice.paid",
  "invoice.payment_failed"
])

export const StripeEvent = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
  type: Schema.String,
  data: Schema.Struct({ object: Schema.Record(Schema.String, Schema.Unknown) })
})
export type StripeEvent = typeof StripeEvent.Type

/** processed: applied; duplicate: seen before; ignored: not ours to act on (stored, not retried). */
export type WebhookOutcome = "processed" | "duplicate" | "ignored"

const idOf = (value: unknown): string | null =>
  typeof value === "string" && value !== ""
    ? value
    : typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string"
    ? (value as { id: string }).id
    : null

/** The customer, the subscription and (from a checkout) the account an event names. */
export const eventSubject = (event: StripeEvent) => {
  const o = event.data.object
  if (event.type === "checkout.session.completed") {
    return {
      customer: idOf(o.customer),
      subscription: idOf(o.subscription),
      accountId: typeof o.client_reference_id === "string" ? o.client_reference_id : null
    }
  }
  if (event.type.startsWith("customer.subscription.")) {
    return { customer: idOf(o.customer), subscription: idOf(o.id), accountId: null }
  }
  // invoice.*: `subscription` before API 2025-03-31, `parent.subscription_details.subscription` since.
  const parent = o.parent as { subscription_details?: { subscription?: unknown } } | null | undefined
  return {
    customer: idOf(o.customer),
    subscription: idOf(o.subscription) ?? idOf(parent?.subscription_details?.subscription),
    accountId: null
  }
}

export const handleEvent = Effect.fn("Billing.handleEvent")(function*(event: StripeEvent, now: Date) {
  const repo = yield* BillingRepo
  const stripe = yield* StripeBilling
  const ignore = (reason: string) =>
    Effect.gen(function*() {
      const fresh = yield* repo.recordEvent({ id: event.id, type: event.type, accountId: null, now })
      if (fresh) yield* Effect.logInfo("billing webhook ignored", { event: event.id, type: event.type, reason })
      return (fresh ? "ignored" : "duplicate") as WebhookOutcome
    })

  if (!HANDLED_EVENTS.has(event.type)) return yield* ignore("not a subscription event")
  if (yield* repo.seen(event.id)) return "duplicate" as WebhookOutcome
  const subject = eventSubject(event)
  if (subject.customer === null || subject.subscription === null) return yield* ignore("no customer or subscription")
  const row = yield* repo.findByCustomer(subject.customer)
  if (row === null) return yield* ignore("not a customer of this service")
  if (subject.accountId !== null && subject.accountId !== row.accountId) {
    return yield* ignore("the checkout's account is not the customer's")
  }
  const subscriptionId = subject.subscription
  const outcome = yield* repo.locked(row.accountId, (current) =>
    Effect.gen(function*() {
      const fresh = yield* repo.recordEvent({ id: event.id, type: event.type, accountId: current.accountId, now })
      if (!fresh) return "duplicate" as WebhookOutcome
      const sub = yield* stripe.getSubscription(subscriptionId)
      if (sub.customer !== current.customerId || !follows(current, sub)) return "ignored" as WebhookOutcome
      const next = transition(current, sub, now)
      yield* repo.apply(current.accountId, next, now)
      yield* Effect.logInfo("billing: subscription applied", {
        account: current.accountId,
        event: event.type,
        stripeStatus: sub.status,
        entitlement: next.entitlement?.status ?? "unchanged"
      })
      return "processed" as WebhookOutcome
    }))
  return outcome ?? (yield* ignore("the account's billing row is gone"))
})
