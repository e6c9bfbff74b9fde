/**
 * The dashboard's `reports` group: the same four reports as /api/v1's `reports` group (analytics, revenue,
 * churn, SEO), with the same query (`period`, default 30d) and the same answer schemas, for the logged-in
 * owner of the website (DashboardSession) instead of a bearer token. The server answers them with the very
 * services the /api/v1 handlers call (packages/server/src/reports), so a figure on a page is the API's figure.
 *
 * Endpoint names are /api/v1's (`getAnalytics`, `getRevenue`, `getChurn`, `getSeo`).
 *
 * A website of another account, or none, is 404 `not_found`. The group carries no middleware of its own:
 * DashboardApi adds it behind `DashboardSession`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Period } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { Forbidden, NotFound } from "./Errors.ts"
import { doc } from "./Documented.ts"
import { Analytics, Churn, Revenue, Seo } from "./Reports.ts"

const report = <const Id extends string, const Path extends `/websites/:id/${string}`, Success extends Schema.Top>(
  identifier: Id,
  path: Path,
  success: Success
) =>
  HttpApiEndpoint.get(identifier, path, {
    params: { id: Schema.String },
    query: { period: Schema.optionalKey(Period) },
    success,
    error: [NotFound, Forbidden]
  })

export class DashboardReportsApi extends HttpApiGroup.make("reports")
  .add(
    doc(report("getAnalytics", "/websites/:id/analytics", Envelope("AnalyticsResponse", Analytics)), "Traffic analytics for a period (as GET /api/v1/projects/{id}/analytics)"),
    doc(report("getRevenue", "/websites/:id/revenue", Envelope("RevenueResponse", Revenue)), "Revenue report (as GET /api/v1/projects/{id}/revenue)"),
    doc(report("getChurn", "/websites/:id/churn", Envelope("ChurnResponse", Churn)), "Churn report (as GET /api/v1/projects/{id}/churn)"),
    doc(report("getSeo", "/websites/:id/seo", Envelope("SeoResponse", Seo)), "Search (SEO) report (as GET /api/v1/projects/{id}/seo)")
  )
  .annotateMerge(OpenApi.annotations({ title: "Reports", description: "Analytics, revenue, churn and search reports of a website" })) {}
