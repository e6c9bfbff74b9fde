/** Handlers of the expenses group. */
import { ExpensesApi, SiteHealthApi } from "@sitehealth/domain/Api"
import { DEFAULT_PAGE_SIZE } from "@sitehealth/domain/Common"
import { notFound } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { ExpensesRepo } from "../expenses/ExpensesRepo.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { CSV_PAGE_SIZE, csvRequestOf, csvResponse } from "../reports/Csv.ts"
import { expensesTable } from "../reports/CsvTables.ts"
import { decodeCursor } from "../store/Cursor.ts"
import { newId } from "../store/Ids.ts"
import { expense } from "../store/Present.ts"
import type { ExpenseRecord, Page, PageRequest } from "../store/Records.ts"

type Request<Name extends keyof typeof ExpensesApi.endpoints> = (typeof ExpensesApi.endpoints)[Name]["~Request"]

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ExpensesHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions.
 */
export const expensesOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const expenses = yield* ExpensesRepo
  const requireProject = requireProjectWith(projects)
  const csvRequest = csvRequestOf(ExpensesApi.endpoints.listExpenses)
  /** Every live expense of the project, newest first: a CSV holds the whole list, not a page. */
  const everyExpense = Effect.fn("Expenses.everyExpense")(function*(projectId: string) {
    const all: Array<ReturnType<typeof expense>> = []
    let after: PageRequest["after"] = null
    do {
      const page: Page<ExpenseRecord> = yield* expenses.list(projectId, { limit: CSV_PAGE_SIZE, after })
      all.push(...page.items.map(expense))
      after = page.nextCursor === null ? null : yield* decodeCursor(page.nextCursor)
    } while (after !== null)
    return all
  })

  return {
    listExpenses: ({ params, query }: Pick<Request<"listExpenses">, "params" | "query">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        if ((yield* csvRequest) !== null) return csvResponse(expensesTable(yield* everyExpense(project.id)), "expenses")
        const after = yield* decodeCursor(query.cursor)
        const page = yield* expenses.list(project.id, { limit: query.limit ?? DEFAULT_PAGE_SIZE, after })
        return { expenses: page.items.map(expense), nextCursor: page.nextCursor }
      }),
    createExpense: ({ params, payload }: Pick<Request<"createExpense">, "params" | "payload">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const now = new Date(yield* Clock.currentTimeMillis)
        const created = yield* expenses.insert({
          id: newId("exp"),
          projectId: project.id,
          amountMinor: payload.amount,
          currency: payload.currency ?? project.currency,
          category: payload.category,
          description: payload.description,
          vendor: payload.vendor ?? null,
          incurredOn: payload.incurredOn,
          recurrence: payload.recurrence,
          createdAt: now,
          deletedAt: null
        })
        return { expense: expense(created) }
      }),
    deleteExpense: ({ params }: Pick<Request<"deleteExpense">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const now = new Date(yield* Clock.currentTimeMillis)
        const deleted = yield* expenses.softDelete(project.id, params.expenseId, now)
        if (deleted === null) return yield* Effect.fail(notFound("Expense"))
        return { deleted: true as const, expense: expense(deleted) }
      })
  }
})

export const ExpensesHttp = Layer.unwrap(
  Effect.map(
    expensesOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "expenses", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
