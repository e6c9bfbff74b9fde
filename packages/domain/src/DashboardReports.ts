/**
 * The report operations of /api/v1, for the dashboard: the SAME endpoints — their params, query, payload,
 * success and error schemas, taken from SiteHealthApi itself — re-homed under the dashboard's prefix, with a
 * website in the path instead of a project:
 *
 *   GET  /api/v1/projects                          → GET  /app/api/websites/health            (listProjects)
 *   ANY  /api/v1/projects/:id/<rest>               → ANY  /app/api/websites/:id/<rest>         (the others)
 *
 * behind the session cookie (DashboardSession) instead of a token. Only the authentication differs: the
 * server answers each with the very services /api/v1's handlers call (server src/dashboard/reports/), so a
 * figure on a page is the API's figure. The account's entitlement still applies (402 `trial_expired`, as on
 * /api/v1); the token-only middlewares (rate limit, permissions, Idempotency-Key) do not — a session reaches
 * every website of its account with every permission, as the dashboard already does for tokens and
 * connections. Endpoint names are /api/v1's (`getHealth`, `getAnalytics`, `createExpense`…), in one group,
 * `reports`: `client.reports.getAnalytics({ params: { id }, query: { period } })`. The Alerts page's webhook and
 * Slack destinations are /api/v1's webhooks operations too (`listWebhooks`, `updateWebhook`, `redeliverWebhook`…).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { AnnotationsApi } from "./ApiAnnotations.ts"
import { ExpensesApi } from "./ApiExpenses.ts"
import { IntegrationsApi } from "./ApiIntegrations.ts"
import { ProjectsApi } from "./ApiProjects.ts"
import { ReportsApi } from "./ApiReports.ts"
import { WebhooksApi } from "./ApiWebhooks.ts"
import { RequestErrors } from "./Authentication.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { access } from "./DashboardRoles.ts"
import { onWebsite } from "./OnWebsite.ts"

export { type OnWebsite, onWebsite, websitePath } from "./OnWebsite.ts"

const p = ProjectsApi.endpoints
const r = ReportsApi.endpoints
const i = IntegrationsApi.endpoints
const e = ExpensesApi.endpoints
const a = AnnotationsApi.endpoints
const w = WebhooksApi.endpoints

/** The /api/v1 operations the report pages read, under /app/api/websites (session auth is added by DashboardApi). */
export class DashboardReportsApi extends HttpApiGroup.make("reports")
  .add(
    access("viewer", onWebsite(p.listProjects)),
    access("viewer", onWebsite(p.getHealth)),
    access("viewer", onWebsite(p.getBriefing)),
    access("viewer", onWebsite(p.listSignals)),
    access("viewer", onWebsite(r.getAnalytics)),
    access("viewer", onWebsite(r.getRevenue)),
    access("viewer", onWebsite(r.getChurn)),
    access("viewer", onWebsite(r.getSeo)),
    access("viewer", onWebsite(i.listIntegrations)),
    access("admin", onWebsite(i.syncIntegration)),
    access("viewer", onWebsite(e.listExpenses)),
    access("admin", onWebsite(e.createExpense)),
    access("admin", onWebsite(e.deleteExpense)),
    access("viewer", onWebsite(a.listAnnotations)),
    access("admin", onWebsite(a.createAnnotation)),
    access("admin", onWebsite(a.updateAnnotation)),
    access("admin", onWebsite(a.deleteAnnotation)),
    access("viewer", onWebsite(w.listWebhooks)),
    access("admin", onWebsite(w.createWebhook)),
    access("admin", onWebsite(w.updateWebhook)),
    access("admin", onWebsite(w.deleteWebhook)),
    access("admin", onWebsite(w.testWebhook)),
    access("viewer", onWebsite(w.listWebhookDeliveries)),
    access("admin", onWebsite(w.redeliverWebhook))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Reports",
    description:
      "The /api/v1 report operations (health, briefing, signals, analytics, revenue, churn, SEO, integrations, " +
      "expenses, annotations, webhooks) for the logged-in account's websites"
  }))
{}

/**
 * The reports group alone, as `DashboardApi` serves it (behind the session, same middlewares and prefix): the
 * web app's client for the report pages, loaded with them, so the first screen does not carry /api/v1's
 * contract.
 */
export class DashboardReportsHttpApi extends HttpApi.make("dashboard")
  .add(DashboardReportsApi.middleware(DashboardSession))
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
