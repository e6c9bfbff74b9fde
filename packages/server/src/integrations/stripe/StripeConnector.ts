/**
 * The Stripe connector: payments → revenue and churn. A sync pages through customers, subscriptions
 * (status=all), invoices (with their lines), charges and refunds; rebuilds each subscription's versions
 * over time from its invoices (Versions.ts); then writes everything in ONE PaymentsRepo.write (one
 * transaction, upserts by Stripe ids, data_version bumped). docs/integrations-stripe.md has the details.
 *
 * Incremental runs: subscriptions and invoices are always listed in full (a subscription's state changes
 * and its versions are rebuilt from all its invoices); customers, charges and refunds only from
 * `created[gte]` = the newest `created` seen by the last run minus INCREMENTAL_OVERLAP_SECONDS, so charges
 * that settle late (pending → succeeded/failed) are picked up again. A full sync lists everything.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { PaymentsRepo } from "../../payments/PaymentsRepo.ts"
import type { Charge, Customer, Refund, SubscriptionVersion } from "../../payments/Types.ts"
import type { ConnectionContext, Connector, SyncContext, SyncOutcome } from "../Connector.ts"
import { ProviderError } from "../ProviderHttp.ts"
import { getPage, listAll, type PageCounter } from "./StripeApi.ts"
import {
  readCharge,
  readCustomer,
  readInvoiceLine,
  readRefund,
  readSubscription,
  StripeCharge,
  StripeCustomer,
  StripeInvoice,
  type StripeInvoiceLine,
  StripeListedInvoiceLine,
  StripeRefund,
  StripeSubscription
} from "./StripeObjects.ts"
import { type SubscriptionLine, type SubscriptionNow, subscriptionVersions } from "./Versions.ts"

/** How far back an incremental run re-reads customers, charges and refunds: late settlements (ACH, SEPA). */
export const INCREMENTAL_OVERLAP_SECONDS = 14 * 86_400

/** What a run hands to the next one. */
export const StripeSyncState = Schema.Struct({
  /** The newest `created` (Unix seconds) among the customers, charges and refunds seen so far. */
  createdCursor: Schema.Number
})
export type StripeSyncState = typeof StripeSyncState.Type

const readState = (state: unknown): StripeSyncState | null => Option.getOrNull(Schema.decodeUnknownOption(StripeSyncState)(state))

/** Take a reader's row into `into` (skipping nulls), or say what is wrong. */
const take = <A>(into: Array<A>, read: A | null | string): string | undefined => {
  if (typeof read === "string") return read
  if (read !== null) into.push(read)
  return undefined
}

export interface StripePull {
  readonly customers: Array<Customer>
  readonly subscriptions: Array<SubscriptionNow>
  readonly linesBySubscription: Map<string, Array<SubscriptionLine>>
  readonly charges: Array<Charge>
  readonly refunds: Array<Refund>
  readonly invoices: number
  readonly pages: number
  readonly maxCreated: number
}

/** Everything a run needs, page by page into compact arrays (nothing is written until all of it is here). */
export const pullStripe = (ctx: ConnectionContext, createdFrom: number | null): Effect.Effect<StripePull, ProviderError> =>
  Effect.gen(function*() {
    const counter: PageCounter = { pages: 0 }
    const since: ReadonlyArray<readonly [string, string]> = createdFrom === null ? [] : [["created[gte]", String(createdFrom)]]
    let maxCreated = createdFrom ?? 0
    const seen = (o: { readonly created: number }) => {
      if (o.created > maxCreated) maxCreated = o.created
    }

    const customers: Array<Customer> = []
    yield* listAll(ctx, "/v1/customers", since, counter, { name: "customer", schema: StripeCustomer },
      (o) => (seen(o), take(customers, readCustomer(o))))

    // status=all: the default list leaves canceled subscriptions out, and they are the churn. Items carry
    // their price objects in this API version; `discounts` is a list of ids unless expanded.
    const subscriptions: Array<SubscriptionNow> = []
    yield* listAll(ctx, "/v1/subscriptions", [["status", "all"], ["expand[]", "data.discounts"]], counter,
      { name: "subscription", schema: StripeSubscription }, (o) => take(subscriptions, readSubscription(o)))

    // Invoices embed their first lines; the rest are paged from /v1/invoices/{id}/lines afterwards.
    const linesBySubscription = new Map<string, Array<SubscriptionLine>>()
    const moreLines: Array<{ invoiceId: string; subscription: string | null; after: string }> = []
    const takeLine = (line: StripeInvoiceLine, subscription: string | null): string | undefined => {
      const read = readInvoiceLine(line, subscription)
      if (typeof read === "string") return read
      if (read === null) return undefined
      const list = linesBySubscription.get(read.subscriptionId)
      if (list === undefined) linesBySubscription.set(read.subscriptionId, [read.line])
      else list.push(read.line)
      return undefined
    }
    const invoices = yield* listAll(ctx, "/v1/invoices", [], counter, { name: "invoice", schema: StripeInvoice }, (o) => {
      const subscription = o.subscription === null || o.subscription === undefined ? null
        : typeof o.subscription === "string" ? o.subscription : o.subscription.id
      for (const line of o.lines.data) {
        const wrong = takeLine(line, subscription)
        if (wrong !== undefined) return `line ${String(line.id)}: ${wrong}`
      }
      const last = o.lines.data.at(-1)
      if (o.lines.has_more === true && last !== undefined) {
        if (typeof last.id !== "string") return "a line without an id"
        moreLines.push({ invoiceId: o.id, subscription, after: last.id })
      }
      return undefined
    })
    for (const m of moreLines) {
      yield* listAll(ctx, `/v1/invoices/${encodeURIComponent(m.invoiceId)}/lines`, [], counter,
        { name: `invoice ${m.invoiceId} line`, schema: StripeListedInvoiceLine }, (line) => takeLine(line, m.subscription), m.after)
    }

    const charges: Array<Charge> = []
    yield* listAll(ctx, "/v1/charges", since, counter, { name: "charge", schema: StripeCharge },
      (o) => (seen(o), take(charges, readCharge(o))))
    const refunds: Array<Refund> = []
    yield* listAll(ctx, "/v1/refunds", since, counter, { name: "refund", schema: StripeRefund },
      (o) => (seen(o), take(refunds, readRefund(o))))

    return { customers, subscriptions, linesBySubscription, charges, refunds, invoices, pages: counter.pages, maxCreated }
  })

/** Every subscription's versions (Versions.ts), subscription by subscription. */
export const versionsOf = (pull: StripePull): Array<SubscriptionVersion> => {
  const out: Array<SubscriptionVersion> = []
  for (const sub of pull.subscriptions) {
    for (const v of subscriptionVersions(sub, pull.linesBySubscription.get(sub.id) ?? [])) out.push(v)
  }
  return out
}

const validate = (ctx: ConnectionContext) =>
  // The cheapest call that needs the permission a sync needs most (read customers); 401 says "the key was
  // rejected", 403 that a restricted key lacks a permission.
  getPage(ctx, "/v1/customers", [["limit", "1"]]).pipe(
    Effect.mapError((e) =>
      e.kind === "unauthorized"
        ? new ProviderError({ kind: e.kind, status: e.status, message: "Stripe rejected the key (401): it is wrong, revoked or expired" })
        : e.kind === "forbidden"
        ? new ProviderError({ kind: e.kind, status: e.status, message: "The Stripe key lacks a read permission (403): a restricted key needs read access to customers, subscriptions, invoices, charges and refunds" })
        : e
    ),
    Effect.asVoid
  )

const sync = (ctx: SyncContext): Effect.Effect<SyncOutcome, ProviderError, PaymentsRepo> =>
  Effect.gen(function*() {
    const state = ctx.mode === "full" ? null : readState(ctx.state)
    const createdFrom = state === null ? null : Math.max(0, state.createdCursor - INCREMENTAL_OVERLAP_SECONDS)
    const pull = yield* pullStripe(ctx, createdFrom)
    const subscriptionVersions = versionsOf(pull)
    let lines = 0
    for (const l of pull.linesBySubscription.values()) lines += l.length
    const subscriptions = pull.subscriptions.length
    // The lines are in the versions now; free them before the write, whose rollup needs the memory.
    pull.linesBySubscription.clear()
    pull.subscriptions.length = 0
    yield* (yield* PaymentsRepo).write(ctx.projectId, {
      customers: pull.customers,
      subscriptionVersions,
      charges: pull.charges,
      refunds: pull.refunds
    })
    return {
      counts: {
        customers: pull.customers.length,
        subscriptions,
        subscriptionVersions: subscriptionVersions.length,
        invoices: pull.invoices,
        invoiceLines: lines,
        charges: pull.charges.length,
        refunds: pull.refunds.length,
        pages: pull.pages
      },
      state: { createdCursor: Math.max(pull.maxCreated, state?.createdCursor ?? 0) } satisfies StripeSyncState
    }
  })

export const stripeConnector: Connector<PaymentsRepo> = {
  provider: "stripe",
  kind: "payments",
  defaultBaseUrl: "https://api.stripe.com",
  baseUrlEnv: "STRIPE_API_BASE",
  credentialFields: ["secret_key"],
  validate,
  sync
}
