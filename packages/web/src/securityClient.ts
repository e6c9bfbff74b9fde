/**
 * The client for the security group (DashboardSecurityHttpApi: that group alone, as DashboardApi serves it):
 * the password change and two-factor sign-in, imported only by the account page's security panels
 * (pages/Security.tsx), so their contract loads with that page, not with the shell (docs/dashboard-web.md,
 * Size). Same fetch client and CSRF header as the shell's (client.ts); same reactivity keys.
 */
import { DashboardSecurityHttpApi } from "@sitehealth/domain/DashboardSecurity"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, withCsrf } from "./client.ts"

export class DashboardSecurity extends AtomHttpApi.Service<DashboardSecurity>()("sitehealth/web/DashboardSecurity", {
  api: DashboardSecurityHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const twoFactorAtom = DashboardSecurity.query("security", "twoFactor", { reactivityKeys: [Keys.twoFactor] })
export const changePassword = DashboardSecurity.mutation("security", "changePassword")
export const setUpTwoFactor = DashboardSecurity.mutation("security", "setUpTwoFactor")
export const enableTwoFactor = DashboardSecurity.mutation("security", "enableTwoFactor")
export const disableTwoFactor = DashboardSecurity.mutation("security", "disableTwoFactor")
export const regenerateRecoveryCodes = DashboardSecurity.mutation("security", "regenerateRecoveryCodes")
