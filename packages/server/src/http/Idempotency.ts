/**
 * The Idempotency middleware of the POST endpoints (Stripe's idempotency keys). With an `Idempotency-Key`
 * header, a request is run at most once per token and key within 24 h:
 *
 * - the key is claimed for the token (IdempotencyRepo.claim: one winner, also across instances);
 * - the same key with the same request (SHA-256 of method, path and canonical JSON body) replays the stored
 *   answer — same status and body — with `Idempotent-Replayed: true`, and the handler does not run;
 * - another request under the key answers 422 `idempotency_key_reused`; a key whose first request is still
 *   running answers 409 `idempotency_request_in_progress` with `Retry-After: 1`.
 *
 * What is stored: the endpoint's answers — successes (not the confirm gate's previews, which change nothing)
 * and the handler's own 4xx errors (404, 403, 400 from its rules), as Stripe does. Not stored, the key freed
 * for a retry: a request the API could not decode (400 with `issues`, 415), and any 5xx, defect or
 * interruption. A token secret is never stored: a mint's answer is kept with `secret: null` and
 * `secretRedacted: true`, which is what its replay shows.
 *
 * It runs inside Authentication (see the tag in the domain), so it has the token and only authenticated,
 * permitted requests reach it.
 */
import { Cause, Clock, Effect, Exit, Layer, Result, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import {
  CurrentPrincipal,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENT_REPLAYED_HEADER,
  Idempotency,
  IdempotencyKeyReused,
  isValidIdempotencyKey
} from "../../../domain/src/Authentication.ts"
import { BadRequest, BadRequestWire, Conflict, ConflictWire, ForbiddenWire, NotFoundWire } from "../../../domain/src/Errors.ts"
import { IdempotencyRepo } from "./IdempotencyRepo.ts"

/** The handlers' own errors: answers of the endpoint, stored and replayed like its successes. */
const STORED_ERRORS: Record<string, { readonly status: number; readonly wire: Schema.Codec<any, any> }> = {
  BadRequest: { status: 400, wire: BadRequestWire },
  Forbidden: { status: 403, wire: ForbiddenWire },
  NotFound: { status: 404, wire: NotFoundWire },
  Conflict: { status: 409, wire: ConflictWire }
}

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key])
  return out
}

/**
 * The body as compared: JSON with its object keys sorted and no whitespace, so `{"a":1,"b":2}` and
 * `{ "b": 2, "a": 1 }` are the same request. A body that is not JSON (or too deeply nested to re-encode)
 * is compared as sent; such a request is refused by the decoder anyway, and not stored.
 */
export const canonicalBody = (text: string): string => {
  if (text.trim() === "") return ""
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)))
  } catch {
    return text
  }
}

/** SHA-256 (hex) of method, path, sorted query and canonical body: what "the same request" means. */
export const requestHash = (method: string, url: string, body: string): string => {
  const parsed = new URL(url, "http://internal")
  parsed.searchParams.sort()
  return createHash("sha256")
    .update(`${method.toUpperCase()}\n${parsed.pathname}${parsed.search}\n${canonicalBody(body)}`)
    .digest("hex")
}

/**
 * The copy of an answer that may be stored. null: not to be stored (a preview, a non-JSON body). A mint's
 * secret is replaced by null and flagged: the secret exists in the one answer sent, nowhere else.
 */
export const storableSuccess = (body: string): string | null => {
  let json: any
  try {
    json = JSON.parse(body)
  } catch {
    return null
  }
  const data = json?.data
  if (data === null || typeof data !== "object") return body
  if (data.preview === true) return null
  if ("secret" in data) return JSON.stringify({ ...json, data: { ...data, secret: null, secretRedacted: true } })
  return body
}

const textOf = (response: HttpServerResponse.HttpServerResponse): string | null => {
  const body = response.body
  if (body._tag === "Empty") return ""
  if (body._tag === "Uint8Array") return (body as { text?: string }).text ?? new TextDecoder().decode(body.body)
  return null
}

/** What to keep of how the request ended; null to free the key instead. */
const outcome = (
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
): { readonly status: number; readonly body: string } | null => {
  if (Exit.isSuccess(exit)) {
    const response = exit.value
    // Only the endpoint's own successes: a 415 for a foreign content type is the framework's, and not an answer.
    if (response.status < 200 || response.status >= 300) return null
    const text = textOf(response)
    const body = text === null ? null : storableSuccess(text)
    return body === null ? null : { status: response.status, body }
  }
  const cause = exit.cause
  if (Cause.hasInterrupts(cause) || Cause.findDefect(cause)._tag === "Success") return null
  const failure = Cause.findErrorOption(cause)
  if (failure._tag !== "Some") return null
  const tag = (failure.value as { _tag?: unknown })?._tag
  const stored = typeof tag === "string" ? STORED_ERRORS[tag] : undefined
  // Anything else — above all HttpApiSchemaError, a request the API could not decode — frees the key.
  if (stored === undefined) return null
  try {
    return { status: stored.status, body: JSON.stringify(Schema.encodeUnknownSync(stored.wire)(failure.value)) }
  } catch {
    return null
  }
}

const inProgress = () =>
  HttpServerResponse.jsonUnsafe(
    Schema.encodeSync(ConflictWire)(
      new Conflict({
        message: "A request with this Idempotency-Key is still being processed; retry shortly",
        type: "idempotency_request_in_progress"
      })
    ),
    { status: 409, headers: { "retry-after": "1" } }
  )

const replay = (status: number, body: string) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "application/json",
    headers: { [IDEMPOTENT_REPLAYED_HEADER]: "true" }
  })

export const IdempotencyLive = Layer.effect(
  Idempotency,
  Effect.gen(function*() {
    const repo = yield* IdempotencyRepo

    const settle = (tokenId: string, key: string, exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
      const kept = outcome(exit)
      return (kept === null ? repo.release(tokenId, key) : repo.complete(tokenId, key, kept)).pipe(
        // The answer stands either way. If this write failed the key stays 'running': retries answer 409
        // until it is taken as abandoned (IdempotencyRepo.ABANDONED_AFTER_MS).
        Effect.catchCause((cause) => Effect.logError(`Idempotency: could not ${kept === null ? "free" : "store"} a key`, Cause.pretty(cause)))
      )
    }

    return Idempotency.of((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers[IDEMPOTENCY_KEY_HEADER]
        if (key === undefined) return yield* httpEffect
        if (!isValidIdempotencyKey(key)) {
          return yield* new BadRequest({
            message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (got ${key.length} characters${key.length > 0 && key.length <= IDEMPOTENCY_KEY_MAX_LENGTH ? ", not all printable ASCII" : ""})`,
            type: "invalid_idempotency_key"
          })
        }
        const principal = yield* CurrentPrincipal
        // The body is read once and cached by the request: the payload decoder reads the same bytes. If it
        // cannot be read (too large, cut off), the decoder meets the same failure and answers it; no key is
        // claimed for a request that never ran.
        const body = yield* Effect.result(request.text)
        if (Result.isFailure(body)) return yield* httpEffect
        const hash = requestHash(request.method, request.url, body.success)
        const now = new Date(yield* Clock.currentTimeMillis)
        const claim = yield* repo.claim({ tokenId: principal.tokenId, key, requestHash: hash, now })
        if (claim._tag === "Existing") {
          const { record } = claim
          if (record.requestHash !== hash) return yield* IdempotencyKeyReused.of()
          if (record.status === "running" || record.responseStatus === null || record.responseBody === null) {
            return inProgress()
          }
          return replay(record.responseStatus, record.responseBody)
        }
        return yield* Effect.onExit(httpEffect, (exit) => settle(principal.tokenId, key, exit))
      })
    )
  })
)
