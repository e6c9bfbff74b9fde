/**
 * The provider HTTP client against a local fake server (127.0.0.1, port 0): 429 + Retry-After then 200,
 * 5xx then 200, 5xx for ever → `server` after maxAttempts, a timeout, malformed JSON, 401 at once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { makeProviderHttp, type ProviderError, retryAfterMs } from "../src/integrations/ProviderHttp.ts"

type Step = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
let script: Array<Step> = []
let fallback: Step = { status: 200, body: "{}" }
const hits: Array<{ at: number; url: string; auth: string | undefined }> = []
let server: Http.Server
let base = ""

beforeAll(async () => {
  server = Http.createServer((req, res) => {
    hits.push({ at: Date.now(), url: req.url ?? "", auth: req.headers.authorization })
    const step = script.shift() ?? fallback
    setTimeout(() => {
      res.writeHead(step.status, { "content-type": "application/json", ...step.headers })
      res.end(step.body ?? "")
    }, step.delayMs ?? 0)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  script = []
  fallback = { status: 200, body: "{}" }
  hits.length = 0
})

const http = makeProviderHttp({ timeoutMs: 300, maxAttempts: 3, backoffBaseMs: 10, maxWaitMs: 2_000 })
const get = (path = "/v1/things?key=SECRETQ") =>
  Effect.result(http.request({ method: "GET", url: `${base}${path}`, headers: { authorization: "Bearer tok" } }))
const failure = (r: Effect.Success<ReturnType<typeof get>>) => {
  expect(r._tag).toBe("Failure")
  return (r as any).failure as ProviderError
}

describe("ProviderHttp", () => {
  it.live("429 with Retry-After: waits that long, then returns the 200", () =>
    Effect.gen(function*() {
      script = [{ status: 429, headers: { "retry-after": "1" }, body: "{}" }, { status: 200, body: "{\"ok\":true}" }]
      const r = yield* get()
      expect(r._tag).toBe("Success")
      expect((r as any).success.json).toEqual({ ok: true })
      expect(hits).toHaveLength(2)
      expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(950)
      expect(hits.every((h) => h.auth === "Bearer tok")).toBe(true)
    }))

  it.live("5xx then 200: retried after a backoff", () =>
    Effect.gen(function*() {
      script = [{ status: 503, body: "{}" }, { status: 500, body: "oops" }, { status: 200, body: "[1,2]" }]
      const r = yield* get()
      expect((r as any).success.json).toEqual([1, 2])
      expect(hits).toHaveLength(3)
    }))

  it.live("5xx for ever: kind server after maxAttempts, the provider's message kept, the query string not", () =>
    Effect.gen(function*() {
      fallback = { status: 502, body: JSON.stringify({ error: { message: "upstream down" } }) }
      const e = failure(yield* get())
      expect(hits).toHaveLength(3)
      expect([e.kind, e.status]).toEqual(["server", 502])
      expect(e.message).toBe(`${base}/v1/things answered 502: upstream down`)
      expect(e.message).not.toContain("SECRETQ")
    }))

  it.live("no answer within the timeout: kind timeout after every attempt", () =>
    Effect.gen(function*() {
      fallback = { status: 200, body: "{}", delayMs: 1_000 }
      const e = failure(yield* get())
      expect(e.kind).toBe("timeout")
      expect(hits).toHaveLength(3)
      expect(e.message).toMatch(/within 300 ms/)
    }))

  it.live("a 200 whose body is not JSON: kind malformed, not retried", () =>
    Effect.gen(function*() {
      script = [{ status: 200, body: "<html>not json" }]
      const e = failure(yield* get())
      expect([e.kind, e.status]).toEqual(["malformed", 200])
      expect(hits).toHaveLength(1)
    }))

  it.live("401: unauthorized at once, no retry", () =>
    Effect.gen(function*() {
      script = [{ status: 401, body: JSON.stringify({ error: { message: "Invalid API Key provided" } }) }]
      const e = failure(yield* get())
      expect([e.kind, e.status]).toEqual(["unauthorized", 401])
      expect(e.message).toContain("Invalid API Key provided")
      expect(hits).toHaveLength(1)
    }))

  it("Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("3", 0)).toBe(3_000)
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000)
    expect(retryAfterMs(null, 0)).toBeNull()
    expect(retryAfterMs("soon", 0)).toBeNull()
  })
})
