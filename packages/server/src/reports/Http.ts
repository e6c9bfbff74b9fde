/**
 * Handlers of the reports group: analytics by period, revenue, churn, SEO — one module per report. Each is
 * served from its stored answer when that is current (answers/StoredAnswers.ts), after the scope check.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Analytics } from "@sitehealth/domain/Analytics"
import type { Period } from "@sitehealth/domain/Common"
import { Churn, Revenue } from "@sitehealth/domain/Revenue"
import { Seo } from "@sitehealth/domain/Seo"
import { AnswersRepo } from "../answers/AnswersRepo.ts"
import { type AnswerSchema, servedStoredWith } from "../answers/StoredAnswers.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../projects/Policy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { Freshness } from "../snapshots/Freshness.ts"
import { makeGetAnalytics } from "./Analytics.ts"
import { makeRevenueReports } from "./Revenue.ts"
import { makeGetSeo } from "./Seo.ts"

interface ReportRequest {
  readonly params: { readonly id: string }
  readonly query: { readonly period?: Period }
}

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ReportsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions. Default period: 30d. (The dashboard has no access
 * lookup, so it always computes: answers/StoredAnswers.ts serves stored answers to /api/v1 only.) Their
 * services are taken here, once (http/GroupContext.ts).
 */
export const reportsOperations = Effect.gen(function*() {
  const requireProject = requireProjectWith(yield* ProjectsRepo)
  const servedStored = servedStoredWith(yield* Freshness, yield* AnswersRepo)
  const getAnalytics = yield* makeGetAnalytics
  const { getChurn, getRevenue } = yield* makeRevenueReports
  const getSeo = yield* makeGetSeo
  /** The report `endpoint` of a project for a period: its stored answer when current, else computed and kept. */
  const report = <S extends AnswerSchema, E, R>(
    endpoint: string,
    projectId: string,
    period: Period,
    schema: S,
    compute: (projectId: string, period: Period) => Effect.Effect<S["Type"], E, R>
  ) =>
    Effect.flatMap(requireProject(projectId), (project) =>
      servedStored(endpoint, project, schema, compute(project.id, period)))
  return {
    getAnalytics: ({ params, query }: ReportRequest) => report("getAnalytics", params.id, query.period ?? "30d", Analytics, getAnalytics),
    getRevenue: ({ params, query }: ReportRequest) => report("getRevenue", params.id, query.period ?? "30d", Revenue, getRevenue),
    getChurn: ({ params, query }: ReportRequest) => report("getChurn", params.id, query.period ?? "30d", Churn, getChurn),
    getSeo: ({ params, query }: ReportRequest) => report("getSeo", params.id, query.period ?? "30d", Seo, getSeo)
  }
})

export const ReportsHttp = Layer.unwrap(Effect.map(reportsOperations, (operations) =>
  HttpApiBuilder.group(SiteHealthApi, "reports", (handlers) => handlers.handleAll(operations)).pipe(withApiMiddlewaresOnly)))
