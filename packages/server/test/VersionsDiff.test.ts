/**
 * The in-process difference PaymentsRepo.sql writes when it replaces subscriptions' versions: only rows that
 * are new, changed or gone, compared as Postgres stores them.
 */
import { describe, expect, it } from "vitest"
import type { SubscriptionVersion } from "../src/payments/Types.ts"
import { versionsDiff } from "../src/payments/VersionsDiff.ts"

const v = (
  subscriptionId: string,
  validFrom: string,
  validTo: string | null,
  extra: Partial<SubscriptionVersion> = {}
): SubscriptionVersion => ({
  subscriptionId,
  customerId: "cus_1",
  validFrom,
  validTo,
  status: "active",
  currency: "usd",
  unitAmountMinor: 1000,
  quantity: 1,
  interval: "month",
  intervalCount: 1,
  discountPercentOff: null,
  discountAmountOffMinor: null,
  cancelReason: null,
  ...extra
})

describe("versionsDiff", () => {
  it("a renewal: the version it ends is updated, the new one inserted, the others not written", () => {
    // Stored as read back from Postgres (upper-case currency, ISO with milliseconds).
    const stored = [
      v("sub_a", "2026-09-01T00:00:00.000Z", "2026-10-01T00:00:00.000Z", { currency: "USD" }),
      v("sub_a", "2026-10-01T00:00:00.000Z", null, { currency: "USD" })
    ]
    // Rebuilt from the staged objects (Stripe's currency, instants written another way).
    const next = [
      v("sub_a", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z"),
      v("sub_a", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z"),
      v("sub_a", "2026-11-01T00:00:00Z", null, { unitAmountMinor: 2000 })
    ]
    const diff = versionsDiff(stored, next)
    expect(diff.put.map((x) => x.validFrom)).toEqual(["2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z"])
    expect(diff.gone).toEqual([])
    expect([...diff.changedSubscriptions]).toEqual(["sub_a"])
  })

  it("a start that is no longer one goes; a subscription rebuilt the same changes nothing", () => {
    const stored = [
      v("sub_a", "2026-09-01T00:00:00.000Z", "2026-09-15T00:00:00.000Z"),
      v("sub_a", "2026-09-15T00:00:00.000Z", null),
      v("sub_b", "2026-09-01T00:00:00.000Z", null, { discountPercentOff: 25, cancelReason: null })
    ]
    const next = [
      v("sub_a", "2026-09-01T00:00:00.000Z", null),
      v("sub_b", "2026-09-01T00:00:00.000Z", null, { discountPercentOff: 25 })
    ]
    const diff = versionsDiff(stored, next)
    expect(diff.gone.map((x) => `${x.subscriptionId}@${x.validFrom}`)).toEqual(["sub_a@2026-09-15T00:00:00.000Z"])
    expect(diff.put.map((x) => `${x.subscriptionId}@${x.validTo}`)).toEqual(["sub_a@null"])
    expect([...diff.changedSubscriptions]).toEqual(["sub_a"])
    expect(versionsDiff(stored, stored).changedSubscriptions.size).toBe(0)
  })

  it("every stored column counts: each one changed alone is written", () => {
    const base = v("sub_a", "2026-09-01T00:00:00.000Z", null)
    const changes: ReadonlyArray<Partial<SubscriptionVersion>> = [
      { customerId: "cus_2" },
      { validTo: "2026-10-01T00:00:00.000Z" },
      { status: "canceled" },
      { currency: "eur" },
      { unitAmountMinor: 999 },
      { quantity: 2 },
      { interval: "year" },
      { intervalCount: 3 },
      { discountPercentOff: 10 },
      { discountAmountOffMinor: 100 },
      { cancelReason: "too_expensive" }
    ]
    for (const change of changes) {
      expect(versionsDiff([base], [{ ...base, ...change }]).put).toHaveLength(1)
    }
    // A subscription with no versions any more: all of its stored ones go.
    expect(versionsDiff([base], []).gone).toEqual([base])
  })
})
