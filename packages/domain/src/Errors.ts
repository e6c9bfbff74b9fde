/**
 * The API's errors, each declared once: a tagged error class that handlers fail with, whose encoded form
 * IS the error envelope (written by `errorBody` in Envelope.ts) and which carries its HTTP status as the
 * `httpApiStatus` annotation. The server, the typed
 * client, the CLI, MCP and the OpenAPI document all read these classes and nothing else.
 */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { errorBody, type ErrorEnvelope, isErrorEnvelope } from "./Envelope.ts"

/** An error's fields as the class's struct sees them, before they are put into the envelope. */
interface ErrorFields {
  readonly _tag: string
  readonly message: string
  readonly type: string
  readonly [extra: string]: unknown
}

const base = { message: Schema.String, type: Schema.String }

/**
 * Declares an API error class. The class's struct is rebuilt with one more encoding step, from its fields to
 * the envelope, so `Schema.encode(Class)` gives the envelope and `Schema.decode(Class)` reads one: no second
 * (wire) schema exists. The step is added on the AST because its transformation is written once for every
 * error, which the typed `Schema.decodeTo` cannot check for generic fields. The class's static `Encoded`
 * type therefore still names the fields; `ErrorEnvelope` (Envelope.ts) is the type of what goes out.
 */
export const ApiError = <Self>() =>
<const Tag extends string, const Extra extends Schema.Struct.Fields>(
  tag: Tag,
  options: {
    readonly status: number
    /** What `error.code` says; the status unless given (402 says `trial_expired`). */
    readonly code?: number | string
    readonly identifier: string
    readonly description: string
    readonly fields: Extra
  }
) => {
  const code = options.code ?? options.status
  const fields = Schema.TaggedStruct(tag, { ...base, ...options.fields })
  const wire = Schema.Struct({
    status: Schema.Literal("error"),
    error: Schema.Struct({ code: Schema.Literal(code), ...base, ...options.fields })
  })
  const toEnvelope = SchemaAST.decodeTo(
    wire.ast,
    fields.ast,
    SchemaTransformation.transform<ErrorFields, ErrorEnvelope>({
      decode: ({ error: { code: _code, message, type, ...extra } }) => ({ _tag: tag, message, type, ...extra }),
      encode: ({ _tag, message, type, ...extra }) => errorBody(code, message, type, extra)
    })
  )
  return Schema.Error<Self>(tag)(fields.rebuild(toEnvelope), {
    identifier: options.identifier,
    description: options.description,
    httpApiStatus: options.status
  })
}

/** 400: a malformed body, a wrong type, an unknown value, a missing field. */
export const Issue = Schema.Struct({
  path: Schema.String.annotate({ description: "Where: body.amount, query.period, path.id …" }),
  message: Schema.String
}).annotate({ identifier: "Issue" })
export class BadRequest extends ApiError<BadRequest>()("BadRequest", {
  status: 400,
  identifier: "BadRequestError",
  description:
    "The request is malformed: invalid JSON (`invalid_json`), a missing, unknown or wrongly typed field or value " +
    "(`invalid_request`, with `issues`).",
  fields: { issues: Schema.optionalKey(Schema.Array(Issue)) }
}) {}

/** 401: missing, malformed, unknown, revoked or expired token. The message is always the same. */
export class Unauthorized extends ApiError<Unauthorized>()("Unauthorized", {
  status: 401,
  identifier: "UnauthorizedError",
  description: "Missing or invalid Bearer token. The message is always `Invalid or expired token`.",
  fields: {}
}) {
  static readonly MESSAGE = "Invalid or expired token"
  static readonly of = (type: string) => new Unauthorized({ message: Unauthorized.MESSAGE, type })
}

/** 402: the account's trial or subscription has ended. Its `code` is the string `trial_expired`. */
export class TrialExpired extends ApiError<TrialExpired>()("TrialExpired", {
  status: 402,
  code: "trial_expired",
  identifier: "TrialExpiredError",
  description: "The account's trial or subscription has ended. `code` is the string `trial_expired`.",
  fields: {}
}) {
  static readonly of = () =>
    new TrialExpired({
      message: "Your trial or subscription has ended; subscribe to continue using the API.",
      type: "trial_expired"
    })
}

/**
 * 403: the token lacks a permission (`missing_permission`, with `permission`), the project is outside the
 * token's scope (`project_out_of_scope`), the action is dashboard-only (`dashboard_only`), or a token tried
 * to mint or revoke a token with more access than itself (`escalation`).
 */
export class Forbidden extends ApiError<Forbidden>()("Forbidden", {
  status: 403,
  identifier: "ForbiddenError",
  description:
    "The token lacks a permission (`type: missing_permission`, `permission` names it), the project is outside the " +
    "token's scope (`project_out_of_scope`), the action is dashboard-only (`dashboard_only`), or the token would " +
    "grant more than it has (`escalation`).",
  fields: { permission: Schema.optionalKey(Schema.String) }
}) {}

/** 404: the project, token, expense or route does not exist (or belongs to another account). */
export class NotFound extends ApiError<NotFound>()("NotFound", {
  status: 404,
  identifier: "NotFoundError",
  description: "The project, token, expense or route does not exist, or belongs to another account.",
  fields: {}
}) {}

/** 409: a conflict, e.g. a token revoking itself. */
export class Conflict extends ApiError<Conflict>()("Conflict", {
  status: 409,
  identifier: "ConflictError",
  description: "The request conflicts with the current state, e.g. a token revoking itself.",
  fields: {}
}) {}

/** 413: the request body is larger than the server accepts. */
export class PayloadTooLarge extends ApiError<PayloadTooLarge>()("PayloadTooLarge", {
  status: 413,
  identifier: "PayloadTooLargeError",
  description: "The request body is larger than the limit (64 KiB by default).",
  fields: {}
}) {}

/**
 * 422: an `Idempotency-Key` already used by this token for a different request (another body, endpoint or
 * path).
 */
export class IdempotencyKeyReused extends ApiError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  status: 422,
  identifier: "IdempotencyKeyReusedError",
  description:
    "The `Idempotency-Key` was already used by this token for a different request (`idempotency_key_reused`).",
  fields: {}
}) {
  static readonly of = () =>
    new IdempotencyKeyReused({
      message:
        "This Idempotency-Key was already used for a different request (another body or endpoint); use a new key",
      type: "idempotency_key_reused"
    })
}

/** 429: the token used up its requests for the current window. */
export class RateLimited extends ApiError<RateLimited>()("RateLimited", {
  status: 429,
  identifier: "RateLimitedError",
  description:
    "The token used up its requests for the current window. `limit`, `remaining` and `reset` (epoch seconds when the " +
    "window ends) mirror the X-RateLimit-* headers.",
  fields: { limit: Schema.Int, remaining: Schema.Int, reset: Schema.Int }
}) {}

/**
 * 500: an unexpected server error; nothing about its cause is sent. `requestId` (the response's X-Request-Id)
 * lets a user quote the request and an operator find its log line.
 */
export class InternalError extends ApiError<InternalError>()("InternalError", {
  status: 500,
  identifier: "InternalServerError",
  description:
    "An unexpected server error. Nothing about its cause is sent; it is logged on the server under `requestId` (also " +
    "the X-Request-Id header).",
  fields: { requestId: Schema.optionalKey(Schema.String) }
}) {
  static readonly of = () => new InternalError({ message: "Unexpected server error", type: "internal_error" })
}

/** 503: the database is unreachable. */
export class Unavailable extends ApiError<Unavailable>()("Unavailable", {
  status: 503,
  identifier: "UnavailableError",
  description: "The service cannot reach its database right now; retry later.",
  fields: {}
}) {}

/** Every error the API answers with, for the places that handle any of them (the CLI, MCP, idempotency). */
export const API_ERRORS = [
  BadRequest,
  Unauthorized,
  TrialExpired,
  Forbidden,
  NotFound,
  Conflict,
  PayloadTooLarge,
  IdempotencyKeyReused,
  RateLimited,
  InternalError,
  Unavailable
] as const
export type ApiError = InstanceType<(typeof API_ERRORS)[number]>

/** The class of an API error value, or undefined for anything else. */
export const apiErrorClassOf = (error: unknown): (typeof API_ERRORS)[number] | undefined =>
  API_ERRORS.find((ErrorClass) => error instanceof ErrorClass)

/** The HTTP status an error schema is answered with: its `httpApiStatus` annotation. */
export const httpStatusOf = (schema: Schema.Top): number | undefined => {
  const status = SchemaAST.resolve(schema.ast)?.httpApiStatus
  return typeof status === "number" ? status : undefined
}

/**
 * An API error as it goes on the wire: its status and its envelope, both read from its class; undefined for
 * anything that is not one of the API's errors.
 */
export const encodeApiError = (
  error: unknown
): { readonly status: number; readonly body: ErrorEnvelope } | undefined => {
  const ErrorClass = apiErrorClassOf(error)
  const status = ErrorClass && httpStatusOf(ErrorClass)
  if (ErrorClass === undefined || status === undefined) return undefined
  const body: unknown = Schema.encodeUnknownSync(ErrorClass)(error)
  return isErrorEnvelope(body) ? { status, body } : undefined
}

/**
 * Caller input quoted in an error message is cut to `max` characters (plus how long it was): a message is
 * read by people and by agents — the MCP tools hand it to a model — and must not echo a 60 KB field or a
 * megabyte path back. Never cuts a surrogate pair in half.
 */
export const clipInput = (input: string, max = 200): string => {
  if (input.length <= max) return input
  const cut = /[\ud800-\udbff]$/.test(input.slice(0, max)) ? input.slice(0, max - 1) : input.slice(0, max)
  return `${cut}… (${input.length} characters)`
}

export const notFound = (what: string) =>
  new NotFound({ message: `${clipInput(what, 300)} not found`, type: "not_found" })
export const badRequest = (message: string, type = "invalid_request") => new BadRequest({ message, type })
