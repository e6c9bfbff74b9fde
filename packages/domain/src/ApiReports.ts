/**
 * /api/v1's `reports` group: analytics, revenue, churn and search reports of a project (Api.ts composes it). Each
 * keeps a stored answer per period (`fastPath`, ApiOperation.ts), served by the hot path's one statement.
 */
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { op, report } from "./ApiOperation.ts"
import { Envelope } from "./Envelope.ts"
import { Analytics, Churn, Revenue, Seo } from "./Reports.ts"

export class ReportsApi extends HttpApiGroup.make("reports")
  .add(
    op(report("getAnalytics", "/projects/:id/analytics", Envelope("AnalyticsResponse", Analytics)), {
      permission: "analytics:read",
      summary: "Traffic analytics for a period",
      cli: ["analytics"],
      mcp: "get_analytics",
      fastPath: { storedAnswer: "period" },
      csv: ["series", "pages", "sources", "countries"]
    }),
    op(report("getRevenue", "/projects/:id/revenue", Envelope("RevenueResponse", Revenue)), {
      permission: "revenue:read",
      summary: "Revenue report",
      cli: ["revenue"],
      mcp: "get_revenue",
      fastPath: { storedAnswer: "period" },
      csv: ["mrr", "failed_payments", "forecast"]
    }),
    op(report("getChurn", "/projects/:id/churn", Envelope("ChurnResponse", Churn)), {
      permission: "revenue:read",
      summary: "Churn report",
      cli: ["churn"],
      mcp: "get_churn",
      fastPath: { storedAnswer: "period" },
      csv: ["churned"]
    }),
    op(report("getSeo", "/projects/:id/seo", Envelope("SeoResponse", Seo)), {
      permission: "seo:read",
      summary: "Search (SEO) report",
      cli: ["seo"],
      mcp: "get_seo",
      fastPath: { storedAnswer: "period" },
      csv: ["series", "queries", "pages"]
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Reports", description: "Analytics, revenue, churn and search reports" }))
{}
