/** Handlers of the reports group: analytics by period, revenue, churn, SEO. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SiteHealthApi } from "../../../domain/src/Api.ts"
import type { Period } from "../../../domain/src/Common.ts"
import * as Compute from "../metrics/Compute.ts"
import { loadProject } from "../projects/Policy.ts"

/** Days of rows a period needs: its window and the previous one of the same length, with margin. */
const LOOKBACK: Record<Period, number | null> = {
  today: 4,
  yesterday: 4,
  "7d": 16,
  "30d": 62,
  "3m": 190,
  "12m": 740,
  all: null
}

export const ReportsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "reports",
  Effect.fn(function*(handlers) {
    return handlers.handleAll({
      getAnalytics: ({ params, query }) => {
        const period = query.period ?? "30d"
        return Effect.map(loadProject(params.id, LOOKBACK[period]), (p) =>
          Compute.analytics({
            projectId: p.project.id,
            period,
            today: p.today,
            timezone: p.project.timezone,
            traffic: p.series.traffic,
            firstDay: p.series.traffic[0]?.day ?? null
          }))
      },
      getRevenue: ({ params }) =>
        Effect.map(loadProject(params.id, 400), (p) =>
          Compute.revenue({
            projectId: p.project.id,
            currency: p.project.currency,
            today: p.today,
            revenue: p.series.revenue
          })),
      getChurn: ({ params }) =>
        Effect.map(loadProject(params.id, 75), (p) =>
          Compute.churn({
            projectId: p.project.id,
            currency: p.project.currency,
            today: p.today,
            revenue: p.series.revenue
          })),
      getSeo: ({ params }) =>
        Effect.map(loadProject(params.id, 60), (p) =>
          Compute.seo({ projectId: p.project.id, today: p.today, search: p.series.search }))
    })
  })
)
