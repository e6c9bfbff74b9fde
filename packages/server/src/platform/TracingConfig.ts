/**
 * The OTEL_* variables (docs/operations.md; what each does is described in platform/Tracing.ts), read through Effect's
 * Config with the others (platform/Config.ts). Apart from platform/Tracing.ts so that reading the settings — every
 * program does,
 * the admin CLI on each run — does not load the OTLP exporter.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
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
const SAMPLERS: ReadonlyArray<string> = [
  "parentbased_always_on",
  "always_on",
  "traceidratio",
  "parentbased_traceidratio"
]

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
export const tracingSettings: Effect.Effect<TracingConfig | null, SettingsError> = Effect.flatMap(
  otelVariables,
  (env) => {
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
    const protocolName = env.tracesProtocol !== null
      ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
      : "OTEL_EXPORTER_OTLP_PROTOCOL"
    const rawProtocol = env.tracesProtocol ?? env.baseProtocol
    // JSON by default, not the spec's protobuf: Effect's protobuf encoder costs about 3× the CPU per span
    // (measured: ~65 vs ~20 µs per request of two spans), and every OTLP/HTTP collector takes both.
    const protocol = rawProtocol?.toLowerCase() ?? "http/json"
    if (!(PROTOCOLS as ReadonlyArray<string>).includes(protocol)) {
      problems.push(
        `${protocolName} must be http/protobuf or http/json, got "${rawProtocol}"` +
          (protocol === "grpc"
            ? " (gRPC export is not supported: point the endpoint at the collector's OTLP/HTTP port, 4318)"
            : "")
      )
    }
    const sampler = env.sampler?.toLowerCase() ?? "parentbased_always_on"
    if (problems.length === 0 && (sampler === "always_off" || sampler === "parentbased_always_off")) {
      return Effect
        .succeed(null)
    }
    if (!SAMPLERS.includes(sampler) && sampler !== "always_off" && sampler !== "parentbased_always_off") {
      problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, always_off; got "${env.sampler}"`)
    }
    let sampleRatio = 1
    if (sampler.endsWith("traceidratio") && env.samplerArg !== null) {
      sampleRatio = Number(env.samplerArg)
      if (!Number.isFinite(sampleRatio) || sampleRatio <= 0 || sampleRatio > 1) {
        problems.push(
          `OTEL_TRACES_SAMPLER_ARG must be a ratio above 0 and at most 1 (e.g. 0.1 keeps one trace in ten), got ` +
            `"${env.samplerArg}"`
        )
      }
    }
    const headersName = env.tracesHeaders !== null ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS" : "OTEL_EXPORTER_OTLP_HEADERS"
    const rawHeaders = env.tracesHeaders ?? env.baseHeaders
    const headers = rawHeaders === null ? Result.succeed({}) : parseOtlpHeaders(headersName, Redacted.value(rawHeaders))
    if (Result.isFailure(headers)) problems.push(headers.failure)
    if (problems.length > 0 || url === null || Result.isFailure(headers)) {
      return Effect.fail(new SettingsError({ problems }))
    }
    return Effect.succeed({
      url: url.toString(),
      protocol: protocol as TracingConfig["protocol"],
      headers: Redacted.make(headers.success),
      serviceName: env.serviceName ?? "sitehealth",
      sampleRatio,
      parentBased: sampler.startsWith("parentbased_")
    })
  }
)

/** tracingSettings from an environment record (tests); throws the SettingsError. */
export const readTracingConfig = (env: Record<string, string | undefined>): TracingConfig | null =>
  readSync(tracingSettings, env)

/** One line for the start-up log: where spans go, without the headers (they may carry a vendor key). */
export const describeTracing = (config: TracingConfig | null): string =>
  config === null
    ? "traces off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)"
    : `traces to ${config.url} (${config.protocol}) as ${config.serviceName}`
