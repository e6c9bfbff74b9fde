/** Projects (websites) of accounts. */
import { type AccountId, ProjectId } from "@sitehealth/domain/Common"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { pageInMemory, toPage } from "../store/Cursor.ts"
import { looksLikeId, newId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { Page, PageRequest, ProjectRecord } from "../store/Records.ts"
import { ProjectRow, toProjectRecord } from "../store/Rows.ts"
import { dieOnSqlError, firstOf, rowsOf, singleOf } from "../store/Sql.ts"

export { toProjectRecord }

export interface NewProject {
  readonly accountId: AccountId
  readonly name: string
  readonly domain: string
  readonly timezone: string
  readonly currency: string
  readonly now: Date
}

export interface ProjectsRepoShape {
  readonly create: (input: NewProject) => Effect.Effect<ProjectRecord>
  /** Dashboard/operator deletion: removes the project and everything stored for it. */
  readonly remove: (id: string) => Effect.Effect<boolean>
  readonly find: (id: string) => Effect.Effect<ProjectRecord | null>
  /** Projects of the account, limited to `scope` when it is not null, oldest first. */
  readonly list: (
    accountId: string,
    scope: ReadonlyArray<string> | null,
    page: PageRequest
  ) => Effect.Effect<Page<ProjectRecord>>
  /** Which of `ids` are projects of the account. */
  readonly existing: (accountId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ProjectId>>
}

const decodeAll = rowsOf("projects", ProjectRow)
const decodeFirst = firstOf("projects", ProjectRow)
const decodeSingle = singleOf("projects", ProjectRow)
const decodeIds = rowsOf("projects", Schema.Struct({ id: ProjectId }))

export class ProjectsRepo extends Context.Service<ProjectsRepo, ProjectsRepoShape>()("sitehealth/ProjectsRepo") {
  static readonly sql = Layer.effect(
    ProjectsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return ProjectsRepo.of({
        create: Effect.fn("ProjectsRepo.create")(function*(p) {
          return yield* sql`INSERT INTO projects (id, account_id, name, domain, timezone, currency, created_at)
              VALUES (${newId("prj")}, ${p.accountId}, ${p.name}, ${p.domain}, ${p.timezone}, ${p.currency}, ${p.now})
              RETURNING *`.pipe(Effect.flatMap(decodeSingle), Effect.map(toProjectRecord), dieOnSqlError)
        }),
        remove: Effect.fn("ProjectsRepo.remove")(function*(id) {
          if (!looksLikeId(id)) return false
          return yield* sql`DELETE FROM projects WHERE id = ${id} RETURNING id`.pipe(
            Effect.map((rows) => rows.length > 0),
            dieOnSqlError
          )
        }),
        find: Effect.fn("ProjectsRepo.find")(function*(id) {
          if (!looksLikeId(id)) return null
          return yield* sql`SELECT * FROM projects WHERE id = ${id}`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toProjectRecord(r))),
            dieOnSqlError
          )
        }),
        list: Effect.fn("ProjectsRepo.list")(function*(accountId, scope, page) {
          const after = page.after
          return yield* sql`SELECT * FROM projects WHERE account_id = ${accountId}
              ${scope === null ? sql`` : sql`AND id = ANY(${scope as Array<string>})`}
              ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
              ORDER BY created_at, id LIMIT ${page.limit + 1}`.pipe(
            Effect.flatMap(decodeAll),
            Effect.map((rows) => toPage(rows.map(toProjectRecord), page.limit)),
            dieOnSqlError
          )
        }),
        existing: Effect.fn("ProjectsRepo.existing")(function*(accountId, ids) {
          return yield* sql`SELECT id FROM projects WHERE account_id = ${accountId} AND id = ANY(${
            ids.filter(looksLikeId)
          })`.pipe(
            Effect.flatMap(decodeIds),
            Effect.map((rows) => rows.map((r) => r.id)),
            dieOnSqlError
          )
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    ProjectsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      return ProjectsRepo.of({
        create: Effect.fn("ProjectsRepo.create")((p) =>
          Effect.sync(() => {
            const { now, ...rest } = p
            const record: ProjectRecord = { id: newId("prj"), ...rest, createdAt: now }
            db.projects.set(record.id, record)
            return record
          })
        ),
        remove: Effect.fn("ProjectsRepo.remove")((id) =>
          Effect.sync(() => {
            const existed = db.projects.delete(id)
            for (const table of [db.traffic, db.revenue, db.search]) table.delete(id)
            for (const [k, e] of db.expenses) if (e.projectId === id) db.expenses.delete(k)
            for (const [k, i] of db.integrations) if (i.projectId === id) db.integrations.delete(k)
            for (const [k, s] of db.syncRequests) if (s.projectId === id) db.syncRequests.delete(k)
            for (const k of db.answers.keys()) if (k.startsWith(`${id}|`)) db.answers.delete(k)
            return existed
          })
        ),
        find: Effect.fn("ProjectsRepo.find")((id) => Effect.sync(() => db.projects.get(id) ?? null)),
        list: Effect.fn("ProjectsRepo.list")((accountId, scope, page) =>
          Effect.sync(() =>
            pageInMemory(
              [...db.projects.values()].filter((p) =>
                p.accountId === accountId && (scope === null || scope.includes(p.id))
              ),
              page,
              "asc"
            )
          )
        ),
        existing: Effect.fn("ProjectsRepo.existing")((accountId, ids) =>
          Effect.sync(() =>
            ids.flatMap((id) => {
              const p = db.projects.get(id)
              return p !== undefined && p.accountId === accountId ? [p.id] : []
            })
          )
        )
      })
    })
  )
}
