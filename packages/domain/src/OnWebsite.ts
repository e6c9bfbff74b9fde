/**
 * An /api/v1 endpoint re-homed under the dashboard's prefix, with a website in the path instead of a project
 * (the table in DashboardReports.ts): `onWebsite(endpoint)`. Its own module so that the web app's narrow
 * clients (DashboardOverview.ts) can build on it without reaching the whole reports group.
 */
import * as Context from "effect/Context"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import { operationOf } from "./ApiOperation.ts"
import { doc } from "./Documented.ts"
import { TrialExpired } from "./Errors.ts"

/** Where an /api/v1 path lives under /app/api (the table in DashboardReports.ts). */
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
> ? HttpApiEndpoint.HttpApiEndpoint<
    Id,
    Method,
    WebsitePath<Path>,
    Params,
    Query,
    Payload,
    Headers,
    Success,
    Error | typeof TrialExpired
  >
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
  // Through `doc`, which the web client's build reduces to `doc(copy)` (vite.config.ts): the client needs no
  // prose, nor the Operation it is read from.
  return doc(
    copy,
    operationOf(endpoint)?.summary ?? endpoint.identifier,
    `The same operation as \`${endpoint.method} /api/v1${endpoint.path}\` (same schemas, same figures), for a ` +
      `website of the logged-in account. ` +
      "402 `trial_expired` when the account's entitlement has ended."
  ) as unknown as OnWebsite<E>
}
