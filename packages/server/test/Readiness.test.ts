/**
 * GET /readyz and /healthz over the real app on a database of its own: the body's checks (database with its
 * latency, Redis when configured, the worker's heartbeat — this process's or, without one, the latest any
 * worker wrote), `degraded` (200) for a stale or missing worker and an unreachable Redis, 503 while a
 * migration holds its lock and while draining. And the worker beats: runWorker writes its row.
 */
import { beforeEach, describe, expect, layer } from "@effect/vitest"
import { Clock, Context, Effect, Fiber, Layer, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import * as Net from "node:net"
import { ROUTER_CONFIG } from "../src/App.ts"
import { markDraining } from "../src/http/Readiness.ts"
import { appLayer, SqlRepos } from "../src/Layers.ts"
import { AppConfig, type AppConfigShape, readConfig } from "../src/platform/Config.ts"
import { pgLayer } from "../src/platform/Database.ts"
import { beat, localHeartbeatMs, resetLocalHeartbeat, WORKER_ID } from "../src/platform/Heartbeat.ts"
import { runWorker } from "../src/worker/RecomputeWorker.ts"
import { PrivateDb } from "./support/PrivateDb.ts"
import { freePort, type PrivateDatabase } from "./support/ScaleOut.ts"

const liveRedis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const redisUp = await new Promise<boolean>((resolve) => {
  const u = new URL(liveRedis)
  const socket = Net.connect(Number(u.port || 6379), u.hostname)
  socket.once("connect", () => (socket.destroy(), resolve(true)))
  socket.once("error", () => resolve(false))
})

let db: PrivateDatabase

/** Runs a statement on a pool of its own (another "process"). */
const sql = <A>(f: (s: SqlClient.SqlClient) => Effect.Effect<A, any>) =>
  Effect.scoped(Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(pgLayer(db.url)))) as Effect.Effect<A>

/**
 * The app as the server builds it (AppConfig present while the repositories are built, as in main.ts); gone with the
 * scope.
 */
const app = Effect.fnUntraced(function*(overrides: Partial<AppConfigShape> = {}) {
  const config: AppConfigShape = { ...readConfig({}), databaseUrl: Redacted.make(db.url), ...overrides }
  const context = (yield* Layer.build(SqlRepos.pipe(Layer.provideMerge(pgLayer(db.url)))).pipe(
    Effect.provideService(AppConfig, config)
  )) as Context.Context<any>
  const { dispose, handler } = HttpRouter.toWebHandler(
    appLayer(config, Layer.succeedContext(context)).pipe(Layer.provide(HttpServer.layerServices)) as any,
    { disableLogger: true, routerConfig: ROUTER_CONFIG }
  )
  yield* Effect.addFinalizer(() => Effect.promise(dispose))
  const get = (path: string) =>
    Effect.promise(async () => {
      const started = performance.now()
      const res = await handler(new Request(`http://localhost${path}`))
      return { status: res.status, json: (await res.json()) as any, ms: performance.now() - started }
    })
  const run = <A>(effect: Effect.Effect<A, any, any>) => Effect.provideContext(effect, context) as Effect.Effect<A>
  return { get, run, context }
})

/** The app every test shares, on the file's database. */
class Plain extends Context.Service<Plain, Effect.Success<ReturnType<typeof app>>>()("test/Readiness/Plain") {}
const PlainApp = Layer.effect(Plain, Effect.andThen(Effect.service(PrivateDb), (d) => (db = d, app()))).pipe(
  Layer.provide(PrivateDb.layer)
)

// One database and one app for the file; the live clock, as readiness is measured in real time.
layer(PlainApp, { excludeTestServices: true, timeout: "120 seconds" })("readiness on a database of its own", (it) => {
  beforeEach(async () => {
    resetLocalHeartbeat()
    await Effect.runPromise(sql((s) => s`DELETE FROM worker_heartbeats`))
  })

  describe("/healthz", () => {
    it.effect("is liveness only: 200 {status:'ok'}, no check", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        const r = yield* plain.get("/healthz")
        expect(r).toMatchObject({ status: 200, json: { status: "ok" } })
      }))
  })

  describe("/readyz: the worker's heartbeat", () => {
    it.effect("no worker ever beat: degraded (200), worker missing, database ok with its latency; no redis check without REDIS_URL", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        const r = yield* plain.get("/readyz")
        expect(r.status).toBe(200)
        expect(r.json).toEqual({
          status: "degraded",
          reason: "no worker heartbeat (is a worker running?)",
          checks: {
            database: { status: "ok", latencyMs: expect.any(Number) },
            worker: { status: "missing", lastHeartbeatSecondsAgo: null, source: "database" }
          }
        })
        expect(r.json.checks.database.latencyMs).toBeLessThan(2_000)
      }))

    it.effect("another process's worker beat just now (read from the table): ready", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        yield* plain.run(beat)
        resetLocalHeartbeat() // the beat came from "another process": this one runs no worker
        const r = yield* plain.get("/readyz")
        expect(r.status).toBe(200)
        expect(r.json).toEqual({
          status: "ready",
          checks: {
            database: { status: "ok", latencyMs: expect.any(Number) },
            worker: { status: "ok", lastHeartbeatSecondsAgo: 0, source: "database" }
          }
        })
      }))

    it.effect("the latest beat of any worker is 90 s old: degraded, stale, with its age (the database's clock)", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        yield* sql((s) =>
          s`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at)
          VALUES ('old', 'h', 1, now() - interval '1 hour', now() - interval '200 seconds'),
                 ('newer', 'h', 2, now() - interval '1 hour', now() - interval '90 seconds')`
        )
        const r = yield* plain.get("/readyz")
        expect(r.status).toBe(200)
        expect(r.json.status).toBe("degraded")
        expect(r.json.reason).toMatch(/^worker heartbeat stale \((90|91) s ago\)$/)
        expect(r.json.checks.worker).toEqual({
          status: "stale",
          lastHeartbeatSecondsAgo: expect.any(Number),
          source: "database"
        })
        expect(r.json.checks.worker.lastHeartbeatSecondsAgo).toBeGreaterThanOrEqual(90)
        expect(r.json.checks.worker.lastHeartbeatSecondsAgo).toBeLessThan(95)
      }))

    it.effect("this process's own worker is what counts when it runs one: fresh, then stale", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        yield* sql((s) =>
          s`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at)
          VALUES ('elsewhere', 'h', 3, now(), now())`
        )
        // Our worker beat two minutes ago (its clock); the other worker's fresh row must not hide that.
        const past: Clock.Clock = Object.assign(Object.create(Clock.Clock.defaultValue()), {
          currentTimeMillis: Effect.sync(() => Date.now() - 120_000)
        })
        yield* plain.run(beat.pipe(Effect.provideService(Clock.Clock, past)))
        const stale = yield* plain.get("/readyz")
        expect(stale.json.checks.worker).toMatchObject({ status: "stale", source: "in-process" })
        expect(stale.json.checks.worker.lastHeartbeatSecondsAgo).toBeGreaterThanOrEqual(119)
        yield* plain.run(beat)
        const fresh = yield* plain.get("/readyz")
        expect(fresh.json).toMatchObject({
          status: "ready",
          checks: { worker: { status: "ok", lastHeartbeatSecondsAgo: 0, source: "in-process" } }
        })
      }))

    it.effect("runWorker beats at once: its row in worker_heartbeats, and this process's heartbeat set", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        const config: AppConfigShape = {
          ...readConfig({}),
          databaseUrl: Redacted.make(db.url),
          secretKey: Redacted.make(Buffer.alloc(32, 3).toString("base64"))
        }
        // A child of the test: interrupted when the test ends, whatever the outcome.
        const fiber = yield* Effect.forkChild(
          runWorker.pipe(
            Effect.provideContext(plain.context),
            Effect.provideService(AppConfig, config)
          ) as Effect.Effect<unknown, unknown>
        )
        const deadline = Date.now() + 10_000
        let rows: ReadonlyArray<any> = []
        while (rows.length === 0 && Date.now() < deadline) {
          yield* Effect.sleep(100)
          rows = yield* sql((s) =>
            s`SELECT worker_id, pid, beat_at > now() - interval '10 seconds' AS recent FROM worker_heartbeats`
          )
        }
        expect(rows).toEqual([{ worker_id: WORKER_ID, pid: process.pid, recent: true }])
        expect(localHeartbeatMs()).not.toBeNull()
        expect((yield* plain.get("/readyz")).json.checks.worker).toMatchObject({ status: "ok", source: "in-process" })
        yield* Fiber.interrupt(fiber)
      }))
  })

  describe("/readyz: unavailable and degraded", () => {
    it.effect("503 while a migration holds sitehealth_migrations (another process migrating), without waiting on its lock", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        yield* plain.run(beat)
        let release = () => {}
        const released = new Promise<void>((resolve) => (release = resolve))
        let locked = () => {}
        const holding = new Promise<void>((resolve) => (locked = resolve))
        // The migrator's own first step, held open as a long migration would.
        const migrator = yield* Effect.forkChild(sql((s) =>
          s.withTransaction(
            s`LOCK TABLE sitehealth_migrations IN ACCESS EXCLUSIVE MODE`.pipe(
              Effect.andThen(Effect.sync(locked)),
              Effect.andThen(Effect.promise(() => released))
            )
          )
        ))
        yield* Effect.gen(function*() {
          yield* Effect.promise(() => holding)
          const r = yield* plain.get("/readyz")
          expect(r.status).toBe(503)
          expect(r.json).toMatchObject({
            status: "unavailable",
            reason: "migrations running",
            checks: { database: { status: "migrating" } }
          })
          expect(r.ms).toBeLessThan(1_500)
        }).pipe(Effect.ensuring(Effect.sync(release).pipe(Effect.andThen(Fiber.join(migrator)))))
        expect((yield* plain.get("/readyz")).status).toBe(200)
      }))

    it.effect("Redis configured but not answering: degraded (the limiter fails open), quickly", () =>
      Effect.gen(function*() {
        const closed = yield* Effect.promise(freePort)
        // Disposed with the test's scope.
        const withRedis = yield* app({ redisUrl: Redacted.make(`redis://127.0.0.1:${closed}`) })
        // The app is built on its first request, the rate limiter's own wait for Redis (3 s) included: not ours.
        yield* withRedis.get("/healthz")
        yield* withRedis.run(beat)
        const r = yield* withRedis.get("/readyz")
        expect(r.status).toBe(200)
        expect(r.json).toMatchObject({
          status: "degraded",
          reason: "redis unreachable (rate limits counted per instance)",
          checks: { database: { status: "ok" }, redis: { status: "down", latencyMs: null }, worker: { status: "ok" } }
        })
        expect(r.ms).toBeLessThan(1_800)
        // Only the first check waits (up to 1 s) for the connection; while Redis stays away, the next ones do not.
        const again = yield* withRedis.get("/readyz")
        expect(again.json.checks.redis).toEqual({ status: "down", latencyMs: null })
        expect(again.ms).toBeLessThan(500)
      }))

    it.effect.skipIf(!redisUp)(
      `Redis answering PING: ok with its latency (${liveRedis})`,
      () =>
        Effect.gen(function*() {
          const withRedis = yield* app({ redisUrl: Redacted.make(liveRedis) })
          yield* withRedis.run(beat)
          const r = yield* withRedis.get("/readyz")
          expect(r.json).toMatchObject({
            status: "ready",
            checks: { redis: { status: "ok", latencyMs: expect.any(Number) } }
          })
        })
    )

    // Last: draining is one-way for the whole process.
    it.effect("503 draining once the stop began, whatever the checks say", () =>
      Effect.gen(function*() {
        const plain = yield* Plain
        yield* plain.run(beat)
        markDraining()
        const r = yield* plain.get("/readyz")
        expect(r.status).toBe(503)
        expect(r.json).toMatchObject({
          status: "unavailable",
          reason: "draining",
          checks: { database: { status: "ok" } }
        })
      }))
  })
})
