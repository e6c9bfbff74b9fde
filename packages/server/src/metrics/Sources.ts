/**
 * Where each kind of a project's data stands (docs/metrics.md, "No data is not zero"): one rule for the
 * briefing's figures and the dashboard's pages. A kind is `connected` when its rows are there (however they
 * came: a sync, the demo, an import) or its provider has synced successfully at least once (a store with no
 * sales yet has true zeros); `syncing` when a provider of that kind is connected but has not finished a first
 * sync; `not_connected` otherwise. Pure.
 */
import type { DataSources, DataState } from "@sitehealth/domain/Projects"
import type { IntegrationRecord } from "../store/Records.ts"
import type { ProjectSeries } from "../store/Series.ts"

/** Which kind of data each provider gives (as @sitehealth/domain/Integrations lists them). */
const KIND_OF: Record<string, keyof DataSources> = {
  plausible: "analytics",
  stripe: "payments",
  "google-search-console": "search"
}

const stateOf = (
  kind: keyof DataSources,
  hasRows: boolean,
  integrations: ReadonlyArray<Pick<IntegrationRecord, "provider" | "lastSyncedAt">>
): DataState => {
  if (hasRows) return "connected"
  const own = integrations.filter((i) => KIND_OF[i.provider] === kind)
  if (own.some((i) => i.lastSyncedAt !== null)) return "connected"
  return own.length > 0 ? "syncing" : "not_connected"
}

export const dataSources = (
  series: Pick<ProjectSeries, "traffic" | "revenue" | "search">,
  integrations: ReadonlyArray<Pick<IntegrationRecord, "provider" | "lastSyncedAt">>
): DataSources => ({
  analytics: stateOf("analytics", series.traffic.length > 0, integrations),
  payments: stateOf("payments", series.revenue.length > 0, integrations),
  search: stateOf("search", series.search.length > 0, integrations)
})

/** Every kind connected: what a briefing stored before sources were kept is read as (its figures were real). */
export const ALL_CONNECTED: DataSources = { analytics: "connected", payments: "connected", search: "connected" }
