/** Accounts and their entitlement (trial end, subscription). */
import { AccountId } from "@sitehealth/domain/Common"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { newId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { AccountRecord, SubscriptionStatus } from "../store/Records.ts"
import { dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"

const AccountRow = Schema.Struct({
  id: AccountId,
  name: Schema.String,
  trial_ends_at: Instant,
  subscription_status: Schema.Literals(["none", "active", "past_due", "canceled"]),
  subscription_until: Schema.NullOr(Instant),
  created_at: Instant
})

const toRecord = (r: typeof AccountRow.Type): AccountRecord => ({
  id: r.id,
  name: r.name,
  trialEndsAt: r.trial_ends_at,
  subscriptionStatus: r.subscription_status,
  subscriptionUntil: r.subscription_until,
  createdAt: r.created_at
})
const decodeAll = rowsOf("accounts", AccountRow)
const decodeFirst = firstOf("accounts", AccountRow)
const decodeSingle = singleOf("accounts", AccountRow)
const all = (rows: ReadonlyArray<unknown>) => Effect.map(decodeAll(rows), (rs) => rs.map(toRecord))
const one = (rows: ReadonlyArray<unknown>) => Effect.map(decodeFirst(rows), (r) => (r === null ? null : toRecord(r)))

export interface AccountsRepoShape {
  readonly create: (
    input: { readonly name: string; readonly trialEndsAt: Date; readonly now: Date }
  ) => Effect.Effect<AccountRecord>
  readonly list: () => Effect.Effect<ReadonlyArray<AccountRecord>>
  readonly find: (id: string) => Effect.Effect<AccountRecord | null>
  readonly setTrial: (id: string, endsAt: Date) => Effect.Effect<AccountRecord | null>
  readonly setSubscription: (
    id: string,
    status: SubscriptionStatus,
    until: Date | null
  ) => Effect.Effect<AccountRecord | null>
  readonly count: () => Effect.Effect<number>
}

export class AccountsRepo extends Context.Service<AccountsRepo, AccountsRepoShape>()("sitehealth/AccountsRepo") {
  static readonly sql = Layer.effect(
    AccountsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return AccountsRepo.of({
        create: Effect.fn("AccountsRepo.create")(function*({ name, now, trialEndsAt }) {
          return yield* sql`INSERT INTO accounts (id, name, trial_ends_at, created_at)
              VALUES (${newId("acc")}, ${name}, ${trialEndsAt}, ${now}) RETURNING *`.pipe(
            Effect.flatMap(decodeSingle),
            Effect.map(toRecord),
            dieOnSqlError
          )
        }),
        list: Effect.fn("AccountsRepo.list")(function*() {
          return yield* sql`SELECT * FROM accounts ORDER BY created_at, id`.pipe(Effect.flatMap(all), dieOnSqlError)
        }),
        find: Effect.fn("AccountsRepo.find")(function*(id) {
          return yield* sql`SELECT * FROM accounts WHERE id = ${id}`.pipe(Effect.flatMap(one), dieOnSqlError)
        }),
        setTrial: Effect.fn("AccountsRepo.setTrial")(function*(id, endsAt) {
          return yield* sql`UPDATE accounts SET trial_ends_at = ${endsAt} WHERE id = ${id} RETURNING *`.pipe(
            Effect.flatMap(one),
            dieOnSqlError
          )
        }),
        setSubscription: Effect.fn("AccountsRepo.setSubscription")(function*(id, status, until) {
          return yield* sql`UPDATE accounts SET subscription_status = ${status}, subscription_until = ${until}
              WHERE id = ${id} RETURNING *`.pipe(Effect.flatMap(one), dieOnSqlError)
        }),
        count: Effect.fn("AccountsRepo.count")(function*() {
          return yield* sql`SELECT count(*)::int AS n FROM accounts`.pipe(
            Effect.flatMap(rowsOf("accounts", Schema.Struct({ n: Schema.Finite }))),
            Effect.map((rows) => rows[0].n),
            dieOnSqlError
          )
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    AccountsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const update = (id: string, f: (a: AccountRecord) => AccountRecord) =>
        Effect.sync(() => {
          const a = db.accounts.get(id)
          if (!a) return null
          const next = f(a)
          db.accounts.set(id, next)
          return next
        })
      return AccountsRepo.of({
        create: Effect.fn("AccountsRepo.create")(({ name, now, trialEndsAt }) =>
          Effect.sync(() => {
            const a: AccountRecord = {
              id: newId("acc"),
              name,
              trialEndsAt,
              subscriptionStatus: "none",
              subscriptionUntil: null,
              createdAt: now
            }
            db.accounts.set(a.id, a)
            return a
          })
        ),
        list: Effect.fn("AccountsRepo.list")(() => Effect.sync(() => [...db.accounts.values()])),
        find: Effect.fn("AccountsRepo.find")((id) => Effect.sync(() => db.accounts.get(id) ?? null)),
        setTrial: Effect.fn("AccountsRepo.setTrial")(function*(id, endsAt) {
          return yield* update(id, (a) => ({ ...a, trialEndsAt: endsAt }))
        }),
        setSubscription: Effect.fn("AccountsRepo.setSubscription")(function*(id, status, until) {
          return yield* update(id, (a) => ({ ...a, subscriptionStatus: status, subscriptionUntil: until }))
        }),
        count: Effect.fn("AccountsRepo.count")(() => Effect.sync(() => db.accounts.size))
      })
    })
  )
}

/**
 * Live while the trial has not ended, or a subscription is active (until its `until`, or open-ended when null),
 * past due within its grace, or canceled but paid up to `until` (accounts/Billing.ts: `ended` exactly when not).
 * On the hot path: no allocation, no lookup.
 */
export const isEntitled = (
  account: Pick<AccountRecord, "trialEndsAt" | "subscriptionStatus" | "subscriptionUntil">,
  now: Date
): boolean => {
  const t = now.getTime()
  if (account.trialEndsAt.getTime() > t) return true
  const until = account.subscriptionUntil
  if (account.subscriptionStatus === "active") return until === null || until.getTime() > t
  if (account.subscriptionStatus === "canceled" || account.subscriptionStatus === "past_due") {
    return until !== null && until.getTime() > t
  }
  return false
}
