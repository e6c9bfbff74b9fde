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
import { Effect, Layer, Redacted, References, Result, Tracer } from "effect"
import { FetchHttpClient, HttpMiddleware, UrlParams } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import * as Os from "node:os"
import { collect, readSync, secret, SettingsError, text } from "./Settings.ts"

export interface TracingConfig {
  /** The OTLP/HTTP traces URL spans are POSTed to. */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  /** Sent with every export (authentication to a vendor's endpoint); Redacted: never logged. */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
  readonly serviceName: string
  /** Share of traces kept, decided where a trace enters this process (0 < ratio ≤ 1). */
  readonly sampleRatio: number
  /** Whether a caller's `traceparent` decision (sampled or not) is followed instead of the ratio. */
  readonly parentBased: boolean
}

const PROTOCOLS = ["http/protobuf", "http/json"] as const
const SAMPLERS: ReadonlyArray<string> = ["parentbased_always_on", "always_on", "traceidratio", "parentbased_traceidratio"]

/**
 * `k=v,k2=v2` (W3C baggage-like, values percent-encoded), as OTEL_EXPORTER_OTLP_HEADERS is written: the headers,
 * or the problem (which names a key at most: a value may be an API key).
 */
export const parseOtlpHeaders = (name: string, raw: string): Result.Result<Record<string, string>, string> => {
  const headers: Record<string, string> = {}
  for (const pair of raw.split(",")) {
    if (pair.trim() === "") continue
    const eq = pair.indexOf("=")
    const key = eq <= 0 ? "" : pair.slice(0, eq).trim()
    if (key === "") return Result.fail(`${name} must be a comma-separated list of key=value pairs; an entry has no key`)
    try {
      headers[key.toLowerCase()] = decodeURIComponent(pair.slice(eq + 1).trim())
    } catch {
      return Result.fail(`${name}: the value of "${key}" is not valid percent-encoding`)
    }
  }
  return Result.succeed(headers)
}

/** The OTEL_* variables as given (blank = unset); the headers Redacted from the start. */
const otelVariables = collect({
  disabled: text("OTEL_SDK_DISABLED"),
  exporters: text("OTEL_TRACES_EXPORTER"),
  tracesEndpoint: text("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  baseEndpoint: text("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesProtocol: text("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  baseProtocol: text("OTEL_EXPORTER_OTLP_PROTOCOL"),
  sampler: text("OTEL_TRACES_SAMPLER"),
  samplerArg: text("OTEL_TRACES_SAMPLER_ARG"),
  tracesHeaders: secret("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  baseHeaders: secret("OTEL_EXPORTER_OTLP_HEADERS"),
  serviceName: text("OTEL_SERVICE_NAME")
})

/**
 * The tracing configuration, or null when traces are off (no endpoint, or turned off explicitly). A malformed
 * value is a SettingsError listing each problem: start-up stops rather than run without the traces someone
 * asked for.
 */
export const tracingSettings: Effect.Effect<TracingConfig | null, SettingsError> = Effect.flatMap(otelVariables, (env) => {
  if (env.disabled?.toLowerCase() === "true") return Effect.succeed(null)
  if (env.exporters !== null && !env.exporters.toLowerCase().split(",").map((e) => e.trim()).includes("otlp")) {
    return Effect.succeed(null)
  }
  const raw = env.tracesEndpoint ?? env.baseEndpoint
  if (raw === null) return Effect.succeed(null)
  const problems: Array<string> = []
  const name = env.tracesEndpoint !== null ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"
  let url: URL | null = null
  try {
    url = new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      problems.push(`${name} must be an http(s) URL (OTLP/HTTP, usually port 4318), got "${raw}"`)
    }
  } catch {
    problems.push(`${name} must be an http(s) URL such as http://localhost:4318, got "${raw}"`)
  }
  // The base endpoint is the collector's root: the spec appends the signal's path. The traces one is final.
  if (url !== null && env.tracesEndpoint === null) url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`
  const protocolName = env.tracesProtocol !== null ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"
  const rawProtocol = env.tracesProtocol ?? env.baseProtocol
  // JSON by default, not the spec's protobuf: Effect's protobuf encoder costs about 3× the CPU per span
  // (measured: ~65 vs ~20 µs per request of two spans), and every OTLP/HTTP collector takes both.
  const protocol = rawProtocol?.toLowerCase() ?? "http/json"
  if (!(PROTOCOLS as ReadonlyArray<string>).includes(protocol)) {
    problems.push(
      `${protocolName} must be http/protobuf or http/json, got "${rawProtocol}"` +
        (protocol === "grpc" ? " (gRPC export is not supported: point the endpoint at the collector's OTLP/HTTP port, 4318)" : "")
    )
  }
  const sampler = env.sampler?.toLowerCase() ?? "parentbased_always_on"
  if (problems.length === 0 && (sampler === "always_off" || sampler === "parentbased_always_off")) return Effect.succeed(null)
  if (!SAMPLERS.includes(sampler) && sampler !== "always_off" && sampler !== "parentbased_always_off") {
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, always_off; got "${env.sampler}"`)
  }
  let sampleRatio = 1
  if (sampler.endsWith("traceidratio") && env.samplerArg !== null) {
    sampleRatio = Number(env.samplerArg)
    if (!Number.isFinite(sampleRatio) || sampleRatio <= 0 || sampleRatio > 1) {
      problems.push(
        `OTEL_TRACES_SAMPLER_ARG must be a ratio above 0 and at most 1 (e.g. 0.1 keeps one trace in ten), got "${env.samplerArg}"`
      )
    }
  }
  const headersName = env.tracesHeaders !== null ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS" : "OTEL_EXPORTER_OTLP_HEADERS"
  const rawHeaders = env.tracesHeaders ?? env.baseHeaders
  const headers = rawHeaders === null ? Result.succeed({}) : parseOtlpHeaders(headersName, Redacted.value(rawHeaders))
  if (Result.isFailure(headers)) problems.push(headers.failure)
  if (problems.length > 0 || url === null || Result.isFailure(headers)) return Effect.fail(new SettingsError({ problems }))
  return Effect.succeed({
    url: url.toString(),
    protocol: protocol as TracingConfig["protocol"],
    headers: Redacted.make(headers.success),
    serviceName: env.serviceName ?? "sitehealth",
    sampleRatio,
    parentBased: sampler.startsWith("parentbased_")
  })
})

/** tracingSettings from an environment record (tests); throws the SettingsError. */
export const readTracingConfig = (env: Record<string, string | undefined>): TracingConfig | null => readSync(tracingSettings, env)

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
    Layer.succeed(UrlParams.CurrentRedactedNames, [...UrlParams.CurrentRedactedNames.defaultValue(), ...REDACTED_QUERY_NAMES])
  ).pipe(
    Layer.provide(OtlpExporter.layerFlusher),
    Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  ) as Layer.Layer<never>
}
