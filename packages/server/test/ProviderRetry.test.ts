/**
 * The provider client's retries on the Effect clock (TestClock, no real waiting), over a scripted
 * HttpClient: Retry-After honoured on 429 and 503 (seconds or an HTTP date) and capped, backoff with
 * jitter inside its bounds otherwise, a bounded number of attempts, a timeout per attempt; and the shared
 * Retry-After reader and schedule themselves.
 */
import { describe, expect, it } from "@effect/vitest"
import { after, backoff, retryAfterMillis, retrySchedule, stop } from "@sitehealth/domain/RetryAfter"
import { Clock, Duration, Effect, Fiber, Result, Schedule } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"
import { makeProviderHttp, type ProviderHttpOptions } from "../src/integrations/ProviderHttp.ts"

type Step = { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> } | "hang"

/** A client answering from `steps` (then 200 {}), recording the Effect-clock time of every request. */
const scripted = (steps: Array<Step>, options: Partial<ProviderHttpOptions>) => {
  const sent: Array<number> = []
  const client = HttpClient.make((request) =>
    Effect.gen(function*() {
      sent.push(yield* Clock.currentTimeMillis)
      const step = steps.shift() ?? { status: 200, body: "{}" }
      if (step === "hang") return yield* Effect.never
      return HttpClientResponse.fromWeb(
        request,
        new Response(step.body ?? "{}", { status: step.status, headers: step.headers ?? {} })
      )
    })
  )
  const http = makeProviderHttp(options, client)
  return { sent, get: http.request({ method: "GET", url: "https://api.example/v1/things?key=SECRET" }) }
}

/** Runs `effect` while the test clock moves `by` at once, and answers its result. */
const whileClockMoves = <A, E>(effect: Effect.Effect<A, E>, by: Duration.Input) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    yield* TestClock.adjust(by)
    return yield* Fiber.join(fiber)
  })

const OPTIONS = { timeoutMs: 1_000, maxAttempts: 3, backoffBaseMs: 100, maxWaitMs: 5_000 }

describe("ProviderHttp retries", () => {
  it.effect("429 with Retry-After in seconds: the next attempt waits exactly that long", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted([{ status: 429, headers: { "retry-after": "3" } }, {
        status: 200,
        body: "{\"ok\":true}"
      }], OPTIONS)
      const fiber = yield* Effect.forkChild(get)
      yield* TestClock.adjust("2999 millis")
      expect(sent).toEqual([0])
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      expect(sent).toEqual([0, 3_000])
      expect(response.json).toEqual({ ok: true })
    }))

  it.effect("503 with Retry-After as an HTTP date: waits until that date", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted(
        [{ status: 503, headers: { "retry-after": new Date(4_000).toUTCString() } }],
        OPTIONS
      )
      yield* whileClockMoves(get, "10 seconds")
      expect(sent).toEqual([0, 4_000])
    }))

  it.effect("a Retry-After longer than maxWaitMs is cut to it", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted([{ status: 429, headers: { "retry-after": "3600" } }], OPTIONS)
      yield* whileClockMoves(get, "1 hour")
      expect(sent).toEqual([0, 5_000])
    }))

  it.effect("5xx without Retry-After: full-jitter backoff within base × 2^(n−1), then `server` after maxAttempts", () =>
    Effect.gen(function*() {
      const steps: Array<Step> = [0, 1, 2, 3].map(() => ({
        status: 502,
        body: JSON.stringify({ error: { message: "upstream down" } })
      }))
      const { sent, get } = scripted(steps, OPTIONS)
      const result = yield* whileClockMoves(Effect.result(get), "1 minute")
      expect(sent).toHaveLength(3)
      expect(sent[1] - sent[0]).toBeLessThanOrEqual(100)
      expect(sent[2] - sent[1]).toBeLessThanOrEqual(200)
      expect(Result.isFailure(result) && [result.failure.kind, result.failure.message]).toEqual([
        "server",
        "https://api.example/v1/things answered 502: upstream down"
      ])
    }))

  it.effect("no answer within timeoutMs: every attempt times out, then `timeout`", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted(["hang", "hang", "hang"], OPTIONS)
      const result = yield* whileClockMoves(Effect.result(get), "1 minute")
      expect(sent).toHaveLength(3)
      expect(Result.isFailure(result) && result.failure.kind).toBe("timeout")
    }))

  it.effect("a 4xx other than 429 is not retried, Retry-After or not", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted([{ status: 400, headers: { "retry-after": "1" } }], OPTIONS)
      const result = yield* Effect.result(get)
      expect(sent).toEqual([0])
      expect(Result.isFailure(result) && result.failure.kind).toBe("invalid_request")
    }))

  /** Google's 403 body: error.errors[].reason says whether it is a rate limit. */
  const google403 = (reason: string) =>
    JSON.stringify({
      error: {
        code: 403,
        message: `Quota exceeded (${reason})`,
        errors: [{ domain: "usageLimits", reason, message: "..." }],
        status: "PERMISSION_DENIED"
      }
    })

  it.effect("Google's 403 rateLimitExceeded / userRateLimitExceeded is retried like a 429 (Retry-After, then backoff), and ends as rate_limited", () =>
    Effect.gen(function*() {
      const { sent, get } = scripted([
        { status: 403, body: google403("rateLimitExceeded"), headers: { "retry-after": "2" } },
        { status: 403, body: google403("userRateLimitExceeded") },
        { status: 200, body: "{\"rows\":[]}" }
      ], OPTIONS)
      const fiber = yield* Effect.forkChild(get)
      yield* TestClock.adjust("1999 millis")
      expect(sent).toEqual([0])
      yield* TestClock.adjust("10 seconds")
      const response = yield* Fiber.join(fiber)
      expect(sent).toHaveLength(3)
      expect(sent[1]).toBe(2_000)
      expect(sent[2] - sent[1]).toBeLessThanOrEqual(OPTIONS.backoffBaseMs * 2)
      expect(response.json).toEqual({ rows: [] })

      const always = scripted([1, 2, 3].map(() => ({ status: 403, body: google403("userRateLimitExceeded") })), OPTIONS)
      const f2 = yield* Effect.forkChild(Effect.result(always.get))
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(f2)
      expect(always.sent).toHaveLength(3)
      expect(Result.isFailure(result) && [result.failure.kind, result.failure.status]).toEqual(["rate_limited", 403])
    }))

  it.effect("any other 403 (a missing permission, a daily quota) fails at once as forbidden", () =>
    Effect.gen(function*() {
      for (const body of [google403("forbidden"), google403("dailyLimitExceeded"), "{\"error\":\"nope\"}", ""]) {
        const { sent, get } = scripted([{ status: 403, body }], OPTIONS)
        const result = yield* Effect.result(get)
        expect(sent).toEqual([0])
        expect(Result.isFailure(result) && result.failure.kind).toBe("forbidden")
      }
    }))
})

describe("@sitehealth/domain/RetryAfter", () => {
  it("reads delta-seconds and HTTP dates; a past date is 0; garbage and absence are null", () => {
    expect(retryAfterMillis("3", 0)).toBe(3_000)
    expect(retryAfterMillis(" 120 ", 0)).toBe(120_000)
    expect(retryAfterMillis(new Date(10_000).toUTCString(), 4_000)).toBe(6_000)
    expect(retryAfterMillis(new Date(1_000).toUTCString(), 4_000)).toBe(0)
    for (const bad of [null, undefined, "", "soon", "-1", "1.5"]) expect(retryAfterMillis(bad, 0)).toBeNull()
  })

  it.effect("the schedule: counted retries are bounded, uncounted ones are not; waits are capped", () =>
    Effect.gen(function*() {
      const policy = { retries: 2, backoffBaseMs: 100, maxWaitMs: 1_000, jitter: false }
      const step = yield* Schedule.toStep(
        retrySchedule<"rate" | "fail" | "late" | "no">(
          policy,
          (input) =>
            input === "rate" ? after(500, false) : input === "late" ? after(60_000) : input === "no" ? stop : backoff
        )
      )
      const delays: Array<number | "done"> = []
      for (const input of ["rate", "fail", "rate", "late", "fail", "no"] as const) {
        const r = yield* Effect.result(step(0, input))
        delays.push(Result.isSuccess(r) ? Duration.toMillis(r.success[1]) : "done")
      }
      expect(delays).toEqual([500, 100, 500, 1_000, "done", "done"])
    }))
})
