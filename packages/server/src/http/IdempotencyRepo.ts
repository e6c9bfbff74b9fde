/**
 * The stored answers of POSTs sent with an `Idempotency-Key` (table idempotency_keys, IdempotencyMigration.ts),
 * over SQL or in memory. Keys are scoped to the token: the primary key is (token, key).
 *
 * A keyed request is ONE unit of work (`atomically`): its key is claimed (`claim`), the request runs, and its
 * answer is stored (`complete`) in the same database transaction as the request's own writes. The expense and
 * the answer that records it commit together or not at all, so a process that dies mid-request leaves neither
 * behind, and a retry with the key runs the request exactly once. No row says "running": the claim is a
 * transaction-scoped advisory lock, which Postgres drops with the transaction, however the process ends.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"
import { isTransientDatabaseFailure } from "./RequestErrors.ts"

/** How long a key is kept (from its first use): a retry within this window replays; after it, the key is new. */
export const KEEP_MS = 24 * 60 * 60 * 1000

/**
 * Rows with status 'running' are written only by versions before the claim moved into the request's
 * transaction (they committed a claim row first). During a rolling deploy such a row may belong to a request
 * an old instance is still running, so a fresh one answers 409; one older than this was abandoned by a dead
 * process, and the key is free. No current code writes them.
 */
export const LEGACY_RUNNING_MS = 60 * 1000

/** Expired rows deleted per sweep (one per keyed request): bounded so a sweep stays short. */
const SWEEP_BATCH = 100

export interface IdempotencyRecord {
  readonly tokenId: string
  readonly key: string
  /** SHA-256 (hex) of method, path and canonical body: "the same request". */
  readonly requestHash: string
  /** Always 'done' from this version on; 'running' only in rows of older versions (LEGACY_RUNNING_MS). */
  readonly status: "running" | "done"
  readonly responseStatus: number | null
  /** The envelope as sent (a token secret never: Idempotency.ts redacts it before storing). */
  readonly responseBody: string | null
  /** When the key was first used: the 24 h count from here. */
  readonly createdAt: Date
}

export type Claim =
  /** The key holds no answer, and this unit has it now: run the request, then `complete` in the same unit. */
  | { readonly _tag: "Claimed" }
  /** The key's stored answer: replay it (same request) or answer 422 (another request). */
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }
  /** Another request with the key is running right now (on any instance): 409, retry shortly. */
  | { readonly _tag: "Busy" }

export interface ClaimInput {
  readonly tokenId: string
  readonly key: string
  readonly requestHash: string
  readonly now: Date
}

export interface StoredResponse {
  readonly status: number
  readonly body: string
}

export interface IdempotencyRepoShape {
  /**
   * Runs a keyed request as one unit. SQL: one transaction, on a connection reserved for it, which every
   * repository query of the request uses (effect/sql hands the fiber the transaction's connection). It
   * commits if `body` succeeds and rolls back if it fails, dies or is interrupted — and, the process gone,
   * Postgres rolls it back by itself. Database failures of BEGIN/COMMIT are defects (503 when transient).
   */
  readonly atomically: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Inside `atomically` only: takes the key for this unit, until the unit ends. Of concurrent claims of a key
   * (on any instance) one gets `Claimed` or `Existing`, the others `Busy` while it runs. An answer older than
   * KEEP_MS no longer holds its key.
   */
  readonly claim: (input: ClaimInput) => Effect.Effect<Claim>
  /** Inside `atomically`, after `Claimed`: stores the request's answer, committed with the request's writes. */
  readonly complete: (input: ClaimInput, response: StoredResponse) => Effect.Effect<void>
  /**
   * Deletes a bounded batch of expired rows (the lazy sweep; any key's). Outside `atomically`, in its own
   * short statement: row locks taken by a sweep inside a long request transaction could deadlock two requests
   * sweeping each other's expired keys. A failed sweep is left to the next one.
   */
  readonly sweep: (now: Date) => Effect.Effect<void>
  readonly find: (tokenId: string, key: string) => Effect.Effect<IdempotencyRecord | null>
}

const KeyRow = Schema.Struct({
  token_id: Schema.String,
  key: Schema.String,
  request_hash: Schema.String,
  status: Schema.Literals(["running", "done"]),
  response_status: Schema.NullOr(Schema.Finite),
  response_body: Schema.NullOr(Schema.String),
  created_at: Instant
})
const decodeKey = firstOf("idempotency_keys", KeyRow)

const toRecord = (r: typeof KeyRow.Type): IdempotencyRecord => ({
  tokenId: r.token_id,
  key: r.key,
  requestHash: r.request_hash,
  status: r.status,
  responseStatus: r.response_status,
  responseBody: r.response_body,
  createdAt: r.created_at
})

const expiredBefore = (now: Date) => new Date(now.getTime() - KEEP_MS)
const legacyAbandonedBefore = (now: Date) => new Date(now.getTime() - LEGACY_RUNNING_MS)

const outsideUnit = (method: string) =>
  Effect.die(
    new Error(
      `IdempotencyRepo.${method} must run inside IdempotencyRepo.atomically (the key is held by a unit of work)`
    )
  )

/** Memory store: the keys held by the running unit, released when it ends. */
class MemoryUnit
  extends Context.Service<MemoryUnit, { readonly held: Array<string> }>()("sitehealth/IdempotencyRepo/MemoryUnit")
{}

export class IdempotencyRepo
  extends Context.Service<IdempotencyRepo, IdempotencyRepoShape>()("sitehealth/IdempotencyRepo")
{
  static readonly sql = Layer.effect(
    IdempotencyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const find = (tokenId: string, key: string) =>
        sql`SELECT * FROM idempotency_keys WHERE token_id = ${tokenId} AND key = ${key}`.pipe(
          Effect.flatMap(decodeKey),
          Effect.map((r) => (r === null ? null : toRecord(r)))
        )
      const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

      return IdempotencyRepo.of({
        atomically: Effect.fn("IdempotencyRepo.atomically")(
          function*<A, E, R>(body: Effect.Effect<A, E, R>): Effect.fn.Return<A, E, R> {
            // When the body fails and the ROLLBACK then fails too (the connection dropped: Postgres discards the
            // transaction with it), effect/sql turns both into defects; the unit ends as its body did instead,
            // so the request answers what its own failure says (a lost database: 503), never a 500.
            let bodyFailure: Cause.Cause<E> | null = null
            const watched = Effect.onError(body, (cause) => Effect.sync(() => void (bodyFailure = cause)))
            return yield* sql.withTransaction(watched).pipe(
              Effect.catchCause((cause) => Effect.failCause(bodyFailure ?? cause)),
              dieOnSqlError
            )
          }
        ),
        claim: Effect.fn("IdempotencyRepo.claim")(function*(input) {
          if (!(yield* inTransaction)) return yield* outsideUnit("claim")
          // The key's lock, held until this transaction ends (commit, rollback, or a dead session). A 64-bit
          // hash of (token, key): a collision of two live keys costs one spurious 409, nothing more. The
          // newline cannot occur in either (token ids are [a-z_0-9], keys printable ASCII). Not waited for:
          // the holder may run for a while, and the caller is told to retry (409, Retry-After: 1).
          const locked = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(
              hashtextextended(${input.tokenId} || chr(10) || ${input.key}, 0)) AS locked`
          if (locked[0]?.locked !== true) return { _tag: "Busy" as const }
          // A statement of its own, AFTER the lock: read committed takes a snapshot per statement, so this
          // one sees the answer of a holder that committed just before we took the lock.
          const record = yield* find(input.tokenId, input.key)
          if (record === null || record.createdAt <= expiredBefore(input.now)) return { _tag: "Claimed" as const }
          if (record.status === "running") {
            return record.createdAt <= legacyAbandonedBefore(input.now)
              ? { _tag: "Claimed" as const }
              : { _tag: "Busy" as const }
          }
          return { _tag: "Existing" as const, record }
        }, dieOnSqlError),
        complete: Effect.fn("IdempotencyRepo.complete")(function*(input, response) {
          if (!(yield* inTransaction)) return yield* outsideUnit("complete")
          // Replaces only a row `claim` counted as absent (expired, or a legacy claim abandoned). Anything
          // else means the key changed hands under our lock — an old-version instance claimed it meanwhile
          // (it takes no advisory lock): fail, and the whole request rolls back rather than act twice.
          const stored = yield* sql`INSERT INTO idempotency_keys
                (token_id, key, request_hash, status, response_status, response_body, created_at)
              VALUES (${input.tokenId}, ${input.key}, ${input.requestHash}, 'done', ${response.status},
                ${response.body}, ${input.now})
              ON CONFLICT (token_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = 'done',
                response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
                created_at = EXCLUDED.created_at
              WHERE idempotency_keys.created_at <= ${expiredBefore(input.now)}
                 OR (idempotency_keys.status = 'running' AND idempotency_keys.created_at <= ${
            legacyAbandonedBefore(input.now)
          })
              RETURNING token_id`
          if (stored.length === 0) {
            return yield* Effect.die(
              new Error(
                `Idempotency: the key's row was written by another request while this one held the key; rolled back`
              )
            )
          }
        }, dieOnSqlError),
        sweep: Effect.fn("IdempotencyRepo.sweep")(function*(now) {
          return yield* sql`DELETE FROM idempotency_keys WHERE (token_id, key) IN (
                SELECT token_id, key FROM idempotency_keys WHERE created_at <= ${expiredBefore(now)}
                LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`.pipe(
            Effect.asVoid,
            // During an outage the request's own transaction reports the failure (503); don't log it per request.
            Effect.catchCause((cause) => {
              const error = Cause.findErrorOption(cause)
              return Option.isSome(error) && isTransientDatabaseFailure(error.value)
                ? Effect.void
                : Effect.logWarning(
                  "Idempotency: sweeping expired keys failed; the next keyed request tries again",
                  Cause.pretty(cause)
                )
            })
          )
        }),
        find: Effect.fn("IdempotencyRepo.find")(function*(tokenId, key) {
          return yield* dieOnSqlError(find(tokenId, key))
        })
      })
    })
  )

  /**
   * Tests only. One map per layer build; every operation is synchronous, so a claim is atomic. A unit holds its
   * keys in a set until it ends; there is no crash to survive and nothing to roll back (the memory
   * repositories have no transactions), which is the one difference from SQL.
   */
  static readonly memory = Layer.sync(IdempotencyRepo, () => {
    const rows = new Map<string, IdempotencyRecord>()
    const held = new Set<string>()
    const id = (tokenId: string, key: string) => `${tokenId}\u0000${key}`
    const unit = Effect.serviceOption(MemoryUnit)
    return IdempotencyRepo.of({
      atomically: Effect.fn("IdempotencyRepo.atomically")(function*(body) {
        const mine: Array<string> = []
        return yield* body.pipe(
          Effect.provideService(MemoryUnit, { held: mine }),
          Effect.ensuring(Effect.sync(() => mine.forEach((k) => held.delete(k))))
        )
      }),
      claim: Effect.fn("IdempotencyRepo.claim")(function*(input): Effect.fn.Return<Claim> {
        const current = yield* unit
        if (Option.isNone(current)) return yield* outsideUnit("claim")
        const k = id(input.tokenId, input.key)
        if (held.has(k)) return { _tag: "Busy" }
        held.add(k)
        current.value.held.push(k)
        const existing = rows.get(k)
        return existing !== undefined && existing.createdAt > expiredBefore(input.now)
          ? { _tag: "Existing", record: existing }
          : { _tag: "Claimed" }
      }),
      complete: Effect.fn("IdempotencyRepo.complete")(function*(input, response) {
        const current = yield* unit
        const k = id(input.tokenId, input.key)
        if (Option.isNone(current) || !current.value.held.includes(k)) return yield* outsideUnit("complete")
        rows.set(k, {
          tokenId: input.tokenId,
          key: input.key,
          requestHash: input.requestHash,
          status: "done",
          responseStatus: response.status,
          responseBody: response.body,
          createdAt: input.now
        })
      }),
      sweep: Effect.fn("IdempotencyRepo.sweep")((now) =>
        Effect.sync(() => {
          let swept = 0
          for (const [k, record] of rows) {
            if (swept >= SWEEP_BATCH) break
            if (record.createdAt <= expiredBefore(now) && !held.has(k)) {
              rows.delete(k)
              swept++
            }
          }
        })
      ),
      find: Effect.fn("IdempotencyRepo.find")((tokenId, key) => Effect.sync(() => rows.get(id(tokenId, key)) ?? null))
    })
  })
}
