/**
 * The report operations of /api/v1, for the dashboard: the SAME endpoints — their params, query, payload,
 * success and error schemas, taken from SiteHealthApi itself — re-homed under the dashboard's prefix, with a
 * website in the path instead of a project:
 *
 *   GET  /api/v1/projects                          → GET  /app/api/websites/health            (listProjects)
 *   ANY  /api/v1/projects/:id/<rest>               → ANY  /app/api/websites/:id/<rest>         (the others)
 *
 * behind the session cookie (DashboardSession) instead of a token. Only the authentication differs: the
 * server answers each with the very services /api/v1's handlers call (server src/dashboard/reports/), so a
 * figure on a page is the API's figure. The account's entitlement still applies (402 `trial_expired`, as on
 * /api/v1); the token-only middlewares (rate limit, permissions, Idempotency-Key) do not — a session reaches
 * every website of its account with every permission, as the dashboard already does for tokens and
 * connections. Endpoint names are /api/v1's (`getHealth`, `getAnalytics`, `createExpense`…), in one group,
 * `reports`: `client.reports.getAnalytics({ params: { id }, query: { period } })`.
 */
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { ExpensesApi, IntegrationsApi, operationOf, ProjectsApi, ReportsApi } from "./Api.ts"
import { RequestErrors } from "./Authentication.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { TrialExpired } from "./Errors.ts"

/** Where an /api/v1 path lives under /app/api (see the table above). */
export const websitePath = (v1Path: string): string =>
  v1Path === "/projects" ? "/websites/health" : v1Path.replace(/^\/projects\/:id(?=\/|$)/, "/websites/:id")

type WebsitePath<P extends string> = P extends "/projects" ? "/websites/health"
  : P extends `/projects/:id${infer Rest}` ? `/websites/:id${Rest}`
  : never

/** An /api/v1 endpoint as the dashboard serves it: same schemas, the website path, 402 added, no middleware. */
export type OnWebsite<E> = E extends HttpApiEndpoint.HttpApiEndpoint<
  infer Id,
  infer Method,
  infer Path,
  infer Params,
  infer Query,
  infer Payload,
  infer Headers,
  infer Success,
  infer Error,
  infer _Middleware,
  infer _MiddlewareServices
> ? HttpApiEndpoint.HttpApiEndpoint<Id, Method, WebsitePath<Path>, Params, Query, Payload, Headers, Success, Error | typeof TrialExpired>
  : never

/** What the copy reads of an endpoint (every HttpApiEndpoint has these fields). */
interface EndpointParts {
  readonly identifier: string
  readonly path: string
  readonly method: string
  readonly params: unknown
  readonly query: unknown
  readonly headers: unknown
  readonly payload: unknown
  readonly success: unknown
  readonly error: ReadonlySet<unknown>
  readonly disableCodecs: unknown
  readonly annotations: Context.Context<never>
}

/**
 * A copy of an /api/v1 endpoint at its website path. Its middlewares (Idempotency, which needs a token) are
 * left behind and its annotations replaced by the dashboard's summary; everything the request and the answer
 * are decoded and encoded by is the endpoint's own. The copy is made as the endpoint module makes every
 * endpoint (a function object over the endpoints' shared prototype), since it offers no "change the path".
 */
export const onWebsite = <E extends HttpApiEndpoint.Constraint & EndpointParts>(endpoint: E): OnWebsite<E> => {
  const operation = operationOf(endpoint)
  const copy = Object.assign(Object.setPrototypeOf(function HttpApiEndpoint() {}, Object.getPrototypeOf(endpoint)), {
    identifier: endpoint.identifier,
    path: websitePath(endpoint.path),
    method: endpoint.method,
    params: endpoint.params,
    query: endpoint.query,
    headers: endpoint.headers,
    payload: endpoint.payload,
    success: endpoint.success,
    error: new Set([...endpoint.error, TrialExpired]),
    annotations: Context.empty(),
    middlewares: new Set(),
    disableCodecs: endpoint.disableCodecs
  }) as HttpApiEndpoint.Top
  return copy.annotateMerge(OpenApi.annotations({
    summary: operation?.summary ?? endpoint.identifier,
    description:
      `The same operation as \`${endpoint.method} /api/v1${endpoint.path}\` (same schemas, same figures), for a website of the logged-in account. ` +
      "402 `trial_expired` when the account's entitlement has ended."
  })) as unknown as OnWebsite<E>
}

const p = ProjectsApi.endpoints
const r = ReportsApi.endpoints
const i = IntegrationsApi.endpoints
const e = ExpensesApi.endpoints

/** The /api/v1 operations the report pages read, under /app/api/websites (session auth is added by DashboardApi). */
export class DashboardReportsApi extends HttpApiGroup.make("reports")
  .add(
    onWebsite(p.listProjects),
    onWebsite(p.getHealth),
    onWebsite(p.getBriefing),
    onWebsite(p.listSignals),
    onWebsite(r.getAnalytics),
    onWebsite(r.getRevenue),
    onWebsite(r.getChurn),
    onWebsite(r.getSeo),
    onWebsite(i.listIntegrations),
    onWebsite(i.syncIntegration),
    onWebsite(e.listExpenses),
    onWebsite(e.createExpense),
    onWebsite(e.deleteExpense)
  )
  .annotateMerge(OpenApi.annotations({
    title: "Reports",
    description: "The /api/v1 report operations (health, briefing, signals, analytics, revenue, churn, SEO, integrations, expenses) for the logged-in account's websites"
  })) {}

/**
 * The reports group alone, as `DashboardApi` serves it (behind the session, same middlewares and prefix): the
 * web app's client for the report pages, loaded with them, so the first screen does not carry /api/v1's
 * contract.
 */
export class DashboardReportsHttpApi extends HttpApi.make("dashboard")
  .add(DashboardReportsApi.middleware(DashboardSession))
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX) {}
