/**
 * Turns what the framework would answer with an empty body into enveloped errors: undecodable requests
 * become 400 with the offending fields, oversized bodies 413, defects a logged 500 that says nothing of
 * its cause.
 */
import { RequestErrors } from "@sitehealth/domain/Authentication"
import { errorBody } from "@sitehealth/domain/Envelope"
import { BadRequest, clipInput, InternalError, PayloadTooLarge, Unavailable } from "@sitehealth/domain/Errors"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as SchemaIssue from "effect/SchemaIssue"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const slotName: Record<string, string> = {
  Params: "path",
  Query: "query",
  Payload: "body",
  Headers: "headers"
}

export const toBadRequest = (error: HttpApiError.HttpApiSchemaError): BadRequest => {
  const slot = slotName[error.kind] ?? error.kind.toLowerCase()
  const issues = formatIssues(error.cause.issue).issues.slice(0, 10).map((issue) => {
    const path = (issue.path ?? []).map((p) => String(Predicate.hasProperty(p, "key") ? p.key : p))
    const message = issue.message === "Expected no excess property" ? "Unknown field" : issue.message
    // The schema's messages quote the offending value ("got …") and a path can be an unknown 60 KB key:
    // both are clipped, so a 400 stays a few hundred bytes whatever was sent.
    return { path: clipInput([slot, ...path].join("."), 200), message: clipInput(message, 300) }
  })
  if (issues.some((i) => i.message === "Expected a valid JSON body")) {
    return new BadRequest({ message: "The body is not valid JSON", type: "invalid_json" })
  }
  const summary = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join("; ")
  return new BadRequest({ message: `Invalid request: ${summary}`, type: "invalid_request", issues })
}

/** The body limit's failure: an HttpServerError around a RequestParseError, or that parse error alone. */
export const isBodyTooLarge = (defect: unknown): boolean => {
  if (!Predicate.hasProperty(defect, "reason")) return false
  const reason = defect.reason
  return reason === "BodyTooLarge" || (Predicate.hasProperty(reason, "reason") && reason.reason === "BodyTooLarge")
}

/** Database failures that say "not now" rather than "this is a bug": the caller should retry. */
const TRANSIENT_SQL_REASONS = new Set([
  "ConnectionError",
  "AuthenticationError",
  "LockTimeoutError",
  "StatementTimeoutError",
  "DeadlockError",
  "SerializationError"
])

/**
 * SQLSTATEs the driver files under UnknownError that still mean "not now": the server is stopping, restarting
 * or starting up — 57P01 admin_shutdown (our session was terminated), 57P02 crash_shutdown, 57P03
 * cannot_connect_now ("the database system is shutting down / starting up"). Seen on every Postgres restart.
 */
const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03"])

export const isTransientDatabaseFailure = (defect: unknown): boolean => {
  const d = defect as { _tag?: string; reason?: { _tag?: string; cause?: { code?: unknown } } } | undefined
  if (d?._tag !== "SqlError") return false
  if (TRANSIENT_SQL_REASONS.has(d.reason?._tag ?? "")) return true
  const code = d.reason?.cause?.code
  return d.reason?._tag === "UnknownError" && typeof code === "string" && TRANSIENT_SQLSTATES.has(code)
}

/**
 * Seconds a client is told to wait (Retry-After) on a 503: a database restart or failover takes a few seconds,
 * and clients that retry at once only add load while it comes back.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5

const retryAfterOn503 = (_request: unknown, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(
    response.status === 503
      ? HttpServerResponse.setHeader(response, "retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS))
      : response
  )

export const unsupportedMediaType = () =>
  HttpServerResponse.jsonUnsafe(
    errorBody(415, "Send the body as JSON with Content-Type: application/json", "unsupported_media_type"),
    { status: 415 }
  )

export const RequestErrorsLive = Layer.succeed(RequestErrors, (httpEffect, { endpoint }) =>
  httpEffect.pipe(
    Effect.map((response) => (response.status === 415 ? unsupportedMediaType() : response)),
    Effect.catchCause((cause): Effect.Effect<never, BadRequest | PayloadTooLarge | InternalError | Unavailable> => {
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") {
        const error = failure.value
        if (HttpApiError.HttpApiSchemaError.is(error)) {
          if (error.kind === "Body" || error.kind === "ResponseHeaders") {
            // Our own response failed its schema: a bug, not the caller's fault.
            return Effect.andThen(
              Effect.logError(
                `${endpoint.identifier}: response failed its schema`,
                Cause.pretty(Cause.fail(error.cause))
              ),
              Effect.fail(InternalError.of())
            )
          }
          return Effect.fail(toBadRequest(error))
        }
        return Effect.failCause(cause as Cause.Cause<never>)
      }
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const defect = Cause.findDefect(cause)
      if (defect._tag === "Success" && isBodyTooLarge(defect.success)) {
        return Effect.fail(new PayloadTooLarge({ message: "The request body is too large", type: "payload_too_large" }))
      }
      if (defect._tag === "Success" && isTransientDatabaseFailure(defect.success)) {
        return Effect.logWarning(
          `${endpoint.identifier}: database unavailable: ${
            String(Predicate.hasProperty(defect.success, "message") ? defect.success.message : undefined)
          }`
        ).pipe(
          // The request is in the fiber's context here; the unsafe form keeps it out of this callback's type.
          Effect.andThen(Effect.withFiber((fiber) =>
            Effect.sync(() => HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, retryAfterOn503))
          )),
          Effect.andThen(
            Effect.fail(
              new Unavailable({ message: "The database is unavailable right now; retry shortly", type: "unavailable" })
            )
          )
        )
      }
      return Effect.andThen(
        Effect.logError(`${endpoint.identifier}: unexpected error`, Cause.pretty(cause)),
        Effect.fail(InternalError.of())
      )
    })
  ))
