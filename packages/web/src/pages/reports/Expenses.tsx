/**
 * A website's expenses and profit (`/websites/:id/expenses`): the expenses (one-off, monthly, yearly; in any
 * currency), a form to add one and a button to delete each; and profit = net revenue − expenses over the
 * last 7 days, 30 days, 3 months and 12 months — each row /api/v1's revenue report for that period
 * (`profitability`), converted into the reporting currency with the stored rates.
 */
import { useAtomValue } from "@effect/atom-react"
import type { Period } from "@sitehealth/domain/Common"
import { type Expense, EXPENSE_CATEGORIES } from "@sitehealth/domain/Expenses"
import type { Revenue } from "@sitehealth/domain/Revenue"
import { Exit } from "effect"
import { AsyncResult, Atom } from "effect/reactivity"
import { useMemo, useState } from "react"
import { Field, formValues } from "../../forms.tsx"
import { useMutation } from "../../hooks.ts"
import { Link, setQuery, useLocation, websiteHref } from "../../navigation.tsx"
import { createExpense, deleteExpense, expensesAtom, ReportKeys, revenueAtom } from "../../reportsClient.ts"
import { Can, useCan } from "../../roles.tsx"
import { MutationStatus } from "../../ui.tsx"
import { ListDownload } from "./Downloads.tsx"
import { Busy, formatDay, formatMoney, formatPercent, Outcome, settled, type WebsitePageProps } from "./shared.tsx"

const RECURRENCE = { one_off: "One-off", monthly: "Monthly", yearly: "Yearly" } as const
const COMMON_CURRENCIES = ["USD", "EUR", "GBP", "CAD", "AUD", "CHF", "JPY", "SEK", "NOK", "DKK", "PLN", "BRL", "INR"]
const PROFIT_PERIODS: ReadonlyArray<readonly [Period, string]> = [["7d", "Last 7 days"], ["30d", "Last 30 days"], [
  "3m",
  "Last 3 months"
], ["12m", "Last 12 months"]]

/** Minor units per major unit of a currency (100 for EUR, 1 for JPY). */
const minorPerMajor = (currency: string) => {
  try {
    return 10 **
      (new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2)
  } catch {
    return 100
  }
}

const today = () => new Date().toISOString().slice(0, 10)

const AddExpense = ({ website }: WebsitePageProps) => {
  const [result, run] = useMutation(createExpense)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section className="panel" aria-labelledby="add-expense-heading">
      <h2 id="add-expense-heading">Add an expense</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          setNotice(null)
          const form = event.currentTarget
          const v = formValues(form)
          const currency = v.get("currency").trim().toUpperCase()
          const amount = Math.round(Number(v.get("amount").replace(",", ".")) * minorPerMajor(currency))
          const vendor = v.get("vendor").trim()
          const exit = await run({
            params: { id: website.id },
            payload: {
              amount,
              currency,
              category: v.get("category") as Expense["category"],
              description: v.get("description").trim(),
              ...(vendor === "" ? {} : { vendor }),
              incurredOn: v.get("incurredOn"),
              recurrence: v.get("recurrence") as Expense["recurrence"]
            },
            reactivityKeys: [ReportKeys.expenses]
          })
          if (Exit.isSuccess(exit)) {
            setNotice(`Added “${exit.value.expense.description}”.`)
            form.reset()
          }
        }}
      >
        <MutationStatus result={result} />
        {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
        <div className="form-grid">
          <Field label="Description">
            <input name="description" required maxLength={500} />
          </Field>
          <Field label="Amount" hint="In the currency below, e.g. 49.90">
            <input name="amount" required inputMode="decimal" pattern="[0-9]+([.,][0-9]{1,3})?" />
          </Field>
          <Field label="Currency" hint="Any ISO 4217 code">
            <input
              name="currency"
              required
              defaultValue={website.currency}
              list="expense-currencies"
              pattern="[A-Za-z]{3}"
              maxLength={3}
              autoCapitalize="characters"
              spellCheck={false}
            />
          </Field>
          <Field label="Category">
            <select name="category" defaultValue="software">
              {EXPENSE_CATEGORIES.map((c) => <option key={c} value={c}>{c.replace("_", " ")}</option>)}
            </select>
          </Field>
          <Field label="Recurrence">
            <select name="recurrence" defaultValue="monthly">
              {Object.entries(RECURRENCE).map(([k, label]) => <option key={k} value={k}>{label}</option>)}
            </select>
          </Field>
          <Field label="Date" hint="When it was incurred (the first occurrence of a recurring one)">
            <input name="incurredOn" type="date" required defaultValue={today()} />
          </Field>
          <Field label="Vendor (optional)">
            <input name="vendor" maxLength={200} />
          </Field>
        </div>
        <datalist id="expense-currencies">{COMMON_CURRENCIES.map((c) => <option key={c} value={c} />)}</datalist>
        <div className="row">
          <button type="submit" disabled={result.waiting}>{result.waiting ? "Adding…" : "Add expense"}</button>
        </div>
      </form>
    </section>
  )
}

const ExpenseRow = (
  { website, expense }: { readonly website: WebsitePageProps["website"]; readonly expense: Expense }
) => {
  const [result, run] = useMutation(deleteExpense)
  const [confirming, setConfirming] = useState(false)
  const admin = useCan("admin")
  return (
    <tr data-expense={expense.id}>
      <th scope="row" data-label="Expense">
        {expense.description}
        {expense.vendor !== null ? <div className="muted small">{expense.vendor}</div> : null}
      </th>
      <td data-label="Amount" className="num">{formatMoney(expense.amount, expense.currency)}</td>
      <td data-label="Recurrence">{RECURRENCE[expense.recurrence]}</td>
      <td data-label="Category">{expense.category.replace("_", " ")}</td>
      <td data-label="Date">{formatDay(expense.incurredOn)}</td>
      <td data-label="Actions">
        <MutationStatus result={result} />
        {!admin ? null : confirming
          ? (
            <div className="row">
              <button
                type="button"
                className="danger"
                disabled={result.waiting}
                onClick={() =>
                  run({ params: { id: website.id, expenseId: expense.id }, reactivityKeys: [ReportKeys.expenses] })}
              >
                Yes, delete
              </button>
              <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
            </div>
          )
          : (
            <button
              type="button"
              className="secondary"
              onClick={() => setConfirming(true)}
              aria-label={`Delete ${expense.description}`}
            >
              Delete
            </button>
          )}
      </td>
    </tr>
  )
}

const ProfitCells = ({ profit: p }: { readonly profit: Revenue["profitability"] }) => (
  <>
    <td data-label="Net revenue" className="num" data-testid="revenue">
      {formatMoney(p.revenueNet.amount, p.revenueNet.currency)}
    </td>
    <td data-label="Expenses" className="num" data-testid="expenses">
      {formatMoney(p.expenses.amount, p.expenses.currency)}
      {p.unconvertedExpenses.length > 0
        ? (
          <div className="muted small">
            plus {p.unconvertedExpenses.map((m) => formatMoney(m.amount, m.currency)).join(", ")}{" "}
            without an exchange rate
          </div>
        )
        : null}
    </td>
    <td data-label="Profit" className={`num ${p.profit.amount < 0 ? "negative" : ""}`} data-testid="profit">
      {formatMoney(p.profit.amount, p.profit.currency)}
    </td>
    <td data-label="Margin" className="num">{formatPercent(p.margin)}</td>
  </>
)

const Profit = ({ website }: WebsitePageProps) => {
  const atoms = useMemo(() => PROFIT_PERIODS.map(([p]) => revenueAtom(website.id, p)), [website.id])
  const all = useMemo(() => Atom.make((get) => atoms.map((a) => get(a))), [atoms])
  const results = useAtomValue(all)
  return (
    <table className="cards profit">
      <caption className="sr-only">Profit: net revenue minus expenses, in {website.currency}</caption>
      <thead>
        <tr>
          <th scope="col">Period</th>
          <th scope="col">Net revenue</th>
          <th scope="col">Expenses</th>
          <th scope="col">Profit</th>
          <th scope="col">Margin</th>
        </tr>
      </thead>
      <tbody>
        {PROFIT_PERIODS.map(([period, label], i) => (
          <tr key={period} data-period={period}>
            <th scope="row" data-label="Period">{label}</th>
            {AsyncResult.isSuccess(results[i]!)
              ? <ProfitCells profit={results[i]!.value.profitability} />
              : (
                <td colSpan={4}>
                  <Outcome atom={atoms[i]!} result={results[i]!} what={`the profit of the ${label.toLowerCase()}`}>
                    {() => null}
                  </Outcome>
                </td>
              )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export default function ExpensesPage({ website }: WebsitePageProps) {
  const { query } = useLocation()
  const atom = useMemo(() => expensesAtom(website.id), [website.id])
  const list = useAtomValue(atom)
  const adding = query.get("add") === "1"
  const admin = useCan("admin")
  return (
    <>
      <div className="row spread">
        <h1>Expenses and profit</h1>
        {adding ? null : (
          <Can level="admin">
            <button type="button" onClick={() => setQuery("add", "1")}>Add an expense</button>
          </Can>
        )}
      </div>
      <ListDownload id={website.id} list="expenses" label="Download every expense as CSV" />
      <Busy busy={!settled(list)} />
      <Can level="admin" what="adding and deleting expenses">{null}</Can>
      {adding && admin
        ? (
          <>
            <AddExpense website={website} />
            <p>
              <button type="button" className="secondary" onClick={() => setQuery("add", null)}>Close the form</button>
            </p>
          </>
        )
        : null}
      <section className="panel" aria-labelledby="profit-heading">
        <h2 id="profit-heading">Profit</h2>
        <p className="muted">
          Net revenue (charges − refunds) minus the expenses attributed to each period, in {website.currency}.
        </p>
        <Profit website={website} />
      </section>
      <section className="panel" aria-labelledby="expenses-heading">
        <h2 id="expenses-heading">Expenses</h2>
        <Outcome atom={atom} result={list} what="the expenses">
          {({ expenses, nextCursor }) =>
            expenses.length === 0
              ? <p>No expense recorded. Add hosting, software, contractors… to see the profit, not just the revenue.</p>
              : (
                <table className="cards expenses">
                  <thead>
                    <tr>
                      <th scope="col">Expense</th>
                      <th scope="col">Amount</th>
                      <th scope="col">Recurrence</th>
                      <th scope="col">Category</th>
                      <th scope="col">Date</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {expenses.map((e) => <ExpenseRow key={e.id} website={website} expense={e} />)}
                  </tbody>
                  {nextCursor !== null
                    ? <caption>The newest {expenses.length} expenses (every expense counts in the profit).</caption>
                    : null}
                </table>
              )}
        </Outcome>
        <p className="muted">
          Profit uses the revenue from{" "}
          <Link href={websiteHref(website.id, "revenue")}>Revenue</Link>; expenses in another currency are converted
          with the stored exchange rates.
        </p>
      </section>
    </>
  )
}
