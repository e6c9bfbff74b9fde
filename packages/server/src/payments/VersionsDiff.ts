/**
 * What replacing some subscriptions' stored versions with new ones writes (PaymentsFacts.replaceVersions) and
 * marks (DirtyTracking.marksOf): the stored versions whose start is no longer a start (deleted), the new versions
 * that are not stored as they are (upserted), and the subscriptions either touches. Versions are compared as Postgres
 * stores them: a
 * version is keyed by subscription and start INSTANT (not its text), the currency upper-case, instants by time.
 */
import type { SubscriptionVersion } from "./Types.ts"

export interface VersionsDiff {
  readonly gone: ReadonlyArray<SubscriptionVersion>
  readonly put: ReadonlyArray<SubscriptionVersion>
  readonly changedSubscriptions: ReadonlySet<string>
}

const instant = (at: string | null): number | null => (at === null ? null : new Date(at).getTime())
const keyOf = (v: SubscriptionVersion) => `${v.subscriptionId}@${instant(v.validFrom)}`

/** Every stored column but the key, as stored: two versions with the same key and the same `sameAs` need no write. */
const sameAs = (a: SubscriptionVersion, b: SubscriptionVersion): boolean =>
  a.customerId === b.customerId && instant(a.validTo) === instant(b.validTo) && a.status === b.status &&
  a.currency.toUpperCase() === b.currency.toUpperCase() && a.unitAmountMinor === b.unitAmountMinor &&
  a.quantity === b.quantity &&
  a.interval === b.interval && a.intervalCount === b.intervalCount && a.discountPercentOff === b.discountPercentOff &&
  a.discountAmountOffMinor === b.discountAmountOffMinor && a.cancelReason === b.cancelReason

/** `stored`: the versions stored now of the subscriptions being replaced; `next`: what they become. */
export const versionsDiff = (
  stored: ReadonlyArray<SubscriptionVersion>,
  next: ReadonlyArray<SubscriptionVersion>
): VersionsDiff => {
  const was = new Map<string, SubscriptionVersion>()
  for (const v of stored) was.set(keyOf(v), v)
  const kept = new Set<string>()
  const put: Array<SubscriptionVersion> = []
  const changedSubscriptions = new Set<string>()
  for (const v of next) {
    const key = keyOf(v)
    kept.add(key)
    const old = was.get(key)
    if (old === undefined || !sameAs(old, v)) {
      put.push(v)
      changedSubscriptions.add(v.subscriptionId)
    }
  }
  const gone: Array<SubscriptionVersion> = []
  for (const [key, v] of was) {
    if (kept.has(key)) continue
    gone.push(v)
    changedSubscriptions.add(v.subscriptionId)
  }
  return { gone, put, changedSubscriptions }
}
