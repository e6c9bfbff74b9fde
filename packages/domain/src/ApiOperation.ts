/**
 * How /api/v1's endpoints are declared (Api.ts and its group modules): `op(endpoint, spec)` gives an endpoint its
 * `Operation` (permission, kind, confirm gate, CLI and MCP names), its `FastPath` when it has one (what the
 * server reads with the token, whether it keeps stored answers) and its OpenAPI prose, and the shapes the
 * groups share (a project's read, a report over a period, a paged list, a dashboard-only endpoint). Each group
 * has a module of its own (ApiProjects.ts, ApiReports.ts, ApiIntegrations.ts, ApiExpenses.ts, ApiTokens.ts), so
 * a client of a few endpoints (the web app's overview) reaches only their groups' schemas.
 */
import * as Context from "effect/Context"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as OpenApi from "effect/http-api/OpenApi"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as Schema from "effect/Schema"
import { Idempotency, IDEMPOTENCY_KEY_MAX_LENGTH } from "./Authentication.ts"
import { PageQuery, Period } from "./Common.ts"
import { type CsvExport, CsvExportAnnotation, withCsvExport } from "./Csv.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Forbidden, NotFound } from "./Errors.ts"
import { AUTHENTICATED, type Operation, OperationAnnotation } from "./Permissions.ts"

/**
 * What the server reads, with the token, in the hot path's one statement for a request to the endpoint, beyond
 * the token, its account and the project the path names (docs/architecture.md, "A request, from socket to
 * envelope"):
 * - `"health"`: the project's stored health snapshots of today (getHealth, listSignals), served as stored when current;
 * - `"projectList"`: the caller's page of projects, each with its kept list entry (listProjects; a path without a
 * project).
 */
export type PreRead = "health" | "projectList"

/**
 * How the endpoint's stored answers are keyed (docs/architecture.md, "Stored answers"): the key is the endpoint's
 * name and, as said here, its normalised query.
 * - `"whole"`: one answer per project, whatever the query (getBriefing);
 * - `"period"`: one per `period` (absent = 30d), the reports;
 * - `"signalFilters"`: one per set of signal filters (dimension, severity, active, limit), first page only.
 */
export type StoredAnswerKey = "whole" | "period" | "signalFilters"

/**
 * An endpoint's fast path, as its `FastPathAnnotation`: the performance plumbing is read from the endpoint the
 * request matched (the authentication middleware, once per endpoint) or from the endpoint object a handler names
 * (`ReportsApi.endpoints.getAnalytics`), never from a name written as a string, so renaming an endpoint keeps
 * its fast path. An endpoint without the annotation has none: the lookup reads the token and the path's project.
 */
export interface FastPath {
  readonly preRead: PreRead | null
  readonly storedAnswer: StoredAnswerKey | null
}

/** The annotation key of an endpoint's `FastPath` (absent: none). */
export class FastPathAnnotation extends Context.Service<FastPathAnnotation, FastPath>()("sitehealth/FastPath") {}

/**
 * An endpoint's `Operation` as written below: a read without a confirm gate unless it says otherwise. Whether it
 * names a project is not written: it follows from the path (`/projects/:id/…`), which is what the scope check reads.
 * `fastPath`, when given, becomes the endpoint's `FastPathAnnotation` (a field left out = null); it is not part of
 * the `Operation`, which clients derive their commands and tools from.
 */
export type OperationSpec =
  & Omit<Operation, "kind" | "confirmGate" | "project">
  & Partial<Pick<Operation, "kind" | "confirmGate">>
  & { readonly fastPath?: Partial<FastPath>; readonly csv?: CsvExport["tables"] }

/**
 * Declares what an endpoint is (its `Operation`: permission, kind, confirm gate, CLI and MCP names) as the
 * endpoint's annotation, and documents it from there: summary, the permission it needs, whether it is
 * confirm-gated — in prose and as `x-permission`, `x-kind`, `x-confirm-gate` for tools that derive from it.
 */
export const op = <
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
  endpoint: HttpApiEndpoint.HttpApiEndpoint<
    Id,
    Method,
    Path,
    Params,
    Query,
    Payload,
    Headers,
    Success,
    Error,
    Middleware,
    MiddlewareServices
  >,
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
    ? " Accepts an `Idempotency-Key` header: a retry with the same key and body replays the first answer " +
      "(`Idempotent-Replayed: true`) instead of acting twice."
    : ""
  const operationAnnotated = endpoint.annotate(OperationAnnotation, operation)
  const csv = spec.csv === undefined ? null : { tables: spec.csv }
  const annotated = csv === null ? operationAnnotated : operationAnnotated.annotate(CsvExportAnnotation, csv)
  const transforms = [
    ...(idempotent ? [withIdempotencyKeyParameter] : []),
    ...(csv === null ? [] : [withCsvExport(csv)])
  ]
  return (spec.fastPath === undefined
    ? annotated
    : annotated.annotate(FastPathAnnotation, {
      preRead: spec.fastPath.preRead ?? null,
      storedAnswer: spec.fastPath.storedAnswer ?? null
    })).annotateMerge(
      OpenApi.annotations({
        summary: operation.summary,
        description: `${access}${gate}${retry}`,
        override: {
          "x-permission": operation.permission,
          "x-kind": operation.kind,
          "x-confirm-gate": operation.confirmGate
        },
        // A middleware cannot declare headers, so the Idempotency-Key parameter is added to the document here, and
        // the CSV parameters and representation (Csv.ts), which the query schema does not carry.
        ...(transforms.length === 0
          ? {}
          : { transform: (o: Record<string, unknown>) => transforms.reduce((acc, f) => f(acc), o) })
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
        "Optional; 1–255 printable ASCII characters, unique per intended action (a UUID). Kept 24 h per token: the " +
        "same key and body replays the stored answer; another body answers 422; a key whose first request is still " +
        "running answers 409 with Retry-After.",
      schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: "^[\\x20-\\x7E]+$" }
    }
  ]
})

export const projectParams = { id: Schema.String }
export const scoped = [NotFound, Forbidden] as const

/** The endpoints the dashboard alone may call: always 403 through this API, so nothing is exposed by CLI or MCP. */
export const dashboardOnly: OperationSpec = {
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
export const dashboardOnlyOptions = <const Params extends Schema.Struct.Fields>(params: Params) => ({
  params,
  success: Envelope("NeverResponse", Schema.Struct({})),
  error: scoped
})

/** A read of one project (`/projects/:id/…`), answering 404/403 for a project outside the token's scope. */
export const projectGet = <
  const Id extends string,
  const Path extends `/projects/:id/${string}`,
  Success extends Schema.Top
>(
  identifier: Id,
  path: Path,
  success: Success
) => HttpApiEndpoint.get(identifier, path, { params: projectParams, success, error: scoped })

/** A report of one project over an optional period. */
export const report = <
  const Id extends string,
  const Path extends `/projects/:id/${string}`,
  Success extends Schema.Top
>(
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
export const pagedList = <const Id extends string, const Path extends `/${string}`, Success extends Schema.Top>(
  identifier: Id,
  path: Path,
  success: Success
) => HttpApiEndpoint.get(identifier, path, { query: PageQuery, success, error: [BadRequest] })

/** An endpoint's `Operation` annotation; undefined when it has none (the middleware then refuses the call). */
export const operationOf = (endpoint: { readonly annotations: Context.Context<never> }): Operation | undefined =>
  Context.getOrUndefined(endpoint.annotations, OperationAnnotation)

/** An endpoint's `FastPath` annotation; undefined when it has none. */
export const fastPathOf = (endpoint: { readonly annotations: Context.Context<never> }): FastPath | undefined =>
  Context.getOrUndefined(endpoint.annotations, FastPathAnnotation)
