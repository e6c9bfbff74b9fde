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
import { decodeCursor } from "../store/Cursor.ts"
import { newId } from "../store/Ids.ts"
import { expense } from "../store/Present.ts"

type Request<Name extends keyof typeof ExpensesApi.endpoints> = (typeof ExpensesApi.endpoints)[Name]["~Request"]

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ExpensesHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions.
 */
export const expensesOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const expenses = yield* ExpensesRepo
  const requireProject = requireProjectWith(projects)

  return {
    listExpenses: ({ params, query }: Pick<Request<"listExpenses">, "params" | "query">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
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
