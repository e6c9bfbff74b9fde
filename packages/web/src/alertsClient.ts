/**
 * The client for the alerts group (DashboardAlertsHttpApi: that group alone, as DashboardApi serves it): the
 * account's morning email — on/off, hour, time zone — and "Send today's briefing now", imported only by the
 * Alerts page (pages/reports/Alerts.tsx). Same fetch client and CSRF header as the shell's (client.ts).
 */
import { DashboardAlertsHttpApi } from "@sitehealth/domain/DashboardAlerts"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { ReportKeys, withCsrf } from "./client.ts"

export class DashboardAlerts extends AtomHttpApi.Service<DashboardAlerts>()("sitehealth/web/DashboardAlerts", {
  api: DashboardAlertsHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const briefingEmailAtom = DashboardAlerts.query("alerts", "getEmail", {
  reactivityKeys: [ReportKeys.briefingEmail]
})
export const updateBriefingEmail = DashboardAlerts.mutation("alerts", "updateEmail")
export const sendBriefingNow = DashboardAlerts.mutation("alerts", "sendEmailNow")
