/**
 * The failed secrets of the last hour — wrong passwords at log-in and at a password change, wrong second-factor
 * codes — by account (the email as typed, lower-cased: an unknown address is counted exactly like a registered
 * one) and client address, over SQL (every server instance counts the same failures) or in memory (tests).
 * Throttle.ts reads them; rows older than the window are deleted as new ones of the same account or address arrive.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"

export type FailureKind = "login" | "second-factor" | "password"

/** The failures since a moment: of this account from this address, of the account, of the address. */
export interface FailureStats {
  readonly pair: number
  /** The pair's latest failure, epoch ms. */
  readonly pairLast: number | null
  readonly account: number
  /** The account's oldest failure in the window, epoch ms: when it leaves, one more attempt is allowed. */
  readonly accountOldest: number | null
  readonly address: number
  readonly addressOldest: number | null
}

export interface FailureKey {
  readonly kind: FailureKind
  readonly account: string
  readonly address: string
}

export interface FailuresRepoShape {
  /**
   * Records one failure at `at`, and forgets the failures before `forgetBefore` of the same account or address
   * (what the next check of either reads), and any failure older than FORGET_ANY_MS before it. Not every old row
   * at once: instances' clocks (a test's, a host's off by minutes) are not one clock, and a caller ahead of the
   * others must not wipe the failures they are still counting.
   */
  readonly record: (key: FailureKey, at: Date, forgetBefore: Date) => Effect.Effect<void>
  readonly stats: (key: FailureKey, since: Date) => Effect.Effect<FailureStats>
  /** A success from the pair: its failures no longer slow it (the account's and the address's still count). */
  readonly clearPair: (key: FailureKey) => Effect.Effect<void>
}

/** Rows of any account or address older than this before `forgetBefore` are garbage, whoever's clock says so. */
export const FORGET_ANY_MS = 30 * 24 * 3_600_000

const StatsRow = Schema.Struct({
  pair: Schema.Number,
  pair_last: Schema.NullOr(Instant),
  account: Schema.Number,
  account_oldest: Schema.NullOr(Instant),
  address: Schema.Number,
  address_oldest: Schema.NullOr(Instant)
})

const ms = (d: Date | null) => (d === null ? null : d.getTime())

export class FailuresRepo
  extends Context.Service<FailuresRepo, FailuresRepoShape>()("sitehealth/dashboard/FailuresRepo")
{
  static readonly sql = Layer.effect(
    FailuresRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return FailuresRepo.of({
        record: Effect.fn("FailuresRepo.record")(function*(key, at, forgetBefore) {
          const garbage = new Date(forgetBefore.getTime() - FORGET_ANY_MS)
          yield* sql`DELETE FROM dashboard_auth_failures
            WHERE at < ${garbage} OR (at < ${forgetBefore} AND kind = ${key.kind}
              AND (account = ${key.account} OR address = ${key.address}))`
          yield* sql`INSERT INTO dashboard_auth_failures (kind, account, address, at)
            VALUES (${key.kind}, ${key.account}, ${key.address}, ${at})`
        }, dieOnSqlError),
        stats: Effect.fn("FailuresRepo.stats")(function*(key, since) {
          return yield* sql`SELECT
                count(*) FILTER (WHERE account = ${key.account} AND address = ${key.address})::int AS pair,
                max(at) FILTER (WHERE account = ${key.account} AND address = ${key.address}) AS pair_last,
                count(*) FILTER (WHERE account = ${key.account})::int AS account,
                min(at) FILTER (WHERE account = ${key.account}) AS account_oldest,
                count(*) FILTER (WHERE address = ${key.address})::int AS address,
                min(at) FILTER (WHERE address = ${key.address}) AS address_oldest
              FROM dashboard_auth_failures
              WHERE kind = ${key.kind} AND at > ${since} AND (account = ${key.account} OR address = ${key.address})`
            .pipe(
              Effect.flatMap(firstOf("dashboard_auth_failures", StatsRow)),
              Effect.map((r) => ({
                pair: r?.pair ?? 0,
                pairLast: ms(r?.pair_last ?? null),
                account: r?.account ?? 0,
                accountOldest: ms(r?.account_oldest ?? null),
                address: r?.address ?? 0,
                addressOldest: ms(r?.address_oldest ?? null)
              })),
              dieOnSqlError
            )
        }),
        clearPair: Effect.fn("FailuresRepo.clearPair")(function*(key) {
          return yield* sql`DELETE FROM dashboard_auth_failures
              WHERE kind = ${key.kind} AND account = ${key.account} AND address = ${key.address}`.pipe(
            Effect.asVoid,
            dieOnSqlError
          )
        })
      })
    })
  )

  static readonly memory = Layer.sync(FailuresRepo, () => {
    let rows: Array<FailureKey & { readonly at: number }> = []
    const min = (xs: Array<number>) => (xs.length === 0 ? null : Math.min(...xs))
    const max = (xs: Array<number>) => (xs.length === 0 ? null : Math.max(...xs))
    return FailuresRepo.of({
      record: Effect.fn("FailuresRepo.record")((key, at, forgetBefore) =>
        Effect.sync(() => {
          const mine = (r: FailureKey) =>
            r.kind === key.kind && (r.account === key.account || r.address === key.address)
          rows = rows.filter((r) =>
            r.at >= forgetBefore.getTime() - FORGET_ANY_MS && !(r.at < forgetBefore.getTime() && mine(r))
          )
          rows.push({ ...key, at: at.getTime() })
        })
      ),
      stats: Effect.fn("FailuresRepo.stats")((key, since) =>
        Effect.sync(() => {
          const recent = rows.filter((r) => r.kind === key.kind && r.at > since.getTime())
          const pair = recent.filter((r) => r.account === key.account && r.address === key.address).map((r) => r.at)
          const account = recent.filter((r) => r.account === key.account).map((r) => r.at)
          const address = recent.filter((r) => r.address === key.address).map((r) => r.at)
          return {
            pair: pair.length,
            pairLast: max(pair),
            account: account.length,
            accountOldest: min(account),
            address: address.length,
            addressOldest: min(address)
          }
        })
      ),
      clearPair: Effect.fn("FailuresRepo.clearPair")((key) =>
        Effect.sync(() => {
          rows = rows.filter((r) => !(r.kind === key.kind && r.account === key.account && r.address === key.address))
        })
      )
    })
  })
}
