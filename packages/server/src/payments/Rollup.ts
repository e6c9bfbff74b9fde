/**
 * The payments rollup: a PURE function from everything a project's payments provider gave us to the
 * derived rows the reports read (revenue_daily, customer MRR spans, churn events, unconverted amounts).
 * It runs on every write (PaymentsRepo.write / rollUp), so reads never look at raw history. The stores run it
 * part by part — each customer's part from its versions (`customerRollup`), each day's flows from its charges
 * and refunds (`flowsAccumulator`), the day rows assembled from the parts (RollupParts.ts) — in bounded
 * batches, so their memory does not grow with the project's history; `rollup` is the same over arrays.
 *
 * Definitions (docs/metrics.md, "Revenue"):
 * - Days are calendar days in the project's time zone. A version in force on [validFrom, validTo) is in
 *   force at the END of local day D iff localDay(validFrom) ≤ D < localDay(validTo): a version starting at
 *   23:30 UTC on the 14th in Europe/Berlin (00:30 on the 15th) first counts on the 15th.
 * - A customer's MRR on day D = Σ over its versions in force at the end of D with status active or past_due
 *   of  max(0, unit × quantity × (1 − percentOff/100) − amountOff) × monthFactor(interval) / intervalCount,
 *   monthFactor = month 1, year 1/12, week 52/12, day 365/12. Computed as an exact fraction (bigints),
 *   then rounded ONCE per customer to integer minor units (half up), so day sums are exact integers.
 * - Other currencies: the customer's exact amount in that currency is converted with convertMinor at the
 *   rate of the day its current state began (the latest start among its versions in force), so exchange
 *   rate drift alone never shows up as expansion or contraction. Without a rate the amount is left out of
 *   every converted figure and reported apart (UnconvertedDay).
 * - Movements per customer and day from its MRR the day before (prev) to that day (cur): 0 → >0 new (first
 *   time ever) or reactivation; >0 → 0 churned (a churn event); up expansion; down contraction. Hence for
 *   any window mrr(end) = mrr(start) + new + expansion + reactivation − contraction − churned exactly.
 */
import { convertMinor, type FxRate } from "../fx/Fx.ts"
import { todayIn } from "../metrics/Dates.ts"
import type { ChurnEvent, RevenueDay, UnconvertedDay } from "../store/Series.ts"
import {
  assembleDays,
  type CustomerMove,
  type CustomerMrrSpan,
  type CustomerRollup,
  type FlowDay,
  type FlowSource,
  type UnconvertedFlow,
  type UnconvertedMove
} from "./RollupParts.ts"
import type { Charge, PaymentsData, Refund, SubscriptionVersion } from "./Types.ts"

export type { ChurnEvent, UnconvertedDay }

export interface RollupOutput {
  /** Dense from the first to the last day anything happens; after the last row the state carries on. */
  readonly revenueDays: ReadonlyArray<RevenueDay>
  readonly customerMrr: ReadonlyArray<CustomerMrrSpan>
  readonly churnEvents: ReadonlyArray<ChurnEvent>
  readonly unconverted: ReadonlyArray<UnconvertedDay>
}

export interface RollupOptions {
  readonly timezone: string
  readonly currency: string // the project's reporting currency
  readonly rates: ReadonlyArray<FxRate>
}

// ---------------------------------------------------------------------------------------------------
// Exact monthly amounts
// ---------------------------------------------------------------------------------------------------

/** A non-negative fraction num / den with bigint parts. */
interface Fraction {
  readonly num: bigint
  readonly den: bigint
}

const MONTH_FACTOR: Record<SubscriptionVersion["interval"], readonly [bigint, bigint]> = {
  month: [1n, 1n],
  year: [1n, 12n],
  week: [52n, 12n],
  day: [365n, 12n]
}

const PAYING = new Set<SubscriptionVersion["status"]>(["active", "past_due"])

/** Percent off in hundredths of a percent (Stripe allows two decimals), clamped to 0–100 %. */
const basisPoints = (percent: number | null): bigint =>
  percent === null || !Number.isFinite(percent) ? 0n : BigInt(Math.min(10_000, Math.max(0, Math.round(percent * 100))))

const int = (x: number): bigint => BigInt(Number.isFinite(x) ? Math.round(x) : 0)

/** The version's MRR in its own currency, exactly. 0 for statuses that are not paying. */
export const monthlyAmount = (v: SubscriptionVersion): Fraction => {
  if (!PAYING.has(v.status)) return { num: 0n, den: 1n }
  const [fNum, fDen] = MONTH_FACTOR[v.interval]
  const count = int(v.intervalCount) > 0n ? int(v.intervalCount) : 1n
  // Per interval, in 1/10 000 of a minor unit: unit × qty × (10 000 − bp) − amountOff × 10 000, floored at 0.
  let perInterval = int(v.unitAmountMinor) * int(v.quantity) * (10_000n - basisPoints(v.discountPercentOff)) -
    int(v.discountAmountOffMinor ?? 0) * 10_000n
  if (perInterval < 0n) perInterval = 0n
  return { num: perInterval * fNum, den: 10_000n * fDen * count }
}

const add = (a: Fraction, b: Fraction): Fraction => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den })

/** Rounded half up to an integer (amounts are never negative). */
const roundFraction = (f: Fraction): number => Number((2n * f.num + f.den) / (2n * f.den))

// ---------------------------------------------------------------------------------------------------
// The rollup
// ---------------------------------------------------------------------------------------------------

interface Placed {
  readonly v: SubscriptionVersion
  readonly fromDay: string
  readonly toDay: string | null // exclusive
}

/**
 * A customer's part (CustomerRollup) from all its versions, in the order the store keeps them (subscription,
 * then start): the same function for a full and an incremental rollup.
 */
export const customerRollup = (options: RollupOptions) => {
  const reporting = options.currency.toUpperCase()
  const localDay = (iso: string) => todayIn(options.timezone, new Date(iso))
  return (customerId: string, versions: ReadonlyArray<SubscriptionVersion>): CustomerRollup => {
    const placed: Array<Placed> = []
    for (const v of versions) {
      const fromDay = localDay(v.validFrom)
      const toDay = v.validTo === null ? null : localDay(v.validTo)
      if (toDay !== null && toDay <= fromDay) continue // never in force at the end of any day
      placed.push({ v, fromDay, toDay })
    }
    const spans: Array<CustomerMrrSpan> = []
    const churnEvents: Array<ChurnEvent> = []
    const moves: Array<CustomerMove> = []
    const unconvertedMoves: Array<UnconvertedMove> = []
    const boundaries = new Set<string>()
    for (const p of placed) {
      boundaries.add(p.fromDay)
      if (p.toDay !== null) boundaries.add(p.toDay)
    }
    let prev = 0
    let prevUnconverted = new Map<string, number>()
    let everPaid = false
    let spanStart: string | null = null
    for (const day of [...boundaries].sort()) {
      // The customer's state from `day` on: versions in force at the end of `day`, per currency.
      const perCurrency = new Map<string, { amount: Fraction; since: string }>()
      for (const p of placed) {
        if (p.fromDay > day || (p.toDay !== null && p.toDay <= day)) continue
        const currency = p.v.currency.toUpperCase()
        const cur = perCurrency.get(currency)
        const amount = monthlyAmount(p.v)
        perCurrency.set(
          currency,
          cur === undefined
            ? { amount, since: p.fromDay }
            : { amount: add(cur.amount, amount), since: p.fromDay > cur.since ? p.fromDay : cur.since }
        )
      }
      let value = 0
      const unconverted = new Map<string, number>()
      for (const [currency, { amount, since }] of perCurrency) {
        if (amount.num === 0n) continue
        if (currency === reporting) {
          value += roundFraction(amount)
          continue
        }
        const converted = convertMinor(
          Number(amount.num) / Number(amount.den),
          currency,
          reporting,
          since,
          options.rates
        )
        if (converted === null) unconverted.set(currency, roundFraction(amount))
        else value += converted
      }
      for (const currency of new Set([...unconverted.keys(), ...prevUnconverted.keys()])) {
        const delta = (unconverted.get(currency) ?? 0) - (prevUnconverted.get(currency) ?? 0)
        if (delta !== 0) unconvertedMoves.push({ currency, day, delta })
      }
      prevUnconverted = unconverted

      if (value === prev) continue
      const move = {
        day,
        mrrDelta: value - prev,
        customersDelta: 0,
        newMrrMinor: 0,
        expansionMrrMinor: 0,
        contractionMrrMinor: 0,
        churnedMrrMinor: 0,
        reactivationMrrMinor: 0,
        newCustomers: 0,
        churnedCustomers: 0,
        reactivatedCustomers: 0
      }
      if (prev === 0) {
        move.customersDelta = 1
        if (everPaid) {
          move.reactivationMrrMinor = value
          move.reactivatedCustomers = 1
        } else {
          move.newMrrMinor = value
          move.newCustomers = 1
        }
        everPaid = true
      } else if (value === 0) {
        move.customersDelta = -1
        move.churnedMrrMinor = prev
        move.churnedCustomers = 1
        churnEvents.push({ customerId, day, mrrLostMinor: prev, reason: churnReason(placed, day) })
      } else if (value > prev) {
        move.expansionMrrMinor = value - prev
      } else {
        move.contractionMrrMinor = prev - value
      }
      moves.push(move)
      if (prev > 0 && spanStart !== null) spans.push({ customerId, fromDay: spanStart, toDay: day, mrrMinor: prev })
      spanStart = value > 0 ? day : null
      prev = value
    }
    if (prev > 0 && spanStart !== null) spans.push({ customerId, fromDay: spanStart, toDay: null, mrrMinor: prev })
    return { spans, churnEvents, moves, unconvertedMoves }
  }
}

/**
 * Charges and refunds → flows per local day (converted) and per currency and day (unconverted): sums of
 * per-charge (per-refund) amounts, so an incremental rollup adds a changed charge's new contribution and takes
 * its old one away (`sign` −1) — exact, the amounts being integers.
 */
export const flowsAccumulator = (options: RollupOptions) => {
  const reporting = options.currency.toUpperCase()
  const localDay = (iso: string) => todayIn(options.timezone, new Date(iso))
  const days = new Map<
    string,
    {
      source: FlowSource
      day: string
      grossMinor: number
      refundsMinor: number
      failedPayments: number
      failedMinor: number
      items: number
    }
  >()
  const unconverted = new Map<
    string,
    {
      source: FlowSource
      currency: string
      day: string
      grossMinor: number
      refundsMinor: number
      failedMinor: number
      items: number
    }
  >()
  const dayOf = (source: FlowSource, day: string) => {
    const key = `${source}|${day}`
    let t = days.get(key)
    if (t === undefined) {
      days.set(key, t = { source, day, grossMinor: 0, refundsMinor: 0, failedPayments: 0, failedMinor: 0, items: 0 })
    }
    return t
  }
  const flowOf = (source: FlowSource, currency: string, day: string) => {
    const key = `${source}|${currency}|${day}`
    let f = unconverted.get(key)
    if (f === undefined) {
      unconverted.set(key, f = { source, currency, day, grossMinor: 0, refundsMinor: 0, failedMinor: 0, items: 0 })
    }
    return f
  }
  return {
    localDay,
    charge: (c: Charge, sign: 1 | -1 = 1) => {
      const day = localDay(c.at)
      const currency = c.currency.toUpperCase()
      const converted = convertMinor(c.amountMinor, currency, reporting, day, options.rates)
      const succeeded = c.status === "succeeded"
      const t = dayOf("charges", day)
      t.items += sign
      if (!succeeded) t.failedPayments += sign
      if (converted === null) {
        const u = flowOf("charges", currency, day)
        u.items += sign
        if (succeeded) u.grossMinor += sign * c.amountMinor
        else u.failedMinor += sign * c.amountMinor
      } else if (succeeded) t.grossMinor += sign * converted
      else t.failedMinor += sign * converted
    },
    refund: (r: Refund, sign: 1 | -1 = 1) => {
      const day = localDay(r.at)
      const currency = r.currency.toUpperCase()
      const converted = convertMinor(r.amountMinor, currency, reporting, day, options.rates)
      const t = dayOf("refunds", day) // the day exists in revenue_daily even when the amount is unconverted
      t.items += sign
      if (converted === null) {
        const u = flowOf("refunds", currency, day)
        u.items += sign
        u.refundsMinor += sign * r.amountMinor
      } else t.refundsMinor += sign * converted
    },
    finish: (): { readonly days: ReadonlyArray<FlowDay>; readonly unconverted: ReadonlyArray<UnconvertedFlow> } => ({
      days: [...days.values()],
      unconverted: [...unconverted.values()]
    })
  }
}

/**
 * The rollup fed piece by piece, so a caller can stream a project's history through it in bounded batches:
 * every customer's versions in ONE call (a customer's figures depend on all its versions, and on nothing
 * else), every charge and refund once, in any order. What it keeps between calls is per day and currency (a
 * few thousand entries), never per customer or per charge. `rollup` below is the same accumulator over
 * arrays, so both give identical figures.
 */
export interface RollupAccumulator {
  readonly customer: (customerId: string, versions: ReadonlyArray<SubscriptionVersion>) => CustomerRollup
  readonly charge: (c: Charge) => void
  readonly refund: (r: Refund) => void
  readonly finish: () => {
    readonly revenueDays: ReadonlyArray<RevenueDay>
    readonly unconverted: ReadonlyArray<UnconvertedDay>
  }
}

export const rollupAccumulator = (options: RollupOptions): RollupAccumulator => {
  const part = customerRollup(options)
  const flows = flowsAccumulator(options)
  // Moves summed per day as they come (what the caller keeps is per day, not per customer).
  const moves = new Map<string, CustomerMove>()
  const unconvertedMoves = new Map<string, UnconvertedMove>()
  return {
    customer: (customerId, versions) => {
      const out = part(customerId, versions)
      for (const m of out.moves) {
        const t = moves.get(m.day)
        moves.set(
          m.day,
          t === undefined ? m : {
            day: m.day,
            mrrDelta: t.mrrDelta + m.mrrDelta,
            customersDelta: t.customersDelta + m.customersDelta,
            newMrrMinor: t.newMrrMinor + m.newMrrMinor,
            expansionMrrMinor: t.expansionMrrMinor + m.expansionMrrMinor,
            contractionMrrMinor: t.contractionMrrMinor + m.contractionMrrMinor,
            churnedMrrMinor: t.churnedMrrMinor + m.churnedMrrMinor,
            reactivationMrrMinor: t.reactivationMrrMinor + m.reactivationMrrMinor,
            newCustomers: t.newCustomers + m.newCustomers,
            churnedCustomers: t.churnedCustomers + m.churnedCustomers,
            reactivatedCustomers: t.reactivatedCustomers + m.reactivatedCustomers
          }
        )
      }
      for (const u of out.unconvertedMoves) {
        const key = `${u.currency}|${u.day}`
        const t = unconvertedMoves.get(key)
        unconvertedMoves.set(key, t === undefined ? u : { ...u, delta: t.delta + u.delta })
      }
      return out
    },
    charge: flows.charge,
    refund: flows.refund,
    finish: () => {
      const f = flows.finish()
      return assembleDays(moves.values(), f.days, unconvertedMoves.values(), f.unconverted)
    }
  }
}

/** Churn events in the order the reports list them: by day, then customer. */
export const byDayThenCustomer = (a: ChurnEvent, b: ChurnEvent): number =>
  a.day < b.day ? -1 : a.day > b.day ? 1 : a.customerId < b.customerId ? -1 : 1

export const rollup = (data: Partial<PaymentsData>, options: RollupOptions): RollupOutput => {
  const acc = rollupAccumulator(options)
  const byCustomer = new Map<string, Array<SubscriptionVersion>>()
  for (const v of data.subscriptionVersions ?? []) {
    const list = byCustomer.get(v.customerId)
    if (list === undefined) byCustomer.set(v.customerId, [v])
    else list.push(v)
  }
  const customerMrr: Array<CustomerMrrSpan> = []
  const churnEvents: Array<ChurnEvent> = []
  for (const [customerId, versions] of [...byCustomer].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const part = acc.customer(customerId, versions)
    for (const s of part.spans) customerMrr.push(s)
    for (const e of part.churnEvents) churnEvents.push(e)
  }
  for (const c of data.charges ?? []) acc.charge(c)
  for (const r of data.refunds ?? []) acc.refund(r)
  const { revenueDays, unconverted } = acc.finish()
  return { revenueDays, customerMrr, churnEvents: churnEvents.sort(byDayThenCustomer), unconverted }
}

/**
 * Why a customer's MRR went to 0 on `day`: the cancel reason of a version that ended that day, else of one
 * that started that day (Stripe puts cancellation details on the canceled subscription itself).
 */
const churnReason = (placed: ReadonlyArray<Placed>, day: string): string | null =>
  placed.find((p) => p.toDay === day && p.v.cancelReason !== null)?.v.cancelReason ??
    placed.find((p) => p.fromDay === day && p.v.cancelReason !== null)?.v.cancelReason ??
    null
