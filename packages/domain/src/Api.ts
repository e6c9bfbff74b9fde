/**
 * The one HttpApi contract of /api/v1: its groups (one module each: ApiProjects.ts, ApiReports.ts,
 * ApiIntegrations.ts, ApiExpenses.ts, ApiAnnotations.ts, ApiTokens.ts, ApiWebhooks.ts; how an endpoint is
 * declared is in ApiOperation.ts) composed
 * behind the token middlewares. Everything is re-exported from here.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { AnnotationsApi } from "./ApiAnnotations.ts"
import { ExpensesApi } from "./ApiExpenses.ts"
import { IntegrationsApi } from "./ApiIntegrations.ts"
import { operationOf } from "./ApiOperation.ts"
import { ProjectsApi } from "./ApiProjects.ts"
import { ReportsApi } from "./ApiReports.ts"
import { TokensApi } from "./ApiTokens.ts"
import { WebhooksApi } from "./ApiWebhooks.ts"
import { Authentication, RequestErrors } from "./Authentication.ts"
import { documentedApi } from "./Documented.ts"
import { EVENT_DESCRIPTIONS, EVENT_SCHEMAS, eventIdentifier } from "./Events.ts"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "./Middleware.ts"
import type { Operation } from "./Permissions.ts"

export { AnnotationsApi } from "./ApiAnnotations.ts"
export { ExpensesApi } from "./ApiExpenses.ts"
export { IntegrationsApi } from "./ApiIntegrations.ts"
export {
  type FastPath,
  FastPathAnnotation,
  fastPathOf,
  operationOf,
  type PreRead,
  type StoredAnswerKey
} from "./ApiOperation.ts"
export { ProjectsApi } from "./ApiProjects.ts"
export { ReportsApi } from "./ApiReports.ts"
export { TokensApi } from "./ApiTokens.ts"
export { WebhooksApi } from "./ApiWebhooks.ts"

/**
 * OpenAPI 3.1 `webhooks`: one operation per event kind, the request a receiver gets (docs/alerts.md). The
 * bodies' schemas are the document's components (`SignalOpenedEvent`…), registered with the API's
 * AdditionalSchemas.
 */
const withWebhooks = (spec: Record<string, any>): Record<string, any> => ({
  ...spec,
  webhooks: Object.fromEntries(EVENT_SCHEMAS.map(([kind]) => [kind, {
    post: {
      operationId: `event.${kind}`,
      summary: kind,
      description: `${EVENT_DESCRIPTIONS[kind]}. Signed per Standard Webhooks: \`webhook-id\` (the same on every ` +
        "attempt), `webhook-timestamp`, `webhook-signature` (docs/alerts.md). Answer any 2xx within 15 seconds; " +
        "anything else is retried with backoff for 3 days.",
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: `#/components/schemas/${eventIdentifier(kind)}` } } }
      },
      responses: { "200": { description: "Received (any 2xx)" } }
    }
  }]))
})

// Middleware added first runs innermost: the checks below run bottom-up, RequestErrors outermost, then
// Authentication (401), RateLimit (429), Entitlement (402), ProjectAccess (403), TokenUsage; every POST's
// Idempotency is declared on the endpoint itself and so runs inside them all, seeing the authenticated token.
export class SiteHealthApi extends documentedApi(
  HttpApi.make("sitehealth")
    .add(ProjectsApi, ReportsApi, IntegrationsApi, ExpensesApi, AnnotationsApi, TokensApi, WebhooksApi)
    .middleware(TokenUsage)
    .middleware(ProjectAccess)
    .middleware(Entitlement)
    .middleware(RateLimit)
    .middleware(Authentication)
    .middleware(RequestErrors)
    .prefix("/api/v1")
    .annotate(HttpApi.AdditionalSchemas, EVENT_SCHEMAS.map(([, schema]) => schema))
    .annotateMerge(OpenApi.annotations({ transform: withWebhooks })),
  {
    title: "sitehealth API",
    description:
      "Health, briefing, signals, analytics, revenue, churn, SEO, integrations and expenses of websites. Every " +
      "response under /api/v1 is an envelope: {status:'success', data} or {status:'error', error:{code, message, " +
      "type}}."
  }
) {}

/** Every endpoint of the contract with its group, in the contract's order. */
export const endpointsOf = (api: typeof SiteHealthApi = SiteHealthApi) =>
  Object.values(api.groups).flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => ({ group: group.identifier, endpoint }))
  )

/** The name of every endpoint of the contract. */
export type EndpointName = ReturnType<typeof endpointsOf>[number]["endpoint"]["identifier"]

/** Every endpoint's name with its `Operation`, in the contract's order (endpoints without one left out). */
export const operations: ReadonlyArray<readonly [EndpointName, Operation]> = endpointsOf().flatMap(({ endpoint }) => {
  const operation = operationOf(endpoint)
  return operation === undefined ? [] : [[endpoint.identifier, operation] as const]
})

const byName: ReadonlyMap<string, Operation> = new Map(operations)

/** The `Operation` of the endpoint with this name, for places that only have the name. */
export const operationByName = (name: string): Operation | undefined => byName.get(name)
