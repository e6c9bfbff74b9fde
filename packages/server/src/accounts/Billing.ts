/**
 * The subscription's state machine (docs/billing.md), pure: what a Stripe subscription's current state means for
 * the account's entitlement columns (`subscription_status`, `subscription_until`: the only ones the API's one
 * Authentication query reads), and the state the account page shows.
 *
 *   trialing ──subscribe──▶ active ──payment fails──▶ past_due ──paid──▶ active
 *      │                     │  ▲                       │ GRACE_DAYS without payment, or Stripe cancels
 *      │ trial ends          │  └─ resume ─ canceling   ▼
 *      └──────────▶ ended ◀──┴─ canceled ── (period end) ┘        ended ──subscribe──▶ active
 *
 * `ended` is exactly "not entitled": the API answers 402 `trial_expired` then, and only then. A subscription
 * taken during the trial does not shorten it: the trial's days count first.
 */
import type { AccountRecord, SubscriptionStatus } from "../store/Records.ts"

/** How long a failed renewal keeps the API live (Stripe retries the card meanwhile). */
export const GRACE_DAYS = 7
const DAY_MS = 86_400_000

/** Stripe's subscription statuses (API 2020-08-27 and later). */
export type StripeSubscriptionStatus =
  | "incomplete"
  | "incomplete_expired"
  | "trialing"
  | "active"
  | "past_due"
  | "canceled"
  | "unpaid"
  | "paused"

/** The statuses in which a subscription still counts as the customer's (it may come back to active). */
export const LIVE_STATUSES: ReadonlySet<string> = new Set(["trialing", "active", "past_due", "unpaid"])

/** What we read of a subscription (`GET /v1/subscriptions/{id}`). */
export interface SubscriptionFacts {
  readonly id: string
  readonly customer: string
  readonly status: StripeSubscriptionStatus
  readonly priceId: string | null
  /** The current period's end: the next renewal, or the end of a subscription set to cancel. */
  readonly currentPeriodEnd: Date | null
  readonly cancelAtPeriodEnd: boolean
  /** When a canceled subscription ended. */
  readonly endedAt: Date | null
}

/** The account's billing row: its Stripe customer and the subscription it follows. */
export interface BillingRecord {
  readonly accountId: string
  readonly customerId: string
  readonly subscriptionId: string | null
  readonly stripeStatus: string | null
  readonly priceId: string | null
  readonly currentPeriodEnd: Date | null
  readonly cancelAtPeriodEnd: boolean
  readonly pastDueSince: Date | null
  readonly updatedAt: Date
}

/** What applying a subscription's state writes: the billing row's fields, and the entitlement (null: unchanged). */
export interface Transition {
  readonly billing: Omit<BillingRecord, "accountId" | "customerId" | "updatedAt">
  readonly entitlement: { readonly status: SubscriptionStatus; readonly until: Date } | null
}

/**
 * Whether an event's subscription becomes (or stays) the account's: its own, the first, or a live one replacing
 * one that is over (a resubscription). A late event about an old, ended subscription never overrides the new one.
 */
export const follows = (current: BillingRecord, sub: SubscriptionFacts): boolean =>
  current.subscriptionId === null || current.subscriptionId === sub.id ||
  (LIVE_STATUSES.has(sub.status) && !(current.stripeStatus !== null && LIVE_STATUSES.has(current.stripeStatus)))

/** The subscription's current state (never the event's) applied to the account at `now`. */
export const transition = (current: BillingRecord, sub: SubscriptionFacts, now: Date): Transition => {
  const pastDue = sub.status === "past_due" || sub.status === "unpaid"
  // The grace counts from the first time we saw it unpaid, not from each retry's event.
  const pastDueSince = pastDue
    ? (current.subscriptionId === sub.id && current.pastDueSince !== null ? current.pastDueSince : now)
    : null
  const billing = {
    subscriptionId: sub.id,
    stripeStatus: sub.status,
    priceId: sub.priceId,
    currentPeriodEnd: sub.currentPeriodEnd,
    cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
    pastDueSince
  }
  return { billing, entitlement: entitlementOf(sub, pastDueSince, now) }
}

const entitlementOf = (
  sub: SubscriptionFacts,
  pastDueSince: Date | null,
  now: Date
): Transition["entitlement"] => {
  switch (sub.status) {
    case "trialing":
    case "active": {
      // Paid up to the period's end. A renewal's word from Stripe moves it on; if that word never lands, the
      // API stays live GRACE_DAYS past the end rather than cutting a paying customer off at the second.
      const end = sub.currentPeriodEnd ?? now
      return sub.cancelAtPeriodEnd
        ? { status: "canceled", until: end }
        : { status: "active", until: new Date(end.getTime() + GRACE_DAYS * DAY_MS) }
    }
    case "past_due":
    case "unpaid":
      return { status: "past_due", until: new Date(pastDueSince!.getTime() + GRACE_DAYS * DAY_MS) }
    case "canceled":
    case "incomplete_expired":
    case "paused":
      return { status: "canceled", until: sub.endedAt !== null && sub.endedAt < now ? sub.endedAt : now }
    case "incomplete":
      // The first payment is not through yet: nothing to grant, nothing to take away.
      return null
  }
}

export type BillingState = "trialing" | "active" | "past_due" | "canceling" | "ended"

type Entitlement = Pick<AccountRecord, "trialEndsAt" | "subscriptionStatus" | "subscriptionUntil">

/** The state the account is in at `now`, from the columns the API reads. `ended` ⇔ not entitled. */
export const billingState = (account: Entitlement, now: Date): BillingState => {
  const t = now.getTime()
  const until = account.subscriptionUntil
  switch (account.subscriptionStatus) {
    case "active":
      if (until === null || until.getTime() > t) return "active"
      break
    case "past_due":
      if (until !== null && until.getTime() > t) return "past_due"
      break
    case "canceled":
      if (until !== null && until.getTime() > t) return "canceling"
      break
    case "none":
      break
  }
  return account.trialEndsAt.getTime() > t ? "trialing" : "ended"
}
