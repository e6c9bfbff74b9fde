/**
 * `npm run bench:webhooks`: 10,000 events through the outbox to a local receiver (docs/alerts.md). Two delivery
 * loops of the worker (worker/WebhookDelivery.ts, as two `npm run worker` would run them) drain the outbox while a
 * producer writes the events; the receiver answers 204 and notes when each `webhook-id` arrived. Prints the rate
 * (events delivered per second, first write to last arrival), the p50 / p99 of write-to-delivery, and the process's
 * RSS. Bars: ≥ 500 events/s, p99 < 2 s.
 *
 *   DATABASE_URL=postgres://… npm run bench:webhooks [-- --events 10000]
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
import { runWebhookWorker, webhookSealer } from "@sitehealth/server/worker/WebhookDelivery"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

const args = process.argv.slice(2)
const EVENTS = Number(args[args.indexOf("--events") + 1] ?? 0) || 10_000
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

  // Forked one after the other from this fiber (a concurrent forEach would end each loop with its element's fiber).
  const workers = []
  for (let i = 0; i < WORKERS; i++) {
    workers.push(yield* Effect.forkChild(runWebhookWorker.pipe(Effect.provideService(AppConfig, config))))
  }
  const written = new Map<string, number>()
  const started = performance.now()
  let next = 0
  yield* Effect.forEach(Array.from({ length: PRODUCERS }), () =>
    Effect.gen(function*() {
      while (next < EVENTS) {
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
  const wroteAll = performance.now()
  while (arrivals.size < EVENTS && performance.now() - started < 300_000) {
    yield* Effect.sleep(20)
  }
  const finished = Math.max(...arrivals.values())
  yield* Fiber.interruptAll(workers)
  const latencies = [...written].map(([id, at]) => (arrivals.get(id) ?? Infinity) - at).sort((a, b) => a - b)
  const rss = process.memoryUsage().rss
  const rate = arrivals.size / ((finished - started) / 1000)
  const result = {
    events: EVENTS,
    delivered: arrivals.size,
    writeSeconds: +((wroteAll - started) / 1000).toFixed(2),
    deliveredPerSecond: Math.round(rate),
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    rssMB: Math.round(rss / 1024 / 1024)
  }
  console.log(JSON.stringify(result))
  log(
    `${result.delivered}/${EVENTS} delivered at ${result.deliveredPerSecond}/s; write→delivery p50 ${result.p50Ms} ms, ` +
      `p99 ${result.p99Ms} ms; RSS ${result.rssMB} MB`
  )
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM accounts WHERE id = ${account.id}`
  yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const ok = result.delivered === EVENTS && result.deliveredPerSecond >= 500 && result.p99Ms < 2_000
  if (!ok) process.exitCode = 1
})

Effect.runPromise(
  main.pipe(Effect.provide(SqlRepos.pipe(Layer.provideMerge(pgLayer(url)))), Effect.scoped) as Effect.Effect<void>
).catch((e) => {
  console.error(e)
  process.exit(1)
})
