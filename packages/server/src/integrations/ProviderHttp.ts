/**
 * The one HTTP client every provider connector uses: an effect/http `HttpClient` (fetch underneath) with
 * JSON in and out, a timeout per attempt, and polite retries on one schedule (@sitehealth/domain/RetryAfter)
 * — 429 (and Google's 403 rateLimitExceeded / userRateLimitExceeded, its way of saying 429) and 503 honour
 * Retry-After (seconds or an HTTP date, capped), other 5xx, timeouts and network
 * failures back off exponentially with full jitter, a bounded number of attempts; other 4xx fail at once
 * with a kind the caller can act on (unauthorized → "reconnect", not_found → "check the site id").
 * Credentials travel only in the request headers or body given by the caller; nothing here logs a header
 * or a body, and errors carry the URL without its query. The client's own spans and trace propagation are
 * off: the one span per call below names the path template only, and no trace header reaches a provider.
 */
import { after, type RetryAdvice, retryAfterMillis, retrySchedule, stop } from "@sitehealth/domain/RetryAfter"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as Headers from "effect/http/Headers"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

export const PROVIDER_ERROR_KINDS = [
  "unauthorized", // 401: credentials wrong, revoked or expired
  "forbidden", // 403: credentials lack a permission
  "not_found", // 404: unknown account, site or property
  "invalid_request", // other 4xx
  "rate_limited", // 429 after every retry
  "server", // 5xx after every retry
  "timeout", // no answer within the timeout, after every retry
  "network", // connection refused, reset, DNS…, after every retry
  "malformed" // the body was not the JSON the connector expects
] as const
export type ProviderErrorKind = (typeof PROVIDER_ERROR_KINDS)[number]

export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  kind: Schema.Literals(PROVIDER_ERROR_KINDS),
  status: Schema.NullOr(Schema.Number),
  message: Schema.String
}) {}

export interface ProviderRequest {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  /** A JSON body (sent as application/json) or a form (application/x-www-form-urlencoded). */
  readonly json?: unknown
  readonly form?: Readonly<Record<string, string>>
}

export interface ProviderResponse {
  readonly status: number
  /** The parsed JSON body: connectors decode it with their schemas (Decode.ts). */
  readonly json: unknown
  readonly headers: Headers.Headers
}

export interface ProviderHttpOptions {
  /** Per attempt. */
  readonly timeoutMs: number
  /** Attempts in all (1 = no retry). */
  readonly maxAttempts: number
  /** First backoff step; attempt n waits a uniformly random time in [0, base × 2^(n−1)] (full jitter). */
  readonly backoffBaseMs: number
  /** No single wait (Retry-After included) is longer than this. */
  readonly maxWaitMs: number
}

export const DEFAULT_PROVIDER_HTTP: ProviderHttpOptions = {
  timeoutMs: 30_000,
  maxAttempts: 5,
  backoffBaseMs: 500,
  maxWaitMs: 60_000
}

export interface ProviderHttpShape {
  readonly request: (request: ProviderRequest) => Effect.Effect<ProviderResponse, ProviderError>
}

/** Where a failure happened, without the query string (which may carry an API key for some providers). */
const where = (url: string): string => url.split("?")[0]

/**
 * The provider whose connector is making the calls ("stripe", "plausible"…), for the spans: set by the
 * sync runner around a connector's run. Unset (an admin CLI check), the span names the host instead.
 */
export const CurrentProvider = Context.Reference<string | null>("sitehealth/ProviderHttp/CurrentProvider", {
  defaultValue: () => null
})

/** A path segment kept as is in a template: a word or an API version (`v1`, `searchAnalytics`, `query`). */
const WORD = /^(?:[A-Za-z_-]+|v\d+)$/

/**
 * The URL's path with every segment that is not a plain word replaced by `{}`: Stripe object ids
 * (`cus_9s6XKz…`), Search Console's encoded site URL, any id a provider puts in its paths. A trace may
 * go to a third-party backend: it gets the shape of the call, never an account's identifiers, and never
 * the query string (an API key for some providers) or the user-info part of the URL.
 */
export const pathTemplate = (url: string): string => {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    return "{}"
  }
  return path.split("/").map((segment) => (segment === "" || WORD.test(segment) ? segment : "{}")).join("/")
}

/** host[:port] of the URL, without user-info; null when unparsable. */
const serverOf = (url: string): { readonly address: string; readonly port: number | null } | null => {
  try {
    const u = new URL(url)
    return { address: u.hostname, port: u.port === "" ? null : Number(u.port) }
  } catch {
    return null
  }
}

/** The shared reader (@sitehealth/domain/RetryAfter), under the name this module's callers know. */
export const retryAfterMs = retryAfterMillis

const kindOfStatus = (status: number): ProviderErrorKind =>
  status === 401 ?
    "unauthorized"
    : status === 403 ?
    "forbidden"
    : status === 404 ?
    "not_found"
    : status === 429 ?
    "rate_limited"
    : status >= 500 ?
    "server"
    : "invalid_request"

/**
 * What providers put in an error body (Stripe: error.message; Google: error.message / error_description; Plausible:
 * error).
 */
const ErrorBody = Schema.Struct({
  error: Schema.optional(Schema.Union([
    Schema.String,
    Schema.Struct({
      message: Schema.optional(Schema.String),
      // Google: error.errors[].reason (e.g. rateLimitExceeded) says why a 403 was refused.
      errors: Schema.optional(Schema.Array(Schema.Struct({ reason: Schema.optional(Schema.String) })))
    })
  ])),
  error_description: Schema.optional(Schema.String),
  message: Schema.optional(Schema.Unknown)
})
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/** The provider's own error message, when its body says one. */
const providerMessage = (json: unknown): string | null => {
  const body = Option.getOrNull(decodeErrorBody(json))
  if (body === null) return null
  const m = (typeof body.error === "object" ? body.error.message : undefined) ?? body.error_description ??
    (typeof body.error === "string" ? body.error : undefined) ?? body.message
  return typeof m === "string" && m.length > 0 ? m.slice(0, 300) : null
}

/**
 * Google answers a rate limit with 403 (not 429) and says so in error.errors[].reason: those 403s are
 * retried like a 429. Other 403s (a missing permission, a daily quota used up) fail at once.
 */
export const GOOGLE_RATE_LIMIT_REASONS: ReadonlySet<string> = new Set(["rateLimitExceeded", "userRateLimitExceeded"])
const isGoogleRateLimit = (json: unknown): boolean => {
  const body = Option.getOrNull(decodeErrorBody(json))
  return body !== null && typeof body.error === "object" &&
    (body.error.errors ?? []).some((e) => e.reason !== undefined && GOOGLE_RATE_LIMIT_REASONS.has(e.reason))
}

const parseJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))

/** One attempt's failure, with the wait the provider asked for (429 and 503 with Retry-After). */
interface Failed {
  readonly error: ProviderError
  readonly retryAfterMs: number | null
}
const failed = (error: ProviderError, retryAfterMs: number | null = null): Failed => ({ error, retryAfterMs })

const TRANSIENT: ReadonlySet<ProviderErrorKind> = new Set(["rate_limited", "server", "timeout", "network"])
const advise = (f: Failed): RetryAdvice => (TRANSIENT.has(f.error.kind) ? after(f.retryAfterMs) : stop)

/** What a transport failure says: the system's code (ECONNREFUSED…) when fetch names one, else its message. */
const transportReason = (cause: unknown): string => {
  const e = typeof cause === "object" && cause !== null
    ? (cause as { readonly message?: unknown; readonly cause?: unknown })
    : null
  const inner = typeof e?.cause === "object" && e.cause !== null
    ? (e.cause as { readonly code?: unknown; readonly message?: unknown })
    : null
  const said = inner?.code ?? inner?.message ?? e?.message
  return typeof said === "string" ? said : String(cause)
}

const toHttpRequest = (req: ProviderRequest): HttpClientRequest.HttpClientRequest => {
  const headers = { accept: "application/json", ...req.headers }
  const body = req.json !== undefined
    ? HttpBody.text(JSON.stringify(req.json), "application/json")
    : req.form !== undefined
    ? HttpBody.text(new URLSearchParams(req.form).toString(), "application/x-www-form-urlencoded")
    : undefined
  return req.method === "GET"
    ? HttpClientRequest.get(req.url, { headers })
    : HttpClientRequest.post(req.url, { headers, ...(body === undefined ? {} : { body }) })
}

/** fetch, without the client's own spans or trace headers (see the module comment). */
const fetchClient: HttpClient.HttpClient = Effect.runSync(
  Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer)
)

/**
 * The client over `client` (fetch unless a test hands it a scripted one). Waits follow the Effect clock,
 * so a test under `TestClock` sees every backoff without sleeping.
 */
export const makeProviderHttp = (
  options: Partial<ProviderHttpOptions> = {},
  client: HttpClient.HttpClient = fetchClient
): ProviderHttpShape => {
  const o = { ...DEFAULT_PROVIDER_HTTP, ...options }
  const schedule = retrySchedule<Failed>(
    { retries: Math.max(0, o.maxAttempts - 1), backoffBaseMs: o.backoffBaseMs, maxWaitMs: o.maxWaitMs, jitter: true },
    advise
  )

  const attempt = (req: ProviderRequest): Effect.Effect<ProviderResponse, Failed> =>
    client.execute(toHttpRequest(req)).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text) => ({ response, text }))),
      Effect.timeout(o.timeoutMs),
      Effect.provideService(HttpClient.TracerDisabledWhen, () => true),
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.mapError((e) =>
        Cause.isTimeoutError(e)
          ? failed(
            new ProviderError({
              kind: "timeout",
              status: null,
              message: `No answer from ${where(req.url)} within ${o.timeoutMs} ms`
            }),
            null
          )
          : failed(
            new ProviderError({
              kind: "network",
              status: null,
              message: `Could not reach ${where(req.url)}: ${transportReason(e.reason.cause)}`
            }),
            null
          )
      ),
      Effect.flatMap(({ response, text }) => {
        const { status, headers } = response
        const parsed = text.length > 0 ? parseJson(text) : null
        const json = parsed !== null && Result.isSuccess(parsed) ? parsed.success : undefined
        if (status >= 200 && status < 300) {
          return json === undefined
            ? Effect.fail(
              failed(
                new ProviderError({
                  kind: "malformed",
                  status,
                  message: `${where(req.url)} answered ${status} with a body that is not JSON`
                }),
                null
              )
            )
            : Effect.succeed({ status, json, headers })
        }
        const said = providerMessage(json)
        const rateLimited = status === 429 || (status === 403 && isGoogleRateLimit(json))
        const kind = rateLimited ? "rate_limited" : kindOfStatus(status)
        const error = new ProviderError({
          kind,
          status,
          message: `${where(req.url)} answered ${status}${said === null ? "" : `: ${said}`}`
        })
        return Effect.flatMap(
          Effect.clockWith((clock) => clock.currentTimeMillis),
          (now) =>
            Effect.fail(
              failed(error, rateLimited || status === 503 ? retryAfterMillis(headers["retry-after"], now) : null)
            )
        )
      })
    )

  const request = (req: ProviderRequest): Effect.Effect<ProviderResponse, ProviderError> =>
    Effect.gen(function*() {
      const template = pathTemplate(req.url)
      const server = serverOf(req.url)
      const provider = (yield* CurrentProvider) ?? server?.address ?? "unknown"
      let sent = 0
      const once = Effect.suspend(() => {
        sent += 1
        return sent > 1
          ? Effect.andThen(Effect.annotateCurrentSpan("http.request.resend_count", sent - 1), attempt(req))
          : attempt(req)
      })
      return yield* once.pipe(
        Effect.retry(schedule),
        Effect.mapError((f) => f.error),
        Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
        Effect.tapError((e) =>
          Effect.annotateCurrentSpan({
            "error.type": e.kind,
            ...(e.status === null ? {} : { "http.response.status_code": e.status })
          })
        ),
        // One span per logical call, retries included (their count is an attribute): what a sync waited for.
        Effect.withSpan(`${req.method} ${template}`, {
          kind: "client",
          attributes: {
            "sitehealth.provider": provider,
            "http.request.method": req.method,
            "url.template": template,
            ...(server === null ? {} : { "server.address": server.address }),
            ...(server?.port == null ? {} : { "server.port": server.port })
          }
        })
      )
    })

  return { request }
}

/** The client as a service, so tests can shorten its waits (or count its calls) with a layer. */
export class ProviderHttp extends Context.Service<ProviderHttp, ProviderHttpShape>()("sitehealth/ProviderHttp") {
  static readonly layer = (options: Partial<ProviderHttpOptions> = {}) =>
    Layer.succeed(ProviderHttp, makeProviderHttp(options))
}
