/**
 * Handlers of the reports group: analytics by period, revenue, churn, SEO — one module per report. Each is
 * served from its stored answer when that is current (access/StoredAnswers.ts), after the scope check; the
 * stored answers are known by the endpoint objects of the contract (`ReportsApi.endpoints.…`), not by name.
 */
import { Analytics } from "@sitehealth/domain/Analytics"
import { ReportsApi, SiteHealthApi } from "@sitehealth/domain/Api"
import type { Period } from "@sitehealth/domain/Common"
import { Churn, Revenue } from "@sitehealth/domain/Revenue"
import { Seo } from "@sitehealth/domain/Seo"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { type AnswerEndpoint, type AnswerSchema, servedStoredWith } from "../access/StoredAnswers.ts"
import { AnswersRepo } from "../answers/AnswersRepo.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { Freshness } from "../recompute/Freshness.ts"
import { makeGetAnalytics } from "../reports/Analytics.ts"
import { csvRequestOf, csvResponse, type CsvTable } from "../reports/Csv.ts"
import { analyticsTable, churnTable, revenueTable, seoTable } from "../reports/CsvTables.ts"
import { makeRevenueReports } from "../reports/Revenue.ts"
import { makeGetSeo } from "../reports/Seo.ts"

interface ReportRequest {
  readonly params: { readonly id: string }
  readonly query: { readonly period?: Period }
}

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ReportsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions. Default period: 30d. (The dashboard has no access
 * lookup, so it always computes: access/StoredAnswers.ts serves stored answers to /api/v1 only.) Their
 * services are taken here, once (http/GroupContext.ts).
 */
export const reportsOperations = Effect.gen(function*() {
  const requireProject = requireProjectWith(yield* ProjectsRepo)
  const servedStored = servedStoredWith(yield* Freshness, yield* AnswersRepo)
  const getAnalytics = yield* makeGetAnalytics
  const { getChurn, getRevenue } = yield* makeRevenueReports
  const getSeo = yield* makeGetSeo
  /**
   * The handler of the report `endpoint` (the contract's endpoint object, whose `FastPath` annotation keys its
   * stored answers): a project's report for a period, its stored answer when current, else computed and kept.
   * A CSV request (`?format=csv`, `Accept: text/csv`; its `CsvExport` annotation names the tables) is computed
   * and written as `table` of the report: never the stored answer, which is JSON.
   */
  const report = <S extends AnswerSchema, E, R>(
    endpoint: AnswerEndpoint,
    schema: S,
    compute: (projectId: string, period: Period) => Effect.Effect<S["Type"], E, R>,
    table: (report: S["Type"], table: string) => CsvTable
  ) => {
    const served = servedStored(endpoint, schema)
    const csvRequest = csvRequestOf(endpoint)
    const name = endpoint.identifier.replace(/^get/u, "").toLowerCase()
    return ({ params, query }: ReportRequest) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const period = query.period ?? "30d"
        const csv = yield* csvRequest
        if (csv === null) return yield* served(project, compute(project.id, period))
        const value = yield* compute(project.id, period)
        return csvResponse(table(value, csv.table), `${name}-${period}-${csv.table}`)
      })
  }
  const endpoints = ReportsApi.endpoints
  return {
    getAnalytics: report(endpoints.getAnalytics, Analytics, getAnalytics, analyticsTable),
    getRevenue: report(endpoints.getRevenue, Revenue, getRevenue, revenueTable),
    getChurn: report(endpoints.getChurn, Churn, getChurn, churnTable),
    getSeo: report(endpoints.getSeo, Seo, getSeo, seoTable)
  }
})

export const ReportsHttp = Layer.unwrap(
  Effect.map(
    reportsOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "reports", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
