/**
 * The stored answers of POSTs sent with an `Idempotency-Key` (table idempotency_keys, IdempotencyMigration.ts),
 * over SQL or in memory. Keys are scoped to the token: the primary key is (token, key).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** How long a key is kept (from its claim): a retry within this window replays; after it, the key is new. */
export const KEEP_MS = 24 * 60 * 60 * 1000

/**
 * A 'running' row older than this is taken to be abandoned (its process died mid-request) and the key can be
 * claimed again. Far longer than any request takes here; until then a retry answers 409.
 */
export const ABANDONED_AFTER_MS = 60 * 1000

/** Expired rows deleted per claim, besides the claimed key's own: bounded so a claim stays short. */
const SWEEP_BATCH = 100

export interface IdempotencyRecord {
  readonly tokenId: string
  readonly key: string
  /** SHA-256 (hex) of method, path and canonical body: "the same request". */
  readonly requestHash: string
  readonly status: "running" | "done"
  readonly responseStatus: number | null
  /** The envelope as sent (a token secret never: Idempotency.ts redacts it before storing). */
  readonly responseBody: string | null
  readonly createdAt: Date
}

export type Claim =
  /** The key is this request's now: run it, then `complete` or `release`. */
  | { readonly _tag: "Claimed" }
  /** A live row holds the key: running (→ 409) or done (→ replay, or 422 for another request). */
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }

export interface ClaimInput {
  readonly tokenId: string
  readonly key: string
  readonly requestHash: string
  readonly now: Date
}

export interface IdempotencyRepoShape {
  /**
   * Claims the key for a request, atomically: of concurrent claims (on any instance) exactly one gets
   * `Claimed`. An expired row, or a 'running' one abandoned for ABANDONED_AFTER_MS, no longer holds its key.
   * Also deletes a bounded batch of expired rows (the lazy sweep).
   */
  readonly claim: (input: ClaimInput) => Effect.Effect<Claim>
  /** Stores the answer of a claimed key ('running' → 'done'). */
  readonly complete: (tokenId: string, key: string, response: { readonly status: number; readonly body: string }) => Effect.Effect<void>
  /** Frees a claimed key whose request did not complete (5xx, crash, invalid request): it can be used again. */
  readonly release: (tokenId: string, key: string) => Effect.Effect<void>
  readonly find: (tokenId: string, key: string) => Effect.Effect<IdempotencyRecord | null>
}

const toRecord = (r: any): IdempotencyRecord => ({
  tokenId: r.token_id,
  key: r.key,
  requestHash: r.request_hash,
  status: r.status,
  responseStatus: r.response_status === null ? null : Number(r.response_status),
  responseBody: r.response_body,
  createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at)
})

const runningRecord = (input: ClaimInput): IdempotencyRecord => ({
  tokenId: input.tokenId,
  key: input.key,
  requestHash: input.requestHash,
  status: "running",
  responseStatus: null,
  responseBody: null,
  createdAt: input.now
})

const holdsKey = (record: IdempotencyRecord, now: Date): boolean => {
  const age = now.getTime() - record.createdAt.getTime()
  return age < KEEP_MS && (record.status === "done" || age < ABANDONED_AFTER_MS)
}

export class IdempotencyRepo extends Context.Service<IdempotencyRepo, IdempotencyRepoShape>()("sitehealth/IdempotencyRepo") {
  static readonly sql = Layer.effect(
    IdempotencyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const find = (tokenId: string, key: string) =>
        sql`SELECT * FROM idempotency_keys WHERE token_id = ${tokenId} AND key = ${key}`.pipe(
          Effect.map((rows) => (rows.length === 0 ? null : toRecord(rows[0])))
        )
      const attempt = (input: ClaimInput, expiredBefore: Date): Effect.Effect<Claim | null, any> =>
        Effect.gen(function*() {
          const inserted = yield* sql`INSERT INTO idempotency_keys (token_id, key, request_hash, status, created_at)
              VALUES (${input.tokenId}, ${input.key}, ${input.requestHash}, 'running', ${input.now})
              ON CONFLICT (token_id, key) DO NOTHING
              RETURNING token_id`
          if (inserted.length > 0) return { _tag: "Claimed" as const }
          // Read committed: this statement sees the row the conflicting transaction committed.
          const record = yield* find(input.tokenId, input.key)
          return record === null || record.createdAt <= expiredBefore ? null : { _tag: "Existing" as const, record }
        })

      return IdempotencyRepo.of({
        claim: (input) =>
          Effect.gen(function*() {
            const expiredBefore = new Date(input.now.getTime() - KEEP_MS)
            const abandonedBefore = new Date(input.now.getTime() - ABANDONED_AFTER_MS)
            // The claim need not wait for its own disk flush (~5 ms of a keyed POST's ~12 ms here): WAL is
            // written in order, so the effect's later synchronous commit makes the claim durable too; and a
            // claim lost with a crashed database, before any effect committed, only leaves the key free.
            yield* sql`SET LOCAL synchronous_commit = off`
            yield* sql`DELETE FROM idempotency_keys
                WHERE (token_id = ${input.tokenId} AND key = ${input.key}
                       AND (created_at <= ${expiredBefore} OR (status = 'running' AND created_at <= ${abandonedBefore})))
                   OR (token_id, key) IN (SELECT token_id, key FROM idempotency_keys WHERE created_at <= ${expiredBefore}
                                          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`
            // The holder may have released the key between our conflict and our read: try once more.
            const first = yield* attempt(input, expiredBefore)
            if (first !== null) return first
            const second = yield* attempt(input, expiredBefore)
            if (second !== null) return second
            // Still contended: answer as if it were running (409, retry shortly) rather than loop.
            return { _tag: "Existing" as const, record: runningRecord(input) }
          }).pipe(sql.withTransaction, Effect.orDie),
        complete: (tokenId, key, response) =>
          sql`UPDATE idempotency_keys SET status = 'done', response_status = ${response.status}, response_body = ${response.body}
              WHERE token_id = ${tokenId} AND key = ${key} AND status = 'running'`.pipe(Effect.asVoid, Effect.orDie),
        release: (tokenId, key) =>
          sql`DELETE FROM idempotency_keys WHERE token_id = ${tokenId} AND key = ${key} AND status = 'running'`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        find: (tokenId, key) => Effect.orDie(find(tokenId, key))
      })
    })
  )

  /** Tests only. One map per layer build; every operation is synchronous, so a claim is atomic. */
  static readonly memory = Layer.sync(IdempotencyRepo, () => {
    const rows = new Map<string, IdempotencyRecord>()
    const id = (tokenId: string, key: string) => `${tokenId}\u0000${key}`
    return IdempotencyRepo.of({
      claim: (input) =>
        Effect.sync((): Claim => {
          let swept = 0
          for (const [k, record] of rows) {
            if (swept >= SWEEP_BATCH) break
            if (input.now.getTime() - record.createdAt.getTime() >= KEEP_MS) {
              rows.delete(k)
              swept++
            }
          }
          const existing = rows.get(id(input.tokenId, input.key))
          if (existing !== undefined && holdsKey(existing, input.now)) return { _tag: "Existing", record: existing }
          rows.set(id(input.tokenId, input.key), runningRecord(input))
          return { _tag: "Claimed" }
        }),
      complete: (tokenId, key, response) =>
        Effect.sync(() => {
          const record = rows.get(id(tokenId, key))
          if (record?.status === "running") {
            rows.set(id(tokenId, key), { ...record, status: "done", responseStatus: response.status, responseBody: response.body })
          }
        }),
      release: (tokenId, key) =>
        Effect.sync(() => {
          if (rows.get(id(tokenId, key))?.status === "running") rows.delete(id(tokenId, key))
        }),
      find: (tokenId, key) => Effect.sync(() => rows.get(id(tokenId, key)) ?? null)
    })
  })
}
