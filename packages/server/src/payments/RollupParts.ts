/**
 * The PARTS of the payments rollup (Rollup.ts) and the day rows assembled from them. A customer's part
 * (CustomerRollup: its MRR spans, churn events and moves per day) depends on its versions only; a day's flows
 * (FlowDay, UnconvertedFlow) on that day's charges and refunds only. The stores keep the parts (SqlParts.ts,
 * PaymentsMemory.ts), so an incremental rollup recomputes only the parts that changed, and every rollup
 * assembles revenue_daily and the unconverted rows from all of them (`assembleDays`).
 */
import { eachDay } from "../metrics/Dates.ts"
import type { ChurnEvent, RevenueDay, UnconvertedDay } from "../store/Series.ts"

/** A customer's MRR (converted, > 0) from `fromDay` (inclusive) to `toDay` (exclusive; null = still). */
export interface CustomerMrrSpan {
  readonly customerId: string
  readonly fromDay: string
  readonly toDay: string | null
  readonly mrrMinor: number
}

/** What one customer's MRR change on `day` adds to that day's totals (at most one per customer and day). */
export interface CustomerMove {
  readonly day: string
  readonly mrrDelta: number
  readonly customersDelta: number
  readonly newMrrMinor: number
  readonly expansionMrrMinor: number
  readonly contractionMrrMinor: number
  readonly churnedMrrMinor: number
  readonly reactivationMrrMinor: number
  readonly newCustomers: number
  readonly churnedCustomers: number
  readonly reactivatedCustomers: number
}

/** A change (≠ 0) of a customer's unconverted MRR in `currency` on `day`. */
export interface UnconvertedMove {
  readonly currency: string
  readonly day: string
  readonly delta: number
}

/**
 * One customer's part of the rollup: its MRR spans and churn events, and what it adds to the day totals.
 * A customer's part depends on its versions (and the time zone, reporting currency and rates) and on
 * nothing else, so an incremental rollup recomputes only the parts of the customers whose versions changed.
 */
export interface CustomerRollup {
  readonly spans: ReadonlyArray<CustomerMrrSpan>
  readonly churnEvents: ReadonlyArray<ChurnEvent>
  readonly moves: ReadonlyArray<CustomerMove>
  readonly unconvertedMoves: ReadonlyArray<UnconvertedMove>
}

/** Flows are kept apart by what they come from: a changed refund recomputes its day's refunds, not its charges. */
export type FlowSource = "charges" | "refunds"

/** The charges (or refunds) of one local day: converted sums (a day with any charge or refund has one). */
export interface FlowDay {
  readonly source: FlowSource
  readonly day: string
  readonly grossMinor: number
  readonly refundsMinor: number
  readonly failedPayments: number
  readonly failedMinor: number
  /** How many charges (refunds) it sums: the row goes when an incremental rollup takes the last one away. */
  readonly items: number
}

/** The unconverted charges (or refunds) of one day and currency. */
export interface UnconvertedFlow {
  readonly source: FlowSource
  readonly currency: string
  readonly day: string
  readonly grossMinor: number
  readonly refundsMinor: number
  readonly failedMinor: number
  readonly items: number
}

interface DayTotals {
  mrrDelta: number
  customersDelta: number
  grossMinor: number
  refundsMinor: number
  failedPayments: number
  failedMinor: number
  newMrrMinor: number
  expansionMrrMinor: number
  contractionMrrMinor: number
  churnedMrrMinor: number
  reactivationMrrMinor: number
  newCustomers: number
  churnedCustomers: number
  reactivatedCustomers: number
}

const emptyTotals = (): DayTotals => ({
  mrrDelta: 0,
  customersDelta: 0,
  grossMinor: 0,
  refundsMinor: 0,
  failedPayments: 0,
  failedMinor: 0,
  newMrrMinor: 0,
  expansionMrrMinor: 0,
  contractionMrrMinor: 0,
  churnedMrrMinor: 0,
  reactivationMrrMinor: 0,
  newCustomers: 0,
  churnedCustomers: 0,
  reactivatedCustomers: 0
})

/**
 * The derived day rows from the parts: customers' moves (summed per day, in any grouping — a store may sum
 * them in SQL), flow days, unconverted moves (summed per currency and day) and unconverted flows.
 */
export const assembleDays = (
  moves: Iterable<CustomerMove>,
  flows: Iterable<FlowDay>,
  unconvertedMoves: Iterable<UnconvertedMove>,
  unconvertedFlows: Iterable<UnconvertedFlow>
): { readonly revenueDays: ReadonlyArray<RevenueDay>; readonly unconverted: ReadonlyArray<UnconvertedDay> } => {
  const days = new Map<string, DayTotals>()
  const totalsOf = (day: string) => {
    let t = days.get(day)
    if (t === undefined) days.set(day, t = emptyTotals())
    return t
  }
  for (const m of moves) {
    const t = totalsOf(m.day)
    t.mrrDelta += m.mrrDelta
    t.customersDelta += m.customersDelta
    t.newMrrMinor += m.newMrrMinor
    t.expansionMrrMinor += m.expansionMrrMinor
    t.contractionMrrMinor += m.contractionMrrMinor
    t.churnedMrrMinor += m.churnedMrrMinor
    t.reactivationMrrMinor += m.reactivationMrrMinor
    t.newCustomers += m.newCustomers
    t.churnedCustomers += m.churnedCustomers
    t.reactivatedCustomers += m.reactivatedCustomers
  }
  for (const f of flows) {
    const t = totalsOf(f.day)
    t.grossMinor += f.grossMinor
    t.refundsMinor += f.refundsMinor
    t.failedPayments += f.failedPayments
    t.failedMinor += f.failedMinor
  }
  const mrrDelta = new Map<string, Map<string, number>>() // currency → day → delta
  for (const u of unconvertedMoves) {
    const m = mrrDelta.get(u.currency) ?? new Map<string, number>()
    m.set(u.day, (m.get(u.day) ?? 0) + u.delta)
    mrrDelta.set(u.currency, m)
  }
  const flowsByKey = new Map<string, { gross: number; refunds: number; failed: number }>()
  for (const f of unconvertedFlows) {
    const key = `${f.currency}|${f.day}`
    const x = flowsByKey.get(key) ?? { gross: 0, refunds: 0, failed: 0 }
    x.gross += f.grossMinor
    x.refunds += f.refundsMinor
    x.failed += f.failedMinor
    flowsByKey.set(key, x)
  }
  return { revenueDays: denseDays(days), unconverted: unconvertedRows(mrrDelta, flowsByKey) }
}

const denseDays = (days: ReadonlyMap<string, DayTotals>): Array<RevenueDay> => {
  if (days.size === 0) return []
  const sorted = [...days.keys()].sort()
  let mrr = 0
  let customers = 0
  return eachDay(sorted[0]!, sorted[sorted.length - 1]!).map((day): RevenueDay => {
    const t = days.get(day) ?? emptyTotals()
    mrr += t.mrrDelta
    customers += t.customersDelta
    return {
      day,
      grossMinor: t.grossMinor,
      refundsMinor: t.refundsMinor,
      failedPayments: t.failedPayments,
      failedMinor: t.failedMinor,
      mrrMinor: mrr,
      customers,
      newMrrMinor: t.newMrrMinor,
      expansionMrrMinor: t.expansionMrrMinor,
      contractionMrrMinor: t.contractionMrrMinor,
      churnedMrrMinor: t.churnedMrrMinor,
      reactivationMrrMinor: t.reactivationMrrMinor,
      newCustomers: t.newCustomers,
      churnedCustomers: t.churnedCustomers,
      reactivatedCustomers: t.reactivatedCustomers
    }
  })
}

const unconvertedRows = (
  mrrDelta: ReadonlyMap<string, ReadonlyMap<string, number>>,
  flows: ReadonlyMap<string, { gross: number; refunds: number; failed: number }>
): Array<UnconvertedDay> => {
  const keys = new Set<string>(flows.keys())
  for (const [currency, m] of mrrDelta) for (const day of m.keys()) keys.add(`${currency}|${day}`)
  const out: Array<UnconvertedDay> = []
  const state = new Map<string, number>()
  for (
    const key of [...keys].sort((a, b) => {
      const [ca, da] = a.split("|") as [string, string]
      const [cb, db] = b.split("|") as [string, string]
      return ca !== cb ? (ca < cb ? -1 : 1) : da < db ? -1 : da > db ? 1 : 0
    })
  ) {
    const [currency, day] = key.split("|") as [string, string]
    const mrr = (state.get(currency) ?? 0) + (mrrDelta.get(currency)?.get(day) ?? 0)
    state.set(currency, mrr)
    const f = flows.get(key)
    out.push({
      day,
      currency,
      mrrMinor: mrr,
      grossMinor: f?.gross ?? 0,
      refundsMinor: f?.refunds ?? 0,
      failedMinor: f?.failed ?? 0
    })
  }
  return out
}
