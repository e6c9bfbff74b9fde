/** The per-token counter itself: fixed UTC-minute windows, in memory and (when REDIS_URL is set) in Redis. */
import { Effect, Layer, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { type RateLimitDecision, RateLimiter } from "../src/http/RateLimiter.ts"
import { makeTestClock } from "./support/Harness.ts"
import { Clock } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"

const T0 = Date.parse("2026-11-20T12:00:10.000Z")

const consumeN = (layer: Layer.Layer<RateLimiter>, key: string, n: number, clock: Clock.Clock) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        return yield* Effect.forEach(Array.from({ length: n }), () => limiter.consume(key), { concurrency: "unbounded" })
      }).pipe(Effect.provide(layer), Effect.provideService(Clock.Clock, clock))
    )
  )

describe("memory limiter", () => {
  it("allows `limit` per window, reports remaining and the window's end, resets on the next minute", async () => {
    const time = makeTestClock(T0)
    const layer = RateLimiter.memory(3)
    const decisions = await Effect.runPromise(
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const first = yield* Effect.forEach([1, 2, 3, 4], () => limiter.consume("tok_a"))
        time.set(Date.parse("2026-11-20T12:00:59.999Z"))
        const stillSame = yield* limiter.consume("tok_a")
        time.set(Date.parse("2026-11-20T12:01:00.000Z"))
        const next = yield* limiter.consume("tok_a")
        return { first, stillSame, next }
      }).pipe(Effect.provide(layer), Effect.provideService(Clock.Clock, time.clock))
    )
    expect(decisions.first.map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]])
    expect(decisions.first[0].reset).toBe(Date.parse("2026-11-20T12:01:00.000Z") / 1000)
    expect(decisions.stillSame.allowed).toBe(false)
    expect(decisions.next).toMatchObject({ allowed: true, remaining: 2, reset: Date.parse("2026-11-20T12:02:00.000Z") / 1000 })
  })
})

const redisUrl = process.env.REDIS_URL

describe.skipIf(!redisUrl)("redis limiter (REDIS_URL set)", () => {
  it("two instances share one budget: 100 concurrent across both → exactly 60 allowed", async () => {
    const time = makeTestClock(Date.now())
    const key = `tok_test_${Math.random().toString(36).slice(2)}`
    const [a, b] = await Promise.all([
      consumeN(RateLimiter.redis(redisUrl!, 60), key, 50, time.clock),
      consumeN(RateLimiter.redis(redisUrl!, 60), key, 50, time.clock)
    ])
    // The test clock stands still, so every request falls in the same window.
    expect([...a, ...b].filter((d) => d.allowed)).toHaveLength(60)
    expect(new Set([...a, ...b].map((d) => d.reset)).size).toBe(1)
  })
})

describe("redis limiter with Redis unreachable", () => {
  it("starts within seconds and answers at once, counting per instance, instead of hanging", async () => {
    const started = Date.now()
    const time = makeTestClock(T0)
    const decisions = await consumeN(RateLimiter.redis("redis://127.0.0.1:1", 2), "tok_down", 5, time.clock)
    expect(Date.now() - started).toBeLessThan(8_000)
    // Fail open to a local limiter: the API answers, and the token still meets its limit on this instance.
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false, false])
  }, 20_000)
})

const redisServerBinary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => Fs.existsSync(p))

describe.skipIf(!redisServerBinary)("redis limiter when Redis goes away mid-run (private redis-server)", () => {
  it("counts while Redis is up, then answers promptly (counting per instance) once it is down", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = Net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as Net.AddressInfo).port
        s.close(() => resolve(p))
      })
    })
    const redis = spawn(redisServerBinary!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore"
    })
    try {
      await new Promise((r) => setTimeout(r, 300))
      const time = makeTestClock(T0)
      const result = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const limiter = yield* RateLimiter
            const up = yield* Effect.forEach([1, 2, 3], () => limiter.consume("tok_mid"))
            redis.kill("SIGKILL")
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 200)))
            const t = Date.now()
            const down = yield* limiter.consume("tok_mid")
            return { up, down, ms: Date.now() - t }
          }).pipe(Effect.provide(RateLimiter.redis(`redis://127.0.0.1:${port}`, 2)), Effect.provideService(Clock.Clock, time.clock))
        )
      )
      expect(result.up.map((d) => d.allowed)).toEqual([true, true, false])
      expect(result.down.allowed).toBe(true)
      expect(result.ms).toBeLessThan(1_500)
    } finally {
      redis.kill("SIGKILL")
    }
  }, 20_000)
})

/** A free TCP port on 127.0.0.1. */
const freeTcpPort = () =>
  new Promise<number>((resolve) => {
    const s = Net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as Net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })

const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** A throwaway redis-server (no persistence) on `port`; resolves once it accepts connections. */
const startRedis = async (port: number) => {
  const child = spawn(redisServerBinary!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
  for (let i = 0; i < 100 && !(await listens(port)); i++) await new Promise((r) => setTimeout(r, 100))
  return child
}

const killed = (child: ReturnType<typeof spawn>) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

describe.skipIf(!redisServerBinary)("redis limiter: Redis lost, then back (the documented fail-open mode)", () => {
  it("lost: requests counted per instance and ONE warning per 10 s; back: the shared count resumes by itself", async () => {
    const port = await freeTcpPort()
    let redis = await startRedis(port)
    const warnings: Array<string> = []
    // Captures the limiter's log lines (the default logger would only print them).
    const capture = Logger.layer([Logger.make((options) => {
      const text = (Array.isArray(options.message) ? options.message : [options.message]).map(String).join(" ")
      if (options.logLevel === "Warn") warnings.push(text)
    })])
    const time = makeTestClock(T0)
    const pause = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))
    try {
      const result = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const limiter = yield* RateLimiter
            const consume = () => limiter.consume("tok_lost")
            const counted = yield* Effect.forEach([1, 2, 3], consume)

            yield* Effect.promise(() => killed(redis))
            const lost = yield* Effect.forEach([1, 2, 3, 4, 5], consume)
            const warningsAfterLoss = warnings.length
            // Still down 10 s later (same minute window): one more warning, not one per request.
            time.advance(10_001)
            const later = yield* Effect.forEach([1, 2, 3], consume)
            const warningsLater = warnings.length

            redis = yield* Effect.promise(() => startRedis(port))
            // The client reconnects by itself (backoff): poll until Redis counts again — the local budget is
            // spent, so the first allowed request is Redis's (a new, empty server counts from 1).
            let resumed: RateLimitDecision | null = null
            for (let i = 0; i < 150 && resumed === null; i++) {
              const d = yield* consume()
              if (d.allowed) resumed = d
              else yield* pause(100)
            }
            const afterResume = yield* Effect.forEach([1, 2], consume)
            return { counted, lost, later, warningsAfterLoss, warningsLater, resumed, afterResume }
          }).pipe(
            Effect.provide(RateLimiter.redis(`redis://127.0.0.1:${port}`, 2)),
            Effect.provide(capture),
            Effect.provideService(Clock.Clock, time.clock)
          )
        )
      )
      expect(result.counted.map((d) => d.allowed)).toEqual([true, true, false])
      // Fail open to a local limiter: this instance counts from 1 for the rest of the window and limits.
      expect(result.lost.map((d) => [d.allowed, d.remaining])).toEqual([[true, 1], [true, 0], [false, 0], [false, 0], [false, 0]])
      expect(result.later.every((d) => !d.allowed)).toBe(true)
      expect(result.warningsAfterLoss).toBe(1)
      expect(warnings[0]).toContain("rate limiter: redis unavailable, counting per instance until it is back")
      expect(warnings[0]).not.toContain("An error occurred in Effect.tryPromise")
      expect(result.warningsLater).toBe(2)
      // Back: the new (empty) Redis counts from 1 again, and the limit bites again.
      expect(result.resumed).toMatchObject({ allowed: true, remaining: 1 })
      expect(result.afterResume.map((d) => d.allowed)).toEqual([true, false])
    } finally {
      await killed(redis)
    }
  }, 30_000)
})
