/**
 * The Idempotency middleware of the POST endpoints (Stripe's idempotency keys). With an `Idempotency-Key`
 * header, a request is run at most once per token and key within 24 h:
 *
 * - the request is ONE unit of work with its key (IdempotencyRepo.atomically: one SQL transaction): the key
 *   is claimed, the handler runs, and its answer is stored, all committed together. A process that dies
 *   anywhere in between leaves neither the effect nor the key behind, so a retry runs the request once;
 * - the same key with the same request (SHA-256 of method, path and canonical JSON body) replays the stored
 *   answer — same status and body — with `Idempotent-Replayed: true`, and the handler does not run;
 * - another request under a stored key answers 422 `idempotency_key_reused`; any request under a key whose
 *   first request is still running answers 409 `idempotency_request_in_progress` with `Retry-After: 1` (its
 *   body cannot be compared yet: nothing of it is committed).
 *
 * What is stored, and committed with the request's writes: the endpoint's answers — successes (not the confirm
 * gate's previews, which change nothing) and the handler's own 4xx errors (404, 403, 400 from its rules), as
 * Stripe does. Not stored, the key left free: a request the API could not decode (400 with `issues`, 415),
 * which wrote nothing, and any 5xx, defect or interruption, which ROLLS BACK the request's writes with it: a
 * 5xx leaves nothing behind, and its retry with the key acts once. A token secret is never stored: a
 * mint's answer is kept with `secret: null` and `secretRedacted: true`, which is what its replay shows.
 *
 * It runs inside Authentication (see the tag in the domain), so it has the token and only authenticated,
 * permitted requests reach it. At most half the pool's connections are held by keyed units at once
 * (keyedUnitsFor): a keyed request beyond that waits for its turn without holding a connection.
 */
import {
  CurrentPrincipal,
  Idempotency,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENT_REPLAYED_HEADER,
  isValidIdempotencyKey
} from "@sitehealth/domain/Authentication"
import {
  API_ERRORS,
  apiErrorClassOf,
  BadRequest,
  Conflict,
  encodeApiError,
  Forbidden,
  IdempotencyKeyReused,
  NotFound
} from "@sitehealth/domain/Errors"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { createHash } from "node:crypto"
import { DatabasePool } from "../platform/Database.ts"
import { type ClaimInput, IdempotencyRepo, type StoredResponse } from "./IdempotencyRepo.ts"

/**
 * How many keyed units may run at once on this instance: half the database pool (at least one). Each
 * reserves a pool connection for its transaction while it runs — and may wait inside it (a row lock another
 * transaction holds, a slow handler). Beyond the limit a keyed request waits for its turn BEFORE its
 * transaction begins, holding no connection, so the other half of the pool always serves everything else
 * (reads, authentication, unkeyed writes). No pool (the memory store): no limit.
 */
export const keyedUnitsFor = (maxConnections: number): number => Math.max(1, Math.floor(maxConnections / 2))

/** The handlers' own errors: answers of the endpoint, stored and replayed like its successes. */
const STORED_ERRORS: ReadonlyArray<(typeof API_ERRORS)[number]> = [BadRequest, Forbidden, NotFound, Conflict]

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
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return null
  }
  if (!Predicate.isObject(json) || !Predicate.hasProperty(json, "data")) return body
  const data = json.data
  if (!Predicate.isObject(data)) return body
  if (Predicate.hasProperty(data, "preview") && data.preview === true) return null
  if ("secret" in data) return JSON.stringify({ ...json, data: { ...data, secret: null, secretRedacted: true } })
  return body
}

const textOf = (response: HttpServerResponse.HttpServerResponse): string | null => {
  const body = response.body
  if (body._tag === "Empty") return ""
  if (body._tag === "Uint8Array") return (body as { text?: string }).text ?? new TextDecoder().decode(body.body)
  return null
}

/** What to store of how the request ended; null for nothing (the key stays free). */
const outcome = (
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
): StoredResponse | null => {
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
  const ErrorClass = apiErrorClassOf(failure.value)
  // Anything else — above all HttpApiSchemaError, a request the API could not decode — leaves the key free.
  if (ErrorClass === undefined || !STORED_ERRORS.includes(ErrorClass)) return null
  const encoded = encodeApiError(failure.value)
  return encoded === undefined ? null : { status: encoded.status, body: JSON.stringify(encoded.body) }
}

/**
 * Whether the request's writes must not stand: it failed in a way that is not an answer of the endpoint (a
 * defect, an interruption, a database failure) or answered a 5xx. Rolled back, such a request did nothing,
 * which is what its 5xx tells the client — and its retry with the key acts exactly once.
 */
const mustRollBack = (
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>,
  stored: StoredResponse | null
): boolean => stored === null && (Exit.isFailure(exit) || exit.value.status >= 500)

/** Carries a request's ending out of a unit that is rolled back because of it. */
class RolledBack<E> {
  readonly exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>
  constructor(exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) {
    this.exit = exit
  }
}

const inProgress = () =>
  HttpServerResponse.jsonUnsafe(
    Schema.encodeSync(Conflict)(
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
    const pool = yield* Effect.serviceOption(DatabasePool)
    const gate = pool._tag === "Some" ? Semaphore.makeUnsafe(keyedUnitsFor(pool.value.maxConnections)) : null

    /** The unit of work of a keyed request; it ends in how the request ended (committed or rolled back). */
    const unit = <E, R>(input: ClaimInput, httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.gen(function*() {
        type Ending = Exit.Exit<HttpServerResponse.HttpServerResponse, E | IdempotencyKeyReused>
        const claim = yield* repo.claim(input)
        if (claim._tag === "Busy") return Exit.succeed(inProgress()) as Ending
        if (claim._tag === "Existing") {
          const { record } = claim
          if (record.requestHash !== input.requestHash) return Exit.fail(IdempotencyKeyReused.of()) as Ending
          // A stored row always has both (a CHECK of the table); without them there is nothing to replay yet.
          if (record.responseStatus === null || record.responseBody === null) {
            return Exit.succeed(inProgress()) as Ending
          }
          return Exit.succeed(replay(record.responseStatus, record.responseBody)) as Ending
        }
        const exit: Ending = yield* Effect.exit(httpEffect)
        const stored = outcome(exit)
        if (mustRollBack(exit, stored)) return yield* Effect.fail(new RolledBack(exit))
        if (stored !== null) yield* repo.complete(input, stored)
        return exit
      }).pipe(
        repo.atomically,
        Effect.catchIf(
          (e): e is RolledBack<E | IdempotencyKeyReused> => e instanceof RolledBack,
          (e) => Effect.succeed(e.exit)
        ),
        Effect.flatten
      )

    return Idempotency.of((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers[IDEMPOTENCY_KEY_HEADER]
        if (key === undefined) return yield* httpEffect
        if (!isValidIdempotencyKey(key)) {
          return yield* new BadRequest({
            message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters ` +
              `(got ${key.length} characters${
                key.length > 0 && key.length <= IDEMPOTENCY_KEY_MAX_LENGTH ? ", not all printable ASCII" : ""
              })`,
            type: "invalid_idempotency_key"
          })
        }
        const principal = yield* CurrentPrincipal
        // The body is read once and cached by the request: the payload decoder reads the same bytes. Read
        // here, before the transaction begins, so a slow upload never holds one open. If it cannot be read
        // (too large, cut off), the decoder meets the same failure and answers it; no key is involved.
        const body = yield* Effect.result(request.text)
        if (Result.isFailure(body)) return yield* httpEffect
        const now = new Date(yield* Clock.currentTimeMillis)
        const input: ClaimInput = {
          tokenId: principal.tokenId,
          key,
          requestHash: requestHash(request.method, request.url, body.success),
          now
        }
        // The sweep runs beside the unit, in its own statement outside its transaction (see IdempotencyRepo.sweep).
        const admitted = gate === null ? unit(input, httpEffect) : gate.withPermits(1)(unit(input, httpEffect))
        const [, response] = yield* Effect.all([repo.sweep(now), admitted], { concurrency: 2 })
        return response
      })
    )
  })
)
