/** The per-token counter itself: fixed UTC-minute windows, in memory and (when REDIS_URL is set) in Redis. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { TestClock } from "effect/testing"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { type RateLimitDecision, RateLimiter } from "../src/http/RateLimiter.ts"
import { canConnect, freePort } from "./support/Ports.ts"
import { followRealTimeFrom } from "./support/TestTime.ts"

const T0 = Date.parse("2026-11-20T12:00:10.000Z")

/** The Redis limiter waits on real sockets under Effect timeouts (3 s to connect, 1 s per command). */
const followRealTime = followRealTimeFrom(T0)

const consumeN = (layer: Layer.Layer<RateLimiter>, key: string, n: number) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    return yield* Effect.forEach(Array.from({ length: n }), () => limiter.consume(key), { concurrency: "unbounded" })
  }).pipe(Effect.provide(layer))

describe("memory limiter", () => {
  it.effect("allows `limit` per window, reports remaining and the window's end, resets on the next minute", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const limiter = yield* RateLimiter
      const first = yield* Effect.forEach([1, 2, 3, 4], () => limiter.consume("tok_a"))
      yield* TestClock.setTime(Date.parse("2026-11-20T12:00:59.999Z"))
      const stillSame = yield* limiter.consume("tok_a")
      yield* TestClock.setTime(Date.parse("2026-11-20T12:01:00.000Z"))
      const next = yield* limiter.consume("tok_a")
      expect(first.map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]])
      expect(first[0].reset).toBe(Date.parse("2026-11-20T12:01:00.000Z") / 1000)
      expect(stillSame.allowed).toBe(false)
      expect(next).toMatchObject({ allowed: true, remaining: 2, reset: Date.parse("2026-11-20T12:02:00.000Z") / 1000 })
    }).pipe(Effect.provide(RateLimiter.memory(3))))
})

const redisUrl = process.env.REDIS_URL

describe.skipIf(!redisUrl)("redis limiter (REDIS_URL set)", () => {
  it.effect("two instances share one budget: 100 concurrent across both → exactly 60 allowed", () =>
    Effect.gen(function*() {
      yield* followRealTime
      const key = `tok_test_${Math.random().toString(36).slice(2)}`
      // The clock starts 10 s into a minute, so every request falls in the same window.
      const [a, b] = yield* Effect.all([
        consumeN(RateLimiter.redis(redisUrl!, 60), key, 50),
        consumeN(RateLimiter.redis(redisUrl!, 60), key, 50)
      ], { concurrency: 2 })
      expect([...a, ...b].filter((d) => d.allowed)).toHaveLength(60)
      expect(new Set([...a, ...b].map((d) => d.reset)).size).toBe(1)
    }))
})

describe("redis limiter with Redis unreachable", () => {
  it.effect(
    "starts within seconds and answers at once, counting per instance, instead of hanging",
    () =>
      Effect.gen(function*() {
        yield* followRealTime
        const started = Date.now()
        const decisions = yield* consumeN(RateLimiter.redis("redis://127.0.0.1:1", 2), "tok_down", 5)
        expect(Date.now() - started).toBeLessThan(8_000)
        // Fail open to a local limiter: the API answers, and the token still meets its limit on this instance.
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false, false])
      }),
    20_000
  )
})

const redisServerBinary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => Fs.existsSync(p))

/** Real time, for the Redis process to start or die (the test clock would never get there). */
const pause = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

describe.skipIf(!redisServerBinary)("redis limiter when Redis goes away mid-run (private redis-server)", () => {
  it.effect(
    "counts while Redis is up, then answers promptly (counting per instance) once it is down",
    () =>
      Effect.gen(function*() {
        yield* followRealTime
        const port = yield* Effect.promise(freePort)
        const redis = spawn(redisServerBinary!, [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--save",
          "",
          "--appendonly",
          "no"
        ], {
          stdio: "ignore"
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => redis.kill("SIGKILL")))
        yield* pause(300)
        const result = yield* Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const up = yield* Effect.forEach([1, 2, 3], () => limiter.consume("tok_mid"))
          redis.kill("SIGKILL")
          yield* pause(200)
          const t = Date.now()
          const down = yield* limiter.consume("tok_mid")
          return { up, down, ms: Date.now() - t }
        }).pipe(Effect.provide(RateLimiter.redis(`redis://127.0.0.1:${port}`, 2)))
        expect(result.up.map((d) => d.allowed)).toEqual([true, true, false])
        expect(result.down.allowed).toBe(true)
        expect(result.ms).toBeLessThan(1_500)
      }),
    20_000
  )
})

/** A throwaway redis-server (no persistence) on `port`; resolves once it accepts connections. */
const startRedis = async (port: number) => {
  const child = spawn(redisServerBinary!, [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no"
  ], { stdio: "ignore" })
  for (let i = 0; i < 100 && !(await canConnect(port)); i++) await new Promise((r) => setTimeout(r, 100))
  return child
}

const killed = (child: ReturnType<typeof spawn>) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

describe.skipIf(!redisServerBinary)("redis limiter: Redis lost, then back (the documented fail-open mode)", () => {
  it.effect(
    "lost: requests counted per instance and ONE warning per 10 s; back: the shared count resumes by itself",
    () =>
      Effect.gen(function*() {
        yield* followRealTime
        const port = yield* Effect.promise(freePort)
        let redis = yield* Effect.promise(() => startRedis(port))
        yield* Effect.addFinalizer(() => Effect.promise(() => killed(redis)))
        const warnings: Array<string> = []
        // Captures the limiter's log lines (the default logger would only print them).
        const capture = Logger.layer([Logger.make((options) => {
          const text = (Array.isArray(options.message) ? options.message : [options.message]).map(String).join(" ")
          if (options.logLevel === "Warn") warnings.push(text)
        })])
        const result = yield* Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const consume = () => limiter.consume("tok_lost")
          const counted = yield* Effect.forEach([1, 2, 3], consume)

          yield* Effect.promise(() => killed(redis))
          const lost = yield* Effect.forEach([1, 2, 3, 4, 5], consume)
          const warningsAfterLoss = warnings.length
          // Still down 10 s later (same minute window): one more warning, not one per request.
          yield* TestClock.adjust(10_001)
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
          Effect.provide(capture)
        )
        expect(result.counted.map((d) => d.allowed)).toEqual([true, true, false])
        // Fail open to a local limiter: this instance counts from 1 for the rest of the window and limits.
        expect(result.lost.map((d) => [d.allowed, d.remaining])).toEqual([
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
          [false, 0]
        ])
        expect(result.later.every((d) => !d.allowed)).toBe(true)
        expect(result.warningsAfterLoss).toBe(1)
        expect(warnings[0]).toContain("rate limiter: redis unavailable, counting per instance until it is back")
        expect(warnings[0]).not.toContain("An error occurred in Effect.tryPromise")
        expect(result.warningsLater).toBe(2)
        // Back: the new (empty) Redis counts from 1 again, and the limit bites again.
        expect(result.resumed).toMatchObject({ allowed: true, remaining: 1 })
        expect(result.afterResume.map((d) => d.allowed)).toEqual([true, false])
      }),
    30_000
  )
})
