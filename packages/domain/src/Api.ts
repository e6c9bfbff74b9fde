/** The one HttpApi contract of /api/v1. */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication, Idempotency, IDEMPOTENCY_KEY_MAX_LENGTH, RequestErrors } from "./Authentication.ts"
import { PageQuery, Period } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "./Middleware.ts"
import { operationOf } from "./Permissions.ts"
import { BadRequestWire, ConflictWire, ForbiddenWire, NotFoundWire } from "./Errors.ts"
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
  TokenMinted,
  TokenPreview,
  TokenRevoked
} from "./Tokens.ts"

/**
 * Documents an endpoint from the operation table: summary, the permission it needs, whether it is
 * confirm-gated — in prose and as `x-permission`, `x-kind`, `x-confirm-gate` for tools that derive from it.
 */
const op = <E extends { readonly identifier: string }>(endpoint: E): E => {
  const operation = operationOf(endpoint.identifier)!
  const access = operation.permission === null
    ? "Dashboard-only: always answers 403 `dashboard_only` (after authentication, rate limit and entitlement)."
    : `Requires the \`${operation.permission}\` permission.`
  const gate = operation.confirmGate ? " Changes nothing and answers a preview unless confirmed." : ""
  const top = endpoint as unknown as HttpApiEndpoint.Top
  const idempotent = top.middlewares.has(Idempotency as any)
  const retry = idempotent
    ? " Accepts an `Idempotency-Key` header: a retry with the same key and body replays the first answer (`Idempotent-Replayed: true`) instead of acting twice."
    : ""
  // annotateMerge keeps the endpoint's type; the cast only spares restating its generics here.
  return top.annotateMerge(
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
  ) as unknown as E
}

const withIdempotencyKeyParameter = (operation: Record<string, any>): Record<string, any> => ({
  ...operation,
  parameters: [
    ...(operation.parameters ?? []),
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
const scoped = [NotFoundWire, ForbiddenWire] as const

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    op(HttpApiEndpoint.get("listProjects", "/projects", {
      query: PageQuery,
      success: Envelope("ProjectListResponse", ProjectList),
      error: [BadRequestWire]
    })),
    op(HttpApiEndpoint.get("getHealth", "/projects/:id/health", {
      params: projectParams,
      success: Envelope("HealthResponse", Health),
      error: scoped
    })),
    op(HttpApiEndpoint.get("getBriefing", "/projects/:id/briefing", {
      params: projectParams,
      success: Envelope("BriefingResponse", Briefing),
      error: scoped
    })),
    op(HttpApiEndpoint.get("listSignals", "/projects/:id/signals", {
      params: projectParams,
      query: {
        dimension: Schema.optionalKey(Dimension),
        severity: Schema.optionalKey(Severity),
        active: Schema.optionalKey(Schema.Literals(["true", "false"])),
        ...PageQuery
      },
      success: Envelope("SignalListResponse", SignalList),
      error: [...scoped, BadRequestWire]
    })),
    op(HttpApiEndpoint.delete("deleteProject", "/projects/:id", {
      params: projectParams,
      success: Envelope("NeverResponse", Schema.Struct({})),
      error: scoped
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Projects", description: "Websites, their health, briefing and signals" })) {}

export class ReportsApi extends HttpApiGroup.make("reports")
  .add(
    op(HttpApiEndpoint.get("getAnalytics", "/projects/:id/analytics", {
      params: projectParams,
      query: { period: Schema.optionalKey(Period) },
      success: Envelope("AnalyticsResponse", Analytics),
      error: scoped
    })),
    op(HttpApiEndpoint.get("getRevenue", "/projects/:id/revenue", {
      params: projectParams,
      query: { period: Schema.optionalKey(Period) },
      success: Envelope("RevenueResponse", Revenue),
      error: scoped
    })),
    op(HttpApiEndpoint.get("getChurn", "/projects/:id/churn", {
      params: projectParams,
      query: { period: Schema.optionalKey(Period) },
      success: Envelope("ChurnResponse", Churn),
      error: scoped
    })),
    op(HttpApiEndpoint.get("getSeo", "/projects/:id/seo", {
      params: projectParams,
      query: { period: Schema.optionalKey(Period) },
      success: Envelope("SeoResponse", Seo),
      error: scoped
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Reports", description: "Analytics, revenue, churn and search reports" })) {}

const integrationParams = { id: Schema.String, provider: Schema.String }

export class IntegrationsApi extends HttpApiGroup.make("integrations")
  .add(
    op(HttpApiEndpoint.get("listIntegrations", "/projects/:id/integrations", {
      params: projectParams,
      success: Envelope("IntegrationListResponse", IntegrationList),
      error: scoped
    })),
    op(HttpApiEndpoint.post("syncIntegration", "/projects/:id/integrations/:provider/sync", {
      params: integrationParams,
      payload: [SyncPayload, Schema.Null],
      success: Envelope("SyncResponse", SyncResult, { status: 202 }),
      error: scoped
    }).middleware(Idempotency)),
    op(HttpApiEndpoint.post("connectIntegration", "/projects/:id/integrations/:provider", {
      params: integrationParams,
      success: Envelope("NeverResponse", Schema.Struct({})),
      error: scoped
    }).middleware(Idempotency)),
    op(HttpApiEndpoint.delete("disconnectIntegration", "/projects/:id/integrations/:provider", {
      params: integrationParams,
      success: Envelope("NeverResponse", Schema.Struct({})),
      error: scoped
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Integrations", description: "Data providers and sync" })) {}

export class ExpensesApi extends HttpApiGroup.make("expenses")
  .add(
    op(HttpApiEndpoint.get("listExpenses", "/projects/:id/expenses", {
      params: projectParams,
      query: PageQuery,
      success: Envelope("ExpenseListResponse", ExpenseList),
      error: [...scoped, BadRequestWire]
    })),
    op(HttpApiEndpoint.post("createExpense", "/projects/:id/expenses", {
      params: projectParams,
      payload: CreateExpense,
      success: Envelope("ExpenseCreatedResponse", ExpenseCreated, { status: 201 }),
      error: scoped
    }).middleware(Idempotency)),
    op(HttpApiEndpoint.delete("deleteExpense", "/projects/:id/expenses/:expenseId", {
      params: { id: Schema.String, expenseId: Schema.String },
      success: Envelope("ExpenseDeletedResponse", ExpenseDeleted),
      error: scoped
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Expenses", description: "Costs recorded per project" })) {}

export class TokensApi extends HttpApiGroup.make("tokens")
  .add(
    op(HttpApiEndpoint.get("listTokens", "/tokens", {
      query: PageQuery,
      success: Envelope("TokenListResponse", TokenList),
      error: [BadRequestWire]
    })),
    op(HttpApiEndpoint.post("createToken", "/tokens", {
      payload: [CreateTokenPayload, Schema.Null],
      success: [
        Envelope("TokenPreviewResponse", TokenPreview),
        Envelope("TokenMintedResponse", TokenMinted, { status: 201 })
      ],
      error: [...scoped, BadRequestWire]
    }).middleware(Idempotency)),
    op(HttpApiEndpoint.delete("revokeToken", "/tokens/:id", {
      params: { id: Schema.String },
      query: RevokeQuery,
      payload: [RevokePayload, Schema.Null],
      success: [Envelope("RevokePreviewResponse", RevokePreview), Envelope("TokenRevokedResponse", TokenRevoked)],
      error: [...scoped, ConflictWire]
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Tokens", description: "Access tokens: list, mint, revoke" })) {}

// Middleware added first runs innermost: the checks below run bottom-up, RequestErrors outermost, then
// Authentication (401), RateLimit (429), Entitlement (402), ProjectAccess (403), TokenUsage; every POST's
// Idempotency is declared on the endpoint itself and so runs inside them all, seeing the authenticated token.
export class SiteHealthApi extends HttpApi.make("sitehealth")
  .add(ProjectsApi, ReportsApi, IntegrationsApi, ExpensesApi, TokensApi)
  .middleware(TokenUsage)
  .middleware(ProjectAccess)
  .middleware(Entitlement)
  .middleware(RateLimit)
  .middleware(Authentication)
  .middleware(RequestErrors)
  .prefix("/api/v1")
  // An unknown body field is an error, not silently dropped: a typo like "permisions" must not mint a
  // token with the caller's full permissions.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  // Report every invalid field of a request at once, not just the first.
  .annotate(HttpApi.QueryParseOptions, { errors: "all" })
  .annotateMerge(
    OpenApi.annotations({
      title: "sitehealth API",
      version: "1.0.0",
      description:
        "Health, briefing, signals, analytics, revenue, churn, SEO, integrations and expenses of websites. Every response under /api/v1 is an envelope: {status:'success', data} or {status:'error', error:{code, message, type}}."
    })
  ) {}
