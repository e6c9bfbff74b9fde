/**
 * How long to wait before asking again, for every client of ours (the provider connectors, the CLI, MCP):
 * the one reader of a `Retry-After` header and the one retry `Schedule`. Pure: no I/O; the schedule reads
 * the Effect clock and `Random`, so `TestClock` drives it in tests.
 *
 * The schedule is exponential backoff (base × 2^(n−1) before retry n, optionally with full jitter:
 * uniform in [0, that]) unless the caller's `advise` says the server named its own wait (Retry-After),
 * which is then taken as is; every wait is capped at `maxWaitMs`. `advise` also says whether to retry at all,
 * and whether a retry counts against `retries` (the CLI's one extra 429 retry does not).
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"

/**
 * Retry-After as milliseconds from `nowMs`: delta-seconds (whole seconds, RFC 9110 §10.2.3) or an
 * HTTP date (a date in the past is 0). Null when the header is absent or unreadable.
 */
export const retryAfterMillis = (header: string | null | undefined, nowMs: number): number | null => {
  if (header === null || header === undefined || header.trim() === "") return null
  const parsed = Headers.parseRetryAfter(header)
  return Result.isSuccess(parsed) ? Duration.toMillis(Headers.retryAfterDelay(parsed.success, nowMs)) : null
}

export interface RetryPolicy {
  /** Counted retries after the first attempt (0 = never retry). */
  readonly retries: number
  /** The wait before the first retry; each next one doubles. */
  readonly backoffBaseMs: number
  /** No single wait is longer than this, a server's Retry-After included. */
  readonly maxWaitMs: number
  /** Full jitter (uniform in [0, backoff]) so that many clients backing off from one server spread out. */
  readonly jitter: boolean
}

/** What one failed attempt says about the next. */
export type RetryAdvice =
  | { readonly _tag: "Stop" }
  | {
    readonly _tag: "Retry"
    /** The server's own wait (Retry-After, or a known one); null: back off exponentially. */
    readonly afterMs: number | null
    /** False for a retry that does not use up one of `retries`. */
    readonly counted: boolean
  }

export const stop: RetryAdvice = { _tag: "Stop" }
export const backoff: RetryAdvice = { _tag: "Retry", afterMs: null, counted: true }
export const after = (afterMs: number | null, counted = true): RetryAdvice => ({ _tag: "Retry", afterMs, counted })

/** The exponential wait before counted retry `n` (1-based), before jitter and cap. */
export const backoffMillis = (policy: Pick<RetryPolicy, "backoffBaseMs">, n: number): number =>
  policy.backoffBaseMs * 2 ** Math.max(0, n - 1)

/**
 * The retry schedule: its input is what the failed attempt failed with (an error, or an answer lifted
 * into one), `advise` reads it. Use with `Effect.retry(effect, retrySchedule(policy, advise))`.
 */
export const retrySchedule = <I>(
  policy: RetryPolicy,
  advise: (input: I) => RetryAdvice
): Schedule.Schedule<Duration.Duration, I> =>
  Schedule.fromStep(Effect.sync(() => {
    let counted = 0
    return (_now: number, input: I) => {
      const advice = advise(input)
      if (advice._tag === "Stop" || (advice.counted && counted >= policy.retries)) return Cause.done(Duration.zero)
      if (advice.counted) counted += 1
      const wait = advice.afterMs !== null
        ? Effect.succeed(advice.afterMs)
        : policy.jitter
        ? Effect.map(Random.next, (r) => r * backoffMillis(policy, counted))
        : Effect.succeed(backoffMillis(policy, counted))
      return Effect.map(wait, (ms) => {
        const delay = Duration.millis(Math.min(policy.maxWaitMs, Math.max(0, ms)))
        return [delay, delay] as [Duration.Duration, Duration.Duration]
      })
    }
  }))
