/** /api/v1's `expenses` group: the costs recorded per project (Api.ts composes it). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { op, projectParams, scoped } from "./ApiOperation.ts"
import { Idempotency } from "./Authentication.ts"
import { PageQuery } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest } from "./Errors.ts"
import { CreateExpense, ExpenseCreated, ExpenseDeleted, ExpenseList } from "./Expenses.ts"

export class ExpensesApi extends HttpApiGroup.make("expenses")
  .add(
    op(
      HttpApiEndpoint.get("listExpenses", "/projects/:id/expenses", {
        params: projectParams,
        query: PageQuery,
        success: Envelope("ExpenseListResponse", ExpenseList),
        error: [...scoped, BadRequest]
      }),
      {
        permission: "expenses:read",
        summary: "Expenses of a project",
        cli: ["expenses", "list"],
        mcp: "list_expenses",
        csv: ["expenses"]
      }
    ),
    op(
      HttpApiEndpoint.post("createExpense", "/projects/:id/expenses", {
        params: projectParams,
        payload: CreateExpense,
        success: Envelope("ExpenseCreatedResponse", ExpenseCreated, { status: 201 }),
        error: scoped
      }).middleware(Idempotency),
      {
        permission: "expenses:write",
        kind: "write",
        summary: "Record an expense",
        cli: ["expenses", "create"],
        mcp: "create_expense"
      }
    ),
    op(
      HttpApiEndpoint.delete("deleteExpense", "/projects/:id/expenses/:expenseId", {
        params: { id: Schema.String, expenseId: Schema.String },
        success: Envelope("ExpenseDeletedResponse", ExpenseDeleted),
        error: scoped
      }),
      {
        permission: "expenses:write",
        kind: "destructive",
        summary: "Delete an expense (kept, marked deleted)",
        cli: ["expenses", "delete"],
        mcp: "delete_expense",
        idempotent: true
      }
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Expenses", description: "Costs recorded per project" }))
{}
