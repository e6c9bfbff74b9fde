/**
 * Rebuilding a Stripe subscription's history as SubscriptionVersions — a PURE function of what the sync
 * fetched (the subscription as it is now and the subscription lines of its invoices). Stripe's events only
 * go back 30 days, so the invoices are the history: each invoice line of a subscription says which price
 * and quantity were in force for its period. The rules (docs/integrations-stripe.md, "Reconstruction"):
 *
 * - A version starts at every distinct period start of the subscription's invoice lines (renewals), at the
 *   start of every positive proration line (a mid-period change: its price and quantity from then on, the
 *   items it did not change as the period's invoice billed them),
 *   at `start_date`, `trial_start`, `trial_end` and `ended_at`. Each ends where the next one starts.
 * - Consecutive identical versions are NOT merged, on purpose: versions are upserted by (subscription,
 *   validFrom), so every start must still be a start on the next run, or a row written earlier (e.g. the
 *   current state at the current period's start) would linger next to its replacement. Invoice period
 *   starts are immutable once invoiced, so the set of starts only grows from run to run.
 * - The latest version (from the current period's start, or from a later proration) takes the
 *   subscription's CURRENT items, discount and status: a change not yet invoiced counts from the start of
 *   the period it happened in; the next run rewrites that version from the invoice line once it exists.
 * - Status before now: trialing inside [trial_start, trial_end), else active; from ended_at: canceled,
 *   with the cancellation feedback (else reason) as the cancel reason.
 */
import type { BillingInterval, SubscriptionStatus, SubscriptionVersion } from "../../payments/Types.ts"

/** What a subscription is billed per interval. */
export interface Plan {
  readonly currency: string // upper case
  readonly unitAmountMinor: number
  readonly quantity: number
  readonly interval: BillingInterval
  readonly intervalCount: number
  readonly discountPercentOff: number | null
  readonly discountAmountOffMinor: number | null
}

/** One subscription line of an invoice, compacted. Instants are Unix seconds. */
export interface SubscriptionLine {
  readonly start: number
  readonly proration: boolean
  readonly currency: string
  readonly interval: BillingInterval
  readonly intervalCount: number
  readonly priceId: string | null
  /** price.unit_amount when the price is per unit, else null (tiered / metered: use amountMinor). */
  readonly unitAmountMinor: number | null
  readonly quantity: number
  /** The line's amount before discounts. */
  readonly amountMinor: number
  /** Σ discount_amounts of the line. */
  readonly discountMinor: number
}

/** A subscription as it is now, compacted. Instants are Unix seconds. */
export interface SubscriptionNow {
  readonly id: string
  readonly customerId: string
  readonly status: string // Stripe's status
  readonly startDate: number
  readonly trialStart: number | null
  readonly trialEnd: number | null
  readonly endedAt: number | null
  readonly currentPeriodStart: number | null
  readonly cancelReason: string | null
  /** From its items and discount; null when it has no recurring item. */
  readonly plan: Plan | null
}

/** Stripe's subscription statuses on ours. paused and incomplete_expired pay nothing, like unpaid and incomplete. */
export const statusOf = (stripe: string): SubscriptionStatus =>
  stripe === "trialing" || stripe === "active" || stripe === "past_due" || stripe === "unpaid" ||
    stripe === "canceled" || stripe === "incomplete"
    ? stripe
    : stripe === "paused"
    ? "unpaid"
    : "incomplete"

interface State {
  readonly plan: Plan
  readonly status: SubscriptionStatus
  readonly cancelReason: string | null
}

/**
 * A group of lines starting at the same instant (a subscription with several items has one line per item:
 * Stripe requires one interval and one currency for all of them) as one Plan. One item keeps its unit price
 * and quantity; several are summed into one unit amount with quantity 1.
 */
const planOfLines = (
  lines: ReadonlyArray<SubscriptionLine>,
  discount: Plan | null,
  percentHint: number | null
): Plan => {
  const first = lines[0]!
  const gross = (l: SubscriptionLine) => (l.unitAmountMinor === null ? l.amountMinor : l.unitAmountMinor * l.quantity)
  const single = lines.length === 1 && first.unitAmountMinor !== null
  const total = lines.reduce((sum, l) => sum + gross(l), 0)
  const discountMinor = lines.reduce((sum, l) => sum + l.discountMinor, 0)
  let percentOff: number | null = null
  let amountOff: number | null = null
  if (first.proration) {
    // Prorations are never discounted by Stripe: the coupon in force before the change still applies.
    percentOff = discount?.discountPercentOff ?? null
    amountOff = discount?.discountAmountOffMinor ?? null
  } else if (discountMinor > 0) {
    // The invoiced discount, as the current coupon's percentage when that is what it was, else as an amount.
    if (percentHint !== null && Math.abs(Math.round((total * percentHint) / 100) - discountMinor) <= lines.length) {
      percentOff = percentHint
    } else amountOff = discountMinor
  }
  return {
    currency: first.currency.toUpperCase(),
    unitAmountMinor: single ? first.unitAmountMinor! : total,
    quantity: single ? first.quantity : 1,
    interval: first.interval,
    intervalCount: first.intervalCount,
    discountPercentOff: percentOff,
    discountAmountOffMinor: amountOff
  }
}

const linesBefore = (
  linesAt: ReadonlyMap<number, ReadonlyArray<SubscriptionLine>>,
  at: number
): ReadonlyArray<SubscriptionLine> | null => {
  let best: number | null = null
  for (const k of linesAt.keys()) if (k < at && (best === null || k > best)) best = k
  return best === null ? null : linesAt.get(best)!
}

/**
 * The items in force after a mid-period change: the period's invoiced items, the ones the change credited
 * back (its negative proration lines, matched by price) replaced by the ones it charged (its positive lines,
 * listed first so the plan takes the discount in force before, as for any proration). A subscription of one
 * item gives the positive lines alone. Without the period's lines, or with a credit line matching no item,
 * the positive lines alone too (what the invoices say for sure).
 */
const withChange = (
  base: ReadonlyArray<SubscriptionLine> | null,
  group: ReadonlyArray<SubscriptionLine>,
  positive: ReadonlyArray<SubscriptionLine>
): ReadonlyArray<SubscriptionLine> => {
  if (base === null) return positive
  const remaining = [...base]
  for (const credit of group) {
    if (credit.amountMinor >= 0) continue
    const i = remaining.findIndex((b) => b.priceId !== null && b.priceId === credit.priceId)
    if (i < 0) return positive
    remaining.splice(i, 1)
  }
  return [...positive, ...remaining]
}

const latestBefore = (points: ReadonlyMap<number, State>, at: number): State | null => {
  let best: number | null = null
  for (const k of points.keys()) if (k < at && (best === null || k > best)) best = k
  return best === null ? null : points.get(best)!
}

const firstFrom = (points: ReadonlyMap<number, State>, at: number): State | null => {
  let best: number | null = null
  for (const k of points.keys()) if (k >= at && (best === null || k < best)) best = k
  return best === null ? null : points.get(best)!
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

export const subscriptionVersions = (
  sub: SubscriptionNow,
  lines: ReadonlyArray<SubscriptionLine>
): Array<SubscriptionVersion> => {
  const inTrial = (t: number) =>
    sub.trialStart !== null && sub.trialEnd !== null && t >= sub.trialStart && t < sub.trialEnd
  const percentHint = sub.plan?.discountPercentOff ?? null
  const points = new Map<number, State>()

  // Renewals first, then prorations (a change exactly at a renewal is what the renewal line says).
  const groups = new Map<string, Array<SubscriptionLine>>()
  for (const l of lines) {
    const key = `${l.proration ? 1 : 0}|${String(l.start).padStart(12, "0")}`
    const g = groups.get(key)
    if (g === undefined) groups.set(key, [l])
    else g.push(l)
  }
  // The lines each invoiced point was built from: a later proration changes some of them.
  const linesAt = new Map<number, ReadonlyArray<SubscriptionLine>>()
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!
    const start = group[0]!.start
    if (group[0]!.proration) {
      // The positive side of a change ("Remaining time on … after …"); the credit for the old price is negative.
      const positive = group.filter((l) => l.amountMinor > 0)
      if (positive.length === 0 || points.has(start)) continue
      const before = latestBefore(points, start)
      const lines = withChange(linesBefore(linesAt, start), group, positive)
      linesAt.set(start, lines)
      points.set(start, {
        plan: planOfLines(lines, before?.plan ?? null, percentHint),
        status: inTrial(start) ? "trialing" : "active",
        cancelReason: null
      })
    } else {
      linesAt.set(start, group)
      points.set(start, {
        plan: planOfLines(group, null, percentHint),
        status: inTrial(start) ? "trialing" : "active",
        cancelReason: null
      })
    }
  }

  const fallback = (): Plan | null => sub.plan ?? firstFrom(points, Number.NEGATIVE_INFINITY)?.plan ?? null
  // The trial: trialing from trial_start; active from trial_end once the trial is over and nothing invoiced says so.
  if (sub.trialStart !== null && !points.has(sub.trialStart)) {
    const plan = firstFrom(points, sub.trialStart)?.plan ?? fallback()
    if (plan !== null) points.set(sub.trialStart, { plan, status: "trialing", cancelReason: null })
  }
  if (
    sub.trialEnd !== null && sub.status !== "trialing" && !points.has(sub.trialEnd) &&
    (sub.endedAt === null || sub.endedAt > sub.trialEnd)
  ) {
    const plan = latestBefore(points, sub.trialEnd)?.plan ?? fallback()
    if (plan !== null) points.set(sub.trialEnd, { plan, status: "active", cancelReason: null })
  }

  // The current state, on the latest version of the current period.
  if (sub.endedAt === null && sub.plan !== null) {
    const periodStart = sub.currentPeriodStart ?? sub.startDate
    let key = periodStart
    for (const k of points.keys()) if (k > key) key = k
    points.set(key, { plan: sub.plan, status: statusOf(sub.status), cancelReason: null })
  }

  // Before the first invoiced period (a start_date earlier than the first period): as in that first period.
  const starts = [...points.keys()]
  const earliest = starts.length === 0 ? null : Math.min(...starts)
  if (earliest === null) {
    if (sub.plan !== null) {
      points.set(sub.startDate, {
        plan: sub.plan,
        status: sub.endedAt === null ? statusOf(sub.status) : "incomplete",
        cancelReason: null
      })
    }
  } else if (sub.startDate < earliest) {
    points.set(sub.startDate, points.get(earliest)!)
  }

  // The end: nothing in force from ended_at on but the canceled subscription.
  if (sub.endedAt !== null) {
    for (const k of points.keys()) if (k >= sub.endedAt) points.delete(k) // deleting while iterating a Map is safe
    const last = latestBefore(points, sub.endedAt)?.plan ?? fallback()
    if (last !== null) points.set(sub.endedAt, { plan: last, status: "canceled", cancelReason: sub.cancelReason })
  }

  const keys = [...points.keys()].sort((a, b) => a - b)
  return keys.map((from, i): SubscriptionVersion => {
    const s = points.get(from)!
    const to = keys[i + 1]
    return {
      subscriptionId: sub.id,
      customerId: sub.customerId,
      validFrom: iso(from),
      validTo: to === undefined ? null : iso(to),
      status: s.status,
      currency: s.plan.currency,
      unitAmountMinor: s.plan.unitAmountMinor,
      quantity: s.plan.quantity,
      interval: s.plan.interval,
      intervalCount: s.plan.intervalCount,
      discountPercentOff: s.plan.discountPercentOff,
      discountAmountOffMinor: s.plan.discountAmountOffMinor,
      cancelReason: s.cancelReason
    }
  })
}
