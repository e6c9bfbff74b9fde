/**
 * Demo payments as Stripe reports them: customers, subscriptions as versions over time (trials, plan
 * changes, seat changes, coupons, past_due and unpaid, cancellations with a reason, reactivations), charges
 * (some failing) and refunds. Everything happens at an instant within a local day and never after `now`.
 */
import { addDays } from "../metrics/Dates.ts"
import type {
  Charge,
  Customer,
  PaymentsData,
  Refund,
  SubscriptionStatus,
  SubscriptionVersion
} from "../payments/Types.ts"
import type { DemoProjectSpec, PlanPrice } from "./Profiles.ts"
import { between, intBetween, poisson, type Rand, weighted } from "./Random.ts"
import { daysBeforeEpoch, dayStartIn, type DemoTimeline } from "./Timeline.ts"

const MS_PER_DAY = 86_400_000
const TRIAL_DAYS = 14
const RETRY_DAYS = 3
const RETRY_SUCCESS = 0.55
const UNPAID_TO_CANCELED_DAYS = 7
const REFUND_PROBABILITY = 0.015
const UPGRADE_PER_DAY = 0.0012
const DOWNGRADE_PER_DAY = 0.0005
const SEAT_CHANGE_PER_DAY = 0.004
const REACTIVATION_PER_DAY = 0.0007
/** Payments history starts this many days before the traffic history, so the first year has a customer base. */
export const PAYMENTS_WARMUP_DAYS = 150

const REASONS: ReadonlyArray<readonly [string, number]> = [
  ["too_expensive", 30],
  ["unused", 25],
  ["switched_service", 20],
  ["missing_features", 15],
  ["customer_service", 5],
  ["low_quality", 5]
]
const SPIKE_REASONS: ReadonlyArray<readonly [string, number]> = [
  ["too_expensive", 55],
  ["switched_service", 30],
  ["unused", 10],
  ["missing_features", 5]
]

interface Live {
  readonly id: string
  readonly customerId: string
  readonly currency: string
  plan: PlanPrice
  priceMinor: number // unit amount in the subscription's currency
  quantity: number
  discount: {
    readonly percentOff: number | null
    readonly amountOffMinor: number | null
    readonly untilMs: number | null
  } | null
  status: SubscriptionStatus
  validFrom: number
  trialEndMs: number | null
  nextBillMs: number
  retryAtMs: number | null
  cancelAtMs: number | null
  cancelReason: string | null
}

const addMonthsMs = (ms: number, months: number): number => {
  const d = new Date(ms)
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes()))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay))
  return target.getTime()
}

export const generatePayments = (
  spec: DemoProjectSpec,
  rand: Rand,
  timeline: DemoTimeline,
  nowMs: number,
  visitorsOn: (day: string) => number
): PaymentsData => {
  const p = spec.payments
  const tz = spec.timezone
  const customers: Array<Customer> = []
  const versions: Array<SubscriptionVersion> = []
  const charges: Array<Charge> = []
  const refunds: Array<Refund> = []
  const live: Array<Live> = []
  const churned: Array<{ customerId: string; currency: string }> = []
  let seq = 0
  const next = (prefix: string) => `${prefix}_${spec.key}${(++seq).toString(36).padStart(6, "0")}`

  const versionOf = (s: Live, validTo: number | null): SubscriptionVersion => ({
    subscriptionId: s.id,
    customerId: s.customerId,
    validFrom: new Date(s.validFrom).toISOString(),
    validTo: validTo === null ? null : new Date(validTo).toISOString(),
    status: s.status,
    currency: s.currency,
    unitAmountMinor: s.priceMinor,
    quantity: s.quantity,
    interval: s.plan.interval,
    intervalCount: 1,
    discountPercentOff: s.discount?.percentOff ?? null,
    discountAmountOffMinor: s.discount?.amountOffMinor ?? null,
    cancelReason: s.cancelReason
  })
  /** Closes the version in force at `at` and opens one with the changes. */
  const change = (s: Live, requestedAt: number, patch: () => void) => {
    // Changes drawn at random within a day may fall before the version in force began: keep them ordered.
    const at = Math.max(requestedAt, s.validFrom + 1)
    versions.push(versionOf(s, at))
    patch()
    s.validFrom = at
  }
  /** A terminal change: the subscription's last version (canceled) stays in force for good. */
  const finish = (s: Live, at: number, patch: () => void) => {
    change(s, at, patch)
    versions.push(versionOf(s, null))
    live.splice(live.indexOf(s), 1)
  }
  const amountDue = (s: Live): number => {
    const gross = s.priceMinor * s.quantity
    if (s.discount?.percentOff != null) return Math.round(gross * (1 - s.discount.percentOff / 100))
    if (s.discount?.amountOffMinor != null) return Math.max(0, gross - s.discount.amountOffMinor)
    return gross
  }
  const charge = (s: Live, at: number, failRate: number): boolean => {
    const ok = rand() >= failRate
    const c: Charge = {
      id: next("ch"),
      customerId: s.customerId,
      at: new Date(at).toISOString(),
      amountMinor: amountDue(s),
      currency: s.currency,
      status: ok ? "succeeded" : "failed"
    }
    charges.push(c)
    if (ok && c.amountMinor > 0 && rand() < REFUND_PROBABILITY) {
      const refundAt = at + intBetween(rand, 1, 5) * MS_PER_DAY
      if (refundAt < nowMs) {
        refunds.push({
          id: next("re"),
          chargeId: c.id,
          at: new Date(refundAt).toISOString(),
          amountMinor: c.amountMinor,
          currency: c.currency
        })
      }
    }
    return ok
  }
  const billEvery = (s: Live, from: number) => addMonthsMs(from, s.plan.interval === "year" ? 12 : 1)
  const priceIn = (plan: PlanPrice, currency: string) =>
    currency === spec.currency
      ? plan.unitAmountMinor
      : Math.round(plan.unitAmountMinor * (p.secondCurrency?.priceFactor ?? 1))
  const start = (customerId: string, currency: string, at: number, trial: boolean) => {
    const plan = weighted(rand, p.plans)
    const r = rand()
    const s: Live = {
      id: next("sub"),
      customerId,
      currency,
      plan,
      priceMinor: priceIn(plan, currency),
      quantity: plan.seats === undefined ? 1 : intBetween(rand, plan.seats[0], plan.seats[1]),
      // 12% start with a 20%-off coupon for three months; 4% with a fixed amount off for good.
      discount: r < 0.12
        ? { percentOff: 20, amountOffMinor: null, untilMs: addMonthsMs(at + (trial ? TRIAL_DAYS * MS_PER_DAY : 0), 3) }
        : r < 0.16
        ? { percentOff: null, amountOffMinor: Math.round(priceIn(plan, currency) * 0.25), untilMs: null }
        : null,
      status: trial ? "trialing" : "active",
      validFrom: at,
      trialEndMs: trial ? at + TRIAL_DAYS * MS_PER_DAY : null,
      nextBillMs: at,
      retryAtMs: null,
      cancelAtMs: null,
      cancelReason: null
    }
    live.push(s)
    if (!trial) {
      if (!charge(s, at, p.failedChargeRate)) {
        change(s, at + 1, () => {
          s.status = "past_due"
          s.retryAtMs = at + RETRY_DAYS * MS_PER_DAY
        })
      }
      s.nextBillMs = billEvery(s, at)
    }
  }

  const firstDay = addDays(timeline.firstDay, -PAYMENTS_WARMUP_DAYS)
  for (let day = firstDay; day <= timeline.today; day = addDays(day, 1)) {
    const daysAgo = daysBeforeEpoch(timeline, day)
    const dayStart = dayStartIn(day, tz)
    const dayEnd = Math.min(dayStartIn(addDays(day, 1), tz), nowMs)
    if (dayStart >= nowMs) break
    const at = () => Math.min(dayEnd - 1, dayStart + between(rand, 8, 22) * 3_600_000)
    const spike = p.churnSpike !== undefined && daysAgo <= p.churnSpike.fromDaysAgo && daysAgo >= p.churnSpike.toDaysAgo
    const churnRate = spike ? p.churnSpike!.dailyChurn : p.dailyChurn
    const failRate = daysAgo >= 0 && daysAgo < 30 && p.recentFailedChargeRate !== undefined
      ? p.recentFailedChargeRate
      : p.failedChargeRate

    // New trials; the first simulated day brings the customers a business starts the history with.
    const trials = day === firstDay ? 25 : poisson(rand, (visitorsOn(day) * p.trialsPerThousandVisitors) / 1000)
    for (let n = 0; n < trials; n++) {
      const when = at()
      const customerId = next("cus")
      const second = p.secondCurrency !== undefined && rand() < p.secondCurrency.share
      customers.push({ id: customerId, createdAt: new Date(when).toISOString() })
      start(customerId, second ? p.secondCurrency!.currency : spec.currency, when, day !== firstDay)
    }
    // Customers who left may come back (a reactivation, not a new customer).
    for (let i = churned.length - 1; i >= 0; i--) {
      if (rand() < REACTIVATION_PER_DAY) {
        const c = churned.splice(i, 1)[0]
        start(c.customerId, c.currency, at(), false)
      }
    }

    for (const s of live.slice()) { // a copy: ending a subscription takes it out of `live`
      if (s.status === "trialing" && s.trialEndMs !== null && s.trialEndMs < dayEnd) {
        const end = s.trialEndMs
        if (rand() < p.trialConversion) {
          change(s, end, () => {
            s.status = "active"
            s.trialEndMs = null
          })
          if (!charge(s, end, failRate)) {
            change(s, end + 1, () => {
              s.status = "past_due"
              s.retryAtMs = end + RETRY_DAYS * MS_PER_DAY
            })
          }
          s.nextBillMs = billEvery(s, end)
        } else {
          finish(s, end, () => {
            s.status = "canceled"
            s.cancelReason = null
          })
        }
        continue
      }
      if (s.status === "trialing") continue
      if (s.status === "past_due" && s.retryAtMs !== null && s.retryAtMs < dayEnd) {
        const retry = s.retryAtMs
        if (rand() < RETRY_SUCCESS && charge(s, retry, 0)) {
          change(s, retry, () => {
            s.status = "active"
            s.retryAtMs = null
          })
        } else {
          charges.push({
            id: next("ch"),
            customerId: s.customerId,
            at: new Date(retry).toISOString(),
            amountMinor: amountDue(s),
            currency: s.currency,
            status: "failed"
          })
          change(s, retry, () => {
            s.status = "unpaid"
            s.retryAtMs = null
            s.cancelReason = "payment_failed"
            s.cancelAtMs = retry + UNPAID_TO_CANCELED_DAYS * MS_PER_DAY
          })
        }
        continue
      }
      if (s.status === "unpaid") {
        if (s.cancelAtMs !== null && s.cancelAtMs < dayEnd) {
          finish(s, s.cancelAtMs, () => {
            s.status = "canceled"
          })
          churned.push({ customerId: s.customerId, currency: s.currency })
        }
        continue
      }
      if (s.status !== "active" && s.status !== "past_due") continue
      if (rand() < churnRate) {
        const when = at()
        finish(s, when, () => {
          s.status = "canceled"
          s.cancelReason = weighted(rand, spike ? SPIKE_REASONS : REASONS)
        })
        churned.push({ customerId: s.customerId, currency: s.currency })
        continue
      }
      if (s.discount?.untilMs != null && s.discount.untilMs < dayEnd) {
        change(s, s.discount.untilMs, () => {
          s.discount = null
        })
      }
      const samePeriod = p.plans.filter(([pl]) =>
        pl.interval === s.plan.interval && (pl.seats === undefined) === (s.plan.seats === undefined)
      )
      const index = samePeriod.findIndex(([pl]) => pl.name === s.plan.name)
      const u = rand()
      if (u < UPGRADE_PER_DAY && index >= 0 && index < samePeriod.length - 1) {
        const plan = samePeriod[index + 1][0]
        change(s, at(), () => {
          s.plan = plan
          s.priceMinor = priceIn(plan, s.currency)
        })
      } else if (u < UPGRADE_PER_DAY + DOWNGRADE_PER_DAY && index > 0) {
        const plan = samePeriod[index - 1][0]
        change(s, at(), () => {
          s.plan = plan
          s.priceMinor = priceIn(plan, s.currency)
        })
      } else if (s.plan.seats !== undefined && u < UPGRADE_PER_DAY + DOWNGRADE_PER_DAY + SEAT_CHANGE_PER_DAY) {
        const delta = rand() < 0.65 ? intBetween(rand, 1, 2) : -intBetween(rand, 1, 2)
        change(s, at(), () => {
          s.quantity = Math.max(1, s.quantity + delta)
        })
      }
      while (s.status === "active" && s.nextBillMs < dayEnd) {
        const billAt = s.nextBillMs
        s.nextBillMs = billEvery(s, billAt)
        if (!charge(s, billAt, failRate)) {
          change(s, billAt + 1, () => {
            s.status = "past_due"
            s.retryAtMs = billAt + RETRY_DAYS * MS_PER_DAY
          })
        }
      }
    }
  }
  for (const s of live) versions.push(versionOf(s, null))
  return { customers, subscriptionVersions: versions, charges, refunds }
}
