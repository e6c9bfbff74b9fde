/**
 * The whole HTTP application as one layer: the /api/v1 contract with its handlers and middleware, the
 * OpenAPI document, liveness/readiness probes, a 404 for every unknown route, and a last safety net
 * that puts anything the framework would answer bare into the envelope.
 */
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { errorBody } from "@sitehealth/domain/Envelope"
import { clipInput } from "@sitehealth/domain/Errors"
import { mcpRoute } from "@sitehealth/mcp/HttpRoute"
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { AnnotationsHttp } from "./api/Annotations.ts"
import { ExpensesHttp } from "./api/Expenses.ts"
import { IntegrationsHttp } from "./api/Integrations.ts"
import { ProjectsHttp } from "./api/Projects.ts"
import { ReportsHttp } from "./api/Reports.ts"
import { TokensHttp } from "./api/Tokens.ts"
import { WebhooksHttp } from "./api/Webhooks.ts"
import { StripeBilling } from "./billing/StripeBilling.ts"
import { WebhookRoute } from "./billing/WebhookRoute.ts"
import { dashboardRoutes, DashboardServices } from "./dashboard/Routes.ts"
import { bearerRejection } from "./http/Authentication.ts"
import { IdempotencyLive } from "./http/Idempotency.ts"
import { accessMiddleware, type AccessMiddlewareOverrides } from "./http/Middleware.ts"
import { Readiness } from "./http/Readiness.ts"
import { RequestErrorsLive } from "./http/RequestErrors.ts"
import { RequestLog, RouteCapture } from "./http/RequestLog.ts"
import { spaAnswer, staticRoutes } from "./http/Static.ts"
import { issuerFor, PROTECTED_RESOURCE_METADATA } from "./oauth/Issuer.ts"
import { oauthRoutes } from "./oauth/Routes.ts"
import { AppConfig } from "./platform/Config.ts"
import { Mailer } from "./platform/Mailer.ts"
import { MetricsRoute } from "./platform/Metrics.ts"
import { Freshness } from "./recompute/Freshness.ts"
import { TokensRepo } from "./tokens/TokensRepo.ts"

export const OPENAPI_PATH = "/api/v1/openapi.json"

/** Paths are case-sensitive: /API/V1/projects is not a route. */
export const ROUTER_CONFIG = { caseSensitive: true } as const

const errorResponse = (status: number, message: string, type: string) =>
  HttpServerResponse.jsonUnsafe(errorBody(status, message, type), { status })

/** Layers a test may swap in the app, each alone: an access middleware, the freshness of derived data. */
export interface AppOverrides {
  readonly access?: AccessMiddlewareOverrides
  readonly freshness?: Layer.Layer<Freshness>
}

const apiRoutes = (overrides: AppOverrides) =>
  HttpApiBuilder.layer(SiteHealthApi, { openapiPath: OPENAPI_PATH }).pipe(
    Layer.provide([
      ProjectsHttp,
      ReportsHttp,
      IntegrationsHttp,
      ExpensesHttp,
      AnnotationsHttp,
      TokensHttp,
      WebhooksHttp
    ]),
    Layer.provide([
      accessMiddleware(overrides.access),
      RequestErrorsLive,
      IdempotencyLive,
      overrides.freshness ?? Freshness.live,
      // An email destination's test event is mailed at once (api/Webhooks.ts).
      Mailer.layer
    ])
  )

const SystemRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" })),
  // Readiness is taken when the routes are built: a served router does not hand the app layer's services
  // to its routes per request (the web handler used in tests does, which once hid this).
  Layer.unwrap(
    Effect.map(Readiness, (readiness) =>
      HttpRouter.add(
        "GET",
        "/readyz",
        // {status, reason?, checks: {database, redis?, worker}}: 503 only when unavailable; degraded still serves.
        Effect.map(readiness.status, (report) =>
          HttpServerResponse.jsonUnsafe(report, { status: report.status === "unavailable" ? 503 : 200 }))
      ))
  ),
  // Lowest priority in the router: only what matched nothing else lands here (a browser's GET of a dashboard
  // page gets the web app: http/Static.ts).
  HttpRouter.add(
    "*",
    "*",
    (request) =>
      Effect.succeed(
        spaAnswer(request) ??
          errorResponse(
            404,
            `No route for ${clipInput(`${request.method} ${request.url.split("?")[0]}`)}`,
            "route_not_found"
          )
      )
  )
)

const reasonFor: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "unsupported_media_type",
  500: "internal_error"
}

/**
 * Every answer is one account's data, or says whether a token works: no browser or shared cache may keep
 * it (token secrets above all). Set on the way out of SafetyNet, so its own error answers carry it too.
 */
const noStore = (response: HttpServerResponse.HttpServerResponse) =>
  response.headers["cache-control"] !== undefined
    ? response
    : HttpServerResponse.setHeader(response, "cache-control", "no-store")

/**
 * PUBLIC_URL https: browsers are told to use https alone for a year, subdomains included (RFC 6797), so a
 * first visit by http:// cannot be downgraded once they have seen us (and the `__Host-` cookie stays Secure).
 */
const strictTransport = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(response, "strict-transport-security", "max-age=31536000; includeSubDomains")

/** The router's own failure for a path it cannot decode (a malformed %-escape). */
const isRouteNotFound = (error: unknown): boolean =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/**
 * Outermost layer of every request: rejects bodies over the cap before reading them, bounds the bytes
 * read when no Content-Length is given, and turns any bare error response or escaped defect into the
 * envelope. Nothing leaves without a JSON body; no stack trace ever does.
 */
const SafetyNet = HttpRouter.middleware(
  Effect.map(AppConfig, (config) => {
    const hsts = config.publicUrl?.startsWith("https:") === true
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const length = Number(request.headers["content-length"] ?? 0)
        if (length > config.maxBodyBytes) {
          return errorResponse(413, `The request body is larger than ${config.maxBodyBytes} bytes`, "payload_too_large")
        }
        const response = yield* httpEffect.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.maxBodyBytes)),
          Effect.catchCause((cause) => {
            if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
            // A path the router cannot even decode (a malformed %-escape) matches no route: 404, not 500.
            const failure = Cause.findErrorOption(cause)
            if (failure._tag === "Some" && isRouteNotFound(failure.value)) {
              return Effect.succeed(errorResponse(404, "No route for this path", "route_not_found"))
            }
            return Effect.as(
              Effect.logError("request failed outside the API's handlers", Cause.pretty(cause)),
              errorResponse(500, "Unexpected server error", "internal_error")
            )
          })
        )
        const contentType = response.headers["content-type"] ?? ""
        if (response.status >= 400 && !contentType.includes("json")) {
          return errorResponse(
            response.status,
            response.status >= 500 ? "Unexpected server error" : `Request failed with status ${response.status}`,
            reasonFor[response.status] ?? "error"
          )
        }
        return response
      }).pipe(Effect.map((response) => (hsts ? strictTransport(noStore(response)) : noStore(response))))
  }),
  { global: true }
)

/**
 * `/mcp` (Streamable HTTP for agents): its tool calls go through the API's own router and middleware; the
 * route itself only refuses a bearer that does not authenticate, with the API's 401 reasons.
 */
const McpRoutes = Layer.unwrap(
  Effect.gen(function*() {
    const tokens = yield* TokensRepo
    const config = yield* AppConfig
    return mcpRoute((secret) => bearerRejection(tokens.findBySecretHash, secret), {
      // Where a client that connects by URL finds how to sign in (the MCP authorization spec; oauth/Routes.ts).
      resourceMetadataUrl: (request) => `${issuerFor(config.publicUrl, request)}${PROTECTED_RESOURCE_METADATA}/mcp`,
      allowedOrigins: config.publicUrl === null ? [] : [config.publicUrl]
    })
  })
)

/**
 * Everything but the repositories, rate limiter, readiness and config, which the caller provides.
 * Global middleware wraps in the order it is registered, first outermost; `Layer.provide` builds (registers)
 * its argument before the layer it feeds: RequestLog (request id, log line, metrics) outside SafetyNet outside
 * RouteCapture, which reads the router's match before an outer layer restores its context.
 */
export const appRoutes = (overrides: AppOverrides = {}) =>
  Layer.mergeAll(
    apiRoutes(overrides),
    // The dashboard's report endpoints run /api/v1's operations: the same freshness of derived data.
    dashboardRoutes.pipe(Layer.provide(DashboardServices), Layer.provide(overrides.freshness ?? Freshness.live)),
    SystemRoutes,
    McpRoutes,
    // Stripe's subscription events (docs/billing.md): outside /api/v1, the raw body is what is signed.
    WebhookRoute.pipe(Layer.provide(StripeBilling.layer)),
    oauthRoutes,
    MetricsRoute,
    staticRoutes()
  ).pipe(
    Layer.provide(RouteCapture),
    Layer.provide(SafetyNet),
    Layer.provide(RequestLog)
  )
