/**
 * The one HTTP client every provider connector uses: JSON in and out, a timeout per attempt, and polite
 * retries — 429 honours Retry-After (seconds or an HTTP date, capped), 5xx and network failures back off
 * exponentially with full jitter; other 4xx fail at once with a kind the caller can act on (unauthorized →
 * "reconnect", not_found → "check the site id"). Credentials travel only in the request headers or body
 * given by the caller; nothing here logs a header or a body, and errors carry the URL without its query.
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"

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
  readonly json: unknown
  readonly headers: Headers
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

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export const retryAfterMs = (header: string | null, nowMs: number): number | null => {
  if (header === null || header.trim() === "") return null
  const seconds = Number(header.trim())
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(header)
  return Number.isFinite(date) ? Math.max(0, date - nowMs) : null
}

const kindOfStatus = (status: number): ProviderErrorKind =>
  status === 401 ? "unauthorized"
  : status === 403 ? "forbidden"
  : status === 404 ? "not_found"
  : status === 429 ? "rate_limited"
  : status >= 500 ? "server"
  : "invalid_request"

/** The provider's own error message, when its body says one (Stripe: error.message; Google: error.message / error_description). */
const providerMessage = (json: unknown): string | null => {
  if (json === null || typeof json !== "object") return null
  const j = json as Record<string, any>
  const m = j.error?.message ?? j.error_description ?? (typeof j.error === "string" ? j.error : null) ?? j.message
  return typeof m === "string" && m.length > 0 ? m.slice(0, 300) : null
}

export const makeProviderHttp = (options: Partial<ProviderHttpOptions> = {}): ProviderHttpShape => {
  const o = { ...DEFAULT_PROVIDER_HTTP, ...options }
  const attempt = (request: ProviderRequest) =>
    Effect.tryPromise({
      try: async (signal) => {
        const headers: Record<string, string> = { accept: "application/json", ...request.headers }
        let body: string | undefined
        if (request.json !== undefined) {
          headers["content-type"] = "application/json"
          body = JSON.stringify(request.json)
        } else if (request.form !== undefined) {
          headers["content-type"] = "application/x-www-form-urlencoded"
          body = new URLSearchParams(request.form as Record<string, string>).toString()
        }
        const response = await fetch(request.url, {
          method: request.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)])
        })
        const text = await response.text()
        return { status: response.status, text, headers: response.headers }
      },
      catch: (e) => {
        const name = (e as { name?: string })?.name
        return name === "TimeoutError" || name === "AbortError"
          ? new ProviderError({ kind: "timeout", status: null, message: `No answer from ${where(request.url)} within ${o.timeoutMs} ms` })
          : new ProviderError({ kind: "network", status: null, message: `Could not reach ${where(request.url)}: ${(e as Error)?.cause ? String((e as any).cause?.code ?? (e as Error).message) : (e as Error)?.message}` })
      }
    })

  const request = (req: ProviderRequest): Effect.Effect<ProviderResponse, ProviderError> =>
    Effect.gen(function*() {
      const template = pathTemplate(req.url)
      const server = serverOf(req.url)
      const provider = (yield* CurrentProvider) ?? server?.address ?? "unknown"
      return yield* send(req).pipe(
        Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
        Effect.tapError((e) =>
          Effect.annotateCurrentSpan({ "error.type": e.kind, ...(e.status === null ? {} : { "http.response.status_code": e.status }) })
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

  const send = (req: ProviderRequest): Effect.Effect<ProviderResponse, ProviderError> =>
    Effect.gen(function*() {
      for (let n = 1; ; n++) {
        if (n > 1) yield* Effect.annotateCurrentSpan("http.request.resend_count", n - 1)
        const last = n >= o.maxAttempts
        const result = yield* Effect.result(attempt(req))
        let wait: number
        let failure: ProviderError
        if (result._tag === "Failure") {
          failure = result.failure
          wait = Math.random() * o.backoffBaseMs * 2 ** (n - 1)
        } else {
          const { status, text, headers } = result.success
          let json: unknown = undefined
          if (text.length > 0) {
            try {
              json = JSON.parse(text)
            } catch {
              json = undefined
            }
          }
          if (status >= 200 && status < 300) {
            if (json === undefined) {
              return yield* Effect.fail(new ProviderError({ kind: "malformed", status, message: `${where(req.url)} answered ${status} with a body that is not JSON` }))
            }
            return { status, json, headers }
          }
          const kind = kindOfStatus(status)
          const said = providerMessage(json)
          failure = new ProviderError({ kind, status, message: `${where(req.url)} answered ${status}${said === null ? "" : `: ${said}`}` })
          if (kind !== "rate_limited" && kind !== "server") return yield* Effect.fail(failure)
          const after = kind === "rate_limited" ? retryAfterMs(headers.get("retry-after"), Date.now()) : null
          wait = after ?? Math.random() * o.backoffBaseMs * 2 ** (n - 1)
        }
        if (last) return yield* Effect.fail(failure)
        yield* Effect.sleep(Duration.millis(Math.min(o.maxWaitMs, Math.max(0, wait))))
      }
    })

  return { request }
}

/** The client as a service, so tests can shorten its waits (or count its calls) with a layer. */
export class ProviderHttp extends Context.Service<ProviderHttp, ProviderHttpShape>()("sitehealth/ProviderHttp") {
  static readonly layer = (options: Partial<ProviderHttpOptions> = {}) => Layer.succeed(ProviderHttp, makeProviderHttp(options))
}
