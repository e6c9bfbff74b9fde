/** The dashboard's `team` group: members, roles and invitations (Team.ts). */
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Team from "./Team.ts"

export const DashboardTeamHttp = HttpApiBuilder.group(DashboardApi, "team", (h) =>
  h
    .handle("team", () => Effect.flatMap(CurrentDashboardSession, Team.team))
    .handle("invite", ({ payload }) => Effect.flatMap(CurrentDashboardSession, (s) => Team.invite(s, payload)))
    .handle("revokeInvitation", ({ params }) =>
      Effect.flatMap(CurrentDashboardSession, (s) => Team.revokeInvitation(s, params.id)))
    .handle("changeRole", ({ params, payload }) =>
      Effect.flatMap(CurrentDashboardSession, (s) =>
        Team.changeRole(s, params.id, payload.role)))
    .handle("removeMember", ({ params }) =>
      Effect.flatMap(CurrentDashboardSession, (s) =>
        Team.removeMember(s, params.id)))
    .handle("previewInvitation", ({ payload }) =>
      Team.previewInvitation(payload.token))
    .handle("acceptInvitation", ({ payload }) =>
      Team.acceptInvitation(payload)))
