/**
 * The overview's client (`/overview`, where `/` leads): the three report operations it reads, built from
 * DashboardOverviewHttpApi (packages/domain: the same endpoints as the reports client's, `reports` group, and
 * only those), so the first screen after logging in loads their schemas and not the whole reports group's
 * (docs/dashboard-web.md, Size). Same fetch client and CSRF header as the shell's; the reactivity keys are
 * the reports client's, so what re-runs its queries re-runs these.
 */
import { DashboardOverviewHttpApi } from "@sitehealth/domain/DashboardOverview"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, ReportKeys, withCsrf } from "./client.ts"

export class DashboardOverview extends AtomHttpApi.Service<DashboardOverview>()("sitehealth/web/DashboardOverview", {
  api: DashboardOverviewHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const overviewAtom = DashboardOverview.query("reports", "listProjects", {
  query: { limit: 100 },
  reactivityKeys: [ReportKeys.reports, Keys.websites]
})
export const overviewBriefingAtom = (id: string) =>
  DashboardOverview.query("reports", "getBriefing", { params: { id }, reactivityKeys: [ReportKeys.reports] })
export const overviewIntegrationsAtom = (id: string) =>
  DashboardOverview.query("reports", "listIntegrations", {
    params: { id },
    reactivityKeys: [ReportKeys.integrations, Keys.connections]
  })
