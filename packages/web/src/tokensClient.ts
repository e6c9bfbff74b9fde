/**
 * The client for the tokens and account groups (DashboardTokensHttpApi: those groups alone, as DashboardApi
 * serves them), imported only by the API page and the account page, so their contract — tokens, permissions,
 * the account's entitlement — loads with those pages, not with the shell (docs/dashboard-web.md, Size). Same
 * fetch client and CSRF header as the shell's (client.ts); same reactivity keys.
 */
import { DashboardTokensHttpApi } from "@sitehealth/domain/DashboardTokens"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, withCsrf } from "./client.ts"

export class DashboardTokens extends AtomHttpApi.Service<DashboardTokens>()("sitehealth/web/DashboardTokens", {
  api: DashboardTokensHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const tokensAtom = DashboardTokens.query("tokens", "list", { reactivityKeys: [Keys.tokens] })
export const accountAtom = DashboardTokens.query("account", "get", { reactivityKeys: [Keys.account] })
export const createToken = DashboardTokens.mutation("tokens", "create")
export const revokeToken = DashboardTokens.mutation("tokens", "revoke")
export const startCheckout = DashboardTokens.mutation("account", "checkout")
export const openBillingPortal = DashboardTokens.mutation("account", "billingPortal")
export const deleteAccount = DashboardTokens.mutation("account", "delete")
