/** Expenses a project's owner records, for profitability. */
import * as Schema from "effect/Schema"
import { Currency, DateOnly, ExpenseId, Integer, NextCursor, ProjectId, Text, Timestamp } from "./Common.ts"

export const EXPENSE_CATEGORIES = [
  "hosting",
  "software",
  "advertising",
  "marketing",
  "contractors",
  "payroll",
  "payment_fees",
  "domains",
  "office",
  "taxes",
  "other"
] as const
export const ExpenseCategory = Schema.Literals(EXPENSE_CATEGORIES).annotate({ identifier: "ExpenseCategory" })
export type ExpenseCategory = typeof ExpenseCategory.Type
export const Recurrence = Schema.Literals(["one_off", "monthly", "yearly"]).annotate({ identifier: "Recurrence" })

const knownCurrencies = new Set(Intl.supportedValuesOf("currency"))
// The `arbitraryConstraint` hints only guide values generated from the schema (`effect/Arbitrary`, used by the
// fuzz tests): a random three-letter code or YYYY-MM-DD is almost never a currency or a calendar date, so
// generation would give up. Validation is unchanged: the filters below still decide.
export const KnownCurrency = Currency.check(
  Schema.makeFilter((code: string) => knownCurrencies.has(code) || `unknown ISO 4217 currency "${code}"`, {
    arbitraryConstraint: { patterns: [{ source: `^(?:${[...knownCurrencies].join("|")})$`, flags: "" }] }
  })
)

/** A real calendar date (2026-02-30 is rejected) between 1900-01-01 and 2999-12-31. */
export const RealDate = DateOnly.check(
  Schema.makeFilter((s: string) => {
    const d = new Date(`${s}T00:00:00Z`)
    return (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s) || `"${s}" is not a calendar date`
  }, {
    // Days 01–28 exist in every month of every year from 1900 to 2999.
    arbitraryConstraint: {
      patterns: [{ source: "^(?:19|2\\d)\\d\\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\\d|2[0-8])$", flags: "" }]
    }
  }),
  Schema.makeFilter((s: string) =>
    (s >= "1900-01-01" && s <= "2999-12-31") || "must be between 1900-01-01 and 2999-12-31"
  )
)

export const Expense = Schema.Struct({
  id: ExpenseId,
  projectId: ProjectId,
  amount: Integer.annotate({ description: "Minor units (cents), > 0" }),
  currency: Schema.String,
  category: ExpenseCategory,
  description: Schema.String,
  vendor: Schema.NullOr(Schema.String),
  incurredOn: DateOnly,
  recurrence: Recurrence,
  createdAt: Timestamp,
  deletedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Expense" })
export type Expense = typeof Expense.Type

export const CreateExpense = Schema.Struct({
  amount: Integer.check(Schema.isBetween({ minimum: 1, maximum: 100_000_000_000 })).annotate({
    description: "Integer minor units, 1 to 100,000,000,000"
  }),
  currency: Schema.optionalKey(KnownCurrency.annotate({ description: "Default: the project's currency" })),
  category: ExpenseCategory,
  description: Text(500),
  vendor: Schema.optionalKey(Schema.NullOr(Text(200))),
  incurredOn: RealDate,
  recurrence: Recurrence
}).annotate({ identifier: "CreateExpense" })
export type CreateExpense = typeof CreateExpense.Type

export const ExpenseList = Schema.Struct({ expenses: Schema.Array(Expense), nextCursor: NextCursor })
export const ExpenseCreated = Schema.Struct({ expense: Expense })
export const ExpenseDeleted = Schema.Struct({ deleted: Schema.Literal(true), expense: Expense })
