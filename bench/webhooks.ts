/**
 * `npm run bench:webhooks`: events through the outbox to a local receiver (docs/alerts.md), by two delivery loops of
 * the worker (worker/WebhookDelivery.ts, as two `npm run worker` would run them); the receiver answers 204 and notes
 * when each `webhook-id` arrived. First the throughput: 10,000 events written with no worker running, then drained
 * (events delivered per second). Then the latency: 2,000 more written while the loops run, each one's write to its
 * arrival (p50, p99). And the process's RSS. Bars: ≥ 500 events/s, p99 < 2 s.
 *
 *   DATABASE_URL=postgres://… npm run bench:webhooks [-- --events 10000 --batch 100 --concurrency 50]
 *
 * The bench's account (and so its websites, endpoint and events) is deleted at the end.
 */
import { createAccount, createProject } from "@sitehealth/server/accounts/Provisioning"
import { SqlRepos } from "@sitehealth/server/Layers"
import { runMigrations } from "@sitehealth/server/Migrations"
import { AppConfig, readConfig } from "@sitehealth/server/platform/Config"
import { pgLayer } from "@sitehealth/server/platform/Database"
import { emit } from "@sitehealth/server/webhooks/Outbox"
import { newWebhookSecret } from "@sitehealth/server/webhooks/Signing"
import { WebhooksRepo } from "@sitehealth/server/webhooks/WebhooksRepo"
import { webhookLoop, webhookSealer } from "@sitehealth/server/worker/WebhookDelivery"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

const args = process.argv.slice(2)
const option = (name: string) => args.includes(name) ? Number(args[args.indexOf(name) + 1]) || undefined : undefined
const EVENTS = option("--events") ?? 10_000
/** A round's deliveries, and sends at once (by default the worker's BATCH, all at once). */
const LOOP = {
  ...(option("--batch") === undefined ? {} : { limit: option("--batch")! }),
  ...(option("--concurrency") === undefined ? {} : { concurrency: option("--concurrency")! })
}
const LIVE = Math.min(2_000, EVENTS)
const PRODUCERS = 8
const WORKERS = 2
const log = (m: string) => process.stderr.write(`bench:webhooks: ${m}\n`)

const url = process.env.DATABASE_URL
if (url === undefined) throw new Error("DATABASE_URL: the PostgreSQL database to run on")

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const main = Effect.gen(function*() {
  const arrivals = new Map<string, number>()
  const server = Http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const id = String(req.headers["webhook-id"])
      if (!arrivals.has(id)) arrivals.set(id, performance.now())
      res.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60_000
  yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve())))
  const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`

  const config = {
    ...readConfig({}),
    databaseUrl: Redacted.make(url),
    secretKey: Redacted.make(Buffer.alloc(32, 9).toString("base64")),
    webhooksAllowPrivate: true
  }
  yield* runMigrations
  const account = yield* createAccount({ name: "bench:webhooks", trialDays: 14 })
  const project = yield* createProject({ accountId: account.id, name: "Bench", domain: "bench.example" })
  const repo = yield* WebhooksRepo
  const webhook = yield* repo.insert({
    id: `whk_bench${Date.now().toString(36)}`,
    projectId: project.id,
    url: receiver,
    format: "standard_webhooks",
    description: "bench",
    events: ["health.changed"],
    minMoneyAtStake: null,
    minSeverity: null,
    cadence: "live",
    enabled: true,
    disabledReason: null,
    failingSince: null,
    secretEnc: webhookSealer(config).seal(newWebhookSecret()),
    previousSecretEnc: null,
    previousSecretExpiresAt: null,
    secretRotatedAt: null,
    createdAt: new Date()
  })
  log(`${EVENTS} events, ${PRODUCERS} producers, ${WORKERS} delivery loops; receiver ${receiver}`)

  const written = new Map<string, number>()
  let next = 0
  /** Writes events `from`…`to` − 1 with PRODUCERS concurrent writers, noting when each was written. */
  const produce = (to: number) =>
    Effect.forEach(Array.from({ length: PRODUCERS }), () =>
      Effect.gen(function*() {
        while (next < to) {
          const i = next++
          const [delivery] = yield* emit(repo)("health.changed", project.id, {
            projectId: project.id,
            score: 50 + (i % 40),
            previousScore: 40,
            change: 10 + (i % 40),
            computedAt: new Date().toISOString()
          }, new Date())
          written.set(delivery!.eventId, performance.now())
        }
      }), { concurrency: "unbounded", discard: true })
  const waitFor = (n: number) =>
    Effect.gen(function*() {
      const since = performance.now()
      while (arrivals.size < n && performance.now() - since < 300_000) yield* Effect.sleep(10)
    })

  // 1. Throughput: a backlog of EVENTS written with no worker running, then drained by WORKERS delivery loops.
  const writeStarted = performance.now()
  yield* produce(EVENTS)
  const writeSeconds = (performance.now() - writeStarted) / 1000
  const drainStarted = performance.now()
  // Forked one after the other from this fiber (a concurrent forEach would end each loop with its element's fiber).
  const workers = []
  for (let i = 0; i < WORKERS; i++) {
    workers.push(
      yield* Effect.forkChild(
        webhookLoop({ webhookIds: [webhook.id], ...LOOP }).pipe(Effect.provideService(AppConfig, config))
      )
    )
  }
  yield* waitFor(EVENTS)
  const drainSeconds = (Math.max(...arrivals.values()) - drainStarted) / 1000

  // 2. Latency: LIVE more events written while the loops run; each one's write to its arrival.
  const liveFrom = next
  yield* produce(EVENTS + LIVE)
  yield* waitFor(EVENTS + LIVE)
  yield* Fiber.interruptAll(workers)
  const latencies = [...written].slice(liveFrom).map(([id, at]) => (arrivals.get(id) ?? Infinity) - at).sort((a, b) =>
    a - b
  )
  const rss = process.memoryUsage().rss
  const result = {
    events: EVENTS,
    delivered: arrivals.size,
    writtenPerSecond: Math.round(EVENTS / writeSeconds),
    deliveredPerSecond: Math.round(EVENTS / drainSeconds),
    liveEvents: LIVE,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    rssMB: Math.round(rss / 1024 / 1024)
  }
  console.log(JSON.stringify(result))
  log(
    `${EVENTS} delivered at ${result.deliveredPerSecond}/s (written at ${result.writtenPerSecond}/s); ${LIVE} live: ` +
      `write→delivery p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms; RSS ${result.rssMB} MB`
  )
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM accounts WHERE id = ${account.id}`
  yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const ok = result.delivered === EVENTS + LIVE && result.deliveredPerSecond >= 500 && result.p99Ms < 2_000
  if (!ok) process.exitCode = 1
})

Effect.runPromise(
  main.pipe(Effect.provide(SqlRepos.pipe(Layer.provideMerge(pgLayer(url)))), Effect.scoped) as Effect.Effect<void>
).catch((e) => {
  console.error(e)
  process.exit(1)
})
