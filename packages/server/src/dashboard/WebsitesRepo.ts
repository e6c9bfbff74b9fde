/**
 * What the dashboard does to websites beyond ProjectsRepo: edit one, and delete one in ONE transaction that
 * also takes it out of every token's website list (a token scoped to it alone is left with an empty list:
 * it authenticates but reaches no website). The project's rows (traffic, revenue, search, expenses,
 * integrations and their encrypted credentials, snapshots…) go with it by ON DELETE CASCADE.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { looksLikeId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { ProjectRecord } from "../store/Records.ts"
import { ProjectRow, toProjectRecord } from "../store/Rows.ts"
import { dieOnSqlError, firstOf } from "../store/Sql.ts"

export interface WebsiteChanges {
  readonly name?: string
  readonly domain?: string
  readonly timezone?: string
  readonly currency?: string
}

export interface WebsitesRepoShape {
  readonly update: (accountId: string, id: string, changes: WebsiteChanges) => Effect.Effect<ProjectRecord | null>
  /** null when the website is not the account's; else how many tokens named it. */
  readonly remove: (accountId: string, id: string) => Effect.Effect<{ readonly tokensNarrowed: number } | null>
  /**
   * Deletes the account with everything it owns (websites and their data, credentials, tokens, logins and their
   * sessions, settings) in one statement (ON DELETE CASCADE); how many websites went. null: no such account.
   */
  readonly removeAccount: (accountId: string) => Effect.Effect<{ readonly websites: number } | null>
}

export class WebsitesRepo
  extends Context.Service<WebsitesRepo, WebsitesRepoShape>()("sitehealth/dashboard/WebsitesRepo")
{
  static readonly sql = Layer.effect(
    WebsitesRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decode = firstOf("projects", ProjectRow)
      return WebsitesRepo.of({
        update: Effect.fn("WebsitesRepo.update")(function*(accountId, id, c) {
          if (!looksLikeId(id)) return null
          return yield* sql`UPDATE projects SET
              name = coalesce(${c.name ?? null}, name),
              domain = coalesce(${c.domain ?? null}, domain),
              timezone = coalesce(${c.timezone ?? null}, timezone),
              currency = coalesce(${c.currency ?? null}, currency)
            WHERE id = ${id} AND account_id = ${accountId} RETURNING *`.pipe(
            Effect.flatMap(decode),
            Effect.map((r) => (r === null ? null : toProjectRecord(r))),
            dieOnSqlError
          )
        }),
        remove: Effect.fn("WebsitesRepo.remove")(function*(accountId, id) {
          if (!looksLikeId(id)) return null
          return yield* Effect.gen(function*() {
            const narrowed = yield* sql`UPDATE tokens SET projects = array_remove(projects, ${id})
              WHERE account_id = ${accountId} AND ${id} = ANY(projects) RETURNING id`
            const deleted = yield* sql`DELETE FROM projects WHERE id = ${id} AND account_id = ${accountId} RETURNING id`
            // Not the account's website: fail, which rolls the narrowing back.
            if (deleted.length === 0) return yield* Effect.fail("absent" as const)
            return { tokensNarrowed: narrowed.length }
          }).pipe(
            sql.withTransaction,
            Effect.catchIf((e) => e === "absent", () => Effect.succeed(null)),
            dieOnSqlError
          )
        }),
        removeAccount: Effect.fn("WebsitesRepo.removeAccount")(function*(accountId) {
          return yield* Effect.gen(function*() {
            const websites = yield* sql`SELECT count(*)::int AS n FROM projects WHERE account_id = ${accountId}`
            const deleted = yield* sql`DELETE FROM accounts WHERE id = ${accountId} RETURNING id`
            return deleted.length === 0 ? null : { websites: Number((websites[0] as { n: number }).n) }
          }).pipe(sql.withTransaction, dieOnSqlError)
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    WebsitesRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const projects = yield* ProjectsRepo
      return WebsitesRepo.of({
        update: Effect.fn("WebsitesRepo.update")((accountId, id, c) =>
          Effect.sync(() => {
            const p = db.projects.get(id)
            if (!p || p.accountId !== accountId) return null
            const next: ProjectRecord = {
              ...p,
              ...(c.name === undefined ? {} : { name: c.name }),
              ...(c.domain === undefined ? {} : { domain: c.domain }),
              ...(c.timezone === undefined ? {} : { timezone: c.timezone }),
              ...(c.currency === undefined ? {} : { currency: c.currency })
            }
            db.projects.set(id, next)
            return next
          })
        ),
        remove: Effect.fn("WebsitesRepo.remove")(function*(accountId, id) {
          const p = db.projects.get(id)
          if (!p || p.accountId !== accountId) return null
          let tokensNarrowed = 0
          for (const [key, t] of db.tokens) {
            if (t.accountId === accountId && t.projects !== null && t.projects.includes(p.id)) {
              db.tokens.set(key, { ...t, projects: t.projects.filter((x) => x !== p.id) })
              tokensNarrowed++
            }
          }
          yield* projects.remove(id)
          return { tokensNarrowed }
        }),
        removeAccount: Effect.fn("WebsitesRepo.removeAccount")(function*(accountId) {
          if (!db.accounts.has(accountId)) return null
          const owned = [...db.projects.values()].filter((p) => p.accountId === accountId)
          for (const p of owned) yield* projects.remove(p.id)
          for (const [key, t] of db.tokens) if (t.accountId === accountId) db.tokens.delete(key)
          db.accounts.delete(accountId)
          return { websites: owned.length }
        })
      })
    })
  )
}
