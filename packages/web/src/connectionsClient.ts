/**
 * The client for the connections group (DashboardConnectionsHttpApi: that group alone, as DashboardApi serves
 * it), imported only by the pages that connect providers, so its contract loads with them. Same fetch client
 * and CSRF header as the shell's (client.ts); same reactivity keys.
 */
import { DashboardConnectionsHttpApi } from "@sitehealth/domain/DashboardConnections"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, withCsrf } from "./client.ts"

export class DashboardConnections
  extends AtomHttpApi.Service<DashboardConnections>()("sitehealth/web/DashboardConnections", {
    api: DashboardConnectionsHttpApi,
    httpClient: FetchHttpClient.layer,
    transformClient: withCsrf
  })
{}

export const connectionsAtom = (websiteId: string) =>
  DashboardConnections.query("connections", "list", { params: { id: websiteId }, reactivityKeys: [Keys.connections] })
export const connectStripe = DashboardConnections.mutation("connections", "connectStripe")
export const connectPlausible = DashboardConnections.mutation("connections", "connectPlausible")
export const startGoogle = DashboardConnections.mutation("connections", "startGoogle")
export const googleCallback = DashboardConnections.mutation("connections", "googleCallback")
export const connectGoogle = DashboardConnections.mutation("connections", "connectGoogle")
export const disconnect = DashboardConnections.mutation("connections", "disconnect")
export const syncNow = DashboardConnections.mutation("connections", "syncNow")
