/**
 * Per-token request budget: a fixed window aligned to the UTC minute (hh:mm:00.000–hh:mm:59.999). Every
 * authenticated request counts, accepted or not; `reset` is the epoch second the window ends. The counter
 * lives in memory, or in Redis when REDIS_URL is set so that every instance shares one budget.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Epoch seconds when the current window ends. */
  readonly reset: number
}

export interface RateLimiterShape {
  readonly consume: (key: string) => Effect.Effect<RateLimitDecision>
}

export const WINDOW_MS = 60_000

/** The underlying error of a failed Redis call, in one line (not Effect's generic tryPromise wrapper). */
const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { message?: string; cause?: { message?: string } } | undefined
  return error?.cause?.message ?? error?.message ?? String(error)
}

const decide = (count: number, limit: number, windowStart: number): RateLimitDecision => ({
  allowed: count <= limit,
  limit,
  remaining: Math.max(0, limit - count),
  reset: (windowStart + WINDOW_MS) / 1000
})

/** Fixed-window counters in this process: the decision for one more request of `key` at `now`. */
const memoryCounter = () => {
  const counters = new Map<string, { window: number; count: number }>()
  let sweptWindow = 0
  return (key: string, now: number, limit: number): RateLimitDecision => {
    const window = now - (now % WINDOW_MS)
    if (window !== sweptWindow) {
      // Drop counters of past windows once per window so memory stays bounded by active tokens.
      for (const [k, c] of counters) if (c.window !== window) counters.delete(k)
      sweptWindow = window
    }
    const counter = counters.get(key)
    const next = counter && counter.window === window ? counter.count + 1 : 1
    counters.set(key, { window, count: next })
    return decide(next, limit, window)
  }
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterShape>()("sitehealth/RateLimiter") {
  static readonly memory = (limit: number) =>
    Layer.sync(RateLimiter, () => {
      const count = memoryCounter()
      return RateLimiter.of({
        // Not Effect.fn: this runs on every /api/v1 request, where a span (and its stack capture) would cost more
        // than the count itself; the Redis store's, a network call, is named.
        consume: (key) => Effect.map(Clock.currentTimeMillis, (now) => count(key, now, limit))
      })
    })

  static readonly redis = (url: string, limit: number) =>
    Layer.effect(
      RateLimiter,
      Effect.gen(function*() {
        // No offline queue: while Redis is unreachable a command fails at once instead of waiting for the
        // reconnect, so the fail-open branch below answers promptly.
        // Loaded only when REDIS_URL is set: an instance counting in memory does not carry the client (~30 MB).
        // A CommonJS package: its exports are `default` in the bundle as in Node (docs/deploy.md, "The bundle").
        const { createClient } = (yield* Effect.promise(() => import("redis"))).default
        const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 2_000 } })
        client.on("error", () => {}) // reconnects by itself; failures surface per command below
        // Redis down at start-up must not keep the API from starting: wait briefly, then serve (counting
        // nothing) while the client keeps reconnecting in the background.
        const connecting = client.connect().then(() => true, () => false)
        const connected = yield* Effect.promise(() => connecting).pipe(
          Effect.timeoutOption("3 seconds"),
          Effect.map((o) => o._tag === "Some" && o.value)
        )
        if (!connected) {
          yield* Effect.logWarning(
            "rate limiter: redis unreachable at start-up; counting per instance until it is back"
          )
        }
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            try {
              client.destroy()
            } catch {
              // already closed
            }
          })
        )
        // INCR and set the expiry in one atomic step: concurrent requests on any instance see one count.
        let lastWarning = 0
        // While Redis is out, this instance counts on its own (fail open to a local limiter): the API stays up
        // and a token still meets a limit — per instance, so N instances let through up to N × limit.
        const local = memoryCounter()
        const script =
          `local c = redis.call('INCR', KEYS[1]); if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end; return c`
        return RateLimiter.of({
          consume: Effect.fn("RateLimiter.consume")(function*(key) {
            const now = yield* Clock.currentTimeMillis
            const window = now - (now % WINDOW_MS)
            const decision = yield* Effect.tryPromise(() =>
              client.eval(script, { keys: [`sitehealth:rl:${key}:${window}`], arguments: [String(WINDOW_MS + 5_000)] })
            ).pipe(
              Effect.timeout("1 second"),
              Effect.map((count): RateLimitDecision => decide(Number(count), limit, window)),
              // Redis down: count in this process rather than take the API down with it; say so in the log.
              Effect.catchCause((cause) => {
                const decision = local(key, now, limit)
                // One warning per 10 s, not one per request, while the outage lasts.
                if (now - lastWarning < 10_000) return Effect.succeed(decision)
                lastWarning = now
                return Effect.as(
                  Effect.logWarning(
                    `rate limiter: redis unavailable, counting per instance until it is back: ${describe(cause)}`
                  ),
                  decision
                )
              })
            )
            return decision
          })
        })
      })
    )
}
