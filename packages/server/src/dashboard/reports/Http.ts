/**
 * Handlers of the dashboard's `reports` group (@sitehealth/domain/DashboardReports): /api/v1's report
 * operations for the logged-in account. Each is /api/v1's own operation — projectsOperations,
 * reportsOperations, integrationsOperations, expensesOperations, the functions /api/v1's handlers are — run
 * as the account: a principal reaching every website of the session's account (`projects: null`) with every
 * permission, as the dashboard is the account's owner. Scope is then judged as on /api/v1 (another account's
 * website is 404). The entitlement is checked as /api/v1's Entitlement middleware does (402 `trial_expired`).
 */
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import type { TokenId } from "@sitehealth/domain/Common"
import { CurrentDashboardSession, DashboardApi, type DashboardPrincipal } from "@sitehealth/domain/DashboardApi"
import { TrialExpired } from "@sitehealth/domain/Errors"
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { AccountsRepo, isEntitled } from "../../accounts/AccountsRepo.ts"
import { annotationsOperations } from "../../api/Annotations.ts"
import { expensesOperations } from "../../api/Expenses.ts"
import { integrationsOperations } from "../../api/Integrations.ts"
import { projectsOperations } from "../../api/Projects.ts"
import { reportsOperations } from "../../api/Reports.ts"
import { webhooksOperations } from "../../api/Webhooks.ts"

/**
 * Who the operations see as the caller. `tokenId` is what a sync run records as `requested_by`: "dashboard",
 * as the connections page's "sync now" records.
 */
const principalOf = (session: DashboardPrincipal): Principal => ({
  tokenId: "dashboard" as TokenId,
  accountId: session.accountId,
  projects: null,
  permissions: PERMISSIONS,
  expiresAt: null
})

export const DashboardReportsHttp = HttpApiBuilder.group(
  DashboardApi,
  "reports",
  Effect.fn(function*(handlers) {
    const projects = yield* projectsOperations
    const integrations = yield* integrationsOperations
    const expenses = yield* expensesOperations
    const annotations = yield* annotationsOperations
    const reports = yield* reportsOperations
    const webhooks = yield* webhooksOperations
    const accounts = yield* AccountsRepo
    /** Runs one operation as the session's account, once its entitlement is checked. */
    const asAccount = <A, E, R>(operation: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const account = yield* accounts.find(session.accountId)
        if (
          account === null || !isEntitled(account, new Date(yield* Clock.currentTimeMillis))
        ) return yield* TrialExpired.of()
        return yield* Effect.provideService(operation, CurrentPrincipal, principalOf(session))
      })
    return handlers.handleAll({
      listProjects: (request) => asAccount(projects.listProjects(request)),
      getHealth: (request) => asAccount(projects.getHealth(request)),
      getBriefing: (request) => asAccount(projects.getBriefing(request)),
      listSignals: (request) => asAccount(projects.listSignals(request)),
      getAnalytics: (request) => asAccount(reports.getAnalytics(request)),
      getRevenue: (request) => asAccount(reports.getRevenue(request)),
      getChurn: (request) => asAccount(reports.getChurn(request)),
      getSeo: (request) => asAccount(reports.getSeo(request)),
      listIntegrations: (request) => asAccount(integrations.listIntegrations(request)),
      syncIntegration: (request) => asAccount(integrations.syncIntegration(request)),
      listExpenses: (request) => asAccount(expenses.listExpenses(request)),
      createExpense: (request) => asAccount(expenses.createExpense(request)),
      deleteExpense: (request) => asAccount(expenses.deleteExpense(request)),
      listAnnotations: (request) => asAccount(annotations.listAnnotations(request)),
      createAnnotation: (request) => asAccount(annotations.createAnnotation(request)),
      updateAnnotation: (request) => asAccount(annotations.updateAnnotation(request)),
      deleteAnnotation: (request) => asAccount(annotations.deleteAnnotation(request)),
      listWebhooks: (request) => asAccount(webhooks.listWebhooks(request)),
      createWebhook: (request) => asAccount(webhooks.createWebhook(request)),
      updateWebhook: (request) => asAccount(webhooks.updateWebhook(request)),
      deleteWebhook: (request) => asAccount(webhooks.deleteWebhook(request)),
      testWebhook: (request) => asAccount(webhooks.testWebhook(request)),
      listWebhookDeliveries: (request) => asAccount(webhooks.listWebhookDeliveries(request)),
      redeliverWebhook: (request) => asAccount(webhooks.redeliverWebhook(request))
    })
  })
)
