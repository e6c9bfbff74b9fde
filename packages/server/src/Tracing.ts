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
 * values), each provider call (integrations/ProviderHttp.ts: provider, method, path template — no query
 * string, no header, no body), each sync run (integrations/SyncRunner.ts) and each metric recomputation
 * (worker/Recompute.ts). Request and response headers are not recorded (Effect's default).
 */
import { Effect, Layer, References, Tracer } from "effect"
import { FetchHttpClient, HttpMiddleware, UrlParams } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import * as Os from "node:os"

export interface TracingConfig {
  /** The OTLP/HTTP traces URL spans are POSTed to. */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  /** Sent with every export (authentication to a vendor's endpoint); never logged. */
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  /** Share of traces kept, decided where a trace enters this process (0 < ratio ≤ 1). */
  readonly sampleRatio: number
  /** Whether a caller's `traceparent` decision (sampled or not) is followed instead of the ratio. */
  readonly parentBased: boolean
}

const nonEmpty = (s: string | undefined): string | null => (s === undefined || s.trim() === "" ? null : s.trim())

const PROTOCOLS = ["http/protobuf", "http/json"] as const
const SAMPLERS: ReadonlyArray<string> = ["parentbased_always_on", "always_on", "traceidratio", "parentbased_traceidratio"]

/** `k=v,k2=v2` (W3C baggage-like, values percent-encoded), as OTEL_EXPORTER_OTLP_HEADERS is written. */
export const parseOtlpHeaders = (name: string, raw: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of raw.split(",")) {
    if (pair.trim() === "") continue
    const eq = pair.indexOf("=")
    const key = eq <= 0 ? "" : pair.slice(0, eq).trim()
    if (key === "") {
      // Only the key is named: the value may be an API key.
      throw new Error(`${name} must be a comma-separated list of key=value pairs; an entry has no key`)
    }
    try {
      headers[key.toLowerCase()] = decodeURIComponent(pair.slice(eq + 1).trim())
    } catch {
      throw new Error(`${name}: the value of "${key}" is not valid percent-encoding`)
    }
  }
  return headers
}

/**
 * The tracing configuration from the environment, or null when traces are off (no endpoint, or turned off
 * explicitly). Throws an Error with a message for the operator on a malformed value: start-up stops rather
 * than run without the traces someone asked for.
 */
export const readTracingConfig = (env: NodeJS.ProcessEnv = process.env): TracingConfig | null => {
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return null
  const exporters = nonEmpty(env.OTEL_TRACES_EXPORTER)
  if (exporters !== null && !exporters.toLowerCase().split(",").map((e) => e.trim()).includes("otlp")) return null
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  const baseEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  const name = tracesEndpoint !== null ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"
  const raw = tracesEndpoint ?? baseEndpoint
  if (raw === null) return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error(`${name} must be an http(s) URL such as http://localhost:4318, got "${raw}"`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${name} must be an http(s) URL (OTLP/HTTP, usually port 4318), got "${raw}"`)
  }
  // The base endpoint is the collector's root: the spec appends the signal's path. The traces one is final.
  if (tracesEndpoint === null) url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`
  const protocolName = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) !== null
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL"
  // JSON by default, not the spec's protobuf: Effect's protobuf encoder costs about 3× the CPU per span
  // (measured: ~65 vs ~20 µs per request of two spans), and every OTLP/HTTP collector takes both.
  const protocol = nonEmpty(env[protocolName])?.toLowerCase() ?? "http/json"
  if (!(PROTOCOLS as ReadonlyArray<string>).includes(protocol)) {
    throw new Error(
      `${protocolName} must be http/protobuf or http/json, got "${env[protocolName]}"` +
        (protocol === "grpc" ? " (gRPC export is not supported: point the endpoint at the collector's OTLP/HTTP port, 4318)" : "")
    )
  }
  const sampler = nonEmpty(env.OTEL_TRACES_SAMPLER)?.toLowerCase() ?? "parentbased_always_on"
  if (sampler === "always_off" || sampler === "parentbased_always_off") return null
  if (!SAMPLERS.includes(sampler)) {
    throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, always_off; got "${env.OTEL_TRACES_SAMPLER}"`)
  }
  let sampleRatio = 1
  const rawRatio = nonEmpty(env.OTEL_TRACES_SAMPLER_ARG)
  if (sampler.endsWith("traceidratio") && rawRatio !== null) {
    sampleRatio = Number(rawRatio)
    if (!Number.isFinite(sampleRatio) || sampleRatio <= 0 || sampleRatio > 1) {
      throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio above 0 and at most 1 (e.g. 0.1 keeps one trace in ten), got "${rawRatio}"`)
    }
  }
  const headersName = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) !== null
    ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
    : "OTEL_EXPORTER_OTLP_HEADERS"
  const rawHeaders = nonEmpty(env[headersName])
  return {
    url: url.toString(),
    protocol: protocol as TracingConfig["protocol"],
    headers: rawHeaders === null ? {} : parseOtlpHeaders(headersName, rawHeaders),
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? "sitehealth",
    sampleRatio,
    parentBased: sampler.startsWith("parentbased_")
  }
}

/** One line for the start-up log: where spans go, without the headers (they may carry a vendor key). */
export const describeTracing = (config: TracingConfig | null): string =>
  config === null
    ? "traces off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)"
    : `traces to ${config.url} (${config.protocol}) as ${config.serviceName}`

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
        lone ? { ...options, sampled: false } : decide ? { ...options, sampled: Math.random() < config.sampleRatio } : options
      )
      if (options.kind !== "server") return span
      const attribute = span.attribute
      span.attribute = function(key, value) {
        if (key === "http.route" && typeof value === "string") (span as { name: string }).name = `${options.name} ${value}`
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
  "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key", "secret", "client_secret",
  "password", "code", "signature", "sig"
]

/**
 * What main.ts and worker/main.ts provide to the whole program: the OTLP tracer when configured, else
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
        headers: config.headers,
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
    Layer.succeed(UrlParams.CurrentRedactedNames, [...UrlParams.CurrentRedactedNames.defaultValue(), ...REDACTED_QUERY_NAMES])
  ).pipe(
    Layer.provide(OtlpExporter.layerFlusher),
    Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  ) as Layer.Layer<never>
}
