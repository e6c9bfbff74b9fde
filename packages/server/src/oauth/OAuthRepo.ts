/**
 * The authorization server's records: registered clients, authorization codes and refresh tokens (SQL and
 * memory twins). Codes and refresh tokens are looked up by the SHA-256 of their secret, never stored in plain
 * text. `useCode` and `useRefresh` are the single-use step: the first caller marks the row used and gets
 * `firstUse: true`; every later caller (a replay) gets the row with `firstUse: false`, so the grant can end
 * the family the secret belongs to.
 */
import { AccountId, ProjectId, TokenId } from "@sitehealth/domain/Common"
import { Permission } from "@sitehealth/domain/Permissions"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Bytes, dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"

export interface OAuthClient {
  readonly id: string
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
  readonly createdAt: Date
}

export interface OAuthCode {
  /** SHA-256 of the code, hex. */
  readonly secretSha256: string
  readonly clientId: string
  readonly accountId: AccountId
  readonly projects: ReadonlyArray<ProjectId> | null
  readonly permissions: ReadonlyArray<Permission>
  readonly redirectUri: string
  /** The PKCE S256 challenge: base64url of the SHA-256 of the verifier. */
  readonly codeChallenge: string
  readonly resource: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly usedAt: Date | null
  /** The access token the code was exchanged for (null until it is). */
  readonly tokenId: TokenId | null
}

export interface OAuthRefresh {
  /** SHA-256 of the refresh token, hex. */
  readonly secretSha256: string
  /** The access token (a `tokens` row) this refresh token renews: its family. */
  readonly tokenId: TokenId
  readonly clientId: string
  readonly resource: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly usedAt: Date | null
}

export interface Used<A> {
  readonly record: A
  readonly firstUse: boolean
}

export interface OAuthRepoShape {
  readonly insertClient: (client: OAuthClient) => Effect.Effect<void>
  readonly findClient: (id: string) => Effect.Effect<OAuthClient | null>
  readonly insertCode: (code: OAuthCode) => Effect.Effect<void>
  readonly useCode: (sha256Hex: string, at: Date) => Effect.Effect<Used<OAuthCode> | null>
  readonly setCodeToken: (sha256Hex: string, tokenId: TokenId) => Effect.Effect<void>
  readonly insertRefresh: (refresh: OAuthRefresh) => Effect.Effect<void>
  readonly useRefresh: (sha256Hex: string, at: Date) => Effect.Effect<Used<OAuthRefresh> | null>
  /** Marks every refresh token of the family used: none of them renews the token again. */
  readonly endFamily: (tokenId: TokenId, at: Date) => Effect.Effect<void>
}

const CLIENT_ID = /^cli_[0-9A-Za-z]{16,64}$/
const DAY_MS = 86_400_000

const ClientRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  created_at: Instant
})
const CodeRow = Schema.Struct({
  secret_sha256: Bytes,
  client_id: Schema.String,
  account_id: AccountId,
  projects: Schema.NullOr(Schema.Array(ProjectId)),
  permissions: Schema.Array(Permission),
  redirect_uri: Schema.String,
  code_challenge: Schema.String,
  resource: Schema.String,
  created_at: Instant,
  expires_at: Instant,
  used_at: Schema.NullOr(Instant),
  token_id: Schema.NullOr(TokenId)
})
const RefreshRow = Schema.Struct({
  secret_sha256: Bytes,
  token_id: TokenId,
  client_id: Schema.String,
  resource: Schema.String,
  created_at: Instant,
  expires_at: Instant,
  used_at: Schema.NullOr(Instant)
})

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const bytes = (hexText: string) => Buffer.from(hexText, "hex")

const toCode = (r: typeof CodeRow.Type): OAuthCode => ({
  secretSha256: hex(r.secret_sha256),
  clientId: r.client_id,
  accountId: r.account_id,
  projects: r.projects,
  permissions: r.permissions,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  tokenId: r.token_id
})
const toRefresh = (r: typeof RefreshRow.Type): OAuthRefresh => ({
  secretSha256: hex(r.secret_sha256),
  tokenId: r.token_id,
  clientId: r.client_id,
  resource: r.resource,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at
})

export class OAuthRepo extends Context.Service<OAuthRepo, OAuthRepoShape>()("sitehealth/OAuthRepo") {
  static readonly sql = Layer.effect(
    OAuthRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const client = firstOf("oauth_clients", ClientRow)
      const code = firstOf("oauth_codes", CodeRow)
      const refresh = firstOf("oauth_refresh_tokens", RefreshRow)
      /** The single-use step: the UPDATE that marks an unused row wins once; a used row is read back as a replay. */
      const use = <A>(
        update: Effect.Effect<ReadonlyArray<unknown>, unknown>,
        select: Effect.Effect<ReadonlyArray<unknown>, unknown>,
        decode: (rows: ReadonlyArray<unknown>) => Effect.Effect<A | null>
      ) =>
        Effect.gen(function*() {
          const first = yield* Effect.flatMap(update, decode)
          if (first !== null) return { record: first, firstUse: true }
          const again = yield* Effect.flatMap(select, decode)
          return again === null ? null : { record: again, firstUse: false }
        }).pipe(Effect.orDie)
      return OAuthRepo.of({
        insertClient: Effect.fn("OAuthRepo.insertClient")(function*(c) {
          yield* sql`INSERT INTO oauth_clients (id, name, redirect_uris, created_at)
              VALUES (${c.id}, ${c.name}, ${[...c.redirectUris]}, ${c.createdAt})`.pipe(dieOnSqlError)
        }),
        findClient: Effect.fn("OAuthRepo.findClient")(function*(id) {
          if (!CLIENT_ID.test(id)) return null
          const row = yield* sql`SELECT * FROM oauth_clients WHERE id = ${id}`.pipe(
            Effect.flatMap(client),
            dieOnSqlError
          )
          return row === null
            ? null
            : { id: row.id, name: row.name, redirectUris: row.redirect_uris, createdAt: row.created_at }
        }),
        insertCode: Effect.fn("OAuthRepo.insertCode")(function*(c) {
          // Codes a day past their expiry are kept no longer (until then a replay still revokes what it gave).
          yield* sql`DELETE FROM oauth_codes WHERE expires_at < ${new Date(c.createdAt.getTime() - DAY_MS)}`.pipe(
            dieOnSqlError
          )
          yield* sql`INSERT INTO oauth_codes (secret_sha256, client_id, account_id, projects, permissions,
              redirect_uri, code_challenge, resource, created_at, expires_at)
              VALUES (${bytes(c.secretSha256)}, ${c.clientId}, ${c.accountId},
                      ${c.projects === null ? null : [...c.projects]}, ${[...c.permissions]}, ${c.redirectUri},
                      ${c.codeChallenge}, ${c.resource}, ${c.createdAt}, ${c.expiresAt})`.pipe(dieOnSqlError)
        }),
        useCode: Effect.fn("OAuthRepo.useCode")(function*(hash, at) {
          const used = yield* use(
            sql`UPDATE oauth_codes SET used_at = ${at}
                WHERE secret_sha256 = ${bytes(hash)} AND used_at IS NULL RETURNING *`,
            sql`SELECT * FROM oauth_codes WHERE secret_sha256 = ${bytes(hash)}`,
            code
          )
          return used === null ? null : { record: toCode(used.record), firstUse: used.firstUse }
        }),
        setCodeToken: Effect.fn("OAuthRepo.setCodeToken")(function*(hash, tokenId) {
          yield* sql`UPDATE oauth_codes SET token_id = ${tokenId} WHERE secret_sha256 = ${bytes(hash)}`.pipe(
            dieOnSqlError
          )
        }),
        insertRefresh: Effect.fn("OAuthRepo.insertRefresh")(function*(r) {
          // An expired refresh token renews nothing and detects nothing any more: it goes.
          yield* sql`DELETE FROM oauth_refresh_tokens WHERE expires_at < ${r.createdAt}`.pipe(dieOnSqlError)
          yield* sql`INSERT INTO oauth_refresh_tokens (secret_sha256, token_id, client_id, resource, created_at,
              expires_at)
              VALUES (${bytes(r.secretSha256)}, ${r.tokenId}, ${r.clientId}, ${r.resource}, ${r.createdAt},
                      ${r.expiresAt})`.pipe(dieOnSqlError)
        }),
        useRefresh: Effect.fn("OAuthRepo.useRefresh")(function*(hash, at) {
          const used = yield* use(
            sql`UPDATE oauth_refresh_tokens SET used_at = ${at}
                WHERE secret_sha256 = ${bytes(hash)} AND used_at IS NULL RETURNING *`,
            sql`SELECT * FROM oauth_refresh_tokens WHERE secret_sha256 = ${bytes(hash)}`,
            refresh
          )
          return used === null ? null : { record: toRefresh(used.record), firstUse: used.firstUse }
        }),
        endFamily: Effect.fn("OAuthRepo.endFamily")(function*(tokenId, at) {
          yield* sql`UPDATE oauth_refresh_tokens SET used_at = COALESCE(used_at, ${at})
              WHERE token_id = ${tokenId}`.pipe(dieOnSqlError)
        })
      })
    })
  )

  static readonly memory = Layer.sync(OAuthRepo, () => {
    const clients = new Map<string, OAuthClient>()
    const codes = new Map<string, OAuthCode>()
    const refreshes = new Map<string, OAuthRefresh>()
    const use = <A extends { readonly usedAt: Date | null }>(table: Map<string, A>, hash: string, at: Date) => {
      const row = table.get(hash)
      if (row === undefined) return null
      if (row.usedAt !== null) return { record: row, firstUse: false }
      const marked = { ...row, usedAt: at }
      table.set(hash, marked)
      return { record: marked, firstUse: true }
    }
    return OAuthRepo.of({
      insertClient: Effect.fn("OAuthRepo.insertClient")((c) => Effect.sync(() => void clients.set(c.id, c))),
      findClient: Effect.fn("OAuthRepo.findClient")((id) => Effect.sync(() => clients.get(id) ?? null)),
      insertCode: Effect.fn("OAuthRepo.insertCode")((c) =>
        Effect.sync(() => {
          for (const [hash, old] of codes) {
            if (old.expiresAt.getTime() < c.createdAt.getTime() - DAY_MS) codes.delete(hash)
          }
          codes.set(c.secretSha256, c)
        })
      ),
      useCode: Effect.fn("OAuthRepo.useCode")((hash, at) => Effect.sync(() => use(codes, hash, at))),
      setCodeToken: Effect.fn("OAuthRepo.setCodeToken")((hash, tokenId) =>
        Effect.sync(() => {
          const row = codes.get(hash)
          if (row !== undefined) codes.set(hash, { ...row, tokenId })
        })
      ),
      insertRefresh: Effect.fn("OAuthRepo.insertRefresh")((r) =>
        Effect.sync(() => {
          for (const [hash, old] of refreshes) if (old.expiresAt < r.createdAt) refreshes.delete(hash)
          refreshes.set(r.secretSha256, r)
        })
      ),
      useRefresh: Effect.fn("OAuthRepo.useRefresh")((hash, at) => Effect.sync(() => use(refreshes, hash, at))),
      endFamily: Effect.fn("OAuthRepo.endFamily")((tokenId, at) =>
        Effect.sync(() => {
          for (const [hash, r] of refreshes) {
            if (r.tokenId === tokenId && r.usedAt === null) refreshes.set(hash, { ...r, usedAt: at })
          }
        })
      )
    })
  })
}
