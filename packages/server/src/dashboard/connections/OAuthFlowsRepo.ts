/**
 * Pending Google OAuth flows (Migration.ts): created at "start", claimed once by the callback (only by the
 * account that started it, before it expires), completed with the encrypted refresh token, removed when the
 * owner has chosen the property. `secrets` is ciphertext; this repository never sees a plaintext secret.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Bytes, dieOnSqlError, firstOf, Instant } from "../../store/Sql.ts"

export interface OAuthFlow {
  readonly id: string
  readonly accountId: string
  readonly projectId: string
  /** Encrypted JSON: {verifier} before the exchange, {verifier, refresh_token} after. */
  readonly secrets: Uint8Array
  readonly exchangedAt: Date | null
  readonly expiresAt: Date
}

export interface OAuthFlowsRepoShape {
  readonly create: (flow: OAuthFlow & { readonly stateSha256: Uint8Array }, now: Date) => Effect.Effect<void>
  /** The flow of this state, started by this account, unexpired and not yet claimed — now claimed; else null. */
  readonly claim: (stateSha256: Uint8Array, accountId: string, now: Date) => Effect.Effect<OAuthFlow | null>
  readonly complete: (id: string, secrets: Uint8Array) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<OAuthFlow | null>
  readonly remove: (id: string) => Effect.Effect<void>
}

const Row = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  project_id: Schema.String,
  secrets: Bytes,
  exchanged_at: Schema.NullOr(Instant),
  expires_at: Instant
})
const decodeFirst = firstOf("oauth_flows", Row)
const toFlow = (r: typeof Row.Type): OAuthFlow => ({
  id: r.id,
  accountId: r.account_id,
  projectId: r.project_id,
  secrets: new Uint8Array(r.secrets),
  exchangedAt: r.exchanged_at,
  expiresAt: r.expires_at
})

export class OAuthFlowsRepo
  extends Context.Service<OAuthFlowsRepo, OAuthFlowsRepoShape>()("sitehealth/OAuthFlowsRepo")
{
  static readonly sql = Layer.effect(
    OAuthFlowsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cols = sql`id, account_id, project_id, secrets, exchanged_at, expires_at`
      return OAuthFlowsRepo.of({
        create: Effect.fn("OAuthFlowsRepo.create")(function*(f, now) {
          yield* sql`DELETE FROM oauth_flows WHERE expires_at <= ${now}`
          yield* sql`INSERT INTO oauth_flows (id, state_sha256, account_id, project_id, secrets, expires_at)
            VALUES (${f.id}, ${Buffer.from(f.stateSha256)}, ${f.accountId}, ${f.projectId}, ${
            Buffer.from(f.secrets)
          }, ${f.expiresAt})`
        }, dieOnSqlError),
        claim: Effect.fn("OAuthFlowsRepo.claim")(function*(hash, accountId, now) {
          return yield* sql`UPDATE oauth_flows SET exchanged_at = ${now}
              WHERE state_sha256 = ${
            Buffer.from(hash)
          } AND account_id = ${accountId} AND exchanged_at IS NULL AND expires_at > ${now}
              RETURNING ${cols}`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toFlow(r))),
            dieOnSqlError
          )
        }),
        complete: Effect.fn("OAuthFlowsRepo.complete")(function*(id, secrets) {
          return yield* sql`UPDATE oauth_flows SET secrets = ${Buffer.from(secrets)} WHERE id = ${id}`.pipe(
            Effect.asVoid,
            dieOnSqlError
          )
        }),
        find: Effect.fn("OAuthFlowsRepo.find")(function*(id) {
          return yield* sql`SELECT ${cols} FROM oauth_flows WHERE id = ${id}`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toFlow(r))),
            dieOnSqlError
          )
        }),
        remove: Effect.fn("OAuthFlowsRepo.remove")(function*(id) {
          return yield* sql`DELETE FROM oauth_flows WHERE id = ${id}`.pipe(Effect.asVoid, dieOnSqlError)
        })
      })
    })
  )

  /** Tests only: the same over a map. */
  static readonly memory = Layer.sync(OAuthFlowsRepo, () => {
    const rows = new Map<string, OAuthFlow & { readonly stateHex: string }>()
    return OAuthFlowsRepo.of({
      create: Effect.fn("OAuthFlowsRepo.create")((f, now) =>
        Effect.sync(() => {
          for (const [id, r] of rows) if (r.expiresAt.getTime() <= now.getTime()) rows.delete(id)
          const { stateSha256, ...flow } = f
          rows.set(f.id, { ...flow, stateHex: Buffer.from(stateSha256).toString("hex") })
        })
      ),
      claim: Effect.fn("OAuthFlowsRepo.claim")((hash, accountId, now) =>
        Effect.sync(() => {
          const hex = Buffer.from(hash).toString("hex")
          const row = [...rows.values()].find((r) => r.stateHex === hex)
          if (
            row === undefined || row.accountId !== accountId || row.exchangedAt !== null ||
            row.expiresAt.getTime() <= now.getTime()
          ) return null
          const claimed = { ...row, exchangedAt: now }
          rows.set(row.id, claimed)
          const { stateHex: _, ...flow } = claimed
          return flow
        })
      ),
      complete: Effect.fn("OAuthFlowsRepo.complete")((id, secrets) =>
        Effect.sync(() => {
          const row = rows.get(id)
          if (row !== undefined) rows.set(id, { ...row, secrets })
        })
      ),
      find: Effect.fn("OAuthFlowsRepo.find")((id) =>
        Effect.sync(() => {
          const row = rows.get(id)
          if (row === undefined) return null
          const { stateHex: _, ...flow } = row
          return flow
        })
      ),
      remove: Effect.fn("OAuthFlowsRepo.remove")((id) => Effect.sync(() => void rows.delete(id)))
    })
  })
}
