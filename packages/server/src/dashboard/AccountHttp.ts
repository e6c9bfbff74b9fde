/**
 * The dashboard's account group: the trial and subscription as the account page shows them, and the way to pay
 * (docs/billing.md) — Subscribe (a Stripe Checkout page) and Manage billing (a customer portal session). Without
 * billing keys both answer 409 `billing_not_configured` and the page says the operator manages subscriptions.
 */
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import type { AccountView, BillingView } from "@sitehealth/domain/DashboardTokens"
import { BadRequest, Conflict, Unavailable } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { AccountsRepo, isEntitled } from "../accounts/AccountsRepo.ts"
import { type BillingRecord, billingState, LIVE_STATUSES } from "../accounts/Billing.ts"
import { BillingRepo } from "../accounts/BillingRepo.ts"
import { StripeBilling, type StripeBillingError } from "../billing/StripeBilling.ts"
import type { BillingSettings } from "../platform/BillingSettings.ts"
import { AppConfig } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import type { AccountRecord } from "../store/Records.ts"
import { normalizeEmail, publicBase, sendLater, setSessionCookie } from "./Auth.ts"
import { AuthRepo } from "./AuthRepo.ts"
import { WebsitesRepo } from "./WebsitesRepo.ts"

const DAY_MS = 86_400_000
/** Stripe wants a subscription's trial_end at least 48 hours ahead; a shorter rest of trial is not carried over. */
const MIN_TRIAL_CARRY_MS = 2 * DAY_MS + 60 * 60 * 1000

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * Deleting the account (owner): the typed address must be the asking owner's; a subscription that renews holds it
 * back (Stripe would go on charging). Logins first (their sessions end), then the account with all it owns.
 */
const deleteAccount = (confirmEmail: string) =>
  Effect.gen(function*() {
    const session = yield* CurrentDashboardSession
    if (normalizeEmail(confirmEmail) !== session.email) {
      return yield* new BadRequest({
        message: "Type your own email address to confirm deleting the account",
        type: "confirmation_mismatch"
      })
    }
    const account = yield* (yield* AccountsRepo).find(session.accountId)
    const row = yield* (yield* BillingRepo).find(session.accountId)
    if (account !== null && liveSubscription(row) && billingState(account, yield* now) !== "canceling") {
      return yield* new Conflict({
        message: "The subscription still renews: cancel it with Manage billing first, then delete the account",
        type: "subscription_active"
      })
    }
    const auth = yield* AuthRepo
    const members = yield* auth.listMembers(session.accountId)
    yield* auth.removeAccountLogins(session.accountId)
    const removed = yield* (yield* WebsitesRepo).removeAccount(session.accountId)
    yield* setSessionCookie(null)
    const mailer = yield* Mailer
    for (const owner of members.filter((m) => m.role === "owner")) {
      yield* sendLater(mailer.send({
        to: owner.email,
        subject: "Your sitehealth account was deleted",
        text: `${session.email} deleted the sitehealth account ${account?.name ?? session.accountId}: its ` +
          `${removed?.websites ?? 0} website(s) with their data and provider credentials, its API tokens and the ` +
          `logins of its ${members.length} member(s) are gone. This cannot be undone.`
      }))
    }
    yield* Effect.logInfo("account deleted").pipe(
      Effect.annotateLogs({ accountId: session.accountId, by: session.userId, websites: removed?.websites ?? 0 })
    )
    return { deleted: true as const, websites: removed?.websites ?? 0, members: members.length }
  })

const planOf = (settings: BillingSettings | null, priceId: string | null): BillingView["plan"] =>
  settings === null || priceId === null
    ? null
    : priceId === settings.priceIdYearly
    ? "yearly"
    : priceId === settings.priceId
    ? "monthly"
    : null

const liveSubscription = (row: BillingRecord | null) =>
  row !== null && row.stripeStatus !== null && LIVE_STATUSES.has(row.stripeStatus)

export const billingView = (
  settings: BillingSettings | null,
  account: AccountRecord,
  row: BillingRecord | null,
  at: Date
): BillingView => {
  const state = billingState(account, at)
  return {
    managedBy: settings === null ? "operator" : "stripe",
    state,
    plan: planOf(settings, row?.priceId ?? null),
    periodEnd: state === "active" || state === "canceling"
      ? (row?.currentPeriodEnd ?? account.subscriptionUntil)?.toISOString() ?? null
      : null,
    graceEndsAt: state === "past_due" ? account.subscriptionUntil?.toISOString() ?? null : null,
    canSubscribe: settings !== null && !liveSubscription(row),
    canManage: settings !== null && row !== null,
    yearlyAvailable: settings?.priceIdYearly != null
  }
}

const message = (account: AccountRecord, billing: BillingView, days: number): string => {
  const date = (iso: string | null) => iso?.slice(0, 10) ?? "—"
  switch (billing.state) {
    case "trialing":
      return `Your free trial ends in ${days} day${days === 1 ? "" : "s"}.`
    case "active":
      return billing.periodEnd !== null && billing.managedBy === "stripe"
        ? `Your subscription is active; it renews on ${date(billing.periodEnd)}.`
        : account.subscriptionUntil === null
        ? "Your subscription is active."
        : `Your subscription is paid until ${date(account.subscriptionUntil.toISOString())}.`
    case "past_due":
      return `A payment failed: update your card by ${date(billing.graceEndsAt)} or the API stops answering.`
    case "canceling":
      return `Your subscription is canceled; it ends on ${date(billing.periodEnd)}.`
    case "ended":
      return "Your trial or subscription has ended: the API answers 402 trial_expired until you subscribe."
  }
}

export const accountView = (accountId: string, email: string) =>
  Effect.gen(function*() {
    const account = yield* (yield* AccountsRepo).find(accountId)
    if (account === null) return yield* Effect.die(new Error("a session's account is gone"))
    const row = yield* (yield* BillingRepo).find(accountId)
    const { billing: settings } = yield* AppConfig
    const at = yield* now
    const trialLeftMs = account.trialEndsAt.getTime() - at.getTime()
    const inTrial = trialLeftMs > 0
    const entitled = isEntitled(account, at)
    const entitlement: AccountView["entitlement"] = !entitled ? "ended" : inTrial ? "trial" : "subscribed"
    const days = Math.max(0, Math.ceil(trialLeftMs / DAY_MS))
    const billing = billingView(settings, account, row, at)
    const view: AccountView = {
      accountId: account.id,
      email,
      entitlement,
      trialEndsAt: account.trialEndsAt.toISOString(),
      trialDaysLeft: days,
      subscription: { status: account.subscriptionStatus, until: account.subscriptionUntil?.toISOString() ?? null },
      message: message(account, billing, days),
      billing
    }
    return view
  })

const notConfigured = () =>
  new Conflict({
    message: "Billing is not configured on this server: its operator manages subscriptions",
    type: "billing_not_configured"
  })

const unavailable = (error: StripeBillingError) =>
  Effect.andThen(
    Effect.logError("billing: Stripe call failed", error.message),
    Effect.fail(
      new Unavailable({ message: "Stripe cannot be reached right now; try again shortly", type: "billing_unavailable" })
    )
  )

/** The account's Stripe customer, created (once) the first time it is needed. */
const customerOf = (accountId: string, email: string) =>
  Effect.gen(function*() {
    const repo = yield* BillingRepo
    const existing = yield* repo.find(accountId)
    if (existing !== null) return existing
    const customerId = yield* (yield* StripeBilling).createCustomer({ accountId, email })
    return yield* repo.attachCustomer(accountId, customerId, yield* now)
  })

export const DashboardAccountHttp = HttpApiBuilder.group(
  DashboardApi,
  "account",
  (h) =>
    h
      .handle("get", () =>
        Effect.gen(function*() {
          const session = yield* CurrentDashboardSession
          return yield* accountView(session.accountId, session.email)
        }))
      .handle("checkout", ({ payload }) =>
        Effect.gen(function*() {
          const session = yield* CurrentDashboardSession
          const config = yield* AppConfig
          const settings = config.billing
          if (settings === null) return yield* notConfigured()
          const priceId = payload.plan === "yearly" ? settings.priceIdYearly : settings.priceId
          if (priceId === null) {
            return yield* new BadRequest({
              message: "There is no yearly plan on this server",
              type: "plan_unavailable"
            })
          }
          const row = yield* customerOf(session.accountId, session.email)
          if (liveSubscription(row)) {
            return yield* new Conflict({
              message: "A subscription is already live: change or cancel it with Manage billing",
              type: "already_subscribed"
            })
          }
          const account = yield* (yield* AccountsRepo).find(session.accountId)
          const at = yield* now
          // Subscribing during the trial does not cut it short: Stripe charges when it ends.
          const trialEnd = account !== null && account.trialEndsAt.getTime() - at.getTime() >= MIN_TRIAL_CARRY_MS
            ? account.trialEndsAt
            : null
          const base = yield* publicBase(config)
          const url = yield* (yield* StripeBilling).createCheckout({
            accountId: session.accountId,
            customerId: row.customerId,
            priceId,
            successUrl: `${base}/account?checkout=success`,
            cancelUrl: `${base}/account?checkout=canceled`,
            trialEnd
          })
          return { url }
        }).pipe(Effect.catchTag("StripeBillingError", unavailable)))
      .handle("delete", ({ payload }) => deleteAccount(payload.confirmEmail))
      .handle("billingPortal", () =>
        Effect.gen(function*() {
          const session = yield* CurrentDashboardSession
          const config = yield* AppConfig
          if (config.billing === null) return yield* notConfigured()
          const row = yield* (yield* BillingRepo).find(session.accountId)
          if (row === null) {
            return yield* new Conflict({ message: "Subscribe first: there is no billing yet", type: "no_customer" })
          }
          const base = yield* publicBase(config)
          const url = yield* (yield* StripeBilling).createPortal({
            customerId: row.customerId,
            returnUrl: `${base}/account`
          })
          return { url }
        }).pipe(Effect.catchTag("StripeBillingError", unavailable)))
)
