/**
 * The HTTP side of a fault: one request with its outcome recorded (status, headers, envelope, or why there
 * was no answer), a steady load of them, a readiness poller, and counting outcomes by status.
 */
import { sleep } from "./common.ts"

export interface Outcome {
  readonly method: string
  readonly path: string
  readonly startedAt: number
  readonly endedAt: number
  /** null: no HTTP answer (connection refused or reset, or no answer within the timeout). */
  readonly status: number | null
  readonly failure: string | null
  readonly retryAfter: string | null
  /** The answer was an idempotent replay (`Idempotent-Replayed: true`). */
  readonly replayed: boolean
  /** Every response header, lower-case names ({} without an answer). */
  readonly headers: Readonly<Record<string, string>>
  /** `{status:"error", error:{code,message,type}}` with code = the HTTP status (or a 2xx `status:"success"`). */
  readonly enveloped: boolean
  readonly errorType: string | null
  readonly body: string
  /** The client's tag (e.g. the description of a POSTed expense). */
  readonly tag: string | null
}

const isEnvelope = (status: number, body: unknown): boolean => {
  if (body === null || typeof body !== "object") return false
  const b = body as { status?: unknown; error?: { code?: unknown; message?: unknown; type?: unknown } }
  if (status < 400) return b.status === "success"
  return b.status === "error" && typeof b.error === "object" && b.error !== null &&
    (b.error.code === status || typeof b.error.code === "string") && typeof b.error.message === "string" &&
    typeof b.error.type === "string"
}

export const call = async (
  base: string,
  method: "GET" | "POST",
  path: string,
  options: {
    readonly token?: string
    readonly body?: unknown
    readonly timeoutMs?: number
    readonly tag?: string
    readonly idempotencyKey?: string
  } = {}
): Promise<Outcome> => {
  const startedAt = Date.now()
  const headers: Record<string, string> = {}
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000)
    })
    const text = await response.text()
    let parsed: unknown = null
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = null
    }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      failure: null,
      retryAfter: response.headers.get("retry-after"),
      replayed: response.headers.get("idempotent-replayed") === "true",
      headers: Object.fromEntries(response.headers.entries()),
      enveloped: isEnvelope(response.status, parsed),
      errorType: (parsed as { error?: { type?: string } } | null)?.error?.type ?? null,
      body: text.slice(0, 500),
      tag: options.tag ?? null
    }
  } catch (e) {
    const error = e as { name?: string; message?: string; cause?: { code?: string } }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: null,
      failure: error.name === "TimeoutError"
        ? "no answer within the timeout"
        : (error.cause?.code ?? error.message ?? String(e)),
      retryAfter: null,
      replayed: false,
      headers: {},
      enveloped: false,
      errorType: null,
      body: "",
      tag: options.tag ?? null
    }
  }
}

/**
 * Runs `next()` requests on `concurrency` loops, `pauseMs` apart per loop, until `stop()` is called; every
 * outcome is kept. Bounded on purpose: the machine is shared, the point is a steady load, not a benchmark.
 */
export const startLoad = (options: {
  readonly concurrency: number
  readonly pauseMs: number
  readonly next: (loop: number, n: number) => Promise<Outcome>
}) => {
  const outcomes: Array<Outcome> = []
  let running = true
  const loops = Array.from({ length: options.concurrency }, async (_, loop) => {
    for (let n = 0; running; n++) {
      outcomes.push(await options.next(loop, n))
      if (options.pauseMs > 0) await sleep(options.pauseMs)
    }
  })
  return {
    outcomes,
    stop: async () => {
      running = false
      await Promise.all(loops)
      return outcomes
    }
  }
}

/** Polls `${base}/readyz` every `everyMs`: [time, status] pairs until stopped. */
export const pollReadiness = (base: string, everyMs: number) => {
  const samples: Array<{ readonly at: number; readonly status: number | null }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const o = await call(base, "GET", "/readyz", { timeoutMs: 5_000 })
      samples.push({ at: o.endedAt, status: o.status })
      await sleep(everyMs)
    }
  })()
  return {
    samples,
    stop: async () => {
      running = false
      await loop
      return samples
    }
  }
}

export const expenseBody = (description: string) => ({
  amount: 1234,
  category: "hosting",
  description,
  incurredOn: "2026-11-01",
  recurrence: "one_off"
})

/** How many outcomes per status ("none" for no answer): `{ "200": 12, "503": 30 }`. */
export const statusCounts = (outcomes: ReadonlyArray<Outcome>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const key = o.status === null ? "none" : String(o.status)
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

export const formatCounts = (counts: Record<string, number>) =>
  Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}×${v}`).join(" ") || "none"
