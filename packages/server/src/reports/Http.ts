/**
 * Handlers of the reports group: analytics by period, revenue, churn, SEO — one module per report. Each is
 * served from its stored answer when that is current (answers/StoredAnswers.ts), after the scope check.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Analytics } from "@sitehealth/domain/Analytics"
import type { Period } from "@sitehealth/domain/Common"
import { Churn, Revenue } from "@sitehealth/domain/Revenue"
import { Seo } from "@sitehealth/domain/Seo"
import { servedStored } from "../answers/StoredAnswers.ts"
import { requireProject } from "../projects/Policy.ts"
import { getAnalytics } from "./Analytics.ts"
import { getChurn, getRevenue } from "./Revenue.ts"
import { getSeo } from "./Seo.ts"

/** The report `endpoint` of a project for a period: its stored answer when current, else computed and kept. */
const report = <S extends Parameters<typeof servedStored>[2], E, R>(
  endpoint: string,
  projectId: string,
  period: Period,
  schema: S,
  compute: (projectId: string, period: Period) => Effect.Effect<S["Type"], E, R>
) =>
  Effect.flatMap(requireProject(projectId), (project) =>
    servedStored(endpoint, project, schema, compute(project.id, period)))

interface ReportRequest {
  readonly params: { readonly id: string }
  readonly query: { readonly period?: Period }
}

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ReportsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions. Default period: 30d. (The dashboard has no access
 * lookup, so it always computes: answers/StoredAnswers.ts serves stored answers to /api/v1 only.)
 */
export const reportsOperations = {
  getAnalytics: ({ params, query }: ReportRequest) => report("getAnalytics", params.id, query.period ?? "30d", Analytics, getAnalytics),
  getRevenue: ({ params, query }: ReportRequest) => report("getRevenue", params.id, query.period ?? "30d", Revenue, getRevenue),
  getChurn: ({ params, query }: ReportRequest) => report("getChurn", params.id, query.period ?? "30d", Churn, getChurn),
  getSeo: ({ params, query }: ReportRequest) => report("getSeo", params.id, query.period ?? "30d", Seo, getSeo)
}

export const ReportsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "reports",
  Effect.fn(function*(handlers) {
    return handlers.handleAll(reportsOperations)
  })
)
