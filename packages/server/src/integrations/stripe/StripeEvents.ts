/**
 * An INCREMENTAL run of a Stripe sync (StripeConnector.ts says when): it reads only what changed — GET
 * /v1/events from the last cursor (types EVENT_TYPES), the newest snapshot per object applied like a listed
 * object (`readEvents`) — then rebuilds the versions of the subscriptions touched (`rebuildVersions`) and
 * rolls up. Its commits record what they change (`trackChanges`), so the rollup is an incremental one.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import { PaymentsRepo } from "../../payments/PaymentsRepo.ts"
import type { ConnectionContext, SyncContext, SyncOutcome } from "../Connector.ts"
import { decoder } from "../Decode.ts"
import type { ProviderError } from "../ProviderHttp.ts"
import { eachPage, getObject, type PageCounter, STRIPE_VERSION } from "./StripeApi.ts"
import {
  StripeCharge,
  StripeCustomer,
  StripeEvent,
  StripeInvoice,
  StripeObjectHeader,
  StripeRefund,
  StripeSubscription
} from "./StripeObjects.ts"
import {
  addCounts,
  batchOf,
  CURSOR_LAG_SECONDS,
  DERIVE_BATCH,
  type Pending,
  pending,
  PROVIDER,
  type StripeSyncOptions,
  type StripeSyncState,
  takeCharge,
  takeCustomer,
  takeInvoice,
  takeRefund,
  takeSubscription,
  versionsOfGroups,
  zeroCounts
} from "./StripeSync.ts"

/** Changed objects of an incremental run applied per commit. */
const APPLY_BATCH = 1000

/** The events an incremental run reads (Stripe takes at most 20 `types[]`). */
export const EVENT_TYPES = [
  "customer.created",
  "customer.updated",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.paused",
  "customer.subscription.resumed",
  "invoice.created",
  "invoice.updated",
  "invoice.finalized",
  "invoice.paid",
  "invoice.voided",
  "invoice.deleted",
  "charge.succeeded",
  "charge.failed",
  "charge.updated",
  "charge.refund.updated",
  "refund.created",
  "refund.updated",
  "refund.failed"
] as const

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
  customer: "/v1/customers",
  subscription: "/v1/subscriptions",
  invoice: "/v1/invoices",
  charge: "/v1/charges",
  refund: "/v1/refunds"
}

/** A snapshot read from the API when the event's is not usable as is (another API version, unexpanded discounts). */
const fetchObject = (
  ctx: ConnectionContext,
  kind: ObjectKind,
  id: string
): Effect.Effect<Change | null, ProviderError> => {
  const path = `${pathOf[kind]}/${encodeURIComponent(id)}`
  const record = `${kind} ${id}`
  switch (kind) {
    case "customer":
      return Effect.map(
        getObject(ctx, path, [], { name: kind, schema: StripeCustomer }, record),
        (o) => (o === null ? null : { kind, object: o })
      )
    case "subscription":
      return Effect.map(
        getObject(ctx, path, [["expand[]", "discounts"]], { name: kind, schema: StripeSubscription }, record),
        (o) => (o === null ? null : { kind, object: o })
      )
    case "invoice":
      return Effect.map(
        getObject(ctx, path, [], { name: kind, schema: StripeInvoice }, record),
        (o) => (o === null ? { kind: "invoice_deleted", id } : { kind, object: o })
      )
    case "charge":
      return Effect.map(
        getObject(ctx, path, [], { name: kind, schema: StripeCharge }, record),
        (o) => (o === null ? null : { kind, object: o })
      )
    case "refund":
      return Effect.map(
        getObject(ctx, path, [], { name: kind, schema: StripeRefund }, record),
        (o) => (o === null ? null : { kind, object: o })
      )
  }
}

/** The change an event's snapshot says, or "fetch" when it must be read from the API. */
const changeOf = (
  event: StripeEvent,
  kind: ObjectKind,
  id: string,
  raw: unknown
): Result.Result<Change | "fetch", ProviderError> => {
  if (event.type === "invoice.deleted") return Result.succeed({ kind: "invoice_deleted", id })
  // A snapshot is rendered in the account's API version of the event's day, not ours.
  if (event.api_version !== undefined && event.api_version !== null && event.api_version !== STRIPE_VERSION) {
    return Result.succeed("fetch")
  }
  const record = `${kind} in event ${event.id}`
  switch (kind) {
    case "customer":
      return Result.map(decodeOf.customer(raw, record), (object) => ({ kind, object }))
    case "subscription":
      return Result.map(decodeOf.subscription(raw, record), (object): Change | "fetch" =>
        // Events do not expand `discounts`: several coupons (or one the singular `discount` does not show)
        // need the object.
        (object.discounts ?? []).some((d) => typeof d === "string") &&
          ((object.discounts ?? []).length > 1 || object.discount === null || object.discount === undefined)
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

/**
 * The changes a page of events (newest first) brings, by `${kind}|${id}`: one per object not `seen` on a newer
 * event (those are added to `seen`), of the kinds a sync reads.
 */
const freshChanges = (
  events: ReadonlyArray<StripeEvent>,
  seen: Set<string>
): Result.Result<Array<readonly [string, Change | "fetch"]>, ProviderError> => {
  const fresh: Array<readonly [string, Change | "fetch"]> = []
  for (const e of events) {
    const header = decodeHeader(e.data.object, `object of event ${e.id}`)
    if (Result.isFailure(header)) return Result.fail(header.failure)
    const { id, object } = header.success
    if (!isKind(object)) continue
    const key = `${object}|${id}`
    if (seen.has(key)) continue
    seen.add(key)
    const change = changeOf(e, object, id, e.data.object)
    if (Result.isFailure(change)) return Result.fail(change.failure)
    fresh.push([key, change.success])
  }
  return Result.succeed(fresh)
}

/**
 * Commits one at a time, in order, each while the caller builds the next batch (and reads the next page). A
 * commit's failure fails the run at the next join (the cursor is not advanced: the next run reads the same
 * events again).
 */
const commitPipeline = () => {
  let inFlight: Fiber.Fiber<void> | null = null
  const join = Effect.suspend(() => {
    const fiber = inFlight
    inFlight = null
    return fiber === null ? Effect.void : Fiber.join(fiber)
  })
  /** Waits for the commit in flight, then starts this one. */
  const start = (commit: Effect.Effect<void>) =>
    Effect.gen(function*() {
      yield* join
      inFlight = yield* Effect.forkChild(commit)
    })
  return { join, start }
}
type CommitPipeline = ReturnType<typeof commitPipeline>

/**
 * A change applied to the batch being filled, like a listed object (a snapshot to fetch is read first). False
 * when there was nothing to apply (the object is gone).
 */
const takeChange = Effect.fnUntraced(function*(
  ctx: ConnectionContext,
  counter: PageCounter,
  p: Pending,
  key: string,
  value: Change | "fetch"
) {
  let change: Change | null
  if (value === "fetch") {
    const [kind, id] = key.split("|") as [ObjectKind, string]
    change = yield* fetchObject(ctx, kind, id)
  } else change = value
  if (change === null) return false
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
  return true
})

/**
 * The events since the cursor, newest first: the first event seen for an object carries its latest state, and
 * older ones are skipped — so an object first seen on a page is final once that page is read, and is applied
 * while the next pages are listed. Every APPLY_BATCH changes are committed (recording what they change: the
 * rollup at the end recomputes only that). Returns the subscriptions whose versions must be rebuilt.
 */
const readEvents = Effect.fn("StripeConnector.readEvents")(function*(
  ctx: SyncContext,
  cursor: number,
  counter: PageCounter,
  commits: CommitPipeline
) {
  const repo = yield* PaymentsRepo
  const seen = new Set<string>()
  const touched = new Set<string>()
  let newest = cursor
  let events = 0
  let counts: Record<string, number> = {}
  let p = pending()
  let inBatch = 0
  const flush = Effect.gen(function*() {
    yield* commits.join
    const batch = p
    p = pending()
    inBatch = 0
    yield* commits.start(
      Effect.map(repo.commit(ctx.projectId, { ...batchOf(batch), trackChanges: true }), (changed) => {
        for (const s of changed) touched.add(s)
        for (const s of batch.dirty) touched.add(s)
        counts = addCounts(counts, batch.counts)
      })
    )
  })
  const types = EVENT_TYPES.map((t) => ["types[]", t] as const)
  const params = [["created[gte]", String(cursor)] as const, ...types]
  yield* eachPage(
    ctx,
    "/v1/events",
    params,
    counter,
    { name: "event", schema: StripeEvent },
    (items) =>
      Effect.gen(function*() {
        events += items.length
        for (const e of items) if (e.created > newest) newest = e.created
        for (const [key, value] of yield* Effect.fromResult(freshChanges(items, seen))) {
          if ((yield* takeChange(ctx, counter, p, key, value)) && ++inBatch >= APPLY_BATCH) yield* flush
        }
      })
  )
  yield* flush
  yield* commits.join
  return { events, newest, touched, counts }
})

/**
 * The versions of these subscriptions rebuilt from what is staged, `size` at a time: while a group's versions
 * commit, the next group's staged objects are read and its versions rebuilt. Returns how many versions.
 */
const rebuildVersions = Effect.fn("StripeConnector.rebuildVersions")(function*(
  ctx: SyncContext,
  subscriptions: ReadonlyArray<string>,
  size: number,
  commits: CommitPipeline
) {
  const repo = yield* PaymentsRepo
  const read = (i: number) =>
    i < subscriptions.length ? repo.stagedOf(ctx.projectId, subscriptions.slice(i, i + size)) : Effect.succeed([])
  let written = 0
  let groups = yield* read(0)
  for (let i = 0; i < subscriptions.length; i += size) {
    const { replace, versions } = yield* versionsOfGroups(groups)
    const batch = { facts: { subscriptionVersions: versions }, replaceVersionsOf: replace, trackChanges: true }
    yield* commits.start(Effect.asVoid(repo.commit(ctx.projectId, batch)))
    written += versions.length
    groups = yield* read(i + size)
  }
  yield* commits.join
  return written
})

/** The incremental run: events read and applied, the touched subscriptions' versions rebuilt, the rollup. */
export const eventsSync = Effect.fn("StripeConnector.eventsSync")(function*(
  ctx: SyncContext,
  state: StripeSyncState & { readonly eventsCursor: number },
  options: StripeSyncOptions
) {
  const repo = yield* PaymentsRepo
  const counter: PageCounter = { pages: 0 }
  const commits = commitPipeline()
  const read = yield* readEvents(ctx, state.eventsCursor, counter, commits)
  const touched = [...read.touched].sort()
  const versions = yield* rebuildVersions(ctx, touched, options.deriveBatch ?? DERIVE_BATCH, commits)
  yield* repo.rollUp(ctx.projectId)
  const now = Math.floor(ctx.now.getTime() / 1000)
  return {
    counts: {
      ...zeroCounts,
      events: read.events,
      ...read.counts,
      subscriptionVersions: versions,
      pages: counter.pages
    },
    // The newest event read, or an hour ago when nothing newer happened: a quiet account's cursor never falls
    // out of the retention window, and events late to become listable are read again.
    state: {
      eventsCursor: Math.max(read.newest, now - CURSOR_LAG_SECONDS),
      reconciledAt: state.reconciledAt
    } satisfies StripeSyncState
  } satisfies SyncOutcome
})
