/** Expenses. Deleting is soft: the row stays, with deleted_at, so nothing a user stored is lost. */
import { ExpenseId, ProjectId } from "@sitehealth/domain/Common"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { pageInMemory, toPage } from "../store/Cursor.ts"
import { looksLikeId } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { ExpenseRecord, Page, PageRequest } from "../store/Records.ts"
import { Day, dieOnSqlError, firstOf, Instant, Int8, rowsOf, singleOf } from "../store/Sql.ts"

export interface ExpensesRepoShape {
  readonly insert: (e: ExpenseRecord) => Effect.Effect<ExpenseRecord>
  /** Live (not deleted) expenses, newest first. */
  readonly list: (projectId: string, page: PageRequest) => Effect.Effect<Page<ExpenseRecord>>
  /** Marks a live expense of the project deleted; null when there is none. */
  readonly softDelete: (projectId: string, id: string, at: Date) => Effect.Effect<ExpenseRecord | null>
}

const ExpenseRow = Schema.Struct({
  id: ExpenseId,
  project_id: ProjectId,
  amount_minor: Int8,
  currency: Schema.String,
  category: Schema.String,
  description: Schema.String,
  vendor: Schema.NullOr(Schema.String),
  incurred_on: Day,
  recurrence: Schema.Literals(["one_off", "monthly", "yearly"]),
  created_at: Instant,
  deleted_at: Schema.NullOr(Instant)
})

export const toExpenseRecord = (r: typeof ExpenseRow.Type): ExpenseRecord => ({
  id: r.id,
  projectId: r.project_id,
  amountMinor: r.amount_minor,
  currency: r.currency,
  category: r.category,
  description: r.description,
  vendor: r.vendor,
  incurredOn: r.incurred_on,
  recurrence: r.recurrence,
  createdAt: r.created_at,
  deletedAt: r.deleted_at
})

export class ExpensesRepo extends Context.Service<ExpensesRepo, ExpensesRepoShape>()("sitehealth/ExpensesRepo") {
  static readonly sql = Layer.effect(
    ExpensesRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeAll = rowsOf("expenses", ExpenseRow)
      const decodeFirst = firstOf("expenses", ExpenseRow)
      const decodeSingle = singleOf("expenses", ExpenseRow)
      return ExpensesRepo.of({
        insert: Effect.fn("ExpensesRepo.insert")(function*(e) {
          return yield* sql`WITH bump AS (UPDATE projects SET data_version = data_version + 1 WHERE id = ${e.projectId})
              INSERT INTO expenses (id, project_id, amount_minor, currency, category, description, vendor, incurred_on,
                recurrence, created_at)
              VALUES (${e.id}, ${e.projectId}, ${e.amountMinor}, ${e.currency}, ${e.category}, ${e.description},
                      ${e.vendor}, ${e.incurredOn}::date, ${e.recurrence}, ${e.createdAt})
              RETURNING *, to_char(incurred_on, 'YYYY-MM-DD') AS incurred_on`.pipe(
            Effect.flatMap(decodeSingle),
            Effect.map(toExpenseRecord),
            dieOnSqlError
          )
        }),
        list: Effect.fn("ExpensesRepo.list")(function*(projectId, page) {
          const after = page.after
          return yield* sql`SELECT *, to_char(incurred_on, 'YYYY-MM-DD') AS incurred_on FROM expenses
              WHERE project_id = ${projectId} AND deleted_at IS NULL
              ${after === null ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id})`}
              ORDER BY created_at DESC, id DESC LIMIT ${page.limit + 1}`.pipe(
            Effect.flatMap(decodeAll),
            Effect.map((rows) => toPage(rows.map(toExpenseRecord), page.limit)),
            dieOnSqlError
          )
        }),
        softDelete: Effect.fn("ExpensesRepo.softDelete")(function*(projectId, id, at) {
          if (!looksLikeId(id)) return null
          return yield* sql`WITH deleted AS (
                UPDATE expenses SET deleted_at = ${at}
                WHERE id = ${id} AND project_id = ${projectId} AND deleted_at IS NULL RETURNING *
              ), bump AS (
                UPDATE projects SET data_version = data_version + 1
                WHERE id = ${projectId} AND EXISTS (SELECT 1 FROM deleted)
              )
              SELECT *, to_char(incurred_on, 'YYYY-MM-DD') AS incurred_on FROM deleted`.pipe(
            Effect.flatMap(decodeFirst),
            Effect.map((r) => (r === null ? null : toExpenseRecord(r))),
            dieOnSqlError
          )
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    ExpensesRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      return ExpensesRepo.of({
        insert: Effect.fn("ExpensesRepo.insert")((e) =>
          Effect.sync(() => {
            db.expenses.set(e.id, e)
            return e
          })
        ),
        list: Effect.fn("ExpensesRepo.list")((projectId, page) =>
          Effect.sync(() =>
            pageInMemory(
              [...db.expenses.values()].filter((e) => e.projectId === projectId && e.deletedAt === null),
              page,
              "desc"
            )
          )
        ),
        softDelete: Effect.fn("ExpensesRepo.softDelete")((projectId, id, at) =>
          Effect.sync(() => {
            const e = db.expenses.get(id)
            if (!e || e.projectId !== projectId || e.deletedAt !== null) return null
            const next = { ...e, deletedAt: at }
            db.expenses.set(id, next)
            return next
          })
        )
      })
    })
  )
}
