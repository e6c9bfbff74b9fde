/**
 * The API's errors. Each is a tagged error that handlers fail with, plus a wire schema that puts it
 * on the wire inside the envelope `{"status":"error","error":{"code":…,"message":…,"type":…}}` with the
 * HTTP status annotated, so the server, the typed client and the OpenAPI document agree on one shape.
 */
import { Schema, SchemaTransformation } from "effect"

/** Builds the wire schema of an error class: `{status:"error", error:{code, message, type, ...extra}}`. */
const wire = <
  Self extends { readonly _tag: string; readonly message: string; readonly type: string },
  Extra extends Schema.Struct.Fields,
  const Code extends number | string
>(
  ErrorClass: Schema.Codec<Self, any, never, never>,
  options: {
    readonly tag: Self["_tag"]
    readonly status: number
    readonly code: Code
    readonly identifier: string
    readonly description: string
    readonly extra: Extra
  }
) => {
  const Body = Schema.Struct({
    code: Schema.Literal(options.code),
    message: Schema.String,
    type: Schema.String,
    ...options.extra
  })
  return Schema.Struct({ status: Schema.Literal("error"), error: Body }).pipe(
    Schema.decodeTo(
      ErrorClass,
      SchemaTransformation.transform({
        decode: (wire: any) => {
          const { code: _code, ...rest } = wire.error
          return { _tag: options.tag, ...rest }
        },
        encode: (error: any) => {
          const { _tag, ...rest } = error
          return { status: "error" as const, error: { code: options.code, ...rest } }
        }
      }) as any
    ),
    (schema) =>
      schema.annotate({
        identifier: options.identifier,
        description: options.description,
        httpApiStatus: options.status
      } as any)
  ) as unknown as Schema.Codec<Self, { readonly status: "error"; readonly error: Schema.Struct<typeof Body.fields>["Encoded"] }>
}

const base = { message: Schema.String, type: Schema.String }

/** 400: a malformed body, a wrong type, an unknown value, a missing field. */
export const Issue = Schema.Struct({
  path: Schema.String.annotate({ description: "Where: body.amount, query.period, path.id …" }),
  message: Schema.String
}).annotate({ identifier: "Issue" })
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  ...base,
  issues: Schema.optionalKey(Schema.Array(Issue))
}) {}
export const BadRequestWire = wire(BadRequest, {
  tag: "BadRequest",
  status: 400,
  code: 400,
  identifier: "BadRequestError",
  description:
    "The request is malformed: invalid JSON (`invalid_json`), a missing, unknown or wrongly typed field or value (`invalid_request`, with `issues`).",
  extra: { issues: Schema.optionalKey(Schema.Array(Issue)) }
})

/** 401: missing, malformed, unknown, revoked or expired token. The message is always the same. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", base) {
  static readonly MESSAGE = "Invalid or expired token"
  static readonly of = (type: string) => new Unauthorized({ message: Unauthorized.MESSAGE, type })
}
export const UnauthorizedWire = wire(Unauthorized, {
  tag: "Unauthorized",
  status: 401,
  code: 401,
  identifier: "UnauthorizedError",
  description: "Missing or invalid Bearer token. The message is always `Invalid or expired token`.",
  extra: {}
})

/** 402: the account's trial or subscription has ended. Its `code` is the string `trial_expired`. */
export class TrialExpired extends Schema.TaggedError<TrialExpired>()("TrialExpired", base) {
  static readonly of = () =>
    new TrialExpired({
      message: "Your trial or subscription has ended; subscribe to continue using the API.",
      type: "trial_expired"
    })
}
export const TrialExpiredWire = wire(TrialExpired, {
  tag: "TrialExpired",
  status: 402,
  code: "trial_expired",
  identifier: "TrialExpiredError",
  description: "The account's trial or subscription has ended. `code` is the string `trial_expired`.",
  extra: {}
})

/**
 * 403: the token lacks a permission (`missing_permission`, with `permission`), the project is outside the
 * token's scope (`project_out_of_scope`), the action is dashboard-only (`dashboard_only`), or a token tried
 * to mint or revoke a token with more access than itself (`escalation`).
 */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  ...base,
  permission: Schema.optionalKey(Schema.String)
}) {}
export const ForbiddenWire = wire(Forbidden, {
  tag: "Forbidden",
  status: 403,
  code: 403,
  identifier: "ForbiddenError",
  description:
    "The token lacks a permission (`type: missing_permission`, `permission` names it), the project is outside the token's scope (`project_out_of_scope`), the action is dashboard-only (`dashboard_only`), or the token would grant more than it has (`escalation`).",
  extra: { permission: Schema.optionalKey(Schema.String) }
})

/** 404: the project, token, expense or route does not exist (or belongs to another account). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", base) {}
export const NotFoundWire = wire(NotFound, {
  tag: "NotFound",
  status: 404,
  code: 404,
  identifier: "NotFoundError",
  description: "The project, token, expense or route does not exist, or belongs to another account.",
  extra: {}
})

/** 409: a conflict, e.g. a token revoking itself. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", base) {}
export const ConflictWire = wire(Conflict, {
  tag: "Conflict",
  status: 409,
  code: 409,
  identifier: "ConflictError",
  description: "The request conflicts with the current state, e.g. a token revoking itself.",
  extra: {}
})

/** 413: the request body is larger than the server accepts. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", base) {}
export const PayloadTooLargeWire = wire(PayloadTooLarge, {
  tag: "PayloadTooLarge",
  status: 413,
  code: 413,
  identifier: "PayloadTooLargeError",
  description: "The request body is larger than the limit (64 KiB by default).",
  extra: {}
})

/** 429: the token used up its requests for the current window. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...base,
  limit: Schema.Int,
  remaining: Schema.Int,
  reset: Schema.Int
}) {}
export const RateLimitedWire = wire(RateLimited, {
  tag: "RateLimited",
  status: 429,
  code: 429,
  identifier: "RateLimitedError",
  description:
    "The token used up its requests for the current window. `limit`, `remaining` and `reset` (epoch seconds when the window ends) mirror the X-RateLimit-* headers.",
  extra: { limit: Schema.Int, remaining: Schema.Int, reset: Schema.Int }
})

/**
 * 500: an unexpected server error; nothing about its cause is sent. `requestId` (the response's X-Request-Id)
 * lets a user quote the request and an operator find its log line.
 */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  ...base,
  requestId: Schema.optionalKey(Schema.String)
}) {
  static readonly of = () =>
    new InternalError({ message: "Unexpected server error", type: "internal_error" })
}
export const InternalErrorWire = wire(InternalError, {
  tag: "InternalError",
  status: 500,
  code: 500,
  identifier: "InternalServerError",
  description:
    "An unexpected server error. Nothing about its cause is sent; it is logged on the server under `requestId` (also the X-Request-Id header).",
  extra: { requestId: Schema.optionalKey(Schema.String) }
})

/** 503: the database is unreachable. */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", base) {}
export const UnavailableWire = wire(Unavailable, {
  tag: "Unavailable",
  status: 503,
  code: 503,
  identifier: "UnavailableError",
  description: "The service cannot reach its database right now; retry later.",
  extra: {}
})

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

export const notFound = (what: string) => new NotFound({ message: `${clipInput(what, 300)} not found`, type: "not_found" })
export const badRequest = (message: string, type = "invalid_request") => new BadRequest({ message, type })
