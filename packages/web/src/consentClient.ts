/**
 * The client for the consent page (DashboardConsentHttpApi: the consent group alone, as DashboardApi serves it),
 * imported only by that page. Same fetch client and CSRF header as the shell's (client.ts).
 */
import type { AuthorizationRequest } from "@sitehealth/domain/DashboardConsent"
import { DashboardConsentHttpApi } from "@sitehealth/domain/DashboardConsent"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { withCsrf } from "./client.ts"

export class DashboardConsent extends AtomHttpApi.Service<DashboardConsent>()("sitehealth/web/DashboardConsent", {
  api: DashboardConsentHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const consentAtom = (request: AuthorizationRequest) =>
  DashboardConsent.query("consent", "describe", { query: request })
export const decideConsent = DashboardConsent.mutation("consent", "decide")
