/**
 * The dashboard's client, typed from the same contract the server implements (DashboardApi in
 * packages/domain): `AtomHttpApi.Service` builds `HttpApiClient.make(DashboardApi)` over fetch and gives
 * query atoms (re-run when a mutation names one of their reactivity keys) and mutation atoms.
 *
 * CSRF: the server answers the session with a CSRF token (log in, GET /auth/session); every state-changing
 * request carries it back in `X-CSRF-Token`. The session cookie itself is HttpOnly and goes by itself
 * (same origin).
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import type { Period } from "@sitehealth/domain/Common"
import { CSRF_HEADER, DashboardApi } from "@sitehealth/domain/DashboardApi"
import type { Dimension, Severity } from "@sitehealth/domain/Projects"

let csrfToken: string | null = null
export const setCsrfToken = (token: string | null) => {
  csrfToken = token
}

const withCsrf = (client: HttpClient.HttpClient) =>
  HttpClient.mapRequest(client, (request) =>
    request.method === "GET" || request.method === "HEAD" || csrfToken === null
      ? request
      : HttpClientRequest.setHeader(request, CSRF_HEADER, csrfToken))

export class Dashboard extends AtomHttpApi.Service<Dashboard>()("sitehealth/web/Dashboard", {
  api: DashboardApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

/** The reactivity keys: a mutation names what it changes, the queries reading it run again. */
export const Keys = {
  session: "session",
  sessions: "sessions",
  websites: "websites",
  tokens: "tokens",
  account: "account",
  connections: "connections"
} as const

export const sessionAtom = Dashboard.query("auth", "session", { reactivityKeys: [Keys.session] })
export const sessionsAtom = Dashboard.query("auth", "listSessions", { reactivityKeys: [Keys.sessions] })
export const websitesAtom = Dashboard.query("websites", "list", { reactivityKeys: [Keys.websites] })
export const tokensAtom = Dashboard.query("tokens", "list", { reactivityKeys: [Keys.tokens] })
export const accountAtom = Dashboard.query("account", "get", { reactivityKeys: [Keys.account] })

export const signUp = Dashboard.mutation("auth", "signUp")
export const logIn = Dashboard.mutation("auth", "logIn")
export const logOut = Dashboard.mutation("auth", "logOut")
export const verifyEmail = Dashboard.mutation("auth", "verifyEmail")
export const requestReset = Dashboard.mutation("auth", "requestPasswordReset")
export const resetPassword = Dashboard.mutation("auth", "resetPassword")
export const revokeSession = Dashboard.mutation("auth", "revokeSession")
export const logOutOthers = Dashboard.mutation("auth", "logOutOtherSessions")
export const createWebsite = Dashboard.mutation("websites", "create")
export const updateWebsite = Dashboard.mutation("websites", "update")
export const deleteWebsite = Dashboard.mutation("websites", "delete")
export const createToken = Dashboard.mutation("tokens", "create")
export const revokeToken = Dashboard.mutation("tokens", "revoke")


export const connectionsAtom = (websiteId: string) =>
  Dashboard.query("connections", "list", { params: { id: websiteId }, reactivityKeys: [Keys.connections] })
export const connectStripe = Dashboard.mutation("connections", "connectStripe")
export const connectPlausible = Dashboard.mutation("connections", "connectPlausible")
export const startGoogle = Dashboard.mutation("connections", "startGoogle")
export const googleCallback = Dashboard.mutation("connections", "googleCallback")
export const connectGoogle = Dashboard.mutation("connections", "connectGoogle")
export const disconnect = Dashboard.mutation("connections", "disconnect")
export const syncNow = Dashboard.mutation("connections", "syncNow")

/*
 * The reports: /api/v1's operations for the logged-in account's websites (DashboardReports in packages/domain:
 * the same endpoints, under /app/api/websites/:id/…). Every figure a page shows comes from one of these.
 */
export const ReportKeys = {
  /** Anything derived from a website's data: health, briefing, signals, reports. */
  reports: "reports",
  expenses: "expenses",
  integrations: "integrations"
} as const

export const overviewAtom = Dashboard.query("reports", "listProjects", { query: { limit: 100 }, reactivityKeys: [ReportKeys.reports, Keys.websites] })
export const healthAtom = (id: string) => Dashboard.query("reports", "getHealth", { params: { id }, reactivityKeys: [ReportKeys.reports] })
export const briefingAtom = (id: string) => Dashboard.query("reports", "getBriefing", { params: { id }, reactivityKeys: [ReportKeys.reports] })
export const signalsAtom = (id: string, query: { readonly dimension?: Dimension; readonly severity?: Severity; readonly active?: "true" | "false" }) =>
  Dashboard.query("reports", "listSignals", { params: { id }, query: { ...query, limit: 100 }, reactivityKeys: [ReportKeys.reports] })
export const analyticsAtom = (id: string, period: Period) =>
  Dashboard.query("reports", "getAnalytics", { params: { id }, query: { period }, reactivityKeys: [ReportKeys.reports] })
export const revenueAtom = (id: string, period: Period) =>
  Dashboard.query("reports", "getRevenue", { params: { id }, query: { period }, reactivityKeys: [ReportKeys.reports, ReportKeys.expenses] })
export const churnAtom = (id: string, period: Period) =>
  Dashboard.query("reports", "getChurn", { params: { id }, query: { period }, reactivityKeys: [ReportKeys.reports] })
export const seoAtom = (id: string, period: Period) =>
  Dashboard.query("reports", "getSeo", { params: { id }, query: { period }, reactivityKeys: [ReportKeys.reports] })
export const integrationsAtom = (id: string) =>
  Dashboard.query("reports", "listIntegrations", { params: { id }, reactivityKeys: [ReportKeys.integrations, Keys.connections] })
export const expensesAtom = (id: string) =>
  Dashboard.query("reports", "listExpenses", { params: { id }, query: { limit: 100 }, reactivityKeys: [ReportKeys.expenses] })
export const syncIntegration = Dashboard.mutation("reports", "syncIntegration")
export const createExpense = Dashboard.mutation("reports", "createExpense")
export const deleteExpense = Dashboard.mutation("reports", "deleteExpense")
