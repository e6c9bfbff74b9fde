/**
 * The dashboard's client, typed from the same contract the server implements (DashboardApi in
 * packages/domain): `AtomHttpApi.Service` builds `HttpApiClient.make(DashboardCoreApi)` over fetch and gives
 * query atoms (re-run when a mutation names one of their reactivity keys) and mutation atoms.
 *
 * This is the shell's client: the core groups only (auth, websites). Tokens and account, security, connections
 * and reports have a client each (tokensClient.ts, securityClient.ts, connectionsClient.ts, reportsClient.ts;
 * the overview one of its own, overviewClient.ts), built from an HttpApi of those groups alone and imported
 * only by the pages that use it, so their contract — for the reports, /api/v1's — is loaded with those pages,
 * not on the first screen. The clients share the registry's reactivity: a mutation in one re-runs the queries
 * of another that name the same key.
 *
 * CSRF: the server answers the session with a CSRF token (log in, GET /auth/session); every state-changing
 * request carries it back in `X-CSRF-Token`. The session cookie itself is HttpOnly and goes by itself
 * (same origin).
 */
import { CSRF_HEADER, DashboardCoreApi } from "@sitehealth/domain/DashboardCore"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"

let csrfToken: string | null = null
export const setCsrfToken = (token: string | null) => {
  csrfToken = token
}

export const withCsrf = (client: HttpClient.HttpClient) =>
  HttpClient.mapRequest(client, (request) =>
    request.method === "GET" || request.method === "HEAD" || csrfToken === null
      ? request
      : HttpClientRequest.setHeader(request, CSRF_HEADER, csrfToken))

export class Dashboard extends AtomHttpApi.Service<Dashboard>()("sitehealth/web/Dashboard", {
  api: DashboardCoreApi,
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
  connections: "connections",
  /** Two-factor sign-in's status (securityClient.ts). */
  twoFactor: "twoFactor",
  /** The account's members and invitations (teamClient.ts). */
  team: "team"
} as const

/** The report clients' keys (reportsClient.ts, overviewClient.ts): here so that both share them. */
export const ReportKeys = {
  /** Anything derived from a website's data: health, briefing, signals, reports. */
  reports: "reports",
  expenses: "expenses",
  integrations: "integrations",
  annotations: "annotations",
  /** A website's webhook and Slack destinations and their deliveries (the Alerts page). */
  webhooks: "webhooks",
  /** The account's morning email settings (alertsClient.ts). */
  briefingEmail: "briefingEmail"
} as const

export const sessionAtom = Dashboard.query("auth", "session", { reactivityKeys: [Keys.session] })
export const sessionsAtom = Dashboard.query("auth", "listSessions", { reactivityKeys: [Keys.sessions] })
export const websitesAtom = Dashboard.query("websites", "list", { reactivityKeys: [Keys.websites] })

export const signUp = Dashboard.mutation("auth", "signUp")
export const logIn = Dashboard.mutation("auth", "logIn")
export const logInSecondFactor = Dashboard.mutation("auth", "logInSecondFactor")
export const logOut = Dashboard.mutation("auth", "logOut")
export const verifyEmail = Dashboard.mutation("auth", "verifyEmail")
export const requestReset = Dashboard.mutation("auth", "requestPasswordReset")
export const resetPassword = Dashboard.mutation("auth", "resetPassword")
export const revokeSession = Dashboard.mutation("auth", "revokeSession")
export const logOutOthers = Dashboard.mutation("auth", "logOutOtherSessions")
export const createWebsite = Dashboard.mutation("websites", "create")
export const updateWebsite = Dashboard.mutation("websites", "update")
export const deleteWebsite = Dashboard.mutation("websites", "delete")
