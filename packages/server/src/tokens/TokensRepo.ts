/** Access tokens. Only the SHA-256 of a secret is stored; lookups are by that hash. */
import { AccountId, ProjectId, TokenId } from "@sitehealth/domain/Common"
import { Permission } from "@sitehealth/domain/Permissions"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { pageInMemory, toPage } from "../store/Cursor.ts"
import { looksLikeId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { Page, PageRequest, TokenRecord, TokenWithAccount } from "../store/Records.ts"
import { Bytes, dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"
import { constantTimeEqual } from "../store/TokenSecret.ts"

export interface TokensRepoShape {
  readonly insert: (token: TokenRecord) => Effect.Effect<TokenRecord>
  /** The auth middleware's one lookup: the token with its account's entitlement fields. */
  readonly findBySecretHash: (sha256Hex: string) => Effect.Effect<TokenWithAccount | null>
  readonly find: (accountId: string, id: string) => Effect.Effect<TokenRecord | null>
  /** Operator side (the admin CLI): any account's token. */
  readonly findById: (id: string) => Effect.Effect<TokenRecord | null>
  /**
   * Newest first. With `within` (a token's project list), only the tokens scoped to some of those projects
   * (never an account-wide one): what a project-scoped token may see.
   */
  readonly list: (
    accountId: string,
    page: PageRequest,
    within?: ReadonlyArray<string> | null
  ) => Effect.Effect<Page<TokenRecord>>
  /** Sets revoked_at unless already set; returns the token as stored afterwards. */
  readonly revoke: (accountId: string, id: string, at: Date) => Effect.Effect<TokenRecord | null>
  readonly touch: (id: TokenId, at: Date) => Effect.Effect<void>
  /**
   * A new secret for a token that is not revoked (an OAuth refresh: the old secret stops working at once);
   * the token as stored afterwards, or null when it is revoked or gone.
   */
  readonly rotate: (
    id: TokenId,
    secret: { readonly secretSha256: string; readonly last4: string; readonly expiresAt: Date | null }
  ) => Effect.Effect<TokenRecord | null>
}

const TokenRow = Schema.Struct({
  id: TokenId,
  account_id: AccountId,
  name: Schema.String,
  secret_sha256: Bytes,
  last4: Schema.String,
  projects: Schema.NullOr(Schema.Array(ProjectId)),
  permissions: Schema.Array(Permission),
  created_at: Instant,
  last_used_at: Schema.NullOr(Instant),
  expires_at: Schema.NullOr(Instant),
  revoked_at: Schema.NullOr(Instant)
})
export type TokenRow = typeof TokenRow.Type

/** The token with its account's entitlement columns (the secret-hash lookup joins accounts). */
const TokenWithAccountRow = Schema.Struct({
  ...TokenRow.fields,
  trial_ends_at: Instant,
  subscription_status: Schema.Literals(["none", "active", "canceled"]),
  subscription_until: Schema.NullOr(Instant)
})

export const toTokenRecord = (r: TokenRow): TokenRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  secretSha256: Buffer.from(r.secret_sha256).toString("hex"),
  last4: r.last4,
  projects: r.projects,
  permissions: r.permissions,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at
})

export class TokensRepo extends Context.Service<TokensRepo, TokensRepoShape>()("sitehealth/TokensRepo") {
  static readonly sql = Layer.effect(
    TokensRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeAll = rowsOf("tokens", TokenRow)
      const decodeFirst = firstOf("tokens", TokenRow)
      const decodeSingle = singleOf("tokens", TokenRow)
      const decodeWithAccount = firstOf("tokens", TokenWithAccountRow)
      const one = (rows: ReadonlyArray<unknown>) =>
        Effect.map(decodeFirst(rows), (r) => (r === null ? null : toTokenRecord(r)))
      return TokensRepo.of({
        insert: Effect.fn("TokensRepo.insert")(function*(t) {
          return yield* sql`INSERT INTO tokens (id, account_id, name, secret_sha256, last4, projects, permissions,
              created_at, expires_at)
              VALUES (${t.id}, ${t.accountId}, ${t.name}, ${Buffer.from(t.secretSha256, "hex")}, ${t.last4},
                      ${t.projects === null ? null : [...t.projects]}, ${[...t.permissions]},
                      ${t.createdAt}, ${t.expiresAt})
              RETURNING *`.pipe(Effect.flatMap(decodeSingle), Effect.map(toTokenRecord), dieOnSqlError)
        }),
        findBySecretHash: Effect.fn("TokensRepo.findBySecretHash")(function*(hash) {
          return yield* sql`SELECT t.*, a.trial_ends_at, a.subscription_status, a.subscription_until
              FROM tokens t JOIN accounts a ON a.id = t.account_id
              WHERE t.secret_sha256 = ${Buffer.from(hash, "hex")}`.pipe(
            Effect.flatMap(decodeWithAccount),
            Effect.map((r) =>
              r === null ? null : {
                token: toTokenRecord(r),
                account: {
                  trialEndsAt: r.trial_ends_at,
                  subscriptionStatus: r.subscription_status,
                  subscriptionUntil: r.subscription_until
                }
              }
            ),
            dieOnSqlError
          )
        }),
        find: Effect.fn("TokensRepo.find")(function*(accountId, id) {
          if (!looksLikeId(id)) return null
          return yield* sql`SELECT * FROM tokens WHERE id = ${id} AND account_id = ${accountId}`.pipe(
            Effect.flatMap(one),
            dieOnSqlError
          )
        }),
        findById: Effect.fn("TokensRepo.findById")(function*(id) {
          if (!looksLikeId(id)) return null
          return yield* sql`SELECT * FROM tokens WHERE id = ${id}`.pipe(
            Effect.flatMap(one),
            dieOnSqlError
          )
        }),
        list: Effect.fn("TokensRepo.list")(function*(accountId, page, within = null) {
          const after = page.after
          return yield* sql`SELECT * FROM tokens WHERE account_id = ${accountId}
              ${within === null ? sql`` : sql`AND projects IS NOT NULL AND projects <@ ${[...within]}::text[]`}
              ${after === null ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id})`}
              ORDER BY created_at DESC, id DESC LIMIT ${page.limit + 1}`.pipe(
            Effect.flatMap(decodeAll),
            Effect.map((rows) => toPage(rows.map(toTokenRecord), page.limit)),
            dieOnSqlError
          )
        }),
        revoke: Effect.fn("TokensRepo.revoke")(function*(accountId, id, at) {
          if (!looksLikeId(id)) return null
          return yield* sql`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ${at})
              WHERE id = ${id} AND account_id = ${accountId} RETURNING *`.pipe(Effect.flatMap(one), dieOnSqlError)
        }),
        touch: Effect.fn("TokensRepo.touch")(function*(id, at) {
          return yield* sql`UPDATE tokens SET last_used_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, dieOnSqlError)
        }),
        rotate: Effect.fn("TokensRepo.rotate")(function*(id, secret) {
          return yield* sql`UPDATE tokens SET secret_sha256 = ${Buffer.from(secret.secretSha256, "hex")},
              last4 = ${secret.last4}, expires_at = ${secret.expiresAt}
              WHERE id = ${id} AND revoked_at IS NULL RETURNING *`.pipe(Effect.flatMap(one), dieOnSqlError)
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    TokensRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      return TokensRepo.of({
        insert: Effect.fn("TokensRepo.insert")((t) =>
          Effect.sync(() => {
            db.tokens.set(t.id, t)
            return t
          })
        ),
        findBySecretHash: Effect.fn("TokensRepo.findBySecretHash")((hash) =>
          Effect.sync(() => {
            for (const token of db.tokens.values()) {
              if (constantTimeEqual(token.secretSha256, hash)) {
                const account = db.accounts.get(token.accountId)
                return account ? { token, account } : null
              }
            }
            return null
          })
        ),
        find: Effect.fn("TokensRepo.find")((accountId, id) =>
          Effect.sync(() => {
            const t = db.tokens.get(id)
            return t && t.accountId === accountId ? t : null
          })
        ),
        findById: Effect.fn("TokensRepo.findById")((id) => Effect.sync(() => db.tokens.get(id) ?? null)),
        list: Effect.fn("TokensRepo.list")((accountId, page, within = null) =>
          Effect.sync(() =>
            pageInMemory(
              [...db.tokens.values()].filter((t) =>
                t.accountId === accountId &&
                (within === null || (t.projects !== null && t.projects.every((p) => within.includes(p))))
              ),
              page,
              "desc"
            )
          )
        ),
        revoke: Effect.fn("TokensRepo.revoke")((accountId, id, at) =>
          Effect.sync(() => {
            const t = db.tokens.get(id)
            if (!t || t.accountId !== accountId) return null
            const next = { ...t, revokedAt: t.revokedAt ?? at }
            db.tokens.set(id, next)
            return next
          })
        ),
        touch: Effect.fn("TokensRepo.touch")((id, at) =>
          Effect.sync(() => {
            const t = db.tokens.get(id)
            if (t) db.tokens.set(id, { ...t, lastUsedAt: at })
          })
        ),
        rotate: Effect.fn("TokensRepo.rotate")((id, secret) =>
          Effect.sync(() => {
            const t = db.tokens.get(id)
            if (!t || t.revokedAt !== null) return null
            const next = { ...t, ...secret }
            db.tokens.set(id, next)
            return next
          })
        )
      })
    })
  )
}
