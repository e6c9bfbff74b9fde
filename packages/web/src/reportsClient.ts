/**
 * The client for the report pages: /api/v1's operations for the logged-in account's websites (DashboardReports
 * in packages/domain: the same endpoints, under /app/api/websites/:id/…), built from DashboardReportsHttpApi —
 * the reports group alone, as DashboardApi serves it. Only the report pages import this module, so the public
 * contract it carries is loaded with them, not on the first screen (docs/dashboard-web.md, Size). Same fetch
 * client and CSRF header as the shell's (client.ts); the reactivity keys are shared across the clients.
 * Every figure a page shows comes from one of these.
 */
import type { Period } from "@sitehealth/domain/Common"
import { DashboardReportsHttpApi } from "@sitehealth/domain/DashboardReports"
import type { Dimension, Severity } from "@sitehealth/domain/Projects"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, ReportKeys, withCsrf } from "./client.ts"

export class DashboardReports extends AtomHttpApi.Service<DashboardReports>()("sitehealth/web/DashboardReports", {
  api: DashboardReportsHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export { ReportKeys }

export const overviewAtom = DashboardReports.query("reports", "listProjects", {
  query: { limit: 100 },
  reactivityKeys: [ReportKeys.reports, Keys.websites]
})
// A provider connected or disconnected (Keys.connections) changes what the briefing and the health can say.
export const healthAtom = (id: string) =>
  DashboardReports.query("reports", "getHealth", {
    params: { id },
    reactivityKeys: [ReportKeys.reports, Keys.connections]
  })
export const briefingAtom = (id: string) =>
  DashboardReports.query("reports", "getBriefing", {
    params: { id },
    reactivityKeys: [ReportKeys.reports, Keys.connections]
  })
export const signalsAtom = (
  id: string,
  query: { readonly dimension?: Dimension; readonly severity?: Severity; readonly active?: "true" | "false" }
) =>
  DashboardReports.query("reports", "listSignals", {
    params: { id },
    query: { ...query, limit: 100 },
    reactivityKeys: [ReportKeys.reports]
  })
export const analyticsAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getAnalytics", {
    params: { id },
    query: { period },
    reactivityKeys: [ReportKeys.reports]
  })
export const revenueAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getRevenue", {
    params: { id },
    query: { period },
    reactivityKeys: [ReportKeys.reports, ReportKeys.expenses]
  })
export const churnAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getChurn", {
    params: { id },
    query: { period },
    reactivityKeys: [ReportKeys.reports]
  })
export const seoAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getSeo", {
    params: { id },
    query: { period },
    reactivityKeys: [ReportKeys.reports]
  })
export const integrationsAtom = (id: string) =>
  DashboardReports.query("reports", "listIntegrations", {
    params: { id },
    reactivityKeys: [ReportKeys.integrations, Keys.connections]
  })
export const expensesAtom = (id: string) =>
  DashboardReports.query("reports", "listExpenses", {
    params: { id },
    query: { limit: 100 },
    reactivityKeys: [ReportKeys.expenses]
  })
export const syncIntegration = DashboardReports.mutation("reports", "syncIntegration")
export const createExpense = DashboardReports.mutation("reports", "createExpense")
/** A website's annotations, every one (the API's 1,000 at most): the charts mark the days of their own range. */
export const annotationsAtom = (id: string) =>
  DashboardReports.query("reports", "listAnnotations", {
    params: { id },
    query: {},
    reactivityKeys: [ReportKeys.annotations]
  })
export const createAnnotation = DashboardReports.mutation("reports", "createAnnotation")
export const deleteAnnotation = DashboardReports.mutation("reports", "deleteAnnotation")
export const deleteExpense = DashboardReports.mutation("reports", "deleteExpense")
export const webhooksAtom = (id: string) =>
  DashboardReports.query("reports", "listWebhooks", { params: { id }, reactivityKeys: [ReportKeys.webhooks] })
export const deliveriesAtom = (id: string, webhookId: string) =>
  DashboardReports.query("reports", "listWebhookDeliveries", {
    params: { id, webhookId },
    query: { limit: 20 },
    reactivityKeys: [ReportKeys.webhooks]
  })
export const createWebhook = DashboardReports.mutation("reports", "createWebhook")
export const updateWebhook = DashboardReports.mutation("reports", "updateWebhook")
export const deleteWebhook = DashboardReports.mutation("reports", "deleteWebhook")
export const testWebhook = DashboardReports.mutation("reports", "testWebhook")
export const redeliverWebhook = DashboardReports.mutation("reports", "redeliverWebhook")
