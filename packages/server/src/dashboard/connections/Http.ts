/**
 * Handlers of the dashboard's `connections` group (@sitehealth/domain/DashboardConnections): the logged-in
 * account (DashboardSession) and the Connections service do the work.
 */
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { makeConnections } from "./Connections.ts"

export const DashboardConnectionsHttp = HttpApiBuilder.group(
  DashboardApi,
  "connections",
  Effect.fn(function*(handlers) {
    const connections = yield* makeConnections
    const account = Effect.map(CurrentDashboardSession, (s) => s.accountId as string)
    return handlers.handleAll({
      list: ({ params }) => Effect.flatMap(account, (a) => connections.list(a, params.id)),
      connectStripe: ({ params, payload }) =>
        Effect.flatMap(account, (a) => connections.connectStripe(a, params.id, payload.key)),
      connectPlausible: ({ params, payload }) =>
        Effect.flatMap(account, (a) => connections.connectPlausible(a, params.id, payload.apiKey, payload.siteId)),
      startGoogle: ({ params }) => Effect.flatMap(account, (a) => connections.startGoogle(a, params.id)),
      googleCallback: ({ payload }) =>
        Effect.flatMap(account, (a) => connections.googleCallback(a, payload.code, payload.state)),
      connectGoogle: ({ params, payload }) =>
        Effect.flatMap(account, (a) => connections.connectGoogle(a, params.id, payload.flow, payload.siteUrl)),
      disconnect: ({ params }) => Effect.flatMap(account, (a) => connections.disconnect(a, params.id, params.provider)),
      syncNow: ({ params }) => Effect.flatMap(account, (a) => connections.syncNow(a, params.id, params.provider))
    })
  })
)
