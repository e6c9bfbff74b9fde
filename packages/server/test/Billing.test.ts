/**
 * Billing's pure parts: the Stripe-Signature verifier against Stripe's documented scheme (the cases of Stripe's
 * own libraries' tests), the subscription state machine (every transition), `ended` ⇔ not entitled, and the
 * settings (all or none, secrets redacted).
 */
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { createHmac } from "node:crypto"
import { isEntitled } from "../src/accounts/AccountsRepo.ts"
import {
  type BillingRecord,
  billingState,
  follows,
  GRACE_DAYS,
  type SubscriptionFacts,
  transition
} from "../src/accounts/Billing.ts"
import { verifySignature } from "../src/billing/Signature.ts"
import { subscriptionFacts } from "../src/billing/StripeBilling.ts"
import { readConfig } from "../src/platform/Config.ts"

// As in stripe-node's webhook tests.
const SECRET = "whsec_test_secret"
const PAYLOAD = JSON.stringify({ id: "evt_test_webhook", object: "event" }, null, 2)
const NOW = 1_700_000_000
const v1 = (t: number, payload = PAYLOAD, secret = SECRET) =>
  createHmac("sha256", secret).update(`${t}.${payload}`, "utf8").digest("hex")

describe("Stripe-Signature", () => {
  it("accepts t=…,v1=HMAC-SHA256(secret, `t.body`), as a string or as the raw bytes", () => {
    const header = `t=${NOW},v1=${v1(NOW)}`
    expect(verifySignature(header, PAYLOAD, SECRET, NOW)).toBeNull()
    expect(verifySignature(header, new TextEncoder().encode(PAYLOAD), SECRET, NOW)).toBeNull()
  })
  it("any one of several v1 matching is enough (a secret being rolled); v0 is ignored", () => {
    const header = `t=${NOW},v1=${"0".repeat(64)},v1=${v1(NOW)},v0=${"1".repeat(64)}`
    expect(verifySignature(header, PAYLOAD, SECRET, NOW)).toBeNull()
    expect(verifySignature(`t=${NOW},v0=${v1(NOW)}`, PAYLOAD, SECRET, NOW)).toBe("malformed")
  })
  it("refuses a missing header, one without timestamp or v1, a wrong secret, a changed body", () => {
    expect(verifySignature(undefined, PAYLOAD, SECRET, NOW)).toBe("missing")
    expect(verifySignature("", PAYLOAD, SECRET, NOW)).toBe("missing")
    expect(verifySignature("i'm not even a real signature header", PAYLOAD, SECRET, NOW)).toBe("malformed")
    expect(verifySignature(`v1=${v1(NOW)}`, PAYLOAD, SECRET, NOW)).toBe("malformed")
    expect(verifySignature(`t=${NOW}`, PAYLOAD, SECRET, NOW)).toBe("malformed")
    expect(verifySignature(`t=${NOW},v1=${v1(NOW, PAYLOAD, "whsec_other")}`, PAYLOAD, SECRET, NOW)).toBe("mismatch")
    expect(verifySignature(`t=${NOW},v1=${v1(NOW)}`, `${PAYLOAD} `, SECRET, NOW)).toBe("mismatch")
    // The timestamp is signed too: moving it breaks the signature.
    expect(verifySignature(`t=${NOW + 1},v1=${v1(NOW)}`, PAYLOAD, SECRET, NOW)).toBe("mismatch")
  })
  it("a timestamp more than 300 s from the clock is stale, either way", () => {
    expect(verifySignature(`t=${NOW - 300},v1=${v1(NOW - 300)}`, PAYLOAD, SECRET, NOW)).toBeNull()
    expect(verifySignature(`t=${NOW - 301},v1=${v1(NOW - 301)}`, PAYLOAD, SECRET, NOW)).toBe("stale")
    expect(verifySignature(`t=${NOW + 301},v1=${v1(NOW + 301)}`, PAYLOAD, SECRET, NOW)).toBe("stale")
  })
})

const DAY = 86_400_000
const now = new Date("2026-11-20T12:00:00Z")
const at = (days: number) => new Date(now.getTime() + days * DAY)
const row = (patch: Partial<BillingRecord> = {}): BillingRecord => ({
  accountId: "acc_1",
  customerId: "cus_1",
  subscriptionId: null,
  stripeStatus: null,
  priceId: null,
  currentPeriodEnd: null,
  cancelAtPeriodEnd: false,
  pastDueSince: null,
  updatedAt: now,
  ...patch
})
const sub = (patch: Partial<SubscriptionFacts> = {}): SubscriptionFacts => ({
  id: "sub_1",
  customer: "cus_1",
  status: "active",
  priceId: "price_m",
  currentPeriodEnd: at(30),
  cancelAtPeriodEnd: false,
  endedAt: null,
  ...patch
})
const trialOver = { trialEndsAt: at(-1) }

describe("the state machine", () => {
  it("active: paid to the period's end, live GRACE_DAYS past it should the renewal's word never come", () => {
    const t = transition(row(), sub(), now)
    expect(t.entitlement).toEqual({ status: "active", until: at(30 + GRACE_DAYS) })
    expect(t.billing).toMatchObject({ subscriptionId: "sub_1", stripeStatus: "active", pastDueSince: null })
    const account = { ...trialOver, subscriptionStatus: t.entitlement!.status, subscriptionUntil: t.entitlement!.until }
    expect(billingState(account, now)).toBe("active")
    expect(billingState(account, at(30 + GRACE_DAYS))).toBe("ended")
  })
  it("trialing at Stripe (subscribed during our trial) counts as active", () => {
    expect(transition(row(), sub({ status: "trialing" }), now).entitlement?.status).toBe("active")
  })
  it("past_due: live for GRACE_DAYS from the first failure, not from each retry; then ended", () => {
    const first = transition(row({ subscriptionId: "sub_1" }), sub({ status: "past_due" }), now)
    expect(first.entitlement).toEqual({ status: "past_due", until: at(GRACE_DAYS) })
    const retried = transition(
      row({ ...first.billing }),
      sub({ status: "past_due" }),
      at(3)
    )
    expect(retried.entitlement).toEqual({ status: "past_due", until: at(GRACE_DAYS) })
    const account = { ...trialOver, subscriptionStatus: "past_due" as const, subscriptionUntil: at(GRACE_DAYS) }
    expect(billingState(account, at(GRACE_DAYS - 1))).toBe("past_due")
    expect(billingState(account, at(GRACE_DAYS))).toBe("ended")
    // Paid after all: active again, the grace forgotten.
    const paid = transition(row({ ...first.billing }), sub(), at(2))
    expect(paid.entitlement?.status).toBe("active")
    expect(paid.billing.pastDueSince).toBeNull()
  })
  it("unpaid (Stripe gave up retrying) is past_due with the same grace", () => {
    expect(transition(row(), sub({ status: "unpaid" }), now).entitlement).toEqual({
      status: "past_due",
      until: at(GRACE_DAYS)
    })
  })
  it("cancel at period end: canceling until the period ends, then ended; resumed: active again", () => {
    const t = transition(row(), sub({ cancelAtPeriodEnd: true }), now)
    expect(t.entitlement).toEqual({ status: "canceled", until: at(30) })
    const account = { ...trialOver, subscriptionStatus: "canceled" as const, subscriptionUntil: at(30) }
    expect(billingState(account, at(29))).toBe("canceling")
    expect(billingState(account, at(30))).toBe("ended")
    expect(transition(row(), sub(), now).entitlement?.status).toBe("active")
  })
  it("canceled, expired or paused: ended at once (at Stripe's ended_at when past)", () => {
    for (const status of ["canceled", "incomplete_expired", "paused"] as const) {
      const t = transition(row(), sub({ status, endedAt: at(-2) }), now)
      expect(t.entitlement).toEqual({ status: "canceled", until: at(-2) })
      expect(billingState({ ...trialOver, subscriptionStatus: "canceled", subscriptionUntil: at(-2) }, now)).toBe(
        "ended"
      )
    }
    expect(transition(row(), sub({ status: "canceled", endedAt: null }), now).entitlement?.until).toEqual(now)
  })
  it("incomplete (first payment pending) changes no entitlement", () => {
    expect(transition(row(), sub({ status: "incomplete" }), now).entitlement).toBeNull()
  })
  it("a canceled subscription inside the trial leaves the trial's days", () => {
    const account = { trialEndsAt: at(5), subscriptionStatus: "canceled" as const, subscriptionUntil: now }
    expect(billingState(account, now)).toBe("trialing")
    expect(billingState(account, at(5))).toBe("ended")
  })
  it("resubscribing: a new live subscription replaces an ended one; a late event of the old one does not", () => {
    const ended = row({ subscriptionId: "sub_old", stripeStatus: "canceled" })
    expect(follows(ended, sub({ id: "sub_new" }))).toBe(true)
    const renewed = row({ subscriptionId: "sub_new", stripeStatus: "active" })
    expect(follows(renewed, sub({ id: "sub_old", status: "canceled" }))).toBe(false)
    expect(follows(renewed, sub({ id: "sub_new", status: "canceled" }))).toBe(true)
    expect(follows(row(), sub({ id: "sub_any", status: "canceled" }))).toBe(true)
  })
  it("ended ⇔ not entitled, over every status and instant", () => {
    const untils = [null, at(-1), at(0), at(1)]
    for (const status of ["none", "active", "past_due", "canceled"] as const) {
      for (const trialEndsAt of [at(-1), at(0), at(1)]) {
        for (const subscriptionUntil of untils) {
          const account = { trialEndsAt, subscriptionStatus: status, subscriptionUntil }
          expect(billingState(account, now) === "ended", JSON.stringify(account)).toBe(!isEntitled(account, now))
        }
      }
    }
  })
  it("reads the period's end from the subscription (before 2025-03-31) or its item (since)", () => {
    const base = { id: "sub_1", customer: "cus_1", status: "active" as const }
    expect(subscriptionFacts({ ...base, current_period_end: 1_800_000_000 }).currentPeriodEnd).toEqual(
      new Date(1_800_000_000_000)
    )
    const item = { items: { data: [{ price: { id: "price_y" }, current_period_end: 1_900_000_000 }] } }
    const facts = subscriptionFacts({ ...base, customer: { id: "cus_2" }, ...item })
    expect(facts).toMatchObject({
      customer: "cus_2",
      priceId: "price_y",
      currentPeriodEnd: new Date(1_900_000_000_000)
    })
  })
})

describe("billing settings", () => {
  const full = {
    BILLING_STRIPE_SECRET_KEY: "sk_test_abc123",
    BILLING_STRIPE_WEBHOOK_SECRET: "whsec_abc123",
    BILLING_PRICE_ID: "price_1Monthly"
  }
  it("none: billing off (operator-managed); all three: on, secrets redacted, Stripe's API unless STRIPE_API_BASE", () => {
    expect(readConfig({}).billing).toBeNull()
    const billing = readConfig(full).billing!
    expect(billing).toMatchObject({ priceId: "price_1Monthly", priceIdYearly: null, apiBase: "https://api.stripe.com" })
    expect(Redacted.value(billing.secretKey)).toBe("sk_test_abc123")
    expect(JSON.stringify(billing)).not.toContain("sk_test_abc123")
    expect(String(billing.webhookSecret)).not.toContain("whsec_abc123")
    expect(readConfig({ ...full, STRIPE_API_BASE: "http://127.0.0.1:9/", BILLING_PRICE_ID_YEARLY: "price_2Y" }).billing)
      .toMatchObject({ apiBase: "http://127.0.0.1:9", priceIdYearly: "price_2Y" })
  })
  it("a partial set names what is missing; a malformed key is refused without echoing it", () => {
    expect(() => readConfig({ BILLING_STRIPE_SECRET_KEY: "sk_test_abc123" })).toThrow(
      /missing: BILLING_STRIPE_WEBHOOK_SECRET, BILLING_PRICE_ID/
    )
    expect(() => readConfig({ ...full, BILLING_STRIPE_WEBHOOK_SECRET: "oops-secret" })).toThrow(
      /BILLING_STRIPE_WEBHOOK_SECRET must start with whsec_/
    )
    try {
      readConfig({ ...full, BILLING_STRIPE_SECRET_KEY: "pk_live_visible" })
      expect.unreachable()
    } catch (e) {
      expect(String(e)).toContain("BILLING_STRIPE_SECRET_KEY")
      expect(String(e)).not.toContain("pk_live_visible")
    }
    expect(() => readConfig({ ...full, BILLING_PRICE_ID: "monthly" })).toThrow(/BILLING_PRICE_ID must be/)
  })
})
