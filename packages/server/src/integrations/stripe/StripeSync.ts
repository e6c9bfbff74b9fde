/**
 * What the steps of a Stripe sync share (StripeConnector.ts runs them: a full listing, StripeFullListing.ts, or
 * an incremental run from events, StripeEvents.ts): the state a run hands to the next, the batch sizes, the
 * batch being filled from Stripe's objects (`take…`), and the subscription versions rebuilt from what is
 * staged (`versionsOfGroups`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { PaymentsBatch, StagedDoc, StagedGroup } from "../../payments/PaymentsRepo.ts"
import type { Charge, Customer, Refund, SubscriptionVersion } from "../../payments/Types.ts"
import type { ConnectionContext } from "../Connector.ts"
import { decoder, malformed } from "../Decode.ts"
import type { ProviderError } from "../ProviderHttp.ts"
import { listAll, type PageCounter } from "./StripeApi.ts"
import {
  idOfExpandable,
  readCharge,
  readCustomer,
  readInvoiceLine,
  readRefund,
  readSubscription,
  StagedLines,
  StagedSubscription,
  type StripeCharge,
  type StripeCustomer,
  type StripeInvoice,
  type StripeInvoiceLine,
  StripeListedInvoiceLine,
  type StripeRefund,
  type StripeSubscription,
  StripeSubscriptionItem
} from "./StripeObjects.ts"
import { type SubscriptionLine, type SubscriptionNow, subscriptionVersions } from "./Versions.ts"

export const PROVIDER = "stripe"

/** Pages per committed batch of a full listing (1 000 objects): what memory holds, and what a resume redoes at most. */
export const BATCH_PAGES = 10
/** Subscriptions whose versions are rebuilt (and committed) at a time. */
export const DERIVE_BATCH = 500
/** An incremental run's cursor never stays further back than this (events become listable within seconds). */
export const CURSOR_LAG_SECONDS = 3_600

/** Batch sizes (tests make them small to get many commits out of a small account). */
export interface StripeSyncOptions {
  readonly batchPages?: number
  readonly deriveBatch?: number
}

/** What a run hands to the next one. */
export const StripeSyncState = Schema.Struct({
  /** `created` (Unix seconds) from which the next incremental run reads events; null: no events access. */
  eventsCursor: Schema.NullOr(Schema.Number),
  /** When the last full listing ended (Unix seconds): the daily reconciliation counts from it. */
  reconciledAt: Schema.Number
})
export type StripeSyncState = typeof StripeSyncState.Type
export const readState = (state: unknown): StripeSyncState | null =>
  Option.getOrNull(Schema.decodeUnknownOption(StripeSyncState)(state))

export const zeroCounts = {
  customers: 0,
  subscriptions: 0,
  invoices: 0,
  invoiceLines: 0,
  charges: 0,
  refunds: 0,
  subscriptionVersions: 0,
  events: 0
}

// ---------------------------------------------------------------------------------------------------
// Objects → batches
// ---------------------------------------------------------------------------------------------------

/** One batch being filled. */
export interface Pending {
  readonly customers: Array<Customer>
  readonly charges: Array<Charge>
  readonly refunds: Array<Refund>
  readonly removeRefunds: Array<string>
  readonly staged: Array<StagedDoc>
  readonly unstage: Array<{ kind: string; parentId: string }>
  /** Subscriptions whose versions must be rebuilt (incremental runs). */
  readonly dirty: Set<string>
  readonly counts: Record<string, number>
}
export const pending = (): Pending => ({
  customers: [],
  charges: [],
  refunds: [],
  removeRefunds: [],
  staged: [],
  unstage: [],
  dirty: new Set(),
  counts: {}
})
export const bump = (p: Pending, key: string, n = 1) => void (p.counts[key] = (p.counts[key] ?? 0) + n)
export const batchOf = (p: Pending): PaymentsBatch => ({
  facts: { customers: p.customers, charges: p.charges, refunds: p.refunds },
  removeRefunds: p.removeRefunds,
  staged: p.staged,
  unstageParents: p.unstage
})
export const addCounts = (into: Record<string, number>, more: Readonly<Record<string, number>>) => {
  const out = { ...into }
  for (const [k, v] of Object.entries(more)) out[k] = (out[k] ?? 0) + v
  return out
}

export const orFail = <A>(read: A | string, record: string): Effect.Effect<A, ProviderError> =>
  typeof read === "string" ? Effect.fail(malformed(PROVIDER, record, read)) : Effect.succeed(read)

export const takeCustomer = (p: Pending, o: typeof StripeCustomer.Type) => {
  p.customers.push(readCustomer(o))
  bump(p, "customers")
}
export const takeCharge = (p: Pending, o: typeof StripeCharge.Type) => {
  const c = readCharge(o)
  if (c === null) return
  p.charges.push(c)
  bump(p, "charges")
}
export const takeRefund = (p: Pending, o: typeof StripeRefund.Type) => {
  const r = readRefund(o)
  // A refund that failed or was canceled gives nothing back: a row stored while it was pending goes.
  if (r === null) return void p.removeRefunds.push(o.id)
  p.refunds.push(r)
  bump(p, "refunds")
}
/**
 * A subscription as it is now: its embedded items (Stripe embeds the first 10), then the rest paged from
 * /v1/subscription_items when `items.has_more`.
 */
export const takeSubscription = (
  ctx: ConnectionContext,
  counter: PageCounter,
  p: Pending,
  o: typeof StripeSubscription.Type
) =>
  Effect.gen(function*() {
    let full = o
    const last = o.items.data.at(-1)
    if (o.items.has_more === true && last !== undefined) {
      if (typeof last.id !== "string") {
        return yield* Effect.fail(malformed(PROVIDER, `subscription ${o.id}`, "an item without an id"))
      }
      const rest: Array<typeof StripeSubscriptionItem.Type> = []
      yield* listAll(ctx, "/v1/subscription_items", [["subscription", o.id]], counter, {
        name: `subscription ${o.id} item`,
        schema: StripeSubscriptionItem
      }, (item) =>
        void rest.push(item), last.id)
      full = { ...o, items: { data: [...o.items.data, ...rest], has_more: false } }
    }
    const sub: SubscriptionNow = yield* orFail(readSubscription(full), `subscription ${o.id}`)
    p.staged.push({ kind: "subscription", id: sub.id, parentId: sub.id, groupId: sub.id, data: sub })
    p.dirty.add(sub.id)
    bump(p, "subscriptions")
  })

/**
 * An invoice's subscription lines, staged per subscription (replacing what was staged for the invoice):
 * the embedded first lines, then the rest paged from /v1/invoices/{id}/lines.
 */
export const takeInvoice = (ctx: ConnectionContext, counter: PageCounter, p: Pending, o: typeof StripeInvoice.Type) =>
  Effect.gen(function*() {
    const subscription = idOfExpandable(o.subscription)
    const bySubscription = new Map<string, Array<SubscriptionLine>>()
    const takeLine = (line: StripeInvoiceLine): string | undefined => {
      const read = readInvoiceLine(line, subscription)
      if (typeof read === "string") return read
      if (read === null) return undefined
      const list = bySubscription.get(read.subscriptionId)
      if (list === undefined) bySubscription.set(read.subscriptionId, [read.line])
      else list.push(read.line)
      return undefined
    }
    for (const line of o.lines.data) {
      const wrong = takeLine(line)
      if (wrong !== undefined) {
        return yield* Effect.fail(malformed(PROVIDER, `invoice ${o.id}`, `line ${String(line.id)}: ${wrong}`))
      }
    }
    const last = o.lines.data.at(-1)
    if (o.lines.has_more === true && last !== undefined) {
      if (typeof last.id !== "string") {
        return yield* Effect.fail(malformed(PROVIDER, `invoice ${o.id}`, "a line without an id"))
      }
      yield* listAll(
        ctx,
        `/v1/invoices/${encodeURIComponent(o.id)}/lines`,
        [],
        counter,
        { name: `invoice ${o.id} line`, schema: StripeListedInvoiceLine },
        takeLine,
        last.id
      )
    }
    p.unstage.push({ kind: "lines", parentId: o.id })
    for (const [sub, lines] of bySubscription) {
      p.staged.push({ kind: "lines", id: `${o.id}|${sub}`, parentId: o.id, groupId: sub, data: lines })
      p.dirty.add(sub)
      bump(p, "invoiceLines", lines.length)
    }
    bump(p, "invoices")
  })

// ---------------------------------------------------------------------------------------------------
// Staged → versions
// ---------------------------------------------------------------------------------------------------

const decodeStagedSubscription = decoder(PROVIDER, StagedSubscription)
const decodeStagedLines = decoder(PROVIDER, StagedLines)

/** The versions of the staged subscriptions of these groups (a group without its subscription has none). */
export const versionsOfGroups = (groups: ReadonlyArray<StagedGroup>) =>
  Effect.gen(function*() {
    const versions: Array<SubscriptionVersion> = []
    const replace: Array<string> = []
    for (const g of groups) {
      const subDoc = g.docs.find((d) => d.kind === "subscription")
      if (subDoc === undefined) continue
      const sub = decodeStagedSubscription(subDoc.data, `stored subscription ${g.groupId}`)
      if (Result.isFailure(sub)) return yield* Effect.fail(sub.failure)
      const lines: Array<SubscriptionLine> = []
      for (const d of g.docs) {
        if (d.kind !== "lines") continue
        const read = decodeStagedLines(d.data, `stored lines ${d.id}`)
        if (Result.isFailure(read)) return yield* Effect.fail(read.failure)
        for (const l of read.success) lines.push(l)
      }
      replace.push(g.groupId)
      for (const v of subscriptionVersions(sub.success, lines)) versions.push(v)
    }
    return { versions, replace }
  })
