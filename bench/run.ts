/**
 * `npm run bench`: our real server against a fastify peer and a bare node:http ceiling on the same
 * database, then our other hot endpoints, with load from this process (autocannon, loopback only).
 * See docs/benchmarks.md for what each scenario does and how to read the output.
 *
 *   npm run bench                       # everything: 10M-event database (seeded once), 10 s per run
 *   npm run bench -- --quick            # smoke run on 100k events
 *   npm run bench -- --only health,rate --cpu-prof
 *
 * Our server runs as in production (`npm start`'s packages/server/bin/server.js: the bundle of
 * packages/server/src/main.ts; the sources themselves under --cpu-prof) with three changes, each to measure
 * the request path and nothing else: SITEHEALTH_WORKER=off (no background recomputation or sync competing
 * for the 2 cores), SITEHEALTH_RATE_LIMIT=1000000 (every token would otherwise hit the 60/min default
 * within a second and the bench would measure 429s; the limiter still runs on every request), and
 * DATABASE_URL = the bench database (so ours and the peers read the same rows).
 */
import { freePort } from "@sitehealth/server/test/support/Ports"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import pg from "pg"
import { checkPeersAgree } from "./check.ts"
import { measure, type Measurement, measureSequential, quantile, type RequestSpec } from "./load.ts"
import { type BenchOptions, parseOptions, USAGE } from "./options.ts"
import { countedPostgres, countPostgresOf, sampleRss, type ServerProcess, startServer } from "./processes.ts"
import { findProfile, profileMarkdown, summariseProfile } from "./profile.ts"
import { machineInfo, markdown, mb, ratiosOf, type Row, type ServerName, targetsOf } from "./report.ts"
import { type BenchDatabase, prepareBenchDatabase, REPO_ROOT } from "./seed.ts"

const RESULTS_DIR = Path.join(REPO_ROOT, "bench", "results")
const PROFILES_DIR = Path.join(REPO_ROOT, "bench", "profiles")
const log = (m: string) => process.stderr.write(`bench: ${m}\n`)
/** Marks what the bench's own expenses scenario wrote, so that only that is deleted afterwards. */
const EXPENSE_MARK = "sitehealth bench expense"

/**
 * What `npm start` runs in a checkout: its bundle through the launcher (packages/server/bin/server.js), or
 * main.ts in a checkout from before the bundle. A CPU profile is taken of the sources instead: the bundle's
 * minified names would say nothing.
 */
const ourEntry = (root: string, profile: boolean) => {
  const launcher = Path.resolve(root, "packages/server/bin/server.js")
  return !profile && Fs.existsSync(launcher) ? launcher : Path.resolve(root, "packages/server/src/main.ts")
}

type Servers = { readonly ours: ServerProcess } & Partial<Record<"before" | "fastify" | "bare", ServerProcess>>

const withAuth = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra })

/** One request per token (and project, cycling), so a run spreads over every token. */
const rotate = (
  db: BenchDatabase,
  path: (projectId: string, i: number) => string,
  projectIds: ReadonlyArray<string>,
  extra: Record<string, string>
): Array<RequestSpec> => {
  const n = Math.max(db.tokens.length, projectIds.length)
  return Array.from({ length: n }, (_, i) => ({
    method: "GET" as const,
    path: path(projectIds[i % projectIds.length], i),
    headers: withAuth(db.tokens[i % db.tokens.length], extra)
  }))
}

const rowOf = (
  scenario: string,
  server: ServerName,
  endpoint: string,
  runs: ReadonlyArray<Measurement>,
  peakRss: number | null,
  note: string
): Row => {
  // The median round by throughput stands for the server; errors count across every round.
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
  const median = sorted[Math.floor((sorted.length - 1) / 2)]
  const codes = new Map<string, number>()
  for (const r of runs) for (const [c, n] of Object.entries(r.statusCodes)) codes.set(c, (codes.get(c) ?? 0) + n)
  const unexpected = [...codes].filter(([c]) => !c.startsWith("2")).map(([c, n]) => `${n}×${c}`)
  return {
    scenario,
    server,
    endpoint,
    runs,
    note: unexpected.length === 0 ? note : `${note}; statuses ${unexpected.join(", ")}`,
    requestsPerSecond: median.requestsPerSecond,
    p50: median.latencyMs.p50,
    p99: median.latencyMs.p99,
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    peakRssMb: mb(peakRss),
    cpuServerUs: median.cpuUsPerRequest?.server ?? null,
    cpuPostgresUs: median.cpuUsPerRequest?.postgres ?? null
  }
}

/** Measures one server under load, sampling its RSS meanwhile. */
const loadOne = async (
  server: ServerProcess,
  requests: ReadonlyArray<RequestSpec>,
  o: BenchOptions,
  overallRate?: number
) => {
  const rss = sampleRss(server.child.pid)
  try {
    const m = await measure(server.base, requests, {
      connections: o.connections,
      duration: o.duration,
      warmup: o.warmup,
      pid: server.child.pid,
      ...(overallRate === undefined ? {} : { overallRate })
    })
    return { m, rss: rss.stop() }
  } catch (e) {
    rss.stop()
    throw e
  }
}

/** A first request must answer 2xx, so a broken endpoint is one clear message, not a table of errors. */
const probe = async (base: string, r: RequestSpec) => {
  const res = await fetch(base + r.path, {
    method: r.method,
    headers: r.headers,
    signal: AbortSignal.timeout(120_000),
    ...(r.body === undefined ? {} : { body: r.body })
  })
  const text = await res.text()
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${r.method} ${r.path} answered ${res.status}: ${text.slice(0, 300)}`)
  }
}

const runScenarios = async (
  o: BenchOptions,
  db: BenchDatabase,
  servers: Servers,
  pool: pg.Pool
): Promise<Array<Row>> => {
  const rows: Array<Row> = []
  const ours = servers.ours
  const peers: Array<[ServerName, ServerProcess]> = (["before", "fastify", "bare"] as const).flatMap((n) =>
    servers[n] === undefined ? [] : [[n, servers[n]!] as [ServerName, ServerProcess]]
  )
  // Every request says what node's fetch says (--accept-encoding): stored answers may then go out gzipped.
  const encoding: Record<string, string> = o.acceptEncoding === "" ? {} : { "accept-encoding": o.acceptEncoding }
  const health = rotate(db, (p) => `/api/v1/projects/${p}/health`, db.projectIds, encoding)
  const oursOnly = async (
    scenario: string,
    endpoint: string,
    requests: Array<RequestSpec>,
    note = `${o.duration} s, ${o.connections} connections, Accept-Encoding: ${
      o.acceptEncoding === "" ? "none" : o.acceptEncoding
    }`
  ) => {
    log(`${scenario}: ours…`)
    await probe(ours.base, requests[0])
    const { m, rss } = await loadOne(ours, requests, o)
    rows.push(rowOf(scenario, "ours", endpoint, [m], rss, note))
  }
  const cold = async (scenario: string, endpoint: string, request: RequestSpec) => {
    if (o.cold === 0) return
    log(`${scenario}: ${o.cold} cold requests…`)
    const rss = sampleRss(ours.child.pid)
    // What every provider write does to data_version: the server's caches miss and it reads the store.
    const r = await measureSequential(ours.base, request, o.cold, async () => {
      await pool.query("UPDATE projects SET data_version = data_version + 1 WHERE id = $1", [db.trafficProjectId])
    })
    const m: Measurement = {
      requests: r.latencies.length,
      requestsPerSecond: 0,
      non2xx: r.non2xx,
      errors: r.errors,
      statusCodes: {},
      seconds: 0,
      latencyMs: {
        p50: quantile(r.latencies, 0.5),
        p90: quantile(r.latencies, 0.9),
        p99: quantile(r.latencies, 0.99),
        max: quantile(r.latencies, 1)
      }
    }
    rows.push({
      ...rowOf(
        `${scenario}-cold`,
        "ours",
        endpoint,
        [m],
        rss.stop(),
        `${o.cold} sequential requests, each after a data_version bump (cache miss)`
      ),
      requestsPerSecond: null
    })
  }

  for (const scenario of o.only) {
    if (scenario === "health") {
      const runs = new Map<ServerName, { ms: Array<Measurement>; rss: number | null }>()
      const order: Array<[ServerName, ServerProcess]> = [["ours", ours], ...peers]
      for (let round = 1; round <= o.rounds; round++) {
        for (const [name, server] of order) {
          log(`health: round ${round}/${o.rounds}, ${name}…`)
          const { m, rss } = await loadOne(server, health, o)
          const acc = runs.get(name) ?? { ms: [], rss: null }
          acc.ms.push(m)
          acc.rss = rss === null ? acc.rss : Math.max(rss, acc.rss ?? 0)
          runs.set(name, acc)
        }
      }
      for (const [name] of order) {
        const { ms, rss } = runs.get(name)!
        rows.push(
          rowOf(
            "health",
            name,
            "GET /projects/{id}/health",
            ms,
            rss,
            `median of ${o.rounds} alternating round(s), ${o.duration} s, ${o.connections} connections`
          )
        )
      }
    } else if (scenario === "rate") {
      for (const [name, server] of [["ours", ours] as [ServerName, ServerProcess], ...peers]) {
        log(`rate: ${o.rate} req/s, ${name}…`)
        const { m, rss } = await loadOne(server, health, o, o.rate)
        const short = m.requestsPerSecond < o.rate * 0.95 ? `; only ${m.requestsPerSecond} req/s reached` : ""
        rows.push(
          rowOf("rate", name, "GET /projects/{id}/health", [m], rss, `fixed ${o.rate} req/s, ${o.duration} s${short}`)
        )
      }
    } else if (scenario === "projects") {
      await oursOnly("projects", "GET /projects", rotate(db, () => "/api/v1/projects", db.projectIds, encoding))
    } else if (scenario.startsWith("analytics-")) {
      const period = scenario.slice("analytics-".length)
      const endpoint = `GET /projects/{${db.events.toLocaleString("en-US")} events}/analytics?period=${period}`
      const requests = rotate(
        db,
        (p) => `/api/v1/projects/${p}/analytics?period=${period}`,
        [db.trafficProjectId],
        encoding
      )
      await oursOnly(scenario, endpoint, requests)
      // Cold probes of the two the targets name (each bumps data_version: they cost the later scenarios a miss).
      if (period === "30d" || period === "12m") await cold(scenario, endpoint, requests[0])
    } else if (scenario === "revenue") {
      const endpoint = "GET /projects/{events project}/revenue"
      const requests = rotate(db, (p) => `/api/v1/projects/${p}/revenue`, [db.trafficProjectId], encoding)
      await oursOnly("revenue", endpoint, requests)
      await cold("revenue", endpoint, requests[0])
    } else if (scenario === "churn" || scenario === "seo" || scenario === "briefing") {
      // The demo projects carry a year of payments and Search Console rows, and get a briefing.
      await oursOnly(
        scenario,
        `GET /projects/{id}/${scenario}`,
        rotate(db, (p) => `/api/v1/projects/${p}/${scenario}`, [db.demoProjectIds[0]], encoding)
      )
    } else if (scenario === "signals") {
      await oursOnly(
        "signals",
        "GET /projects/{id}/signals",
        rotate(db, (p) => `/api/v1/projects/${p}/signals`, [db.demoProjectIds[0]], encoding)
      )
    } else if (scenario === "expenses") {
      const projectId = db.demoProjectIds[db.demoProjectIds.length - 1]
      const body = JSON.stringify({
        amount: 1234,
        currency: "EUR",
        category: "software",
        description: EXPENSE_MARK,
        vendor: "bench",
        incurredOn: new Date().toISOString().slice(0, 10),
        recurrence: "one_off"
      })
      const requests = db.tokens.map((t) => ({
        method: "POST" as const,
        path: `/api/v1/projects/${projectId}/expenses`,
        body,
        headers: withAuth(t, { "content-type": "application/json" })
      }))
      try {
        await oursOnly("expenses", "POST /projects/{id}/expenses", requests)
      } finally {
        // Keep the demo project as seeded, and bump data_version so nothing computed with them is reused.
        const deleted = await pool.query("DELETE FROM expenses WHERE project_id = $1 AND description = $2", [
          projectId,
          EXPENSE_MARK
        ])
        await pool.query("UPDATE projects SET data_version = data_version + 1 WHERE id = $1", [projectId])
        log(`expenses: deleted the ${deleted.rowCount} expenses the bench created`)
      }
    }
  }
  return rows
}

const main = async (): Promise<number> => {
  const parsed = parseOptions(process.argv.slice(2))
  if (parsed === "help") {
    console.log(USAGE)
    return 0
  }
  const o = parsed
  if (Number(process.versions.node.split(".")[0]) < 22) {
    throw new Error(
      `Node ${process.version} cannot run the server (Effect 4 needs Node 22): run it as \`npm run bench\``
    )
  }
  const machine = machineInfo()
  const startedAt = new Date()
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-")
  const db = await prepareBenchDatabase({ events: o.events, tokens: o.tokens, reseed: o.reseed, log })
  // An external database: only its own backends are its CPU (others may share the server and the machine).
  if (db.kind === "external") countPostgresOf(decodeURIComponent(new URL(db.url).pathname.slice(1)) || null)
  const started: Array<ServerProcess> = []
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  // Ctrl-C: take the servers and the embedded database down with us.
  const onSignal = () => {
    log("interrupted: stopping the servers")
    Promise.allSettled(started.map((s) => s.stop())).then(() => db.stop()).finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)

  let rows: Array<Row> = []
  let profile: { file: string; summaryFile: string; markdown: string } | null = null
  let peerCases = 0
  try {
    const needPeers = o.only.includes("health") || o.only.includes("rate")
    const common = { cwd: REPO_ROOT }
    // Our server as in production, from this checkout (or --server-root), and from --before for a comparison.
    const startOurs = async (name: string, root: string | null, profile: boolean) => {
      const port = await freePort()
      log(`starting ${name}…`)
      return startServer({
        ...common,
        name,
        port,
        probePath: "/api/v1/projects",
        // BENCH_OURS_NODE_FLAGS: extra node flags for our server only (experiments: GC settings and the like).
        args: [
          ...(process.env.BENCH_OURS_NODE_FLAGS ?? "").split(" ").filter((f) => f !== ""),
          ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILES_DIR}`] : []),
          ourEntry(root ?? REPO_ROOT, profile)
        ],
        env: {
          ...process.env,
          HOST: "127.0.0.1",
          PORT: String(port),
          DATABASE_URL: db.url,
          SITEHEALTH_DATA_DIR: Path.join(db.dir, name.replace(/\W+/g, "-")),
          SITEHEALTH_SECRET_KEY: randomBytes(32).toString("base64"),
          SITEHEALTH_WORKER: "off",
          SITEHEALTH_RATE_LIMIT: "1000000"
        }
      })
    }
    if (o.cpuProf) Fs.mkdirSync(PROFILES_DIR, { recursive: true })
    const ours = await startOurs("our server", o.serverRoot, o.cpuProf)
    started.push(ours)
    const servers: { ours: ServerProcess; before?: ServerProcess; fastify?: ServerProcess; bare?: ServerProcess } = {
      ours
    }
    if (o.before !== null && needPeers) {
      const before = await startOurs(`our server from ${o.before} (before)`, o.before, false)
      started.push(before)
      servers.before = before
    }
    if (needPeers) {
      for (const name of ["fastify", "bare"] as const) {
        const port = await freePort()
        log(`starting the ${name} peer…`)
        const s = await startServer({
          ...common,
          name: `the ${name} peer`,
          port,
          probePath: "/api/v1/projects/probe/health",
          args: [`bench/peer/${name}.ts`, "--host", "127.0.0.1", "--port", String(port)],
          env: { ...process.env, DATABASE_URL: db.url }
        })
        started.push(s)
        servers[name] = s
      }
      const peers = [{ name: "fastify", base: servers.fastify!.base }, { name: "bare", base: servers.bare!.base }]
      peerCases = await checkPeersAgree(ours.base, peers, db.tokens, db.projectIds)
      log(`the peers answer as ours does (${peerCases} cases: status and data)`)
    }
    rows = await runScenarios(o, db, servers, pool)
    if (o.cpuProf) {
      await ours.stop()
      const file = findProfile(PROFILES_DIR, ours.child.pid!)
      if (file === null) {
        throw new Error(`our server wrote no .cpuprofile to ${PROFILES_DIR} (did it exit cleanly on SIGTERM?)`)
      }
      const md = profileMarkdown(summariseProfile(file, REPO_ROOT), REPO_ROOT)
      const summaryFile = Path.join(PROFILES_DIR, `summary-${stamp}.md`)
      Fs.writeFileSync(summaryFile, md + "\n")
      profile = { file, summaryFile, markdown: md }
    }
  } catch (e) {
    const failed = started.find((s) => s.child.exitCode !== null || s.child.signalCode !== null)
    if (failed !== undefined) log(`${failed.name} exited; its last output:\n${failed.output().slice(-4000)}`)
    throw e
  } finally {
    await Promise.allSettled(started.map((s) => s.stop()))
    await pool.end().catch(() => undefined)
    await db.stop()
  }

  const ratios = ratiosOf(rows)
  const targets = targetsOf(rows, ratios, o.rate)
  const header = `sitehealth bench ${startedAt.toISOString()} — ${db.kind} database, ${
    db.events.toLocaleString("en-US")
  } events, ${db.tokens.length} tokens${
    countedPostgres() === null ? "" : ` — PostgreSQL CPU: the backends of database ${countedPostgres()} only`
  }${o.cpuProf ? " — UNDER --cpu-prof: figures are slowed by profiling" : ""}`
  console.log(markdown({ rows, ratios, targets, machine, header }))
  if (profile !== null) {
    console.log(`\n${profile.markdown}\n\n(saved to ${Path.relative(REPO_ROOT, profile.summaryFile)})`)
  }
  const result = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    options: o,
    database: {
      kind: db.kind,
      events: db.events,
      tokens: db.tokens.length,
      seededAt: db.seededAt.toISOString(),
      seedSeconds: db.seedSeconds
    },
    server: {
      worker: "off",
      rateLimitPerMinute: 1_000_000,
      rateLimitStore: process.env.REDIS_URL ? "redis" : "memory",
      cpuProfile: o.cpuProf
    },
    peerCheckCases: peerCases,
    rows,
    ratios,
    targets,
    profile: profile === null
      ? null
      : { file: Path.relative(REPO_ROOT, profile.file), summary: Path.relative(REPO_ROOT, profile.summaryFile) }
  }
  Fs.mkdirSync(RESULTS_DIR, { recursive: true })
  const json = JSON.stringify(result, null, 2) + "\n"
  Fs.writeFileSync(Path.join(RESULTS_DIR, `${stamp}.json`), json)
  Fs.writeFileSync(Path.join(RESULTS_DIR, "latest.json"), json)
  console.log(`\nJSON: ${Path.relative(REPO_ROOT, Path.join(RESULTS_DIR, `${stamp}.json`))} (and latest.json)`)
  // A report exits 0 whatever the figures; answers that went wrong make the figures meaningless.
  const failedRows = rows.filter((r) => r.non2xx > 0 || r.errors > 0)
  if (failedRows.length > 0) {
    log(
      `FAILED: ${
        failedRows.map((r) => `${r.scenario}/${r.server}: ${r.non2xx} non-2xx, ${r.errors} errors`).join("; ")
      }`
    )
    return 1
  }
  return 0
}

main().then((code) => process.exit(code), (e) => {
  log(`failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
