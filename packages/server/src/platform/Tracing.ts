/**
 * Traces: OpenTelemetry export over OTLP/HTTP through effect/observability, switched on by the standard
 * OpenTelemetry variables (docs/operations.md):
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT          e.g. http://collector:4318 (spans go to …/v1/traces)
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   the full traces URL, used as given (wins over the one above)
 *   OTEL_EXPORTER_OTLP_PROTOCOL          http/json (our default) or http/protobuf; grpc is not supported
 *   OTEL_EXPORTER_OTLP_HEADERS           k=v,k2=v2 (values URL-encoded), e.g. a vendor's API key
 *   OTEL_SERVICE_NAME                    default "sitehealth"; OTEL_RESOURCE_ATTRIBUTES is honoured too
 *   OTEL_TRACES_SAMPLER (+ _ARG)         parentbased_always_on (default), always_on, traceidratio,
 *                                        parentbased_traceidratio (ARG: the ratio, default 1), always_off
 *   OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none   switch it off even with an endpoint set
 *
 * Without an endpoint, tracing is OFF, not merely unexported: Effect's default tracer still builds an
 * in-memory span for every SQL statement, transaction and `withSpan` (ids, attribute maps, the compiled
 * query text) and throws it away. `References.TracerEnabled = false` makes every span a shared no-op and
 * lets the HTTP server skip its per-request span entirely.
 *
 * What is traced when on: each request (the server span, named "METHOD /route/template" with the status
 * code), every SQL statement and transaction (@effect/sql: the parameterised query text, never the bound
 * values), each call of a repository or service method (`Effect.fn("AuthRepo.touchSession")`: the
 * statements it runs are its children), each provider call (integrations/ProviderHttp.ts: provider, method,
 * path template — no query string, no header, no body), each sync run (worker/SyncRunner.ts) and each
 * metric recomputation (recompute/Recompute.ts). Request and response headers are not recorded (Effect's
 * default).
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as UrlParams from "effect/http/UrlParams"
import * as Layer from "effect/Layer"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import * as Os from "node:os"
import { describeTracing, type TracingConfig } from "./TracingConfig.ts"

// The settings live apart (platform/TracingConfig.ts) so that reading them does not load the exporter.
export {
  describeTracing,
  parseOtlpHeaders,
  readTracingConfig,
  type TracingConfig,
  tracingSettings
} from "./TracingConfig.ts"

/**
 * The OTLP tracer with three decisions of ours on top.
 *
 * Sampling, where a trace enters this process (a span without a parent, or under a caller's `traceparent`):
 * an unsampled span is never exported and its children are unsampled too (Effect propagates the flag), and
 * the HTTP server records no attributes on it — such a request costs about what it costs with tracing off.
 *
 * A lone statement with no request or job around it (a probe's check, a metrics scrape's gauges) is not
 * exported: polled every few seconds, such one-span traces would bury the ones that matter. (The probes' own
 * server spans are not made at all: see UNTRACED_PATHS; the worker untraces its idle polls itself.)
 *
 * It names a request's server span "GET /api/v1/projects/:id/health" once the router knows the route. The HTTP
 * server must name the span before routing (by the method alone, as OpenTelemetry allows), and the router then
 * records `http.route` on it; a backend lists operations by name, so "GET" alone would put every endpoint
 * under one.
 */
const sitehealthTracer = (tracer: Tracer.Tracer, config: TracingConfig): Tracer.Tracer =>
  Tracer.make({
    span(options) {
      const parent = options.parent._tag === "Some" ? options.parent.value : null
      const entry = parent === null || parent._tag === "ExternalSpan"
      // With a caller's decision to follow, an entry span keeps the flag Effect derived from it.
      const decide = options.sampled && entry && config.sampleRatio < 1 && !(config.parentBased && parent !== null)
      // A lone client span (a statement outside any request or job: a probe's check, a metrics scrape's
      // gauges) is not worth a trace of its own.
      const lone = options.sampled && parent === null && options.kind === "client"
      const span = tracer.span(
        lone
          ? { ...options, sampled: false }
          : decide
          ? { ...options, sampled: Math.random() < config.sampleRatio }
          : options
      )
      if (options.kind !== "server") return span
      const attribute = span.attribute
      span.attribute = function(key, value) {
        if (key === "http.route" && typeof value === "string") {
          ;(span as { name: string }).name = `${options.name} ${value}`
        }
        attribute.call(span, key, value)
      }
      return span
    },
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })

/** Polled by load balancers and Prometheus: thousands of identical traces a day, none worth reading. */
const UNTRACED_PATHS = new Set(["/healthz", "/readyz", "/metrics"])

/**
 * Query parameters whose values never go into a span's `url.full` / `url.query`: the API takes none of
 * these, so one only appears when a client put a credential where it does not belong — it still must not
 * reach the trace backend.
 */
const REDACTED_QUERY_NAMES = [
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "api_key",
  "apikey",
  "key",
  "secret",
  "client_secret",
  "password",
  "code",
  "signature",
  "sig"
]

/**
 * What main.ts and WorkerMain.ts provide to the whole program: the OTLP tracer when configured, else
 * tracing turned off. `role` says which process sent a span ("server" or "worker").
 */
export const tracingLayer = (config: TracingConfig | null, role: "server" | "worker"): Layer.Layer<never> => {
  // One start-up line either way: an operator who set a variable wrong sees traces are off.
  const announce = Layer.effectDiscard(Effect.logInfo(`sitehealth: ${describeTracing(config)}`))
  if (config === null) return Layer.merge(Layer.succeed(References.TracerEnabled, false), announce)
  const tracer = Layer.effect(
    Tracer.Tracer,
    Effect.map(
      OtlpTracer.make({
        url: config.url,
        headers: Redacted.value(config.headers),
        resource: {
          serviceName: config.serviceName,
          attributes: { "sitehealth.role": role, "host.name": Os.hostname(), "process.pid": process.pid }
        }
      }),
      (otlp) => sitehealthTracer(otlp, config)
    )
  )
  return Layer.mergeAll(
    tracer,
    announce,
    Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => UNTRACED_PATHS.has(request.url.split("?")[0])),
    Layer.succeed(UrlParams.CurrentRedactedNames, [
      ...UrlParams.CurrentRedactedNames.defaultValue(),
      ...REDACTED_QUERY_NAMES
    ])
  ).pipe(
    Layer.provide(OtlpExporter.layerFlusher),
    Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  ) as Layer.Layer<never>
}
