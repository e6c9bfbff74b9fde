/**
 * The overview's client API: the three report operations `/overview` reads — the projects list (health and
 * trend), a website's briefing and its integrations — as `DashboardReportsHttpApi` serves them (the same
 * endpoints, group `reports`, behind the session, same middlewares and prefix), and nothing else. The web app
 * builds the overview's client from it, so the page that `/` leads to loads those three endpoints' schemas,
 * not the whole reports group (analytics, revenue, SEO, expenses…). The server serves `DashboardApi`; this
 * module only describes requests it already answers (checked by the domain's test).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { IntegrationsApi } from "./ApiIntegrations.ts"
import { ProjectsApi } from "./ApiProjects.ts"
import { RequestErrors } from "./Authentication.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { onWebsite } from "./OnWebsite.ts"

export class DashboardOverviewApi extends HttpApiGroup.make("reports").add(
  onWebsite(ProjectsApi.endpoints.listProjects),
  onWebsite(ProjectsApi.endpoints.getBriefing),
  onWebsite(IntegrationsApi.endpoints.listIntegrations)
) {}

export class DashboardOverviewHttpApi extends HttpApi.make("dashboard")
  .add(DashboardOverviewApi.middleware(DashboardSession))
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
