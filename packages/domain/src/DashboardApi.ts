/**
 * The dashboard's own HttpApi, under `/app/api`: accounts and sessions, websites, tokens and the account's
 * entitlement, for the web app (packages/web). Same envelope and error classes as /api/v1, a different
 * authentication: a session cookie (`DashboardSession`), never a bearer token — and /api/v1 never accepts the
 * cookie. Every state-changing request passes `DashboardOrigin` (the Origin must be the server's own) and,
 * once logged in, carries the session's CSRF token in `X-CSRF-Token`.
 *
 *   RequestErrors (400/413/500/503) → DashboardOrigin (403 `csrf_origin`) → [DashboardSession (401, 403
 *   `csrf_token`)] → handler
 *
 * The constants, middlewares and core groups are in DashboardCore.ts, the tokens and account groups in
 * DashboardTokens.ts (both re-exported here); the connections and reports groups in their own modules. This
 * module composes them all: the server implements `DashboardApi`, the tests call it, its OpenAPI document is
 * served. The web app builds a client per part instead (`DashboardCoreApi`, `DashboardTokensHttpApi`,
 * `DashboardConnectionsHttpApi`, `DashboardReportsHttpApi`, and `DashboardOverviewHttpApi` for the overview),
 * so its first screen does not carry the other pages' contract.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import { RequestErrors } from "./Authentication.ts"
import { DashboardAlertsApi } from "./DashboardAlerts.ts"
import { DashboardConnectionsApi } from "./DashboardConnections.ts"
import { DashboardConsentApi } from "./DashboardConsent.ts"
import {
  DASHBOARD_PREFIX,
  DashboardAuthApi,
  DashboardOrigin,
  DashboardSession,
  DashboardWebsitesApi
} from "./DashboardCore.ts"
import { DashboardReportsApi } from "./DashboardReports.ts"
import { DashboardSecurityApi } from "./DashboardSecurity.ts"
import { DashboardTeamApi } from "./DashboardTeam.ts"
import { DashboardAccountApi, DashboardTokensApi } from "./DashboardTokens.ts"
import { documentedApi } from "./Documented.ts"

export * from "./DashboardCore.ts"
export * from "./DashboardRoles.ts"
export * from "./DashboardSecurity.ts"
export * from "./DashboardTeam.ts"
export * from "./DashboardTokens.ts"

export class DashboardApi extends documentedApi(
  HttpApi.make("dashboard")
    .add(DashboardAuthApi, DashboardWebsitesApi, DashboardTokensApi, DashboardAccountApi, DashboardSecurityApi)
    .add(DashboardConsentApi, DashboardAlertsApi, DashboardTeamApi)
    .add(DashboardConnectionsApi.middleware(DashboardSession))
    .add(DashboardReportsApi.middleware(DashboardSession))
    .middleware(DashboardOrigin)
    .middleware(RequestErrors)
    .prefix(DASHBOARD_PREFIX),
  {
    title: "sitehealth dashboard API",
    description:
      "The web dashboard's API: session cookie auth, CSRF token on every state-changing request, same envelope as " +
      "/api/v1."
  }
) {}
