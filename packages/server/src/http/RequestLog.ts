/**
 * The outermost layer of every request: gives it a request id, and once its response is ready counts it in
 * the metrics (platform/Metrics.ts) and writes one log line (platform/Logging.ts's RequestLine: method, route template,
 * status, duration, token id and project id where known, request id).
 *
 * X-Request-Id: the caller's, when it is 1–128 characters of [A-Za-z0-9._:-] (a proxy's or client's id, so
 * their logs and ours join on it); otherwise a new UUID. Every response carries it, and every 500 body has it
 * as `error.requestId`, so a user can quote it and an operator find the request's log line.
 *
 * What the inner layers know is passed out through a small mutable record in the request's context
 * (CurrentRequestLog): the router's matched route (RouteCapture, below) and the token and project that
 * Authentication found. Never logged: the Authorization header, the query string, bodies, token secrets.
 *
 * On the hot path: one record, one performance.now() pair, two or three closures, two map lookups for the
 * metric series, and — only when request lines are on — one JSON.stringify of a fixed-shape object.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import { CurrentRequestLog, LogRequests, RequestLine, type RequestLogSlot } from "../platform/Logging.ts"
import { recordRequest, UNMATCHED_ROUTE } from "../platform/Metrics.ts"

export { CurrentRequestLog, type RequestLogSlot }

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export const requestIdFor = (header: string | undefined): string =>
  header !== undefined && SANE_REQUEST_ID.test(header) ? header : crypto.randomUUID()

/** Nginx's code for a request whose client went away (or that a stop cut) before it was answered. */
const CLIENT_CLOSED = 499

const decoder = new TextDecoder()

/**
 * A 500's enveloped body with `error.requestId` added. Bodies are small and 500s rare: re-encoding here
 * reaches every 500 alike — the API's InternalError and the safety net's — without threading the id
 * through each place that builds one.
 */
const withRequestIdInBody = (response: HttpServerResponse.HttpServerResponse, requestId: string) => {
  const body = response.body
  if (body._tag !== "Uint8Array") return response
  try {
    const json = JSON.parse(body.text ?? decoder.decode(body.body))
    if (json?.status !== "error" || typeof json.error !== "object" || json.error === null) return response
    json.error.requestId = requestId
    return HttpServerResponse.setBody(response, HttpBody.jsonUnsafe(json))
  } catch {
    return response
  }
}

/**
 * Registered first (outermost), so it sees the final response of every request — the safety net's 413 and
 * 500s included — and adds its X-Request-Id to each.
 */
export const RequestLog = HttpRouter.middleware(
  Effect.gen(function*() {
    // Decided once: with request lines off (LOG_LEVEL above info, or no logging configured) not even the
    // RequestLine is built.
    const logLines = (yield* LogRequests) && !LogLevel.isGreaterThan(yield* References.MinimumLogLevel, "Info")

    return (httpEffect) =>
      Effect.withFiber((fiber) => {
        const started = performance.now()
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const method = request.method
        const slot: RequestLogSlot = {
          requestId: requestIdFor(request.headers["x-request-id"]),
          route: null,
          tokenId: null,
          projectId: null
        }
        const finish = (status: number) => {
          const ms = performance.now() - started
          recordRequest(method, slot.route ?? UNMATCHED_ROUTE, status, ms / 1000)
          return logLines
            ? Effect.logInfo(
              new RequestLine(
                slot.requestId,
                method,
                slot.route ?? UNMATCHED_ROUTE,
                status,
                Math.round(ms * 100) / 100,
                slot.tokenId,
                slot.projectId
              )
            )
            : Effect.void
        }
        return Effect.matchCauseEffect(Effect.provideService(httpEffect, CurrentRequestLog, slot), {
          onSuccess: (response) => {
            const out = HttpServerResponse.setHeader(
              response.status === 500 ? withRequestIdInBody(response, slot.requestId) : response,
              "x-request-id",
              slot.requestId
            )
            return Effect.as(finish(out.status), out)
          },
          // The safety net inside answers every failure, so only an interruption gets here (the client went
          // away, or a stop cut the request): still one line and one count, then the interruption goes on.
          onFailure: (cause) =>
            Effect.andThen(
              Effect.uninterruptible(finish(Cause.hasInterruptsOnly(cause) ? CLIENT_CLOSED : 500)),
              Effect.failCause(cause)
            )
        })
      })
  }),
  { global: true }
)

/** Reads the router's match into the request's record; runs after the route, whatever its outcome. */
const captureRoute = Effect.withFiber((fiber) => {
  const matched = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)
  // The catch-all 404 route is "*": unmatched, like a path the router could not even decode.
  if (matched !== undefined && matched.route.path !== "*") fiber.getRef(CurrentRequestLog).route = matched.route.path
  return Effect.void
})
/** One function for every request (Effect.ensuring would make a closure per request). */
const captureRouteOnExit = () => captureRoute

/**
 * Registered last (innermost): the router puts the matched route in the fiber's context, and the enclosing
 * layers restore their own context on the way out, so only here is it still there to read.
 */
export const RouteCapture = HttpRouter.middleware(
  (httpEffect) => Effect.onExit(httpEffect, captureRouteOnExit),
  { global: true }
)
