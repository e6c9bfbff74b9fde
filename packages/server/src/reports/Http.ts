/** Handlers of the reports group: analytics by period, revenue, churn, SEO — one module per report. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import type { Period } from "@sitehealth/domain/Common"
import { getAnalytics } from "./Analytics.ts"
import { getChurn, getRevenue } from "./Revenue.ts"
import { getSeo } from "./Seo.ts"

interface ReportRequest {
  readonly params: { readonly id: string }
  readonly query: { readonly period?: Period }
}

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ReportsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions. Default period: 30d.
 */
export const reportsOperations = {
  getAnalytics: ({ params, query }: ReportRequest) => getAnalytics(params.id, query.period ?? "30d"),
  getRevenue: ({ params, query }: ReportRequest) => getRevenue(params.id, query.period ?? "30d"),
  getChurn: ({ params, query }: ReportRequest) => getChurn(params.id, query.period ?? "30d"),
  getSeo: ({ params, query }: ReportRequest) => getSeo(params.id, query.period ?? "30d")
}

export const ReportsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "reports",
  Effect.fn(function*(handlers) {
    return handlers.handleAll(reportsOperations)
  })
)
