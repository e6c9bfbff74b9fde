/**
 * Each account's Stripe customer and the subscription it follows (accounts/Billing.ts), and the webhook events
 * already processed. Applying a subscription's state writes the billing row and the account's entitlement
 * columns in one transaction, with the row locked: one account's events are applied one at a time, so two
 * deliveries racing cannot leave the older state last.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as SqlClient from "effect/sql/SqlClient"
import { MemoryDb } from "../store/MemoryDb.ts"
import { dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"
import type { BillingRecord, Transition } from "./Billing.ts"

const BillingRow = Schema.Struct({
  account_id: Schema.String,
  customer_id: Schema.String,
  subscription_id: Schema.NullOr(Schema.String),
  stripe_status: Schema.NullOr(Schema.String),
  price_id: Schema.NullOr(Schema.String),
  current_period_end: Schema.NullOr(Instant),
  cancel_at_period_end: Schema.Boolean,
  past_due_since: Schema.NullOr(Instant),
  updated_at: Instant
})
const toRecord = (r: typeof BillingRow.Type): BillingRecord => ({
  accountId: r.account_id,
  customerId: r.customer_id,
  subscriptionId: r.subscription_id,
  stripeStatus: r.stripe_status,
  priceId: r.price_id,
  currentPeriodEnd: r.current_period_end,
  cancelAtPeriodEnd: r.cancel_at_period_end,
  pastDueSince: r.past_due_since,
  updatedAt: r.updated_at
})
const decodeFirst = firstOf("billing_customers", BillingRow)
const one = (rows: ReadonlyArray<unknown>) => Effect.map(decodeFirst(rows), (r) => (r === null ? null : toRecord(r)))

export interface BillingRepoShape {
  readonly find: (accountId: string) => Effect.Effect<BillingRecord | null>
  readonly findByCustomer: (customerId: string) => Effect.Effect<BillingRecord | null>
  /** Keeps the account's customer; the first one stored wins (the answer is the one kept). */
  readonly attachCustomer: (accountId: string, customerId: string, now: Date) => Effect.Effect<BillingRecord>
  /**
   * Runs `f` with the account's billing row locked, in one transaction: `f`'s writes (recordEvent, apply) are
   * undone when it fails. null when the account has no billing row.
   */
  readonly locked: <A, E, R>(
    accountId: string,
    f: (current: BillingRecord) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A | null, E, R>
  /** Stores a webhook event's id; false when it was stored before (a duplicate delivery). */
  readonly recordEvent: (
    input: { readonly id: string; readonly type: string; readonly accountId: string | null; readonly now: Date }
  ) => Effect.Effect<boolean>
  readonly seen: (eventId: string) => Effect.Effect<boolean>
  /** Writes a transition: the billing row, and the account's entitlement columns unless it leaves them. */
  readonly apply: (accountId: string, transition: Transition, now: Date) => Effect.Effect<void>
}

export class BillingRepo extends Context.Service<BillingRepo, BillingRepoShape>()("sitehealth/BillingRepo") {
  static readonly sql = Layer.effect(
    BillingRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const find = (accountId: string) =>
        sql`SELECT * FROM billing_customers WHERE account_id = ${accountId}`.pipe(Effect.flatMap(one), dieOnSqlError)
      return BillingRepo.of({
        find: Effect.fn("BillingRepo.find")(function*(accountId) {
          return yield* find(accountId)
        }),
        findByCustomer: Effect.fn("BillingRepo.findByCustomer")(function*(customerId) {
          return yield* sql`SELECT * FROM billing_customers WHERE customer_id = ${customerId}`.pipe(
            Effect.flatMap(one),
            dieOnSqlError
          )
        }),
        attachCustomer: Effect.fn("BillingRepo.attachCustomer")(function*(accountId, customerId, now) {
          yield* sql`INSERT INTO billing_customers (account_id, customer_id, updated_at)
              VALUES (${accountId}, ${customerId}, ${now}) ON CONFLICT (account_id) DO NOTHING`.pipe(dieOnSqlError)
          const kept = yield* find(accountId)
          return kept ?? (yield* Effect.die(new Error("billing row vanished after its insert")))
        }),
        locked: (accountId, f) =>
          sql.withTransaction(
            Effect.flatMap(
              sql`SELECT * FROM billing_customers WHERE account_id = ${accountId} FOR UPDATE`.pipe(
                Effect.flatMap(one)
              ),
              (current) => current === null ? Effect.succeed(null) : f(current)
            )
          ).pipe(dieOnSqlError, Effect.withSpan("BillingRepo.locked")) as any,
        recordEvent: Effect.fn("BillingRepo.recordEvent")(function*({ accountId, id, now, type }) {
          const rows = yield* sql`INSERT INTO billing_events (id, type, account_id, processed_at)
              VALUES (${id}, ${type}, ${accountId}, ${now}) ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(
            dieOnSqlError
          )
          return rows.length === 1
        }),
        seen: Effect.fn("BillingRepo.seen")(function*(eventId) {
          const rows = yield* sql`SELECT 1 FROM billing_events WHERE id = ${eventId}`.pipe(dieOnSqlError)
          return rows.length > 0
        }),
        apply: Effect.fn("BillingRepo.apply")(function*(accountId, { billing: b, entitlement }, now) {
          yield* sql`UPDATE billing_customers SET subscription_id = ${b.subscriptionId},
              stripe_status = ${b.stripeStatus}, price_id = ${b.priceId}, current_period_end = ${b.currentPeriodEnd},
              cancel_at_period_end = ${b.cancelAtPeriodEnd}, past_due_since = ${b.pastDueSince}, updated_at = ${now}
              WHERE account_id = ${accountId}`.pipe(dieOnSqlError)
          if (entitlement !== null) {
            yield* sql`UPDATE accounts SET subscription_status = ${entitlement.status},
                subscription_until = ${entitlement.until} WHERE id = ${accountId}`.pipe(dieOnSqlError)
          }
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    BillingRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const rows = new Map<string, BillingRecord>()
      const events = new Set<string>()
      const lock = yield* Semaphore.make(1)
      return BillingRepo.of({
        find: Effect.fn("BillingRepo.find")((accountId) => Effect.sync(() => rows.get(accountId) ?? null)),
        findByCustomer: Effect.fn("BillingRepo.findByCustomer")((customerId) =>
          Effect.sync(() => [...rows.values()].find((r) => r.customerId === customerId) ?? null)
        ),
        attachCustomer: Effect.fn("BillingRepo.attachCustomer")((accountId, customerId, now) =>
          Effect.sync(() => {
            const existing = rows.get(accountId)
            if (existing !== undefined) return existing
            const row: BillingRecord = {
              accountId,
              customerId,
              subscriptionId: null,
              stripeStatus: null,
              priceId: null,
              currentPeriodEnd: null,
              cancelAtPeriodEnd: false,
              pastDueSince: null,
              updatedAt: now
            }
            rows.set(accountId, row)
            return row
          })
        ),
        locked: (accountId, f) =>
          lock.withPermits(1)(Effect.suspend(() => {
            const current = rows.get(accountId)
            if (current === undefined) return Effect.succeed(null)
            // A transaction's rollback: what f wrote is put back when it fails.
            const before = { events: new Set(events), account: db.accounts.get(accountId) }
            return f(current).pipe(Effect.onError(() =>
              Effect.sync(() => {
                rows.set(accountId, current)
                events.clear()
                for (const e of before.events) events.add(e)
                if (before.account !== undefined) db.accounts.set(accountId, before.account)
              })
            ))
          })),
        recordEvent: Effect.fn("BillingRepo.recordEvent")(({ id }) =>
          Effect.sync(() => {
            if (events.has(id)) return false
            events.add(id)
            return true
          })
        ),
        seen: Effect.fn("BillingRepo.seen")((eventId) => Effect.sync(() => events.has(eventId))),
        apply: Effect.fn("BillingRepo.apply")((accountId, { billing, entitlement }, now) =>
          Effect.sync(() => {
            const row = rows.get(accountId)
            if (row !== undefined) rows.set(accountId, { ...row, ...billing, updatedAt: now })
            const account = db.accounts.get(accountId)
            if (entitlement !== null && account !== undefined) {
              db.accounts.set(accountId, {
                ...account,
                subscriptionStatus: entitlement.status,
                subscriptionUntil: entitlement.until
              })
            }
          })
        )
      })
    })
  )
}
