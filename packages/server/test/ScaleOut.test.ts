/**
 * The deployment shape of docs/deploy.md, for real: three `main.ts` processes (each with its in-process
 * worker) and one `WorkerMain.ts` on one Postgres and one Redis, started at once on an empty database.
 *
 *   a) one token's budget is shared: 100 concurrent requests over the three → exactly 60 accepted;
 *   b) a token revoked through one instance is refused by another on its very next request;
 *   c) queued sync runs are each executed by exactly one of the four workers, once;
 *   d) SIGTERM: /readyz 503, the listener closes, the in-flight request completes, the sync the instance
 *      was running is released to another worker at once, exit code 0;
 *   e) a rolling restart of one instance under a write load loses no acknowledged write.
 *
 * Postgres: a new database on DATABASE_URL's server, else a private embedded cluster. Redis: REDIS_URL, else a
 * private redis-server; without either, (a) is skipped and says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { createAccount, createProject, mintToken } from "../src/accounts/Provisioning.ts"
import { makeCipher, parseSecretKey } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { SyncQueue } from "../src/integrations/SyncQueue.ts"
import { MemoryRepos, SqlRepos } from "../src/Layers.ts"
import { pgLayer } from "../src/platform/Database.ts"
import { drainSyncs, runNextSync } from "../src/worker/SyncRunner.ts"
import {
  canConnect,
  eventually,
  type FakeProvider,
  freePort,
  killAllSpawned,
  listeningSocketsOf,
  type PrivateDatabase,
  privateDatabase,
  type PrivateRedis,
  privateRedis,
  type Proc,
  redisAvailability,
  sleep,
  slowPost,
  spawnNode,
  startFakeProvider
} from "./support/ScaleOut.ts"
import { makeFakeConnector, runnerLayer, SECRET, TEST_KEY } from "./support/SyncFakes.ts"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const MAIN = Path.join(ROOT, "packages/server/bin/server.js")
const WORKER = Path.join(ROOT, "packages/server/bin/worker.js")
const SECRET_KEY = randomBytes(32).toString("base64")
/** Short bounds, so the whole file stays well under a minute. */
const SHUTDOWN_DELAY_MS = 1_000
const SHUTDOWN_TIMEOUT_MS = 5_000
const REDIS = redisAvailability()

interface Instance {
  readonly name: string
  readonly port: number
  readonly base: string
  proc: Proc
}

let db: PrivateDatabase | undefined
let redis: PrivateRedis | undefined
let provider: FakeProvider | undefined
let dataDir = ""
const instances: Array<Instance> = []
let scope: Scope.Closeable | undefined
let run: <A>(effect: Effect.Effect<A, any, any>) => Promise<A> = () => Promise.reject(new Error("not set up"))
let accountId = ""
let projectId = ""
let secrets: Record<"budget" | "admin" | "victim" | "syncer", { readonly id: string; readonly secret: string }>

const envFor = (name: string, port: number): Record<string, string> => ({
  DATABASE_URL: db!.url,
  ...(redis!.url === null ? {} : { REDIS_URL: redis!.url }),
  SITEHEALTH_SECRET_KEY: SECRET_KEY,
  SITEHEALTH_DATA_DIR: dataDir,
  HOST: "127.0.0.1",
  PORT: String(port),
  SITEHEALTH_WORKER: "1",
  // Seven processes on one PostgreSQL (another suite's may share it): 7 × 5 connections, not 7 × 20.
  SITEHEALTH_DB_POOL_SIZE: "5",
  SITEHEALTH_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
  SITEHEALTH_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
  // Each process calls the provider under its own prefix: the fake knows which one ran a sync.
  PLAUSIBLE_API_BASE: `${provider!.url}/${name}`
})

const startInstance = async (name: string, port: number): Promise<Proc> => {
  const proc = spawnNode(name, MAIN, ROOT, envFor(name, port))
  await proc.waitFor("sitehealth: serving", 45_000)
  return proc
}

const alive = (i: Instance) => i.proc.child.exitCode === null && i.proc.child.signalCode === null
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` })
const json = async (res: Response): Promise<any> => JSON.parse(await res.text())
const expense = (description: string) =>
  JSON.stringify({ amount: 1_000, category: "hosting", description, incurredOn: "2026-11-01", recurrence: "one_off" })

/** Plausible connected to a new project: `site` is the site_id the fake sees. */
const projectWithPlausible = async (site: string) => {
  const project = await run(createProject({ accountId, name: site, domain: `${site}.example` }))
  const cipher = makeCipher(parseSecretKey(SECRET_KEY))
  await run(Effect.flatMap(Effect.service(IntegrationsRepo), (r) =>
    r.connect({
      projectId: project.id,
      provider: "plausible",
      credentials: cipher.encrypt({ api_key: "test-key", site_id: site }),
      baseUrl: null,
      syncIntervalMinutes: null,
      now: new Date()
    })))
  return project.id
}

const syncRuns = (ids: ReadonlyArray<string>) =>
  run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`SELECT project_id, status, attempts, error FROM sync_runs WHERE project_id IN ${
        sql.in(ids as Array<string>)
      }`)
  ) as Promise<
    Array<{ project_id: string; status: string; attempts: number; error: string | null }>
  >

const dayQueries = (site: string) => provider!.calls.filter((c) => c.site === site && c.dimensions === "time:day")

describe("several instances on one Postgres and one Redis", () => {
  beforeAll(async () => {
    dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-scaleout-data-"))
    ;[db, redis, provider] = await Promise.all([
      privateDatabase(),
      privateRedis(),
      startFakeProvider({ dayDelayMs: 400 })
    ])
    const ports = [await freePort(), await freePort(), await freePort()]
    // All three at once on the empty database: their migrations race, as on a first deploy of N replicas.
    const procs = await Promise.all(["a", "b", "c"].map((name, i) => startInstance(name, ports[i])))
    procs.forEach((proc, i) =>
      instances.push({ name: proc.name, port: ports[i], base: `http://127.0.0.1:${ports[i]}`, proc })
    )

    scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(
      Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(db.url))), scope) as Effect.Effect<any>
    )
    run = <A>(effect: Effect.Effect<A, any, any>) =>
      Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
    const account = await run(createAccount({ name: "Scale-out" }))
    accountId = account.id
    projectId = (await run(createProject({ accountId, name: "Main", domain: "main.example" }))).id
    const mint = async (name: string) => {
      const { secret, token } = await run(mintToken({ accountId, name }))
      return { id: token.id, secret }
    }
    secrets = {
      budget: await mint("budget"),
      admin: await mint("admin"),
      victim: await mint("victim"),
      syncer: await mint("syncer")
    }
    console.log(`scale-out: postgres = ${db.description}; redis = ${redis.description}`)
  }, 120_000)

  afterAll(async () => {
    killAllSpawned()
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
    await provider?.close()
    redis?.stop()
    await db?.drop()
    if (dataDir) Fs.rmSync(dataDir, { recursive: true, force: true })
  }, 120_000)

  it("all three migrated the empty database concurrently and are ready", async () => {
    for (const i of instances) {
      const res = await fetch(`${i.base}/readyz`)
      expect(res.status, i.proc.output()).toBe(200)
    }
    const applied = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*)::int AS n FROM sitehealth_migrations`)
    )
    expect((applied[0] as any).n).toBeGreaterThan(0)
  })

  it.skipIf(!REDIS.available)(
    `(a) one token, 100 concurrent requests spread over the three → exactly 60 accepted (redis: ${REDIS.reason})`,
    async () => {
      // The window is the UTC minute: keep clear of its edges, or the 100 would split across two budgets.
      const into = Date.now() % 60_000
      if (into < 2_000) await sleep(2_000 - into)
      else if (into > 50_000) await sleep(62_000 - into)
      const responses = await Promise.all(
        Array.from(
          { length: 100 },
          (_, n) =>
            fetch(`${instances[n % 3].base}/api/v1/projects`, { headers: auth(secrets.budget.secret) })
              .then(async (res) => ({ status: res.status, instance: n % 3, body: await res.text() }))
        )
      )
      const accepted = responses.filter((r) => r.status === 200)
      expect(accepted).toHaveLength(60)
      expect(responses.filter((r) => r.status === 429)).toHaveLength(40)
      // One budget, not three: had each instance its own 60, all 100 would have passed. And once it is
      // spent, every instance refuses — including one that, under load, happened to accept none of the
      // burst (which instance wins the race for the budget is up to the scheduler, so it is not asserted).
      for (const i of instances) {
        const after = await fetch(`${i.base}/api/v1/projects`, { headers: auth(secrets.budget.secret) })
        expect(after.status, i.name).toBe(429)
      }
      console.log(
        `scale-out (a): accepted per instance ${
          [0, 1, 2].map((i) => accepted.filter((r) => r.instance === i).length).join("/")
        }`
      )
    },
    30_000
  )

  it("(b) a token revoked through instance A is refused by instance B on its very next request", async () => {
    const [a, b, c] = instances
    expect((await fetch(`${b.base}/api/v1/projects`, { headers: auth(secrets.victim.secret) })).status).toBe(200)
    const revoke = await fetch(`${a.base}/api/v1/tokens/${secrets.victim.id}?confirm=true`, {
      method: "DELETE",
      headers: auth(secrets.admin.secret)
    })
    expect(revoke.status).toBe(200)
    expect((await json(revoke)).data.revoked).toBe(true)
    for (const other of [b, c]) {
      const refused = await fetch(`${other.base}/api/v1/projects`, { headers: auth(secrets.victim.secret) })
      expect(refused.status).toBe(401)
      expect((await json(refused)).error.type).toBe("token_revoked")
    }
  })

  it(
    "(c) `npm run worker` serves no HTTP; each queued sync run is executed by exactly one of the four workers, once",
    async () => {
      const workerPort = await freePort()
      const worker = spawnNode("w", WORKER, ROOT, envFor("w", workerPort))
      await worker.waitFor("running recompute and syncs", 45_000)
      expect(await canConnect(workerPort)).toBe(false)
      const listening = listeningSocketsOf(worker.child.pid!)
      if (listening !== null) expect(listening).toBe(0)

      const sites = Array.from({ length: 8 }, (_, i) => `site-${i}`)
      const ids = await Promise.all(sites.map(projectWithPlausible))
      // Every project's sync requested twice at once, through two different instances: one run each.
      const requested = await Promise.all(
        ids.flatMap((id, n) =>
          [n % 3, (n + 1) % 3].map((i) =>
            fetch(`${instances[i].base}/api/v1/projects/${id}/integrations/plausible/sync`, {
              method: "POST",
              headers: auth(secrets.syncer.secret)
            })
              .then(async (res) => ({ status: res.status, body: await json(res) }))
          )
        )
      )
      expect(requested.map((r) => r.status)).toEqual(requested.map(() => 202))
      expect(requested.filter((r) => r.body.data.alreadyQueued === false)).toHaveLength(ids.length)

      const finished = await eventually("every run to finish", 25_000, async () => {
        const runs = await syncRuns(ids)
        return runs.length === ids.length && runs.every((r) => r.status === "succeeded" || r.status === "failed")
          ? runs
          : undefined
      })
      expect(finished.map((r) => [r.status, r.attempts, r.error])).toEqual(ids.map(() => ["succeeded", 1, null]))
      for (const site of sites) expect(dayQueries(site).map((c) => c.aborted), site).toEqual([false])
      const byWorker = new Map<string, number>()
      for (const site of sites) {
        byWorker.set(
          dayQueries(site)[0].instance,
          (byWorker.get(dayQueries(site)[0].instance) ?? 0) + 1
        )
      }
      console.log(`scale-out (c): runs per worker ${JSON.stringify(Object.fromEntries(byWorker))}`)

      worker.child.kill("SIGTERM")
      const exit = await worker.exited
      expect(exit.code, worker.output()).toBe(0)
      expect(worker.output()).toContain("worker stopped")
    },
    120_000
  )

  it(
    "(d) SIGTERM: /readyz 503, listener closed, in-flight request completes, its sync released to another worker, " +
      "exit 0",
    async () => {
      const held = provider!.hold("site-hold")
      const holdId = await projectWithPlausible("site-hold")
      const queued = await fetch(`${instances[0].base}/api/v1/projects/${holdId}/integrations/plausible/sync`, {
        method: "POST",
        headers: auth(secrets.syncer.secret)
      })
      expect(queued.status).toBe(202)
      const call = await Promise.race([
        held,
        sleep(15_000).then(() => Promise.reject(new Error("no worker took the sync within 15 s")))
      ])
      const x = instances.find((i) => i.name === call.instance)!

      const slow = await slowPost(
        x.port,
        `/api/v1/projects/${projectId}/expenses`,
        auth(secrets.admin.secret),
        expense("in flight at SIGTERM")
      )
      await sleep(300) // the server has the headers: its handler waits for the body
      const signalled = Date.now()
      x.proc.child.kill("SIGTERM")

      // Draining, still accepting for SHUTDOWN_DELAY_MS: the load balancer is told to stop sending.
      // (The signal arrives asynchronously: poll, within the delay.)
      const readyz = await eventually("/readyz to answer 503", SHUTDOWN_DELAY_MS, async () => {
        const res = await fetch(`${x.base}/readyz`)
        return res.status === 503 ? res : undefined
      })
      expect((await json(readyz)).status).toBe("unavailable")
      // The sync it was running goes back to the queue at once (not after its 5-minute lease)…
      await x.proc.waitFor("run released back to the queue", 5_000)
      await eventually("the held provider call to be dropped", 5_000, () => (call.aborted ? true : undefined))
      // …then the listener closes while the slow request is still being received.
      await eventually(
        "new connections to be refused",
        SHUTDOWN_DELAY_MS + 3_000,
        async () => ((await canConnect(x.port)) ? undefined : true)
      )
      expect(alive(x)).toBe(true)
      slow.finish()
      const response = await slow.response
      expect(response.status, response.body).toBe(201)
      expect(response.headers.connection).toBe("close")
      const exit = await x.proc.exited
      expect(exit.code, x.proc.output()).toBe(0)
      expect(exit.at - signalled).toBeLessThan(SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS)
      console.log(`scale-out (d): instance ${x.name} exited 0 ${exit.at - signalled} ms after SIGTERM`)
      const written = await run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`SELECT count(*)::int AS n FROM expenses WHERE id = ${JSON.parse(response.body).data.expense.id}`
        )
      )
      expect((written[0] as any).n).toBe(1)

      // Another worker takes the released run within a poll and finishes it; the stopped attempt is not counted.
      const [done] = await eventually("the released run to finish elsewhere", 20_000, async () => {
        const runs = await syncRuns([holdId])
        return runs[0]?.status === "succeeded" ? runs : undefined
      })
      expect(done.attempts).toBe(1)
      expect(dayQueries("site-hold").map((c) => [c.instance === x.name, c.aborted])).toEqual([[true, true], [
        false,
        false
      ]])
    },
    120_000
  )

  it("(e) rolling restart of one instance under a write load: no acknowledged write is lost", async () => {
    const serving = instances.filter(alive)
    expect(serving.length).toBeGreaterThanOrEqual(2)
    const restarted = serving[0]
    // Enough tokens that the load stays within each one's 60/min.
    const tokens = await Promise.all(
      Array.from({ length: 40 }, (_, i) => run(mintToken({ accountId, name: `load ${i}` })))
    )
    const acked: Array<string> = []
    const outcome = { acked: 0, connectionErrors: 0, rateLimited: 0, other: new Map<number, number>() }
    let stop = false
    let n = 0
    const loop = async () => {
      while (!stop) {
        const i = n++
        const target = serving[i % serving.length]
        try {
          const res = await fetch(`${target.base}/api/v1/projects/${projectId}/expenses`, {
            method: "POST",
            headers: { ...auth(tokens[i % tokens.length].secret), "content-type": "application/json" },
            body: expense(`load ${i}`),
            // A request caught in the restart must end (refused, reset or timed out), never hold the test.
            signal: AbortSignal.timeout(10_000)
          })
          const text = await res.text()
          if (res.status >= 200 && res.status < 300) {
            acked.push(JSON.parse(text).data.expense.id)
            outcome.acked++
          } else if (res.status === 429) outcome.rateLimited++
          else outcome.other.set(res.status, (outcome.other.get(res.status) ?? 0) + 1)
        } catch {
          outcome.connectionErrors++ // refused or reset: never acknowledged, so the client knows to retry
        }
        await sleep(10)
      }
    }
    const loops = [loop(), loop(), loop()]
    await sleep(1_500)
    const signalled = Date.now()
    restarted.proc.child.kill("SIGTERM")
    const exit = await restarted.proc.exited
    expect(exit.code, restarted.proc.output()).toBe(0)
    const ackedBeforeRestart = outcome.acked
    restarted.proc = await startInstance(restarted.name, restarted.port)
    const back = Date.now()
    await sleep(1_500)
    stop = true
    await Promise.all(loops)

    const stored = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT id FROM expenses WHERE project_id = ${projectId}`)
    )
    const ids = new Set((stored as Array<any>).map((r) => r.id as string))
    const lost = acked.filter((id) => !ids.has(id))
    console.log(
      `scale-out (e): ${n} requests: ${outcome.acked} acknowledged (${ackedBeforeRestart} before the restart), ` +
        `${outcome.connectionErrors} connection errors, ${outcome.rateLimited} rate-limited, other ${
          JSON.stringify(Object.fromEntries(outcome.other))
        }; ` +
        `stopped in ${exit.at - signalled} ms, back after ${back - signalled} ms; lost ${lost.length}`
    )
    expect(lost).toEqual([])
    expect(outcome.acked).toBeGreaterThan(ackedBeforeRestart) // the restarted instance and the other kept taking writes
    expect([...outcome.other.keys()]).toEqual([])

    // Everyone stops cleanly at the end, too.
    const stopping = instances.filter(alive)
    for (const i of stopping) i.proc.child.kill("SIGTERM")
    const codes = await Promise.all(stopping.map((i) => i.proc.exited.then((e) => e.code)))
    expect(codes).toEqual(stopping.map(() => 0))
    // Bounded generously: a restart (process start, migrations check, pool) takes ~3 s alone but can take tens of
    // seconds when the suite's other files load both cores (seen in CI).
  }, 150_000)
})

describe("a sync worker stopped mid-run, in process (memory store)", () => {
  it.effect("releases the run: queued again, no lease, the attempt not counted; with releaseOnInterrupt: false it stays leased, as after a crash", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      const account = yield* createAccount({ name: "Stop" })
      const project = yield* createProject({ accountId: account.id, name: "Stop", domain: "stop.example" })
      yield* Effect.flatMap(Effect.service(IntegrationsRepo), (r) =>
        Effect.flatMap(now, (at) =>
          r.connect({
            projectId: project.id,
            provider: "plausible",
            credentials: makeCipher(TEST_KEY).encrypt({ apiKey: SECRET }),
            baseUrl: null,
            syncIntervalMinutes: null,
            now: at
          })))
      const fake = makeFakeConnector()
      const connectors = () => fake.connector
      const queue = Effect.service(SyncQueue)
      const stopMidRun = Effect.fnUntraced(function*(releaseOnInterrupt: boolean) {
        const started = Deferred.makeUnsafe<void>()
        fake.behaviour = { kind: "hang", started, release: Deferred.makeUnsafe<void>() }
        const { sync } = yield* Effect.flatMap(
          queue,
          (q) =>
            Effect.flatMap(now, (at) =>
              q.request({
                projectId: project.id,
                provider: "plausible",
                mode: "incremental",
                requestedBy: "test",
                now: at
              }))
        )
        const fiber = yield* Effect.forkChild(runNextSync({ connectors, releaseOnInterrupt }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        fake.behaviour = { kind: "ok" }
        return (yield* Effect.flatMap(queue, (q) => q.find(sync.id)))!
      })

      const released = yield* stopMidRun(true)
      expect([released.status, released.leaseUntil, released.attempts]).toEqual(["queued", null, 0])
      // The next worker takes it at once and it ends as a run that was never interrupted.
      const [taken] = yield* drainSyncs({ connectors })
      expect([taken.id, taken.status, taken.attempts]).toEqual([released.id, "succeeded", 1])

      const crashed = yield* stopMidRun(false)
      expect([crashed.status, crashed.attempts]).toEqual(["running", 1])
      expect(crashed.leaseUntil).not.toBeNull()
      expect(yield* drainSyncs({ connectors })).toEqual([]) // the lease holds it
    }).pipe(Effect.provide(Layer.mergeAll(MemoryRepos, runnerLayer()))))
})
