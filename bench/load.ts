/** Load from this process with autocannon, loopback only, always bounded by a duration. */
import autocannon from "autocannon"
import { sampleCpu } from "./processes.ts"

export interface RequestSpec {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

export interface Measurement {
  readonly requests: number
  readonly requestsPerSecond: number
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number }
  /** Answers outside 2xx. */
  readonly non2xx: number
  /** Socket errors and timeouts: requests that got no answer at all. */
  readonly errors: number
  readonly statusCodes: Record<string, number>
  readonly seconds: number
  /** CPU per answered request during the measured run (not the warm-up), µs: the server process, PostgreSQL. */
  readonly cpuUsPerRequest?: { readonly server: number | null; readonly postgres: number }
}

const assertLoopback = (base: string) => {
  const host = new URL(base).hostname
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "[::1]") {
    throw new Error(`refusing to load ${base}: the bench sends traffic to loopback addresses only`)
  }
}

const run = (base: string, requests: ReadonlyArray<RequestSpec>, options: {
  readonly connections: number
  readonly seconds: number
  readonly overallRate?: number
}) =>
  autocannon({
    url: base,
    connections: options.connections,
    duration: options.seconds,
    // Each connection walks this list in turn: the tokens (and projects) rotate across requests.
    requests: requests.map((r) => ({
      method: r.method,
      path: r.path,
      headers: r.headers,
      ...(r.body === undefined ? {} : { body: r.body })
    })),
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    timeout: 10
  })

/** A warm-up (connections, prepared statements, JIT, the server's caches), then the measured run. */
export const measure = async (base: string, requests: ReadonlyArray<RequestSpec>, options: {
  readonly connections: number
  readonly duration: number
  readonly warmup: number
  readonly overallRate?: number
  /** The server's pid, to account its CPU (and the database's) per request. */
  readonly pid?: number | undefined
}): Promise<Measurement> => {
  assertLoopback(base)
  if (requests.length === 0) throw new Error("measure: no requests")
  if (options.warmup > 0) await run(base, requests, { ...options, seconds: options.warmup })
  const cpu = sampleCpu(options.pid)
  const r = await run(base, requests, { ...options, seconds: options.duration })
  const used = cpu.stop()
  const answered = Math.max(1, r.requests.total)
  const statusCodes: Record<string, number> = {}
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat?.count ?? 0
  return {
    requests: r.requests.total,
    requestsPerSecond: Math.round(r.requests.average),
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    non2xx: r.non2xx,
    errors: r.errors,
    statusCodes,
    seconds: r.duration,
    cpuUsPerRequest: {
      server: used.serverMs === null ? null : Math.round((used.serverMs * 1000) / answered),
      postgres: Math.round((used.postgresMs * 1000) / answered)
    }
  }
}

/** Sequential requests, one at a time, each after `before()` (which makes it miss the server's caches). */
export const measureSequential = async (
  base: string,
  request: RequestSpec,
  count: number,
  before: () => Promise<void>
): Promise<{ readonly latencies: ReadonlyArray<number>; readonly non2xx: number; readonly errors: number }> => {
  assertLoopback(base)
  const latencies: Array<number> = []
  let non2xx = 0
  let errors = 0
  for (let i = 0; i < count; i++) {
    await before()
    const t0 = performance.now()
    try {
      const res = await fetch(base + request.path, {
        method: request.method,
        headers: request.headers,
        signal: AbortSignal.timeout(30_000),
        ...(request.body === undefined ? {} : { body: request.body })
      })
      await res.arrayBuffer()
      if (res.status < 200 || res.status > 299) non2xx++
    } catch {
      errors++
    }
    latencies.push(performance.now() - t0)
  }
  return { latencies, non2xx, errors }
}

/** The q-quantile (nearest rank) of unsorted values, ms rounded to 0.1. */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const at = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
  return Math.round(at * 10) / 10
}
