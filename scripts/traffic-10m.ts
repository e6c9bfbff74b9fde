/**
 * Read latency of the analytics report on a project with N raw traffic events (default 10,000,000),
 * measured from a separate process.
 *
 *   npm run bench:traffic                               # 10M events, fresh embedded Postgres in a temp dir
 *   npm run bench:traffic -- --events 100000 --duration 10 --connections 20 --path "analytics?period=7d"
 *   DATABASE_URL=postgres://… npm run bench:traffic     # use that database (adds one account + project)
 *
 * Steps: migrate; create an account, a Europe/Berlin project and a token; generate N events over the last
 * 12 months with generate_series straight into traffic_events; run the rollup (TrafficRepo.rollup, the
 * same SQL the ingest path runs); give the project a year of payments (the demo's Acme Analytics data:
 * ~1,000 customers, two currencies) so that revenue has something to compute; start the real server as a
 * child process on that database, with the rate limit lifted (SITEHEALTH_RATE_LIMIT); then per path:
 *   - cold: `--cold` (default 20) sequential requests, each after bumping the project's data_version from
 *     this process, so every one misses the server's caches and reads the store — the worst case;
 *   - warm: autocannon for `--duration` seconds with `--connections` connections.
 * Prints JSON.
 */
import autocannon from "autocannon"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { AccountsRepo } from "../packages/server/src/accounts/AccountsRepo.ts"
import { createAccount, createProject, mintToken } from "../packages/server/src/accounts/Provisioning.ts"
import { pgLayer, runMigrations } from "../packages/server/src/db/Database.ts"
import { startEmbeddedPostgres } from "../packages/server/src/db/EmbeddedPostgres.ts"
import { ProjectsRepo } from "../packages/server/src/projects/ProjectsRepo.ts"
import { TokensRepo } from "../packages/server/src/tokens/TokensRepo.ts"
import { TrafficRepo } from "../packages/server/src/traffic/TrafficRepo.ts"
import { demoFxRates, generateDemoProject } from "../packages/server/src/demo/Generate.ts"
import { DEMO_PROJECTS } from "../packages/server/src/demo/Profiles.ts"
import { FxRepo } from "../packages/server/src/fx/FxRepo.ts"
import { PaymentsRepo } from "../packages/server/src/payments/PaymentsRepo.ts"

const args = process.argv.slice(2)
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback
}
const allArgs = (name: string) => args.flatMap((a, i) => (a === `--${name}` && args[i + 1] ? [args[i + 1]] : []))
const events = Number(arg("events", "10000000"))
const duration = Number(arg("duration", "10"))
const connections = Number(arg("connections", "20"))
const coldRequests = Number(arg("cold", "20"))
const paths = allArgs("path").length > 0 ? allArgs("path") : ["analytics?period=12m", "revenue", "analytics?period=30d"]
const TIMEZONE = "Europe/Berlin"
const CHUNK = 1_000_000

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = Net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as Net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
const log = (m: string) => process.stderr.write(`traffic-10m: ${m}\n`)
const seconds = (ms: number) => Math.round(ms / 100) / 10

/** Account, project, token; N events in chunks; the rollup. Returns what the HTTP part needs. */
const prepare = (url: string) => {
  const db = Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(pgLayer(url)))
  const repos = Layer.mergeAll(AccountsRepo.sql, ProjectsRepo.sql, TokensRepo.sql, TrafficRepo.sql, PaymentsRepo.sql).pipe(
    Layer.provideMerge(FxRepo.sql),
    Layer.provideMerge(db)
  )
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const account = yield* createAccount({ name: "Traffic bench" })
    const project = yield* createProject({ accountId: account.id, name: "Ten million", domain: "bench.example", timezone: TIMEZONE })
    const { secret } = yield* mintToken({ accountId: account.id, name: "bench" })
    const end = Date.now()
    const start = end - 365 * 86_400_000
    const spanSeconds = (end - start) / 1000
    const generateStarted = Date.now()
    for (let from = 0; from < events; from += CHUNK) {
      const to = Math.min(events, from + CHUNK) - 1
      // Event i at start + i/N of the year; 4 events per session (so a session spans seconds), sessions
      // spread over N/40 visitors; a skewed choice of 300 paths; 5 sources, one of them none (direct).
      yield* sql`INSERT INTO traffic_events (project_id, occurred_at, visitor_id, session_id, path, source, duration_seconds)
        SELECT ${project.id}, ${new Date(start).toISOString()}::timestamptz + make_interval(secs => i * ${spanSeconds}::float8 / ${events}),
          'v' || ((i / 4) * 7919 % greatest(${events} / 40, 1)), 's' || (i / 4),
          '/p' || floor(300 * power(((i * 37) % 1000) / 1000.0, 3))::int,
          (ARRAY[NULL, 'google', 'twitter', 'news.ycombinator.com', 'duckduckgo'])[1 + (i / 4) % 5],
          10 + i % 50
        FROM generate_series(${from}::bigint, ${to}::bigint) AS i`
      log(`inserted ${to + 1} / ${events} events`)
    }
    yield* sql`ANALYZE traffic_events` // as after any bulk load: the planner needs the new row counts
    const generateMs = Date.now() - generateStarted
    const rollupStarted = Date.now()
    yield* (yield* TrafficRepo).rollup(project.id, TIMEZONE, new Date(start).toISOString(), new Date(end + 1000).toISOString())
    const rollupMs = Date.now() - rollupStarted
    const acme = DEMO_PROJECTS.find((p) => p.key === "acme")!
    yield* (yield* FxRepo).put(demoFxRates(new Date(end)))
    const payments = generateDemoProject({ ...acme, timezone: TIMEZONE, currency: "EUR" }, new Date(end)).payments
    yield* (yield* PaymentsRepo).write(project.id, payments)
    log(`payments: ${payments.customers.length} customers, ${payments.subscriptionVersions.length} subscription versions, ${payments.charges.length} charges`)
    const counts = yield* sql`SELECT (SELECT count(*) FROM traffic_events WHERE project_id = ${project.id})::int AS events,
        (SELECT count(*) FROM traffic_hourly WHERE project_id = ${project.id})::int AS hours,
        (SELECT count(*) FROM traffic_daily WHERE project_id = ${project.id})::int AS days,
        (SELECT count(*) FROM traffic_pages_daily WHERE project_id = ${project.id})::int AS pages`
    return { projectId: project.id, token: secret, generateMs, rollupMs, stored: counts[0] as any, customers: payments.customers.length }
  }).pipe(Effect.provide(repos))
}

const main = async () => {
  const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-traffic-"))
  Fs.chmodSync(tmp, 0o711) // when run as root, the cluster runs as "postgres" and must reach its directory
  let pg: { url: string; stop: () => Promise<void> } | null = null
  let server: ReturnType<typeof spawn> | null = null
  let bumpRuntime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown> | null = null
  try {
    let url = process.env.DATABASE_URL ?? ""
    if (url === "") {
      log("starting an embedded postgres…")
      pg = await startEmbeddedPostgres({ dataDir: Path.join(tmp, "db"), port: await freePort(), log })
      url = pg.url
    }
    log(`generating ${events} events and rolling them up…`)
    const prepared = await Effect.runPromise(prepare(url))
    log(`rollup done in ${seconds(prepared.rollupMs)} s; starting the server…`)

    const port = await freePort()
    const child = spawn(process.execPath, ["packages/server/src/main.ts"], {
      env: {
        ...process.env, PORT: String(port), DATABASE_URL: url, SITEHEALTH_DATA_DIR: Path.join(tmp, "server"), SITEHEALTH_RATE_LIMIT: "1000000",
        // A server on an external database needs the credentials key; this bench stores no credentials.
        SITEHEALTH_SECRET_KEY: process.env.SITEHEALTH_SECRET_KEY ?? randomBytes(32).toString("base64")
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    server = child
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    const started = Date.now()
    while (!output.includes("Listening on")) {
      if (Date.now() - started > 120_000 || child.exitCode !== null) throw new Error(`server did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    // A write's effect on caches without a write's cost: what every provider write does to data_version.
    bumpRuntime = ManagedRuntime.make(pgLayer(url))
    const bumpVersion = (projectId: string) =>
      bumpRuntime!.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}`))
    const base = `http://127.0.0.1:${port}/api/v1/projects/${prepared.projectId}`
    const headers = { authorization: `Bearer ${prepared.token}` }
    const results = []
    for (const path of paths) {
      const url = `${base}/${path}`
      const probe = await fetch(url, { headers })
      if (probe.status !== 200) throw new Error(`GET ${path}: ${probe.status} ${await probe.text()}`)
      await autocannon({ url, headers, connections, duration: 2 }) // warm-up: connections, statements, JIT
      const cold: Array<number> = []
      for (let i = 0; i < coldRequests; i++) {
        await bumpVersion(prepared.projectId)
        const t0 = performance.now()
        const r = await fetch(url, { headers })
        await r.arrayBuffer()
        cold.push(performance.now() - t0)
      }
      cold.sort((a, b) => a - b)
      const at = (q: number) => Math.round(cold[Math.min(cold.length - 1, Math.floor(q * cold.length))] * 10) / 10
      const r = await autocannon({ url, headers, connections, duration })
      results.push({
        path: `GET /api/v1/projects/{id}/${path}`,
        coldLatencyMs: { requests: cold.length, p50: at(0.5), p90: at(0.9), max: at(1) },
        requestsPerSecond: Math.round(r.requests.average),
        latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
        requests: r.requests.total,
        non2xx: r.non2xx,
        errors: r.errors
      })
      log(`${path}: cold p50 ${at(0.5)} ms; warm p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`)
    }
    console.log(JSON.stringify({
      events: prepared.stored.events,
      customers: prepared.customers,
      stored: { hourly: prepared.stored.hours, daily: prepared.stored.days, pageDays: prepared.stored.pages },
      generateSeconds: seconds(prepared.generateMs),
      rollupSeconds: seconds(prepared.rollupMs),
      connections,
      durationSeconds: duration,
      results,
      node: process.version,
      cpus: Os.cpus().length
    }, null, 2))
  } finally {
    if (server !== null && server.exitCode === null) {
      await new Promise<void>((resolve) => {
        server!.once("exit", () => resolve())
        server!.kill("SIGTERM")
      })
    }
    if (bumpRuntime !== null) await bumpRuntime.dispose()
    if (pg !== null) await pg.stop().catch(() => undefined)
    Fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().then(() => process.exit(process.exitCode ?? 0), (e) => {
  console.error(e)
  process.exit(1)
})
