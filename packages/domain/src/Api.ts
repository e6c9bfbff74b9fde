/** The one HttpApi contract of /api/v1. */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Authentication, Idempotency, IDEMPOTENCY_KEY_MAX_LENGTH, RequestErrors } from "./Authentication.ts"
import { PageQuery, Period } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { documentedApi } from "./Documented.ts"
import { AUTHENTICATED, type Operation, OperationAnnotation } from "./Permissions.ts"
import { BadRequest, Conflict, Forbidden, NotFound } from "./Errors.ts"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "./Middleware.ts"
import { ExpenseCreated, ExpenseDeleted, ExpenseList, CreateExpense } from "./Expenses.ts"
import { IntegrationList, SyncPayload, SyncResult } from "./Integrations.ts"
import { Briefing, Dimension, Health, ProjectList, Severity, SignalList } from "./Projects.ts"
import { Analytics, Churn, Revenue, Seo } from "./Reports.ts"
import {
  CreateTokenPayload,
  RevokePayload,
  RevokePreview,
  RevokeQuery,
  TokenList,
  TokenMetadata,
  TokenMinted,
  TokenPreview,
  TokenRevoked
} from "./Tokens.ts"

/**
 * An endpoint's `Operation` as written below: a read without a confirm gate unless it says otherwise. Whether it
 * names a project is not written: it follows from the path (`/projects/:id/…`), which is what the scope check reads.
 */
type OperationSpec = Omit<Operation, "kind" | "confirmGate" | "project"> & Partial<Pick<Operation, "kind" | "confirmGate">>

/**
 * Declares what an endpoint is (its `Operation`: permission, kind, confirm gate, CLI and MCP names) as the
 * endpoint's annotation, and documents it from there: summary, the permission it needs, whether it is
 * confirm-gated — in prose and as `x-permission`, `x-kind`, `x-confirm-gate` for tools that derive from it.
 */
const op = <
  Id extends string,
  Method extends HttpMethod.HttpMethod,
  Path extends string,
  Params extends Schema.Top,
  Query extends Schema.Top,
  Payload extends Schema.Top,
  Headers extends Schema.Top,
  Success extends Schema.Top,
  Error extends Schema.Top,
  Middleware,
  MiddlewareServices
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Id, Method, Path, Params, Query, Payload, Headers, Success, Error, Middleware, MiddlewareServices>,
  spec: OperationSpec
) => {
  const operation: Operation = {
    permission: spec.permission,
    kind: spec.kind ?? "read",
    project: endpoint.path.startsWith("/projects/:id"),
    confirmGate: spec.confirmGate ?? false,
    summary: spec.summary,
    cli: spec.cli,
    mcp: spec.mcp,
    ...(spec.idempotent === undefined ? {} : { idempotent: spec.idempotent }),
    ...(spec.openWorld === undefined ? {} : { openWorld: spec.openWorld })
  }
  const access = operation.permission === null
    ? "Dashboard-only: always answers 403 `dashboard_only` (after authentication, rate limit and entitlement)."
    : operation.permission === AUTHENTICATED
    ? "Any valid token: no permission needed."
    : `Requires the \`${operation.permission}\` permission.`
  const gate = operation.confirmGate ? " Changes nothing and answers a preview unless confirmed." : ""
  const idempotent = [...endpoint.middlewares].some((middleware) => middleware.key === Idempotency.key)
  const retry = idempotent
    ? " Accepts an `Idempotency-Key` header: a retry with the same key and body replays the first answer (`Idempotent-Replayed: true`) instead of acting twice."
    : ""
  return endpoint.annotate(OperationAnnotation, operation).annotateMerge(
    OpenApi.annotations({
      summary: operation.summary,
      description: `${access}${gate}${retry}`,
      override: {
        "x-permission": operation.permission,
        "x-kind": operation.kind,
        "x-confirm-gate": operation.confirmGate
      },
      // A middleware cannot declare headers, so the Idempotency-Key parameter is added to the document here.
      ...(idempotent ? { transform: withIdempotencyKeyParameter } : {})
    })
  )
}

const withIdempotencyKeyParameter = (operation: Record<string, unknown>): Record<string, unknown> => ({
  ...operation,
  parameters: [
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
    {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Optional; 1–255 printable ASCII characters, unique per intended action (a UUID). Kept 24 h per token: the same key and body replays the stored answer; another body answers 422; a key whose first request is still running answers 409 with Retry-After.",
      schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: "^[\\x20-\\x7E]+$" }
    }
  ]
})

const projectParams = { id: Schema.String }
const scoped = [NotFound, Forbidden] as const

/** The endpoints the dashboard alone may call: always 403 through this API, so nothing is exposed by CLI or MCP. */
const dashboardOnly: OperationSpec = {
  permission: null,
  kind: "dashboard_only",
  summary: "Dashboard-only: always 403",
  cli: null,
  mcp: null
}

/**
 * A dashboard-only endpoint's schemas. Each gets a NeverResponse schema of its own, as it always has: one shared
 * instance would rename the document's component (`NeverResponseEncoded_2` → `NeverResponseEncoded`).
 */
const dashboardOnlyOptions = <const Params extends Schema.Struct.Fields>(params: Params) => ({
  params,
  success: Envelope("NeverResponse", Schema.Struct({})),
  error: scoped
})

/** A read of one project (`/projects/:id/…`), answering 404/403 for a project outside the token's scope. */
const projectGet = <const Id extends string, const Path extends `/projects/:id/${string}`, Success extends Schema.Top>(
  identifier: Id,
  path: Path,
  success: Success
) => HttpApiEndpoint.get(identifier, path, { params: projectParams, success, error: scoped })

/** A report of one project over an optional period. */
const report = <const Id extends string, const Path extends `/projects/:id/${string}`, Success extends Schema.Top>(
  identifier: Id,
  path: Path,
  success: Success
) =>
  HttpApiEndpoint.get(identifier, path, {
    params: projectParams,
    query: { period: Schema.optionalKey(Period) },
    success,
    error: scoped
  })

/** A paged list of everything in the token's reach, not of one project. */
const pagedList = <const Id extends string, const Path extends `/${string}`, Success extends Schema.Top>(
  identifier: Id,
  path: Path,
  success: Success
) => HttpApiEndpoint.get(identifier, path, { query: PageQuery, success, error: [BadRequest] })

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    op(pagedList("listProjects", "/projects", Envelope("ProjectListResponse", ProjectList)), {
      permission: "projects:read",
      summary: "Projects in the token's scope, each with a health snapshot",
      cli: ["projects", "list"],
      mcp: "list_projects"
    }),
    op(projectGet("getHealth", "/projects/:id/health", Envelope("HealthResponse", Health)), {
      permission: "projects:read",
      summary: "Health score, confidence and dimensions of a project",
      cli: ["health"],
      mcp: "get_health"
    }),
    op(projectGet("getBriefing", "/projects/:id/briefing", Envelope("BriefingResponse", Briefing)), {
      permission: "projects:read",
      summary: "Morning briefing with priorities",
      cli: ["briefing"],
      mcp: "get_briefing"
    }),
    op(HttpApiEndpoint.get("listSignals", "/projects/:id/signals", {
      params: projectParams,
      query: {
        dimension: Schema.optionalKey(Dimension),
        severity: Schema.optionalKey(Severity),
        active: Schema.optionalKey(Schema.Literals(["true", "false"])),
        ...PageQuery
      },
      success: Envelope("SignalListResponse", SignalList),
      error: [...scoped, BadRequest]
    }), {
      permission: "projects:read",
      summary: "Signals, optionally filtered by dimension and severity",
      cli: ["signals"],
      mcp: "list_signals"
    }),
    op(HttpApiEndpoint.delete("deleteProject", "/projects/:id", dashboardOnlyOptions(projectParams)), dashboardOnly)
  )
  .annotateMerge(OpenApi.annotations({ title: "Projects", description: "Websites, their health, briefing and signals" })) {}

export class ReportsApi extends HttpApiGroup.make("reports")
  .add(
    op(report("getAnalytics", "/projects/:id/analytics", Envelope("AnalyticsResponse", Analytics)), {
      permission: "analytics:read",
      summary: "Traffic analytics for a period",
      cli: ["analytics"],
      mcp: "get_analytics"
    }),
    op(report("getRevenue", "/projects/:id/revenue", Envelope("RevenueResponse", Revenue)), {
      permission: "revenue:read",
      summary: "Revenue report",
      cli: ["revenue"],
      mcp: "get_revenue"
    }),
    op(report("getChurn", "/projects/:id/churn", Envelope("ChurnResponse", Churn)), {
      permission: "revenue:read",
      summary: "Churn report",
      cli: ["churn"],
      mcp: "get_churn"
    }),
    op(report("getSeo", "/projects/:id/seo", Envelope("SeoResponse", Seo)), {
      permission: "seo:read",
      summary: "Search (SEO) report",
      cli: ["seo"],
      mcp: "get_seo"
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Reports", description: "Analytics, revenue, churn and search reports" })) {}

const integrationParams = { id: Schema.String, provider: Schema.String }

export class IntegrationsApi extends HttpApiGroup.make("integrations")
  .add(
    op(projectGet("listIntegrations", "/projects/:id/integrations", Envelope("IntegrationListResponse", IntegrationList)), {
      permission: "integrations:read",
      summary: "Integrations of a project",
      cli: ["integrations", "list"],
      mcp: "list_integrations"
    }),
    op(HttpApiEndpoint.post("syncIntegration", "/projects/:id/integrations/:provider/sync", {
      params: integrationParams,
      payload: [SyncPayload, Schema.Null],
      success: Envelope("SyncResponse", SyncResult, { status: 202 }),
      error: scoped
    }).middleware(Idempotency), {
      permission: "integrations:sync",
      kind: "write",
      summary: "Queue a sync of one integration",
      cli: ["integrations", "sync"],
      mcp: "sync_integration",
      openWorld: true
    }),
    op(
      HttpApiEndpoint.post("connectIntegration", "/projects/:id/integrations/:provider", dashboardOnlyOptions(integrationParams))
        .middleware(Idempotency),
      dashboardOnly
    ),
    op(
      HttpApiEndpoint.delete("disconnectIntegration", "/projects/:id/integrations/:provider", dashboardOnlyOptions(integrationParams)),
      dashboardOnly
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Integrations", description: "Data providers and sync" })) {}

export class ExpensesApi extends HttpApiGroup.make("expenses")
  .add(
    op(HttpApiEndpoint.get("listExpenses", "/projects/:id/expenses", {
      params: projectParams,
      query: PageQuery,
      success: Envelope("ExpenseListResponse", ExpenseList),
      error: [...scoped, BadRequest]
    }), {
      permission: "expenses:read",
      summary: "Expenses of a project",
      cli: ["expenses", "list"],
      mcp: "list_expenses"
    }),
    op(HttpApiEndpoint.post("createExpense", "/projects/:id/expenses", {
      params: projectParams,
      payload: CreateExpense,
      success: Envelope("ExpenseCreatedResponse", ExpenseCreated, { status: 201 }),
      error: scoped
    }).middleware(Idempotency), {
      permission: "expenses:write",
      kind: "write",
      summary: "Record an expense",
      cli: ["expenses", "create"],
      mcp: "create_expense"
    }),
    op(HttpApiEndpoint.delete("deleteExpense", "/projects/:id/expenses/:expenseId", {
      params: { id: Schema.String, expenseId: Schema.String },
      success: Envelope("ExpenseDeletedResponse", ExpenseDeleted),
      error: scoped
    }), {
      permission: "expenses:write",
      kind: "destructive",
      summary: "Delete an expense (kept, marked deleted)",
      cli: ["expenses", "delete"],
      mcp: "delete_expense",
      idempotent: true
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Expenses", description: "Costs recorded per project" })) {}

export class TokensApi extends HttpApiGroup.make("tokens")
  .add(
    op(pagedList("listTokens", "/tokens", Envelope("TokenListResponse", TokenList)), {
      permission: "tokens:read",
      summary: "Token metadata, never a secret",
      cli: ["tokens", "list"],
      mcp: "list_tokens"
    }),
    // Before `/tokens/:id` in the group; only `DELETE /tokens/:id` exists, so a GET never matches it anyway.
    op(HttpApiEndpoint.get("getCurrentToken", "/tokens/current", {
      success: Envelope("CurrentTokenResponse", TokenMetadata)
    }), {
      permission: AUTHENTICATED,
      summary: "The calling token's own metadata (who am I), never a secret",
      cli: null,
      mcp: null
    }),
    op(HttpApiEndpoint.post("createToken", "/tokens", {
      payload: [CreateTokenPayload, Schema.Null],
      success: [
        Envelope("TokenPreviewResponse", TokenPreview),
        Envelope("TokenMintedResponse", TokenMinted, { status: 201 })
      ],
      error: [...scoped, BadRequest]
    }).middleware(Idempotency), {
      permission: "tokens:write",
      kind: "write",
      confirmGate: true,
      summary: "Mint a token (preview unless confirm: true)",
      cli: ["tokens", "create"],
      mcp: "create_token"
    }),
    op(HttpApiEndpoint.delete("revokeToken", "/tokens/:id", {
      params: { id: Schema.String },
      query: RevokeQuery,
      payload: [RevokePayload, Schema.Null],
      success: [Envelope("RevokePreviewResponse", RevokePreview), Envelope("TokenRevokedResponse", TokenRevoked)],
      error: [...scoped, Conflict]
    }), {
      permission: "tokens:write",
      kind: "destructive",
      confirmGate: true,
      summary: "Revoke a token (preview unless confirmed)",
      cli: ["tokens", "revoke"],
      mcp: "revoke_token",
      idempotent: true
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Tokens", description: "Access tokens: list, the caller's own, mint, revoke" })) {}

// Middleware added first runs innermost: the checks below run bottom-up, RequestErrors outermost, then
// Authentication (401), RateLimit (429), Entitlement (402), ProjectAccess (403), TokenUsage; every POST's
// Idempotency is declared on the endpoint itself and so runs inside them all, seeing the authenticated token.
export class SiteHealthApi extends documentedApi(
  HttpApi.make("sitehealth")
    .add(ProjectsApi, ReportsApi, IntegrationsApi, ExpensesApi, TokensApi)
    .middleware(TokenUsage)
    .middleware(ProjectAccess)
    .middleware(Entitlement)
    .middleware(RateLimit)
    .middleware(Authentication)
    .middleware(RequestErrors)
    .prefix("/api/v1"),
  {
    title: "sitehealth API",
    description:
      "Health, briefing, signals, analytics, revenue, churn, SEO, integrations and expenses of websites. Every response under /api/v1 is an envelope: {status:'success', data} or {status:'error', error:{code, message, type}}."
  }
) {}

/** An endpoint's `Operation` annotation; undefined when it has none (the middleware then refuses the call). */
export const operationOf = (endpoint: { readonly annotations: Context.Context<never> }): Operation | undefined =>
  Context.getOrUndefined(endpoint.annotations, OperationAnnotation)

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
