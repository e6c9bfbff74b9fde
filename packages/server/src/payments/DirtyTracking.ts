/**
 * The incremental rollup's dirty tracking: the ONE statement of what a commit marks for the next rollup and of
 * what a rollup does with the marks. Both stores follow it and only keep the marks: PostgreSQL (SqlDirty.ts
 * reads the stored rows the rule compares against and keeps the marks in payments_rollup_dirty and
 * payments_rollup_basis; SqlRollup.ts consumes them) and memory (PaymentsMemory.ts, in maps).
 *
 * 1. A commit that changes facts WITHOUT `trackChanges` leaves the stored parts untrustworthy: the basis is
 *    forgotten, and the next rollup is a full one (`commitTracking`).
 * 2. With `trackChanges`, a commit marks, against the facts as stored BEFORE it (`marksOf`):
 *    - the customers of every subscription whose versions change, as stored (before) and as written (after):
 *      a replaced subscription changes when versionsDiff finds a difference; an upserted version changes its
 *      subscription;
 *    - every charge (refund) upserted that is new or differs from its stored row, with that row as `old`
 *      (null: new), and every removed refund that is stored, with its row. A row stored exactly as it comes
 *      again is not marked: its upsert leaves it as it is.
 *    A mark already waiting is kept as it is: its `old` is the row as it was at the last rollup, which is what
 *    the stored flows hold (`keepFirst`).
 * 3. A rollup is a full one when asked (write, rebuild) or when the stored basis — time zone, reporting
 *    currency, FX rates — is absent or differs (`isFullRollup`). Otherwise it recomputes each marked
 *    customer's part from all its versions (a customer left without versions loses its part), and for each
 *    marked charge (refund) adds its contribution now and takes its `old` one away (`applyFlowMarks`). Either
 *    way the marks are gone after it.
 *
 * The rule is per subscription, charge and refund, so a store may apply it to a batch slice by slice (the
 * SQL store does, CHUNK rows at a time). Rows are compared as PostgreSQL stores them: currencies upper-case,
 * instants by time.
 */
import { createHash } from "node:crypto"
import type { FxRate } from "../fx/Fx.ts"
import type { PaymentsBatch } from "./PaymentsShape.ts"
import type { Charge, Refund, SubscriptionVersion } from "./Types.ts"
import { versionsDiff } from "./VersionsDiff.ts"

// ---------------------------------------------------------------------------------------------------
// Rule 1: does a commit mark, or forget the basis?
// ---------------------------------------------------------------------------------------------------

/** Whether the batch writes or removes any fact. */
const changesFacts = (batch: PaymentsBatch): boolean =>
  (batch.replaceVersionsOf ?? []).length > 0 || (batch.removeRefunds ?? []).length > 0 ||
  Object.values(batch.facts ?? {}).some((rows) => rows.length > 0)

export const commitTracking = (batch: PaymentsBatch): "mark" | "forgetBasis" | "nothing" =>
  batch.trackChanges === true ? "mark" : changesFacts(batch) ? "forgetBasis" : "nothing"

// ---------------------------------------------------------------------------------------------------
// Rule 2: what a commit marks
// ---------------------------------------------------------------------------------------------------

/**
 * A batch's versions: those of the subscriptions it replaces (written by difference, versionsDiff) and the
 * others (upserted).
 */
export const splitVersions = (
  batch: PaymentsBatch
): { readonly replaced: ReadonlyArray<SubscriptionVersion>; readonly upserted: ReadonlyArray<SubscriptionVersion> } => {
  const all = batch.facts?.subscriptionVersions ?? []
  const replace = new Set(batch.replaceVersionsOf ?? [])
  if (replace.size === 0) return { replaced: [], upserted: all }
  return {
    replaced: all.filter((v) => replace.has(v.subscriptionId)),
    upserted: all.filter((v) => !replace.has(v.subscriptionId))
  }
}

/** A charge or refund the next rollup recomputes, with its row as it was before (null: it was not stored). */
export interface FlowMark<A> {
  readonly id: string
  readonly old: A | null
}

/** The rows stored before a batch, for the subscriptions, charges and refunds it touches. */
export interface StoredFacts {
  /** The stored versions of (at least) the subscriptions whose versions the batch writes; others are ignored. */
  readonly versions: Iterable<SubscriptionVersion>
  readonly charge: (id: string) => Charge | undefined
  readonly refund: (id: string) => Refund | undefined
}

export interface Marks {
  readonly customers: ReadonlySet<string>
  readonly charges: ReadonlyArray<FlowMark<Charge>>
  readonly refunds: ReadonlyArray<FlowMark<Refund>>
}

const instant = (iso: string): number => new Date(iso).getTime()

const sameCharge = (a: Charge, b: Charge): boolean =>
  a.customerId === b.customerId && instant(a.at) === instant(b.at) && a.amountMinor === b.amountMinor &&
  a.currency.toUpperCase() === b.currency.toUpperCase() && a.status === b.status

const sameRefund = (a: Refund, b: Refund): boolean =>
  a.chargeId === b.chargeId && instant(a.at) === instant(b.at) && a.amountMinor === b.amountMinor &&
  a.currency.toUpperCase() === b.currency.toUpperCase()

/** What a commit with `trackChanges` marks: `batch` (or a slice of it) against the facts stored before it. */
export const marksOf = (batch: PaymentsBatch, stored: StoredFacts): Marks => {
  const { replaced, upserted } = splitVersions(batch)
  const replace = new Set(batch.replaceVersionsOf ?? [])
  const changed = new Set(upserted.map((v) => v.subscriptionId))
  const before: Array<SubscriptionVersion> = []
  const beforeReplaced: Array<SubscriptionVersion> = []
  for (const v of stored.versions) {
    if (replace.has(v.subscriptionId)) beforeReplaced.push(v)
    else if (changed.has(v.subscriptionId)) before.push(v)
  }
  if (replace.size > 0) { for (const s of versionsDiff(beforeReplaced, replaced).changedSubscriptions) changed.add(s) }
  const customers = new Set<string>()
  for (const versions of [before, beforeReplaced, upserted, replaced]) {
    for (const v of versions) if (changed.has(v.subscriptionId)) customers.add(v.customerId)
  }
  const charges: Array<FlowMark<Charge>> = []
  for (const c of batch.facts?.charges ?? []) {
    const old = stored.charge(c.id)
    if (old === undefined || !sameCharge(old, c)) charges.push({ id: c.id, old: old ?? null })
  }
  const refunds: Array<FlowMark<Refund>> = []
  for (const r of batch.facts?.refunds ?? []) {
    const old = stored.refund(r.id)
    if (old === undefined || !sameRefund(old, r)) refunds.push({ id: r.id, old: old ?? null })
  }
  for (const id of batch.removeRefunds ?? []) {
    const old = stored.refund(id)
    if (old !== undefined) refunds.push({ id, old }) // a removed refund that is not stored changes nothing
  }
  return { customers, charges, refunds }
}

/** A mark already waiting is kept (what the stored flows hold); a store keeps marks by id this way. */
export const keepFirst = <A>(marks: Map<string, A | null>, added: Iterable<FlowMark<A>>): void => {
  for (const m of added) if (!marks.has(m.id)) marks.set(m.id, m.old)
}

// ---------------------------------------------------------------------------------------------------
// Rule 3: what a rollup does with the marks
// ---------------------------------------------------------------------------------------------------

export interface RollupBasis {
  readonly timezone: string
  readonly currency: string
  /** A digest of every FX rate. */
  readonly rates: string
}

/** What the parts are computed with: the same basis → the stored parts are still right. */
export const basisOf = (timezone: string, currency: string, rates: ReadonlyArray<FxRate>): RollupBasis => ({
  timezone,
  currency: currency.toUpperCase(),
  rates: createHash("sha256").update(JSON.stringify(rates)).digest("hex")
})

/** Recompute every part, or only the marked ones. */
export const isFullRollup = (full: boolean, stored: RollupBasis | null, basis: RollupBasis): boolean =>
  full || stored === null || stored.timezone !== basis.timezone || stored.currency !== basis.currency ||
  stored.rates !== basis.rates

/** Where flows are summed (Rollup.flowsAccumulator). */
export interface FlowsSink {
  readonly charge: (c: Charge, sign?: 1 | -1) => void
  readonly refund: (r: Refund, sign?: 1 | -1) => void
}

/**
 * The flows of marked charges (refunds): each adds its contribution now (`now`: its stored row, undefined when
 * it is gone) and takes away the one it had at the last rollup (`old`).
 */
export const applyFlowMarks = (
  flows: FlowsSink,
  charges: Iterable<FlowMark<Charge>>,
  refunds: Iterable<FlowMark<Refund>>,
  now: { readonly charge: (id: string) => Charge | undefined; readonly refund: (id: string) => Refund | undefined }
): void => {
  for (const { id, old } of charges) {
    const current = now.charge(id)
    if (current !== undefined) flows.charge(current)
    if (old !== null) flows.charge(old, -1)
  }
  for (const { id, old } of refunds) {
    const current = now.refund(id)
    if (current !== undefined) flows.refund(current)
    if (old !== null) flows.refund(old, -1)
  }
}
