/**
 * The typed API client: `HttpApiClient.make(SiteHealthApi)` over fetch, so every request and response is
 * encoded and decoded by the contract itself. Around it: the Bearer token (the contract's client-side
 * Authentication middleware), the Idempotency-Key on POSTs, retries, and the translation of whatever
 * failed into a `CliFailure` with its exit code.
 *
 * Retries: GET requests, and POSTs (each carries its own Idempotency-Key, the same on every attempt, so the
 * API acts at most once), retry network errors and 5xx answers up to 3 times with exponential backoff
 * (250 ms, 500 ms, 1 s). A POST answered 409 with Retry-After (its key's first attempt is still running on
 * the server) is retried after that wait, within the same 3 retries. Any request answered 429 is retried
 * once after its Retry-After (the rate limit is checked before anything happens, so nothing was done), if
 * the wait is at most the cap (SITEHEALTH_MAX_RETRY_AFTER seconds, default 60); a second 429 is exit 7.
 * The waits come from the shared retry schedule and Retry-After reader (@sitehealth/domain/RetryAfter).
 */
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import { encodeApiError, Forbidden, RateLimited } from "@sitehealth/domain/Errors"
import { after, backoff, type RetryAdvice, retryAfterMillis, retrySchedule, stop } from "@sitehealth/domain/RetryAfter"
import { Clock, Context, Effect, Layer } from "effect"
import {
  FetchHttpClient,
  HttpClient,
  type HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { CliFailure, EXIT, exitCodeForError, exitCodeForStatus, localFailure } from "./Failure.ts"

export type Api = HttpApiClient.ForApi<typeof SiteHealthApi>

export interface RetryPolicy {
  readonly attempts: number
  readonly baseDelayMs: number
  readonly maxRetryAfterSeconds: number
}

/** SITEHEALTH_MAX_RETRY_AFTER's default (read in platform/Settings.ts). */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60

export const retryPolicy = (maxRetryAfterSeconds: number = DEFAULT_MAX_RETRY_AFTER_SECONDS): RetryPolicy => ({
  attempts: 3,
  baseDelayMs: 250,
  maxRetryAfterSeconds
})

/** What the transport saw last: the status of the final answer and why a 429 was not retried. */
interface Trace {
  lastStatus: number | null
  retryAfterSkipped: number | null
}

/** An answer worth sending again, lifted into the error channel so the retry schedule sees it. */
interface Again {
  readonly _tag: "Again"
  readonly response: HttpClientResponse.HttpClientResponse
  /** The answer's Retry-After in milliseconds (null when absent or unreadable). */
  readonly retryAfterMs: number | null
}
const isAgain = (u: unknown): u is Again => typeof u === "object" && u !== null && "_tag" in u && u._tag === "Again"

const withRetries = (policy: RetryPolicy, trace: Trace) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (effect, request) => {
    // Safe to send again: a read, or a POST whose Idempotency-Key makes the API act at most once.
    const keyed = request.method === "POST" && request.headers["idempotency-key"] !== undefined
    const idempotent = request.method === "GET" || request.method === "HEAD" || keyed
    const capMs = policy.maxRetryAfterSeconds * 1000
    let retriedRateLimit = false
    const advise = (input: HttpClientError.HttpClientError | Again): RetryAdvice => {
      if (!isAgain(input)) return idempotent ? backoff : stop
      const { response, retryAfterMs } = input
      if (response.status === 429) {
        // Once, and not counted: the rate limit is checked before anything happens, so nothing was done.
        const wait = retryAfterMs ?? 1000
        if (wait > capMs) {
          trace.retryAfterSkipped = Math.ceil(wait / 1000)
          return stop
        }
        retriedRateLimit = true
        return after(wait, false)
      }
      // 409 with Retry-After: the key's first attempt (one whose answer we never got) is still running.
      if (response.status === 409) return after(Math.min(retryAfterMs ?? 0, capMs))
      return backoff
    }
    const schedule = retrySchedule(
      {
        retries: policy.attempts,
        backoffBaseMs: policy.baseDelayMs,
        maxWaitMs: Number.POSITIVE_INFINITY,
        jitter: false
      },
      advise
    )
    const again = (response: HttpClientResponse.HttpClientResponse) =>
      Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<HttpClientResponse.HttpClientResponse, Again> => {
        const retryAfterMs = retryAfterMillis(response.headers["retry-after"], now)
        const worth = (response.status === 429 && !retriedRateLimit) ||
          (response.status >= 500 && idempotent) ||
          (response.status === 409 && keyed && retryAfterMs !== null)
        return worth ? Effect.fail({ _tag: "Again", response, retryAfterMs }) : Effect.succeed(response)
      })
    return effect.pipe(
      Effect.tap((response) => Effect.sync(() => void (trace.lastStatus = response.status))),
      Effect.flatMap(again),
      Effect.retry(schedule),
      Effect.catch((e) => (isAgain(e) ? Effect.succeed(e.response) : Effect.fail(e)))
    )
  })

/** A fresh key per POST, set before the retrying client, so every attempt of one call carries the same key. */
const addIdempotencyKey = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.mapRequest(
    client,
    (request) =>
      request.method === "POST" ? HttpClientRequest.setHeader(request, "idempotency-key", crypto.randomUUID()) : request
  )

export interface Connection {
  readonly baseUrl: string
  readonly token: string
  readonly retry: RetryPolicy
}

/** The client and the translator of its failures, for one server and token. */
export class ApiClient extends Context.Service<ApiClient, {
  readonly api: Api
  readonly call: <A, E, R>(request: Effect.Effect<A, E, R>) => Effect.Effect<A, CliFailure, R>
}>()("sitehealth/cli/ApiClient") {
  static readonly layer = (connection: Connection) =>
    Layer.effect(
      ApiClient,
      Effect.gen(function*() {
        const trace: Trace = { lastStatus: null, retryAfterSkipped: null }
        const api = yield* HttpApiClient.make(SiteHealthApi, {
          baseUrl: connection.baseUrl,
          transformClient: (client) => addIdempotencyKey(withRetries(connection.retry, trace)(client))
        })
        const call = <A, E, R>(request: Effect.Effect<A, E, R>) =>
          Effect.mapError(request, (error) => toFailure(error, trace, connection))
        return { api, call }
      })
    ).pipe(
      Layer.provide(
        HttpApiMiddleware.layerClient(Authentication, ({ next, request }) =>
          next(HttpClientRequest.bearerToken(request, connection.token)))
      ),
      Layer.provide(FetchHttpClient.layer)
    )
}

const messageOf = (u: unknown): string =>
  typeof u === "object" && u !== null && "message" in u && typeof u.message === "string" ? u.message : String(u)

/** The error's message with its causes' ("fetch failed" alone says little). */
const describeTransport = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    const message = messageOf(current)
    if (message !== "" && !parts.some((p) => p.includes(message))) parts.push(message)
    current = typeof current === "object" && "cause" in current ? (current as { cause: unknown }).cause : undefined
  }
  return parts.join(": ")
}

const toFailure = (error: unknown, trace: Trace, { baseUrl, retry }: Connection): CliFailure => {
  if (error instanceof CliFailure) return error
  // One of the contract's errors, decoded by HttpApiClient: `--json` prints it as the API sent it.
  const encoded = encodeApiError(error)
  if (encoded !== undefined) {
    let message = messageOf(error)
    if (error instanceof RateLimited && trace.retryAfterSkipped !== null) {
      message +=
        ` (retry after ${trace.retryAfterSkipped}s, longer than the ${retry.maxRetryAfterSeconds}s this client waits)`
    }
    if (error instanceof Forbidden && error.permission !== undefined) message += ` (needs ${error.permission})`
    return new CliFailure({ message, exitCode: exitCodeForError(error), envelope: encoded.body })
  }
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  if (tag === "HttpClientError" && trace.lastStatus === null) {
    return localFailure(EXIT.unreachable, "unreachable", `cannot reach ${baseUrl}: ${describeTransport(error)}`)
  }
  // An answer the contract does not describe (a proxy's HTML page, a status the endpoint never sends).
  const status = trace.lastStatus
  const code = status === null ? EXIT.failure : exitCodeForStatus(status)
  return localFailure(
    code,
    "unexpected_response",
    `unexpected answer from ${baseUrl}${status === null ? "" : ` (HTTP ${status})`}: ${describeTransport(error)}`
  )
}
