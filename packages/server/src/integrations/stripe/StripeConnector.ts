/**
 * The Stripe connector: payments → revenue and churn. docs/integrations-stripe.md has the details.
 *
 * A FULL listing (the first sync, a requested full resync, the daily reconciliation, or an events cursor
 * older than Stripe's 30-day event retention) streams: customers, subscriptions (status=all), invoices (with
 * their lines), charges and refunds are paged and committed every BATCH_PAGES pages (PaymentsRepo.commit:
 * customers, charges and refunds upserted by id; each subscription and each invoice's subscription lines
 * STAGED for the rebuild), each commit carrying the listing's progress. Then the subscription versions are
 * rebuilt (Versions.ts) DERIVE_BATCH subscriptions at a time from what is staged, and the rollup runs once
 * (PaymentsRepo.rollUp: derived rows and data_version switch only there). Memory holds one batch, never the
 * account. A run that dies continues from the saved progress on its next attempt (or the next run).
 *
 * An INCREMENTAL run reads only what changed: GET /v1/events from the last cursor (types EVENT_TYPES),
 * the newest snapshot per object applied like a listed object, the versions of the subscriptions touched
 * rebuilt, then the rollup.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type PaymentsBatch, PaymentsRepo, type StagedDoc, type StagedGroup } from "../../payments/PaymentsRepo.ts"
import type { Charge, Customer, Refund, SubscriptionVersion } from "../../payments/Types.ts"
import type { ConnectionContext, Connector, SyncContext, SyncOutcome } from "../Connector.ts"
import { decoder, malformed } from "../Decode.ts"
import { ProviderError } from "../ProviderHttp.ts"
import { reconciliationDue } from "../Schedule.ts"
import { eachPage, getObject, getPage, type ItemKind, listAll, type PageCounter, STRIPE_VERSION } from "./StripeApi.ts"
import {
  idOfExpandable,
  readCharge,
  readCustomer,
  readInvoiceLine,
  readRefund,
  readSubscription,
  StagedLines,
  StagedSubscription,
  StripeCharge,
  StripeCustomer,
  StripeEvent,
  StripeInvoice,
  type StripeInvoiceLine,
  StripeListedInvoiceLine,
  StripeObjectHeader,
  StripeRefund,
  StripeSubscription,
  StripeSubscriptionItem
} from "./StripeObjects.ts"
import { type SubscriptionLine, type SubscriptionNow, subscriptionVersions } from "./Versions.ts"

const PROVIDER = "stripe"

/** Pages per committed batch of a full listing (1 000 objects): what memory holds, and what a resume redoes at most. */
export const BATCH_PAGES = 10
/** Subscriptions whose versions are rebuilt (and committed) at a time. */
export const DERIVE_BATCH = 500
/** Changed objects of an incremental run applied per commit. */
const APPLY_BATCH = 1000
/** Stripe keeps events 30 days; a cursor older than this (with an hour to spare) means a full listing. */
export const EVENTS_RETENTION_SECONDS = 30 * 86_400 - 3_600
/** An incremental run's cursor never stays further back than this (events become listable within seconds). */
const CURSOR_LAG_SECONDS = 3_600
/** A saved progress older than this is dropped and the listing starts over (its events cursor would be stale). */
const PROGRESS_MAX_AGE_SECONDS = 7 * 86_400

/** The events an incremental run reads (Stripe takes at most 20 `types[]`). */
export const EVENT_TYPES = [
  "customer.created", "customer.updated",
  "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
  "customer.subscription.paused", "customer.subscription.resumed",
  "invoice.created", "invoice.updated", "invoice.finalized", "invoice.paid", "invoice.voided", "invoice.deleted",
  "charge.succeeded", "charge.failed", "charge.updated", "charge.refund.updated",
  "refund.created", "refund.updated", "refund.failed"
] as const

/** What a run hands to the next one. */
export const StripeSyncState = Schema.Struct({
  /** `created` (Unix seconds) from which the next incremental run reads events; null: no events access. */
  eventsCursor: Schema.NullOr(Schema.Number),
  /** When the last full listing ended (Unix seconds): the daily reconciliation counts from it. */
  reconciledAt: Schema.Number
})
export type StripeSyncState = typeof StripeSyncState.Type
const readState = (state: unknown): StripeSyncState | null => Option.getOrNull(Schema.decodeUnknownOption(StripeSyncState)(state))

/** Where a full listing has got to, saved with each batch it commits. */
const FullProgress = Schema.Struct({
  startedAt: Schema.Number,
  eventsCursor: Schema.NullOr(Schema.Number),
  phase: Schema.Literals(["list", "derive", "rollup"]),
  /** The list being read (index in LISTS) and the id of the last object committed from it. */
  list: Schema.Number,
  after: Schema.NullOr(Schema.String),
  counts: Schema.Record(Schema.String, Schema.Number)
})
type FullProgress = typeof FullProgress.Type
const readProgress = (value: unknown): FullProgress | null => Option.getOrNull(Schema.decodeUnknownOption(FullProgress)(value))

// ---------------------------------------------------------------------------------------------------
// Objects → batches
// ---------------------------------------------------------------------------------------------------

/** One batch being filled. */
interface Pending {
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
const pending = (): Pending => ({ customers: [], charges: [], refunds: [], removeRefunds: [], staged: [], unstage: [], dirty: new Set(), counts: {} })
const bump = (p: Pending, key: string, n = 1) => void (p.counts[key] = (p.counts[key] ?? 0) + n)
const batchOf = (p: Pending): PaymentsBatch => ({
  facts: { customers: p.customers, charges: p.charges, refunds: p.refunds },
  removeRefunds: p.removeRefunds,
  staged: p.staged,
  unstageParents: p.unstage
})
const addCounts = (into: Record<string, number>, more: Readonly<Record<string, number>>) => {
  const out = { ...into }
  for (const [k, v] of Object.entries(more)) out[k] = (out[k] ?? 0) + v
  return out
}

const orFail = <A>(read: A | string, record: string): Effect.Effect<A, ProviderError> =>
  typeof read === "string" ? Effect.fail(malformed(PROVIDER, record, read)) : Effect.succeed(read)

const takeCustomer = (p: Pending, o: typeof StripeCustomer.Type) => {
  p.customers.push(readCustomer(o))
  bump(p, "customers")
}
const takeCharge = (p: Pending, o: typeof StripeCharge.Type) => {
  const c = readCharge(o)
  if (c === null) return
  p.charges.push(c)
  bump(p, "charges")
}
const takeRefund = (p: Pending, o: typeof StripeRefund.Type) => {
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
const takeSubscription = (ctx: ConnectionContext, counter: PageCounter, p: Pending, o: typeof StripeSubscription.Type) =>
  Effect.gen(function*() {
    let full = o
    const last = o.items.data.at(-1)
    if (o.items.has_more === true && last !== undefined) {
      if (typeof last.id !== "string") return yield* Effect.fail(malformed(PROVIDER, `subscription ${o.id}`, "an item without an id"))
      const rest: Array<typeof StripeSubscriptionItem.Type> = []
      yield* listAll(ctx, "/v1/subscription_items", [["subscription", o.id]], counter,
        { name: `subscription ${o.id} item`, schema: StripeSubscriptionItem }, (item) => void rest.push(item), last.id)
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
const takeInvoice = (ctx: ConnectionContext, counter: PageCounter, p: Pending, o: typeof StripeInvoice.Type) =>
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
      if (wrong !== undefined) return yield* Effect.fail(malformed(PROVIDER, `invoice ${o.id}`, `line ${String(line.id)}: ${wrong}`))
    }
    const last = o.lines.data.at(-1)
    if (o.lines.has_more === true && last !== undefined) {
      if (typeof last.id !== "string") return yield* Effect.fail(malformed(PROVIDER, `invoice ${o.id}`, "a line without an id"))
      yield* listAll(ctx, `/v1/invoices/${encodeURIComponent(o.id)}/lines`, [], counter,
        { name: `invoice ${o.id} line`, schema: StripeListedInvoiceLine }, takeLine, last.id)
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
const versionsOfGroups = (groups: ReadonlyArray<StagedGroup>) =>
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

// ---------------------------------------------------------------------------------------------------
// Full listing
// ---------------------------------------------------------------------------------------------------

interface ListSpec {
  readonly path: string
  readonly params: ReadonlyArray<readonly [string, string]>
  readonly kind: ItemKind<unknown>
  readonly take: (ctx: ConnectionContext, counter: PageCounter, p: Pending, item: unknown) => Effect.Effect<void, ProviderError>
}
const spec = <A>(
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  kind: ItemKind<A>,
  take: (ctx: ConnectionContext, counter: PageCounter, p: Pending, item: A) => Effect.Effect<void, ProviderError>
): ListSpec => ({
  path, params, kind: kind as ItemKind<unknown>, take: take as ListSpec["take"]
})

/** The lists of a full listing, in order (a saved progress names one by its index). */
const LISTS: ReadonlyArray<ListSpec> = [
  spec("/v1/customers", [], { name: "customer", schema: StripeCustomer }, (_c, _n, p, o) => Effect.sync(() => takeCustomer(p, o))),
  // status=all: the default list leaves canceled subscriptions out, and they are the churn. Items carry
  // their price objects in this API version; `discounts` is a list of ids unless expanded.
  spec("/v1/subscriptions", [["status", "all"], ["expand[]", "data.discounts"]], { name: "subscription", schema: StripeSubscription },
    (c, n, p, o) => takeSubscription(c, n, p, o)),
  spec("/v1/invoices", [], { name: "invoice", schema: StripeInvoice }, (c, n, p, o) => takeInvoice(c, n, p, o)),
  spec("/v1/charges", [], { name: "charge", schema: StripeCharge }, (_c, _n, p, o) => Effect.sync(() => takeCharge(p, o))),
  spec("/v1/refunds", [], { name: "refund", schema: StripeRefund }, (_c, _n, p, o) => Effect.sync(() => takeRefund(p, o)))
]

/** The newest event's `created`: where the next incremental run starts. Null when the key may not read events. */
const eventsHighWater = (ctx: SyncContext) =>
  getPage(ctx, "/v1/events", [["limit", "1"]]).pipe(
    Effect.map((page) => {
      const first = Schema.decodeUnknownOption(Schema.Struct({ created: Schema.Number }))(page.data[0])
      const now = Math.floor(ctx.now.getTime() / 1000)
      return first._tag === "Some" ? Math.min(first.value.created, now) : now - CURSOR_LAG_SECONDS
    }),
    Effect.catchIf((e) => e.kind === "forbidden", () => Effect.succeed(null))
  )

/** Batch sizes (tests make them small to get many commits out of a small account). */
export interface StripeSyncOptions {
  readonly batchPages?: number
  readonly deriveBatch?: number
}

const fullListing = (ctx: SyncContext, saved: FullProgress | null, options: StripeSyncOptions) =>
  Effect.gen(function*() {
    const repo = yield* PaymentsRepo
    const counter: PageCounter = { pages: 0 }
    let progress: FullProgress = saved ?? {
      startedAt: Math.floor(ctx.now.getTime() / 1000),
      // Taken BEFORE the listing: what changes while it runs is read again from the events.
      eventsCursor: yield* eventsHighWater(ctx),
      phase: "list",
      list: 0,
      after: null,
      counts: {}
    }
    // Pages are counted across attempts: those of the attempts before, plus this one's.
    const pagesBefore = progress.counts.pages ?? 0
    const save = (batch: PaymentsBatch, next: FullProgress) => {
      const withPages = { ...next, counts: { ...next.counts, pages: pagesBefore + counter.pages } }
      return Effect.map(repo.commit(ctx.projectId, { ...batch, progress: { provider: PROVIDER, value: withPages } }), () => void (progress = withPages))
    }
    if (saved === null) yield* save({}, progress)

    if (progress.phase === "list") {
      for (let i = progress.list; i < LISTS.length; i++) {
        const list = LISTS[i]!
        let p = pending()
        let pages = 0
        const listFrom = (after: string | null) =>
          eachPage(ctx, list.path, list.params, counter, list.kind, (items, last, hasMore) =>
            Effect.gen(function*() {
              for (const item of items) yield* list.take(ctx, counter, p, item)
              pages += 1
              if (hasMore && pages < (options.batchPages ?? BATCH_PAGES)) return
              const counts = addCounts(progress.counts, p.counts)
              yield* save(batchOf(p), hasMore ? { ...progress, list: i, after: last, counts } : { ...progress, list: i + 1, after: null, counts })
              p = pending()
              pages = 0
            }), after)
        const resumeAt = i === progress.list ? progress.after : null
        yield* listFrom(resumeAt).pipe(
          // The object a resumed listing continues after was deleted meanwhile: read that list again from the top.
          Effect.catchIf((e) => resumeAt !== null && (e.kind === "invalid_request" || e.kind === "not_found"), () => {
            p = pending()
            pages = 0
            return listFrom(null)
          })
        )
      }
      yield* save({}, { ...progress, phase: "derive", list: LISTS.length, after: null })
    }

    if (progress.phase === "derive") {
      for (;;) {
        const groups = yield* repo.stagedAfter(ctx.projectId, progress.after, options.deriveBatch ?? DERIVE_BATCH)
        const last = groups.at(-1)
        if (last === undefined) break
        const { replace, versions } = yield* versionsOfGroups(groups)
        yield* save(
          { facts: { subscriptionVersions: versions }, replaceVersionsOf: replace },
          { ...progress, after: last.groupId, counts: addCounts(progress.counts, { subscriptionVersions: versions.length }) }
        )
      }
      yield* save({}, { ...progress, phase: "rollup", after: null })
    }

    yield* repo.rollUp(ctx.projectId)
    yield* repo.commit(ctx.projectId, { progress: { provider: PROVIDER, value: null } })
    return {
      counts: { ...zeroCounts, ...progress.counts, pages: pagesBefore + counter.pages },
      state: { eventsCursor: progress.eventsCursor, reconciledAt: Math.floor(ctx.now.getTime() / 1000) } satisfies StripeSyncState
    } satisfies SyncOutcome
  })

const zeroCounts = { customers: 0, subscriptions: 0, invoices: 0, invoiceLines: 0, charges: 0, refunds: 0, subscriptionVersions: 0, events: 0 }

// ---------------------------------------------------------------------------------------------------
// Incremental: events
// ---------------------------------------------------------------------------------------------------

type Change =
  | { readonly kind: "customer"; readonly object: typeof StripeCustomer.Type }
  | { readonly kind: "subscription"; readonly object: typeof StripeSubscription.Type }
  | { readonly kind: "invoice"; readonly object: typeof StripeInvoice.Type }
  | { readonly kind: "invoice_deleted"; readonly id: string }
  | { readonly kind: "charge"; readonly object: typeof StripeCharge.Type }
  | { readonly kind: "refund"; readonly object: typeof StripeRefund.Type }

const decodeHeader = decoder(PROVIDER, StripeObjectHeader)
const decodeOf = {
  customer: decoder(PROVIDER, StripeCustomer),
  subscription: decoder(PROVIDER, StripeSubscription),
  invoice: decoder(PROVIDER, StripeInvoice),
  charge: decoder(PROVIDER, StripeCharge),
  refund: decoder(PROVIDER, StripeRefund)
}
type ObjectKind = keyof typeof decodeOf
const isKind = (k: string): k is ObjectKind => k in decodeOf
const pathOf: Record<ObjectKind, string> = {
  customer: "/v1/customers", subscription: "/v1/subscriptions", invoice: "/v1/invoices", charge: "/v1/charges", refund: "/v1/refunds"
}

/** A snapshot read from the API when the event's is not usable as is (another API version, unexpanded discounts). */
const fetchObject = (ctx: ConnectionContext, kind: ObjectKind, id: string): Effect.Effect<Change | null, ProviderError> => {
  const path = `${pathOf[kind]}/${encodeURIComponent(id)}`
  const record = `${kind} ${id}`
  switch (kind) {
    case "customer":
      return Effect.map(getObject(ctx, path, [], { name: kind, schema: StripeCustomer }, record), (o) => (o === null ? null : { kind, object: o }))
    case "subscription":
      return Effect.map(getObject(ctx, path, [["expand[]", "discounts"]], { name: kind, schema: StripeSubscription }, record), (o) => (o === null ? null : { kind, object: o }))
    case "invoice":
      return Effect.map(getObject(ctx, path, [], { name: kind, schema: StripeInvoice }, record), (o) => (o === null ? { kind: "invoice_deleted", id } : { kind, object: o }))
    case "charge":
      return Effect.map(getObject(ctx, path, [], { name: kind, schema: StripeCharge }, record), (o) => (o === null ? null : { kind, object: o }))
    case "refund":
      return Effect.map(getObject(ctx, path, [], { name: kind, schema: StripeRefund }, record), (o) => (o === null ? null : { kind, object: o }))
  }
}

/** The change an event's snapshot says, or "fetch" when it must be read from the API. */
const changeOf = (event: StripeEvent, kind: ObjectKind, id: string, raw: unknown): Result.Result<Change | "fetch", ProviderError> => {
  if (event.type === "invoice.deleted") return Result.succeed({ kind: "invoice_deleted", id })
  // A snapshot is rendered in the account's API version of the event's day, not ours.
  if (event.api_version !== undefined && event.api_version !== null && event.api_version !== STRIPE_VERSION) return Result.succeed("fetch")
  const record = `${kind} in event ${event.id}`
  switch (kind) {
    case "customer":
      return Result.map(decodeOf.customer(raw, record), (object) => ({ kind, object }))
    case "subscription":
      return Result.map(decodeOf.subscription(raw, record), (object): Change | "fetch" =>
        // Events do not expand `discounts`: several coupons (or one the singular `discount` does not show) need the object.
        (object.discounts ?? []).some((d) => typeof d === "string") && ((object.discounts ?? []).length > 1 || object.discount === null || object.discount === undefined)
          ? "fetch"
          : { kind, object })
    case "invoice":
      return Result.map(decodeOf.invoice(raw, record), (object) => ({ kind, object }))
    case "charge":
      return Result.map(decodeOf.charge(raw, record), (object) => ({ kind, object }))
    case "refund":
      return Result.map(decodeOf.refund(raw, record), (object) => ({ kind, object }))
  }
}

const eventsSync = (ctx: SyncContext, state: StripeSyncState & { readonly eventsCursor: number }, options: StripeSyncOptions) =>
  Effect.gen(function*() {
    const repo = yield* PaymentsRepo
    const counter: PageCounter = { pages: 0 }
    // Newest first: the first event seen for an object carries its latest state; older ones are skipped. So
    // an object first seen on a page is final once that page is read, and is applied while the next pages
    // are listed.
    const seen = new Set<string>()
    let newest = state.eventsCursor
    let events = 0
    let p = pending()
    const dirty = new Set<string>()
    let counts: Record<string, number> = {}
    // One commit in flight at a time (they stay in order); the next batch is built, and the next events page
    // read, while it commits. Its failure fails the run at the next join (the cursor is not advanced: the
    // next run reads the same events again).
    let inFlight: Fiber.Fiber<void> | null = null
    const joinCommit = Effect.suspend(() => {
      const fiber = inFlight
      inFlight = null
      return fiber === null ? Effect.void : Fiber.join(fiber)
    })
    const flush = Effect.gen(function*() {
      yield* joinCommit
      const batch = p
      p = pending()
      // Changes recorded: the rollup at the end recomputes only what they touch.
      inFlight = yield* Effect.forkChild(Effect.map(repo.commit(ctx.projectId, { ...batchOf(batch), trackChanges: true }), (changed) => {
        for (const s of changed) dirty.add(s)
        for (const s of batch.dirty) dirty.add(s)
        counts = addCounts(counts, batch.counts)
      }))
    })
    let inBatch = 0
    const apply = (key: string, value: Change | "fetch") =>
      Effect.gen(function*() {
        let change: Change | null
        if (value === "fetch") {
          const [kind, id] = key.split("|") as [ObjectKind, string]
          change = yield* fetchObject(ctx, kind, id)
        } else change = value
        if (change === null) return
        switch (change.kind) {
          case "customer":
            takeCustomer(p, change.object)
            break
          case "subscription":
            yield* takeSubscription(ctx, counter, p, change.object)
            break
          case "invoice":
            yield* takeInvoice(ctx, counter, p, change.object)
            break
          case "invoice_deleted":
            p.unstage.push({ kind: "lines", parentId: change.id })
            break
          case "charge":
            takeCharge(p, change.object)
            break
          case "refund":
            takeRefund(p, change.object)
            break
        }
        if (++inBatch >= APPLY_BATCH) {
          yield* flush
          inBatch = 0
        }
      })
    const types = EVENT_TYPES.map((t) => ["types[]", t] as const)
    yield* eachPage(ctx, "/v1/events", [["created[gte]", String(state.eventsCursor)], ...types], counter, { name: "event", schema: StripeEvent },
      (items) =>
        Effect.gen(function*() {
          const fresh: Array<readonly [string, Change | "fetch"]> = []
          for (const e of items) {
            events += 1
            if (e.created > newest) newest = e.created
            const header = decodeHeader(e.data.object, `object of event ${e.id}`)
            if (Result.isFailure(header)) return yield* Effect.fail(header.failure)
            const { id, object } = header.success
            if (!isKind(object)) continue
            const key = `${object}|${id}`
            if (seen.has(key)) continue
            seen.add(key)
            const change = changeOf(e, object, id, e.data.object)
            if (Result.isFailure(change)) return yield* Effect.fail(change.failure)
            fresh.push([key, change.success])
          }
          for (const [key, value] of fresh) yield* apply(key, value)
        }))
    yield* flush
    yield* joinCommit
    counts = { events, ...counts }

    // A pipeline, one commit in flight (they stay in order): while a group's versions commit, the next group's
    // staged objects are read and its versions rebuilt.
    const touched = [...dirty].sort()
    const size = options.deriveBatch ?? DERIVE_BATCH
    const read = (i: number) => (i < touched.length ? repo.stagedOf(ctx.projectId, touched.slice(i, i + size)) : Effect.succeed([]))
    let groups = yield* read(0)
    for (let i = 0; i < touched.length; i += size) {
      const { replace, versions } = yield* versionsOfGroups(groups)
      yield* joinCommit
      inFlight = yield* Effect.forkChild(Effect.asVoid(
        repo.commit(ctx.projectId, { facts: { subscriptionVersions: versions }, replaceVersionsOf: replace, trackChanges: true })
      ))
      counts = addCounts(counts, { subscriptionVersions: versions.length })
      groups = yield* read(i + size)
    }
    yield* joinCommit
    yield* repo.rollUp(ctx.projectId)
    const now = Math.floor(ctx.now.getTime() / 1000)
    return {
      counts: { ...zeroCounts, ...counts, pages: counter.pages },
      // The newest event read, or an hour ago when nothing newer happened: a quiet account's cursor never
      // falls out of the retention window, and events late to become listable are read again.
      state: { eventsCursor: Math.max(newest, now - CURSOR_LAG_SECONDS), reconciledAt: state.reconciledAt } satisfies StripeSyncState
    } satisfies SyncOutcome
  })

// ---------------------------------------------------------------------------------------------------
// The connector
// ---------------------------------------------------------------------------------------------------

const validate = (ctx: ConnectionContext) =>
  // The cheapest call that needs the permission a sync needs most (read customers); 401 says "the key was
  // rejected", 403 that a restricted key lacks a permission.
  getPage(ctx, "/v1/customers", [["limit", "1"]]).pipe(
    Effect.mapError((e) =>
      e.kind === "unauthorized"
        ? new ProviderError({ kind: e.kind, status: e.status, message: "Stripe rejected the key (401): it is wrong, revoked or expired" })
        : e.kind === "forbidden"
        ? new ProviderError({ kind: e.kind, status: e.status, message: "The Stripe key lacks a read permission (403): a restricted key needs read access to customers, subscriptions, invoices, charges, refunds and events" })
        : e
    ),
    Effect.asVoid
  )

/** Why this run lists everything, or null when it reads events. */
export const fullListingReason = (ctx: SyncContext, state: StripeSyncState | null): string | null => {
  if (ctx.mode === "full") return "full sync requested"
  if (state === null) return "first sync"
  if (state.eventsCursor === null) return "the key cannot read events"
  const now = Math.floor(ctx.now.getTime() / 1000)
  if (now - state.eventsCursor > EVENTS_RETENTION_SECONDS) return "events cursor older than Stripe's 30-day retention"
  if (reconciliationDue(new Date(state.reconciledAt * 1000), ctx.now)) return "daily reconciliation"
  return null
}

const syncWith = (options: StripeSyncOptions) => (ctx: SyncContext): Effect.Effect<SyncOutcome, ProviderError, PaymentsRepo> =>
  Effect.gen(function*() {
    const repo = yield* PaymentsRepo
    // A listing that died midway continues from its last committed batch, whatever this run was asked for.
    const saved = readProgress(yield* repo.progress(ctx.projectId, PROVIDER))
    const now = Math.floor(ctx.now.getTime() / 1000)
    if (saved !== null && now - saved.startedAt <= PROGRESS_MAX_AGE_SECONDS) {
      yield* Effect.logInfo(`stripe: resuming the full listing at ${saved.phase} (list ${saved.list}, after ${saved.after ?? "the start"})`)
      return yield* fullListing(ctx, saved, options)
    }
    const state = readState(ctx.state)
    const reason = fullListingReason(ctx, state)
    if (reason !== null || state === null || state.eventsCursor === null) {
      yield* Effect.logInfo(`stripe: full listing (${reason ?? "no events cursor"})`)
      return yield* fullListing(ctx, null, options)
    }
    return yield* eventsSync(ctx, { ...state, eventsCursor: state.eventsCursor }, options)
  })

export const makeStripeConnector = (options: StripeSyncOptions = {}): Connector<PaymentsRepo> => ({
  provider: "stripe",
  kind: "payments",
  defaultBaseUrl: "https://api.stripe.com",
  baseUrlEnv: "STRIPE_API_BASE",
  credentialFields: ["secret_key"],
  validate,
  sync: syncWith(options)
})

export const stripeConnector: Connector<PaymentsRepo> = makeStripeConnector()
