/**
 * A FULL listing of a Stripe account (StripeConnector.ts says when): customers, subscriptions (status=all),
 * invoices (with their lines), charges and refunds are paged and committed every BATCH_PAGES pages
 * (PaymentsRepo.commit: customers, charges and refunds upserted by id; each subscription and each invoice's
 * subscription lines STAGED for the rebuild), each commit carrying the listing's progress. Then the
 * subscription versions are rebuilt (Versions.ts) DERIVE_BATCH subscriptions at a time from what is staged,
 * and the rollup runs once (PaymentsRepo.rollUp: derived rows and data_version switch only there). Memory
 * holds one batch, never the account. A run that dies continues from the saved progress on its next attempt.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type PaymentsBatch, PaymentsRepo } from "../../payments/PaymentsRepo.ts"
import type { ConnectionContext, SyncContext, SyncOutcome } from "../Connector.ts"
import type { ProviderError } from "../ProviderHttp.ts"
import { eachPage, getPage, type ItemKind, type PageCounter } from "./StripeApi.ts"
import { StripeCharge, StripeCustomer, StripeInvoice, StripeRefund, StripeSubscription } from "./StripeObjects.ts"
import {
  addCounts,
  BATCH_PAGES,
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
export type FullProgress = typeof FullProgress.Type
export const readProgress = (value: unknown): FullProgress | null =>
  Option.getOrNull(Schema.decodeUnknownOption(FullProgress)(value))

interface ListSpec {
  readonly path: string
  readonly params: ReadonlyArray<readonly [string, string]>
  readonly kind: ItemKind<unknown>
  readonly take: (
    ctx: ConnectionContext,
    counter: PageCounter,
    p: Pending,
    item: unknown
  ) => Effect.Effect<void, ProviderError>
}
const spec = <A>(
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  kind: ItemKind<A>,
  take: (ctx: ConnectionContext, counter: PageCounter, p: Pending, item: A) => Effect.Effect<void, ProviderError>
): ListSpec => ({
  path,
  params,
  kind: kind as ItemKind<unknown>,
  take: take as ListSpec["take"]
})

/** The lists of a full listing, in order (a saved progress names one by its index). */
const LISTS: ReadonlyArray<ListSpec> = [
  spec(
    "/v1/customers",
    [],
    { name: "customer", schema: StripeCustomer },
    (_c, _n, p, o) => Effect.sync(() => takeCustomer(p, o))
  ),
  // status=all: the default list leaves canceled subscriptions out, and they are the churn. Items carry
  // their price objects in this API version; `discounts` is a list of ids unless expanded.
  spec("/v1/subscriptions", [["status", "all"], ["expand[]", "data.discounts"]], {
    name: "subscription",
    schema: StripeSubscription
  }, (c, n, p, o) => takeSubscription(c, n, p, o)),
  spec("/v1/invoices", [], { name: "invoice", schema: StripeInvoice }, (c, n, p, o) => takeInvoice(c, n, p, o)),
  spec(
    "/v1/charges",
    [],
    { name: "charge", schema: StripeCharge },
    (_c, _n, p, o) => Effect.sync(() => takeCharge(p, o))
  ),
  spec(
    "/v1/refunds",
    [],
    { name: "refund", schema: StripeRefund },
    (_c, _n, p, o) => Effect.sync(() => takeRefund(p, o))
  )
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

/** The full listing, from the start (`saved` null) or from a saved progress. */
export const fullListing = Effect.fn("StripeConnector.fullListing")(
  function*(ctx: SyncContext, saved: FullProgress | null, options: StripeSyncOptions) {
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
      return Effect.map(
        repo.commit(ctx.projectId, { ...batch, progress: { provider: PROVIDER, value: withPages } }),
        () => void (progress = withPages)
      )
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
              yield* save(
                batchOf(p),
                hasMore
                  ? { ...progress, list: i, after: last, counts }
                  : { ...progress, list: i + 1, after: null, counts }
              )
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
          {
            ...progress,
            after: last.groupId,
            counts: addCounts(progress.counts, { subscriptionVersions: versions.length })
          }
        )
      }
      yield* save({}, { ...progress, phase: "rollup", after: null })
    }

    yield* repo.rollUp(ctx.projectId)
    yield* repo.commit(ctx.projectId, { progress: { provider: PROVIDER, value: null } })
    return {
      counts: { ...zeroCounts, ...progress.counts, pages: pagesBefore + counter.pages },
      state: {
        eventsCursor: progress.eventsCursor,
        reconciledAt: Math.floor(ctx.now.getTime() / 1000)
      } satisfies StripeSyncState
    } satisfies SyncOutcome
  }
)
