/**
 * The client for the team group (DashboardTeamHttpApi: that group alone, as DashboardApi serves it), imported only
 * by the team page and the invitation page (pages/Team.tsx), so its contract loads with them. Same fetch client and
 * CSRF header as the shell's (client.ts); same reactivity keys.
 */
import { DashboardTeamHttpApi } from "@sitehealth/domain/DashboardTeam"
import { FetchHttpClient } from "effect/http"
import { AtomHttpApi } from "effect/reactivity"
import { Keys, withCsrf } from "./client.ts"

export class DashboardTeam extends AtomHttpApi.Service<DashboardTeam>()("sitehealth/web/DashboardTeam", {
  api: DashboardTeamHttpApi,
  httpClient: FetchHttpClient.layer,
  transformClient: withCsrf
}) {}

export const teamAtom = DashboardTeam.query("team", "team", { reactivityKeys: [Keys.team] })
export const invite = DashboardTeam.mutation("team", "invite")
export const revokeInvitation = DashboardTeam.mutation("team", "revokeInvitation")
export const changeRole = DashboardTeam.mutation("team", "changeRole")
export const removeMember = DashboardTeam.mutation("team", "removeMember")
export const previewInvitation = DashboardTeam.mutation("team", "previewInvitation")
export const acceptInvitation = DashboardTeam.mutation("team", "acceptInvitation")
