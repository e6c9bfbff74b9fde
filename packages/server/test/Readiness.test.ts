/**
 * GET /readyz and /healthz over the real app on a database of its own: the body's checks (database with its
 * latency, Redis when configured, the worker's heartbeat — this process's or, without one, the latest any
 * worker wrote), `degraded` (200) for a stale or missing worker and an unreachable Redis, 503 while a
 * migration holds its lock and while draining. And the worker beats: runWorker writes its row.
 */
import { Clock, Context, Effect, Fiber, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import * as Net from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { ROUTER_CONFIG } from "../src/App.ts"
import { AppConfig, type AppConfigShape, readConfig } from "../src/Config.ts"
import { pgLayer, runMigrations } from "../src/db/Database.ts"
import { markDraining } from "../src/http/Readiness.ts"
import { appLayer, SqlRepos } from "../src/Layers.ts"
import { beat, localHeartbeatMs, resetLocalHeartbeat, WORKER_ID } from "../src/worker/Heartbeat.ts"
import { runWorker } from "../src/worker/RecomputeWorker.ts"
import { freePort, type PrivateDatabase, privateDatabase } from "./support/ScaleOut.ts"

const liveRedis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const redisUp = await new Promise<boolean>((resolve) => {
  const u = new URL(liveRedis)
  const socket = Net.connect(Number(u.port || 6379), u.hostname)
  socket.once("connect", () => (socket.destroy(), resolve(true)))
  socket.once("error", () => resolve(false))
})

let db: PrivateDatabase
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  db = await privateDatabase()
  await Effect.runPromise(Effect.scoped(Effect.provide(runMigrations, pgLayer(db.url))) as Effect.Effect<unknown>)
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as any))
  await db?.drop()
})

beforeEach(async () => {
  resetLocalHeartbeat()
  await sql((s) => s`DELETE FROM worker_heartbeats`)
})

/** Runs a statement on a pool of its own (another "process"). */
const sql = <A>(f: (s: SqlClient.SqlClient) => Effect.Effect<A, any>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(pgLayer(db.url)))) as Effect.Effect<A>)

/** The app as the server builds it (AppConfig present while the repositories are built, as in main.ts). */
const app = async (overrides: Partial<AppConfigShape> = {}) => {
  const config: AppConfigShape = { ...readConfig({}), databaseUrl: db.url, ...overrides }
  const context = await Effect.runPromise(
    Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(db.url))), scope).pipe(
      Effect.provideService(AppConfig, config)
    ) as Effect.Effect<Context.Context<any>>
  )
  const { dispose, handler } = HttpRouter.toWebHandler(
    appLayer(config, Layer.succeedContext(context)).pipe(Layer.provide(HttpServer.layerServices)) as any,
    { disableLogger: true, routerConfig: ROUTER_CONFIG }
  )
  const get = async (path: string) => {
    const started = performance.now()
    const res = await handler(new Request(`http://localhost${path}`))
    return { status: res.status, json: (await res.json()) as any, ms: performance.now() - started }
  }
  const run = <A>(effect: Effect.Effect<A, any, any>) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
  return { get, run, dispose, context }
}

type App = Awaited<ReturnType<typeof app>>
let plain: App

beforeAll(async () => {
  plain = await app()
})
afterAll(() => plain?.dispose())

describe("/healthz", () => {
  it("is liveness only: 200 {status:'ok'}, no check", async () => {
    const r = await plain.get("/healthz")
    expect(r).toMatchObject({ status: 200, json: { status: "ok" } })
  })
})

describe("/readyz: the worker's heartbeat", () => {
  it("no worker ever beat: degraded (200), worker missing, database ok with its latency; no redis check without REDIS_URL", async () => {
    const r = await plain.get("/readyz")
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
  })

  it("another process's worker beat just now (read from the table): ready", async () => {
    await plain.run(beat)
    resetLocalHeartbeat() // the beat came from "another process": this one runs no worker
    const r = await plain.get("/readyz")
    expect(r.status).toBe(200)
    expect(r.json).toEqual({
      status: "ready",
      checks: {
        database: { status: "ok", latencyMs: expect.any(Number) },
        worker: { status: "ok", lastHeartbeatSecondsAgo: 0, source: "database" }
      }
    })
  })

  it("the latest beat of any worker is 90 s old: degraded, stale, with its age (the database's clock)", async () => {
    await sql((s) => s`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at)
      VALUES ('old', 'h', 1, now() - interval '1 hour', now() - interval '200 seconds'),
             ('newer', 'h', 2, now() - interval '1 hour', now() - interval '90 seconds')`)
    const r = await plain.get("/readyz")
    expect(r.status).toBe(200)
    expect(r.json.status).toBe("degraded")
    expect(r.json.reason).toMatch(/^worker heartbeat stale \((90|91) s ago\)$/)
    expect(r.json.checks.worker).toEqual({ status: "stale", lastHeartbeatSecondsAgo: expect.any(Number), source: "database" })
    expect(r.json.checks.worker.lastHeartbeatSecondsAgo).toBeGreaterThanOrEqual(90)
    expect(r.json.checks.worker.lastHeartbeatSecondsAgo).toBeLessThan(95)
  })

  it("this process's own worker is what counts when it runs one: fresh, then stale", async () => {
    await sql((s) => s`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at)
      VALUES ('elsewhere', 'h', 3, now(), now())`)
    // Our worker beat two minutes ago (its clock); the other worker's fresh row must not hide that.
    const past: Clock.Clock = Object.assign(Object.create(Clock.Clock.defaultValue()), {
      currentTimeMillis: Effect.sync(() => Date.now() - 120_000)
    })
    await plain.run(beat.pipe(Effect.provideService(Clock.Clock, past)))
    const stale = await plain.get("/readyz")
    expect(stale.json.checks.worker).toMatchObject({ status: "stale", source: "in-process" })
    expect(stale.json.checks.worker.lastHeartbeatSecondsAgo).toBeGreaterThanOrEqual(119)
    await plain.run(beat)
    const fresh = await plain.get("/readyz")
    expect(fresh.json).toMatchObject({ status: "ready", checks: { worker: { status: "ok", lastHeartbeatSecondsAgo: 0, source: "in-process" } } })
  })

  it("runWorker beats at once: its row in worker_heartbeats, and this process's heartbeat set", async () => {
    const config: AppConfigShape = { ...readConfig({}), databaseUrl: db.url, secretKey: Buffer.alloc(32, 3).toString("base64") }
    const fiber = Effect.runFork(
      runWorker.pipe(Effect.provideContext(plain.context), Effect.provideService(AppConfig, config)) as Effect.Effect<unknown, unknown>
    )
    try {
      const deadline = Date.now() + 10_000
      let rows: ReadonlyArray<any> = []
      while (rows.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
        rows = await sql((s) => s`SELECT worker_id, pid, beat_at > now() - interval '10 seconds' AS recent FROM worker_heartbeats`)
      }
      expect(rows).toEqual([{ worker_id: WORKER_ID, pid: process.pid, recent: true }])
      expect(localHeartbeatMs()).not.toBeNull()
      expect((await plain.get("/readyz")).json.checks.worker).toMatchObject({ status: "ok", source: "in-process" })
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  })
})

describe("/readyz: unavailable and degraded", () => {
  it("503 while a migration holds sitehealth_migrations (another process migrating), without waiting on its lock", async () => {
    await plain.run(beat)
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    let locked = () => {}
    const holding = new Promise<void>((resolve) => (locked = resolve))
    // The migrator's own first step, held open as a long migration would.
    const migrator = sql((s) =>
      s.withTransaction(
        s`LOCK TABLE sitehealth_migrations IN ACCESS EXCLUSIVE MODE`.pipe(
          Effect.andThen(Effect.sync(locked)),
          Effect.andThen(Effect.promise(() => released))
        )
      )
    )
    try {
      await holding
      const r = await plain.get("/readyz")
      expect(r.status).toBe(503)
      expect(r.json).toMatchObject({ status: "unavailable", reason: "migrations running", checks: { database: { status: "migrating" } } })
      expect(r.ms).toBeLessThan(1_500)
    } finally {
      release()
      await migrator
    }
    expect((await plain.get("/readyz")).status).toBe(200)
  })

  it("Redis configured but not answering: degraded (the limiter fails open), quickly", async () => {
    const closed = await freePort()
    const withRedis = await app({ redisUrl: `redis://127.0.0.1:${closed}` })
    try {
      // The app is built on its first request, the rate limiter's own wait for Redis (3 s) included: not ours.
      await withRedis.get("/healthz")
      await withRedis.run(beat)
      const r = await withRedis.get("/readyz")
      expect(r.status).toBe(200)
      expect(r.json).toMatchObject({
        status: "degraded",
        reason: "redis unreachable (rate limits counted per instance)",
        checks: { database: { status: "ok" }, redis: { status: "down", latencyMs: null }, worker: { status: "ok" } }
      })
      expect(r.ms).toBeLessThan(1_800)
      // Only the first check waits (up to 1 s) for the connection; while Redis stays away, the next ones do not.
      const again = await withRedis.get("/readyz")
      expect(again.json.checks.redis).toEqual({ status: "down", latencyMs: null })
      expect(again.ms).toBeLessThan(500)
    } finally {
      await withRedis.dispose()
    }
  })

  it.skipIf(!redisUp)(`Redis answering PING: ok with its latency (${liveRedis})`, async () => {
    const withRedis = await app({ redisUrl: liveRedis })
    try {
      await withRedis.run(beat)
      const r = await withRedis.get("/readyz")
      expect(r.json).toMatchObject({ status: "ready", checks: { redis: { status: "ok", latencyMs: expect.any(Number) } } })
    } finally {
      await withRedis.dispose()
    }
  })

  // Last: draining is one-way for the whole process.
  it("503 draining once the stop began, whatever the checks say", async () => {
    await plain.run(beat)
    markDraining()
    const r = await plain.get("/readyz")
    expect(r.status).toBe(503)
    expect(r.json).toMatchObject({ status: "unavailable", reason: "draining", checks: { database: { status: "ok" } } })
  })
})
