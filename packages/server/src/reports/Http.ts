/** Handlers of the reports group: analytics by period, revenue, churn, SEO — one module per report. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { getAnalytics } from "./Analytics.ts"
import { getChurn, getRevenue } from "./Revenue.ts"
import { getSeo } from "./Seo.ts"

export const ReportsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "reports",
  Effect.fn(function*(handlers) {
    return handlers.handleAll({
      getAnalytics: ({ params, query }) => getAnalytics(params.id, query.period ?? "30d"),
      getRevenue: ({ params, query }) => getRevenue(params.id, query.period ?? "30d"),
      getChurn: ({ params, query }) => getChurn(params.id, query.period ?? "30d"),
      getSeo: ({ params, query }) => getSeo(params.id, query.period ?? "30d")
    })
  })
)
