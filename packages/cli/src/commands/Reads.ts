/**
 * The read commands: projects, health, briefing, signals and the four reports. Each validates its flags
 * against the contract's schemas, makes one request and prints the data.
 */
import { PageQuery, PERIODS } from "@sitehealth/domain/Common"
import { DIMENSIONS, SEVERITIES } from "@sitehealth/domain/Projects"
import { Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Render from "../Render.ts"
import { emit, validate, withApi } from "../Session.ts"

export const projectArg = Argument.String("project").pipe(
  Argument.withDescription("The project's id (prj_…); see `sitehealth projects list`")
)

export const pageFlags = {
  limit: Flag.String("limit").pipe(Flag.withDescription("Page size, 1–100 (default 50)"), Flag.optional),
  cursor: Flag.String("cursor").pipe(Flag.withDescription("The nextCursor of a previous page"), Flag.optional)
}

const PageQuerySchema = Schema.Struct(PageQuery)

/** --limit/--cursor decoded by the contract's own page query schema (a bad limit never reaches the server). */
export const pageQuery = (input: { readonly limit: Option.Option<string>; readonly cursor: Option.Option<string> }) =>
  validate(
    PageQuerySchema,
    {
      ...(Option.isSome(input.limit) ? { limit: input.limit.value } : {}),
      ...(Option.isSome(input.cursor) ? { cursor: input.cursor.value } : {})
    },
    "--limit/--cursor"
  )

type Api = Parameters<Parameters<typeof withApi>[0]>[0]

/** A list command: --limit/--cursor checked as above, one request for that page, the page printed. */
export const pagedList = <A>(
  name: string,
  request: (api: Api, query: typeof PageQuerySchema.Type) => Effect.Effect<A, unknown, never>,
  render: (style: Render.StyleOf, data: A) => string
) =>
  Command.make(name, pageFlags, (flags) =>
    withApi((api, call) =>
      Effect.gen(function*() {
        const query = yield* pageQuery(flags)
        yield* emit(yield* call(request(api, query)), render)
      })
    ))

const periodFlag = Flag.Literals("period", PERIODS).pipe(
  Flag.withDescription(`Reporting period: ${PERIODS.join(", ")} (default 30d)`),
  Flag.optional
)

const periodQuery = (
  period: Option.Option<(typeof PERIODS)[number]>
) => (Option.isSome(period) ? { period: period.value } : {})

export const listProjectsCommand = (name: string) =>
  pagedList(name, (api, query) => api.projects.listProjects({ query }), Render.projects).pipe(
    Command.withDescription("List projects with their health score and 30-day trend"),
    Command.withExamples([{ command: "sitehealth projects list", description: "All projects in a table" }, {
      command: "sitehealth projects list --json | jq '.projects[].id'",
      description: "Just the ids"
    }])
  )

export const healthCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg },
    ({ project }) =>
      withApi((api, call) =>
        Effect.flatMap(call(api.projects.getHealth({ params: { id: project } })), (data) => emit(data, Render.health))
      )
  ).pipe(
    Command.withDescription("Health score, confidence and the score of each dimension"),
    Command.withExamples([{ command: "sitehealth health prj_3kTMd9qXyVbN2LwP", description: "One project's health" }])
  )

export const briefingCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg },
    ({ project }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.projects.getBriefing({ params: { id: project } })),
          (data) => emit(data, Render.briefing)
        )
      )
  ).pipe(
    Command.withDescription("Morning briefing: yesterday's figures against the usual, and what to do first"),
    Command.withExamples([{ command: "sitehealth briefing prj_3kTMd9qXyVbN2LwP", description: "Today's briefing" }])
  )

export const signalsCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      dimension: Flag.Literals("dimension", DIMENSIONS).pipe(
        Flag.withDescription(`Only this dimension: ${DIMENSIONS.join(", ")}`),
        Flag.optional
      ),
      severity: Flag.Literals("severity", SEVERITIES).pipe(
        Flag.withDescription(`Only this severity: ${SEVERITIES.join(", ")}`),
        Flag.optional
      ),
      active: Flag.Literals("active", ["true", "false"] as const).pipe(
        Flag.withDescription("Only active (true) or resolved (false) signals"),
        Flag.optional
      ),
      ...pageFlags
    },
    ({ active, dimension, project, severity, ...page }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const query = {
            ...(yield* pageQuery(page)),
            ...(Option.isSome(dimension) ? { dimension: dimension.value } : {}),
            ...(Option.isSome(severity) ? { severity: severity.value } : {}),
            ...(Option.isSome(active) ? { active: active.value } : {})
          }
          const data = yield* call(api.projects.listSignals({ params: { id: project }, query }))
          yield* emit(data, Render.signals)
        })
      )
  ).pipe(
    Command.withDescription("Signals (anomalies, declines, drops), optionally filtered"),
    Command.withExamples([{
      command: "sitehealth signals prj_3kTMd9qXyVbN2LwP --dimension revenue --severity critical",
      description: "Critical revenue signals"
    }])
  )

const report = <A>(
  description: string,
  request: (api: Api, id: string, query: { period?: (typeof PERIODS)[number] }) => Effect.Effect<A, unknown, never>,
  render: (style: Render.StyleOf, data: A) => string,
  example: string
) =>
(name: string) =>
  Command.make(
    name,
    { project: projectArg, period: periodFlag },
    ({ period, project }) =>
      withApi((api, call) =>
        Effect.flatMap(call(request(api, project, periodQuery(period))), (data) => emit(data, render))
      )
  ).pipe(
    Command.withDescription(description),
    Command.withExamples([{
      command: `sitehealth ${name} prj_3kTMd9qXyVbN2LwP ${example}`,
      description: `${description}, ${example}`
    }])
  )

export const analyticsCommand = report(
  "Traffic: visitors, pageviews, sessions with a sparkline, top pages and sources",
  (api, id, query) => api.reports.getAnalytics({ params: { id }, query }),
  Render.analytics,
  "--period 7d"
)

export const revenueCommand = report(
  "Revenue: MRR with its 12-month sparkline, ARR, movements, retention, profitability",
  (api, id, query) => api.reports.getRevenue({ params: { id }, query }),
  Render.revenue,
  "--period 3m"
)

export const churnCommand = report(
  "Churn: customer and MRR churn rates against the previous window, churned customers",
  (api, id, query) => api.reports.getChurn({ params: { id }, query }),
  Render.churn,
  "--period 30d"
)

export const seoCommand = report(
  "Search: clicks, impressions, CTR, position and top queries",
  (api, id, query) => api.reports.getSeo({ params: { id }, query }),
  Render.seo,
  "--period 30d"
)
