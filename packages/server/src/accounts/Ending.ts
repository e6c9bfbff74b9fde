/**
 * When an account's access ends soon (docs/alerts.md, `entitlement.ending`): a trial not followed by a subscription,
 * a subscription canceled at its period's end, or a past-due one whose grace runs out — within the next
 * ENDING_NOTICE_DAYS. A subscription that renews does not end. Pure.
 */
import type { AccountRecord } from "../store/Records.ts"

export const ENDING_NOTICE_DAYS = 3

export interface Ending {
  readonly what: "trial" | "subscription"
  readonly endsAt: Date
}

export const endingSoon = (
  account: Pick<AccountRecord, "trialEndsAt" | "subscriptionStatus" | "subscriptionUntil">,
  now: Date
): Ending | null => {
  const soon = (at: Date | null) =>
    at !== null && at.getTime() > now.getTime() && at.getTime() - now.getTime() <= ENDING_NOTICE_DAYS * 86_400_000
  switch (account.subscriptionStatus) {
    case "none":
      return soon(account.trialEndsAt) ? { what: "trial", endsAt: account.trialEndsAt } : null
    case "canceled":
    case "past_due":
      return soon(account.subscriptionUntil) ? { what: "subscription", endsAt: account.subscriptionUntil! } : null
    default:
      return null
  }
}
