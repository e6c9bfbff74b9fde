/**
 * Integrations (list, sync with --wait) and expenses (list, create, delete).
 */
import { CreateExpense, EXPENSE_CATEGORIES } from "@sitehealth/domain/Expenses"
import { PROVIDERS, SYNC_MODES, type SyncRun } from "@sitehealth/domain/Integrations"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { EXIT, localFailure } from "../Failure.ts"
import * as Render from "../Render.ts"
import { emit, Json, validate, withApi, writeErr } from "../Session.ts"
import { pageFlags, pageQuery, projectArg } from "./Reads.ts"

const FINISHED: ReadonlyArray<SyncRun["status"]> = ["succeeded", "failed"]

export const syncCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      provider: Argument.Literals("provider", PROVIDERS).pipe(
        Argument.withDescription(`The provider: ${PROVIDERS.join(", ")}`)
      ),
      mode: Flag.Literals("mode", SYNC_MODES).pipe(
        Flag.withDescription(`${SYNC_MODES.join(" or ")} (default incremental)`),
        Flag.optional
      ),
      wait: Flag.Boolean("wait").pipe(
        Flag.withDescription("Show progress until the run ends; exit 1 if it failed"),
        Flag.withDefault(false)
      ),
      timeout: Flag.Int("timeout").pipe(
        Flag.withDescription("With --wait: give up after this many seconds (default 600)"),
        Flag.withDefault(600)
      ),
      interval: Flag.Finite("interval").pipe(
        Flag.withDescription("With --wait: seconds between polls (default 1)"),
        Flag.withDefault(1)
      )
    },
    ({ interval, mode, project, provider, timeout, wait }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const json: boolean = yield* Json
          const queued = yield* call(
            api.integrations.syncIntegration({
              params: { id: project, provider },
              payload: Option.isSome(mode) ? { mode: mode.value } : {}
            })
          )
          if (!wait) {
            return yield* emit(
              queued,
              (s, d) => `${d.alreadyQueued ? "already queued\n" : ""}${Render.syncRun(s, d.sync)}`
            )
          }
          // Poll the integration list (an idempotent GET, retried like any other) until this run has finished.
          let run = queued.sync
          let lastStatus = ""
          const deadline = Date.now() + timeout * 1000
          while (true) {
            if (run.status !== lastStatus) {
              lastStatus = run.status
              if (!json) yield* writeErr(`${new Date().toISOString()}  ${run.provider} ${run.id}: ${run.status}`)
            }
            if (FINISHED.includes(run.status)) break
            if (Date.now() >= deadline) {
              return yield* localFailure(
                EXIT.failure,
                "timeout",
                `run ${run.id} still ${run.status} after ${timeout}s; see \`sitehealth integrations list ${project}\``
              )
            }
            yield* Effect.sleep(Math.max(0.05, interval) * 1000)
            const list = yield* call(api.integrations.listIntegrations({ params: { id: project } }))
            const latest = list.integrations.find((i) => i.provider === provider)?.lastRun ?? null
            // A newer run may have replaced ours as lastRun; ours is then finished.
            if (
              latest !== null && (latest.id === run.id || Date.parse(latest.requestedAt) > Date.parse(run.requestedAt))
            ) {
              run = latest.id === run.id ? latest : { ...run, status: "succeeded" as const }
            }
          }
          yield* emit({ sync: run, alreadyQueued: queued.alreadyQueued }, (s, d) => Render.syncRun(s, d.sync))
          if (run.status === "failed") {
            return yield* localFailure(
              EXIT.failure,
              "sync_failed",
              `sync ${run.id} failed: ${run.error ?? "no reason given"}`
            )
          }
        })
      )
  ).pipe(
    Command.withDescription("Queue a sync of one integration (answers at once; --wait follows it to the end)"),
    Command.withExamples([{
      command: "sitehealth integrations sync prj_3kTMd9qXyVbN2LwP stripe --wait",
      description: "Sync Stripe and wait for it"
    }])
  )

export const listIntegrationsCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg },
    ({ project }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.integrations.listIntegrations({ params: { id: project } })),
          (data) => emit(data, Render.integrations)
        )
      )
  ).pipe(
    Command.withDescription("List a project's integrations with their status and last run"),
    Command.withExamples([{
      command: "sitehealth integrations list prj_3kTMd9qXyVbN2LwP",
      description: "Providers of one project"
    }])
  )

export const createExpenseCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      amount: Flag.String("amount").pipe(Flag.withDescription("Integer amount in minor units (cents): 1250 = 12.50")),
      currency: Flag.String("currency").pipe(
        Flag.withDescription("ISO 4217 code (default: the project's currency)"),
        Flag.optional
      ),
      category: Flag.Literals("category", EXPENSE_CATEGORIES).pipe(
        Flag.withDescription(`One of: ${EXPENSE_CATEGORIES.join(", ")}`)
      ),
      description: Flag.String("description").pipe(Flag.withDescription("What it was for (1–500 characters)")),
      vendor: Flag.String("vendor").pipe(Flag.withDescription("Who was paid"), Flag.optional),
      date: Flag.String("date").pipe(
        Flag.withDescription("Day it was incurred, YYYY-MM-DD (default: today, UTC)"),
        Flag.optional
      ),
      recurrence: Flag.Literals("recurrence", ["one_off", "monthly", "yearly"] as const).pipe(
        Flag.withDescription("one_off, monthly or yearly (default one_off)"),
        Flag.withDefault("one_off" as const)
      )
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const amount = /^-?\d+$/.test(input.amount.trim()) ? Number(input.amount.trim()) : input.amount
          const payload = yield* validate(
            CreateExpense,
            {
              amount,
              category: input.category,
              description: input.description,
              incurredOn: Option.getOrElse(input.date, () => new Date().toISOString().slice(0, 10)),
              recurrence: input.recurrence,
              ...(Option.isSome(input.currency) ? { currency: input.currency.value } : {}),
              ...(Option.isSome(input.vendor) ? { vendor: input.vendor.value } : {})
            },
            "expense"
          )
          const data = yield* call(api.expenses.createExpense({ params: { id: input.project }, payload }))
          yield* emit(data, (s, d) => `created\n${Render.expense(s, d.expense)}`)
        })
      )
  ).pipe(
    Command.withDescription("Record an expense"),
    Command.withExamples([{
      command:
        "sitehealth expenses create prj_3kTMd9qXyVbN2LwP --amount 2900 --category hosting --description \"VPS\" " +
        "--recurrence monthly",
      description: "A 29.00 monthly hosting bill"
    }])
  )

export const listExpensesCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, ...pageFlags },
    ({ project, ...page }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const query = yield* pageQuery(page)
          const data = yield* call(api.expenses.listExpenses({ params: { id: project }, query }))
          yield* emit(data, Render.expenses)
        })
      )
  ).pipe(
    Command.withDescription("List a project's expenses, newest first"),
    Command.withExamples([{
      command: "sitehealth expenses list prj_3kTMd9qXyVbN2LwP --limit 20",
      description: "The last 20"
    }])
  )

export const deleteExpenseCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      expense: Argument.String("expense").pipe(Argument.withDescription("The expense's id (exp_…)"))
    },
    ({ expense, project }) =>
      withApi((api, call) =>
        Effect.flatMap(call(api.expenses.deleteExpense({ params: { id: project, expenseId: expense } })), (data) =>
          emit(data, (s, d) => `deleted\n${Render.expense(s, d.expense)}`))
      )
  ).pipe(
    Command.withDescription("Delete an expense (kept, marked deleted; reports stop counting it)"),
    Command.withExamples([{
      command: "sitehealth expenses delete prj_3kTMd9qXyVbN2LwP exp_9aB…",
      description: "Delete one expense"
    }])
  )
