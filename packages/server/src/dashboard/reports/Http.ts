/**
 * Handlers of the dashboard's `reports` group (@sitehealth/domain/DashboardReports): the logged-in account's
 * website, answered by the same functions as /api/v1's reports handlers (../../reports/Http.ts), with the
 * session's account as the principal. The principal reaches every website of the account (`projects: null`)
 * and carries no token: the report services read only `accountId` and `projects` (projects/Policy.ts), so a
 * website of another account is 404 exactly as through /api/v1.
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import type { TokenId } from "@sitehealth/domain/Common"
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import { getAnalytics } from "../../reports/Analytics.ts"
import { getChurn, getRevenue } from "../../reports/Revenue.ts"
import { getSeo } from "../../reports/Seo.ts"

/** The session as the principal the report services check a project against. */
const asPrincipal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(CurrentDashboardSession, (session) => {
    const principal: Principal = {
      // Not a token: the dashboard session. Only the rate limiter, token usage and idempotency read tokenId,
      // and none of them runs on the dashboard's routes.
      tokenId: `session:${session.sessionId}` as TokenId,
      accountId: session.accountId,
      projects: null,
      permissions: PERMISSIONS,
      expiresAt: null
    }
    return Effect.provideService(effect, CurrentPrincipal, principal)
  })

export const DashboardReportsHttp = HttpApiBuilder.group(DashboardApi, "reports", (h) =>
  h
    .handle("getAnalytics", ({ params, query }) => asPrincipal(getAnalytics(params.id, query.period ?? "30d")))
    .handle("getRevenue", ({ params, query }) => asPrincipal(getRevenue(params.id, query.period ?? "30d")))
    .handle("getChurn", ({ params, query }) => asPrincipal(getChurn(params.id, query.period ?? "30d")))
    .handle("getSeo", ({ params, query }) => asPrincipal(getSeo(params.id, query.period ?? "30d"))))
