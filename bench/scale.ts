/**
 * `npm run bench:scale`: the scale figures of issue 18 on a database of many websites (docs/benchmarks.md,
 * "Scale").
 *
 *   createdb -h 127.0.0.1 sitehealth_scale
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/sitehealth_scale npm run bench:scale -- [options]
 *   dropdb -h 127.0.0.1 sitehealth_scale
 *
 * Seeds (once; a row of `scale_seed` records a seed that finished) one account with N websites, each with
 * `--days` days of daily traffic, revenue and search rows (the series the health score is computed from),
 * written by multi-row INSERT … SELECT over generate_series in chunks of 1,000 websites; a token scoped to
 * `--scoped` of them. Then measures, in this order:
 *
 * 1. size: pg_total_relation_size of every table, per website, scaled to a year of days;
 * 2. recompute throughput: `npm run worker` processes (1, then 2) on the due websites for `--recompute-seconds`,
 *    counting the project_jobs they completed: websites per minute per worker;
 * 3. `GET /projects` with the scoped token, every page (`--page-size`), sequentially: the first pass (each
 *    website's snapshot already computed by step 2 or computed then) and `--passes` warm passes;
 * 4. sync queue drain: `--syncs` new websites (of a fresh account, on the demo profiles' domains) connected to
 *    the demo's local providers (the Stripe, Plausible and Google fakes `npm start` runs for the demo, served
 *    from this process), a full sync queued for each connection, then `--sync-workers` worker processes until
 *    no run is queued or running: real provider syncs over HTTP, a year of traffic, search and payments per
 *    website. The 10,000 websites are marked
 *    computed first, so the workers' recompute fiber has only the synced websites to do (their new data and
 *    the history rebuild a first sync asks for), as after a real first sync.
 *
 * Everything runs on this machine against a loopback database; the script refuses any other host.
 */
import { createAccount, createProject } from "@sitehealth/server/accounts/Provisioning"
import { DEMO_PROJECTS } from "@sitehealth/server/demo/Profiles"
import { type DemoProvidersShape, startDemoProviders } from "@sitehealth/server/demo/Providers"
import { makeCipher } from "@sitehealth/server/integrations/Crypto"
import { IntegrationsRepo } from "@sitehealth/server/integrations/IntegrationsRepo"
import { SyncQueue } from "@sitehealth/server/integrations/SyncQueue"
import { freePort } from "@sitehealth/server/test/support/Ports"
import { Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import { startServer } from "./processes.ts"
import {
  DAYS,
  log,
  PAGE_SIZE,
  PASSES,
  RECOMPUTE_SECONDS,
  REPO_ROOT,
  run,
  SCOPED,
  SECRET_KEY,
  seed,
  sizes,
  SKIP,
  SYNC_WORKERS,
  SYNCS,
  url,
  WEBSITES
} from "./scale-setup.ts"

let WEBSITES_IN_DB = Number.POSITIVE_INFINITY
const jobsDoneSince = (since: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Number(
      (yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM project_jobs WHERE last_run_at >= ${since}`)[0].n
    )
  })

/** `workers` worker processes for `seconds` on the due websites: how many they recomputed. */
const recomputeRun = async (workers: number, seconds: number) => {
  // Every website due again (as after a day boundary): the round measures full recomputations.
  await run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE project_jobs SET due_at = now() - interval '1 minute', computed_version = NULL`
    )
  )
  const started = await Promise.all(Array.from({ length: workers }, (_, i) => startWorker(i)))
  // The window: `seconds`, or until every website is done (then the time it took).
  const t0 = new Date()
  let done = 0
  let elapsed = 0
  while (elapsed < seconds * 1000) {
    await new Promise((r) => setTimeout(r, 1000))
    done = await run(jobsDoneSince(t0))
    elapsed = Date.now() - t0.getTime()
    if (done >= WEBSITES_IN_DB) break
  }
  await Promise.all(started.map((w) => w.stop()))
  return {
    workers,
    seconds: Math.round(elapsed / 100) / 10,
    done,
    perMinutePerWorker: Math.round((done / elapsed) * 60_000 / workers)
  }
}

/** One `npm run worker` process (no HTTP listener), quiet but for its errors. */
const startWorker = async (i: number) => {
  const child = spawn(process.execPath, ["packages/server/bin/worker.js"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      SITEHEALTH_SECRET_KEY: SECRET_KEY.toString("base64"),
      LOG_LEVEL: "warning"
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let err = ""
  child.stderr!.on("data", (d: Buffer) => {
    err = (err + d.toString("utf8")).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // It has no listener to probe: started once a few seconds passed without it dying (it loads, migrates —
  // nothing to do — and claims; the measured window starts after, so its start-up is not counted).
  await new Promise((r) => setTimeout(r, 3000))
  if (child.exitCode !== null) throw new Error(`worker ${i} exited (${child.exitCode}):\n${err}`)
  return {
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      await exited
      clearTimeout(timer)
    }
  }
}

/**
 * A fresh account with `SYNCS` websites, each connected to its demo profile's local providers (Stripe,
 * Plausible, Search Console: the fakes the demo runs), a full sync queued for each connection; returns the
 * account and the number of syncs queued.
 */
const queueSyncs = (providers: DemoProvidersShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const integrations = yield* IntegrationsRepo
    const queue = yield* SyncQueue
    const cipher = makeCipher(SECRET_KEY)
    // Nothing else due: the workers' recompute fiber leaves the seeded websites alone.
    yield* sql`UPDATE project_jobs j SET computed_version = p.data_version, due_at = now() + interval '1 day'
      FROM projects p WHERE p.id = j.project_id`
    const account = yield* createAccount({ name: "Scale syncs", trialDays: 3650 })
    const now = new Date()
    let queued = 0
    for (let i = 0; i < SYNCS; i++) {
      const spec = DEMO_PROJECTS[i % DEMO_PROJECTS.length]
      const project = yield* createProject({
        accountId: account.id,
        name: `${spec.name} ${i}`,
        domain: spec.domain,
        timezone: spec.timezone,
        currency: spec.currency
      })
      for (const connection of providers.connectionsOf(spec.key)) {
        yield* integrations.connect({
          projectId: project.id,
          provider: connection.provider,
          credentials: cipher.encrypt(connection.credentials),
          baseUrl: connection.baseUrl,
          syncIntervalMinutes: null,
          now
        })
        yield* queue.request({
          projectId: project.id,
          provider: connection.provider,
          mode: "full",
          requestedBy: null,
          now
        })
        queued++
      }
    }
    return { accountId: account.id, queued }
  })

/** Every table's pg_total_relation_size, summed. */
const tableBytes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Number(
    (yield* sql<{ n: string }>`SELECT sum(pg_total_relation_size(c.oid))::text AS n FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'`)[0].n
  )
})

const historyPending = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Number(
      (yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM integrations i JOIN projects p ON p.id = i.project_id
        WHERE p.account_id = ${accountId} AND i.history_pending`)[0].n
    )
  })

const syncCounts = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: string; n: string }>`SELECT r.status, count(*)::text AS n FROM sync_runs r
        JOIN projects p ON p.id = r.project_id WHERE p.account_id = ${accountId} GROUP BY r.status`
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>
  })

/** Every page of GET /projects for the scoped token, sequentially: ms per page and for the whole list. */
const listPass = async (base: string, secret: string) => {
  const pages: Array<number> = []
  let cursor: string | null = null
  let websites = 0
  const t0 = performance.now()
  do {
    const q: string = `?limit=${PAGE_SIZE}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const p0 = performance.now()
    const r = await fetch(`${base}/api/v1/projects${q}`, { headers: { authorization: `Bearer ${secret}` } })
    const body = await r.json() as { data?: { projects: Array<unknown>; nextCursor: string | null } }
    pages.push(performance.now() - p0)
    if (r.status !== 200 || body.data === undefined) throw new Error(`GET /projects${q}: ${r.status}`)
    websites += body.data.projects.length
    cursor = body.data.nextCursor
  } while (cursor !== null)
  return { websites, pages, totalMs: performance.now() - t0 }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const ms = (x: number) => Math.round(x * 10) / 10

const main = async () => {
  log(`load average at the start: ${Os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  const seeded = await run(seed)
  WEBSITES_IN_DB = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Number((yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM projects`)[0].n)
  }))
  const out: Record<string, unknown> = { websites: WEBSITES, days: DAYS, seedSeconds: seeded.seedSeconds }

  if (!SKIP.has("size")) {
    const s = await run(sizes(seeded.accountId))
    const total = s.tables.reduce((a, t) => a + t.bytes, 0)
    console.log(`\n## Size (${s.allWebsites.toLocaleString("en-US")} websites in the database, ${DAYS} days each)\n`)
    console.log("| table | rows | MB | KB per website | KB per website-year |\n|---|---:|---:|---:|---:|")
    for (const t of s.tables.filter((t) => t.bytes > 1_000_000)) {
      console.log(
        `| ${t.table} | ${t.rows.toLocaleString("en-US")} | ${(t.bytes / 1e6).toFixed(1)} | ${
          (t.bytes / s.allWebsites / 1e3).toFixed(1)
        } | ${(t.bytes / s.allWebsites / 1e3 * 365 / DAYS).toFixed(1)} |`
      )
    }
    console.log(
      `| all tables | | ${(total / 1e6).toFixed(1)} | ${(total / s.allWebsites / 1e3).toFixed(1)} | ${
        (total / s.allWebsites / 1e3 * 365 / DAYS).toFixed(1)
      } |`
    )
    out.size = s
  }

  if (!SKIP.has("recompute")) {
    for (const workers of [1, 2]) {
      log(`recompute: ${workers} worker(s) for ${RECOMPUTE_SECONDS} s…`)
      const r = await recomputeRun(workers, RECOMPUTE_SECONDS)
      console.log(
        `\nrecompute, ${workers} worker(s), ${r.seconds} s: ${r.done} websites → ${r.perMinutePerWorker} ` +
          `websites/minute/worker`
      )
      out[`recompute${workers}`] = r
    }
  }

  if (!SKIP.has("list")) {
    const port = await freePort()
    const server = await startServer({
      name: "our server",
      port,
      probePath: "/api/v1/projects",
      cwd: REPO_ROOT,
      args: ["packages/server/bin/server.js"],
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: String(port),
        DATABASE_URL: url,
        SITEHEALTH_SECRET_KEY: randomBytes(32).toString("base64"),
        SITEHEALTH_WORKER: "off",
        SITEHEALTH_RATE_LIMIT: "1000000"
      }
    })
    try {
      const base = `http://127.0.0.1:${port}`
      const first = await listPass(base, seeded.scopedSecret)
      const warm = []
      for (let i = 0; i < PASSES; i++) warm.push(await listPass(base, seeded.scopedSecret))
      const pageTimes = warm.flatMap((w) => w.pages)
      console.log(
        `\nGET /projects, token scoped to ${SCOPED} websites, ${PAGE_SIZE} a page (${first.pages.length} pages):`
      )
      console.log(
        `  first pass: ${ms(first.totalMs)} ms (pages ${first.pages.map(ms).join(", ")} ms), ${first.websites} websites`
      )
      console.log(
        `  warm, ${PASSES} passes: median pass ${ms(median(warm.map((w) => w.totalMs)))} ms, median page ${
          ms(median(pageTimes))
        } ms, slowest page ${ms(Math.max(...pageTimes))} ms`
      )
      out.list = {
        scoped: SCOPED,
        pageSize: PAGE_SIZE,
        first,
        warmPassMs: warm.map((w) => w.totalMs),
        warmPageMedianMs: median(pageTimes)
      }
    } finally {
      await server.stop()
    }
  }
  if (!SKIP.has("sync")) {
    log(`sync: queueing the full syncs of ${SYNCS} websites on the demo's local providers…`)
    const bytes0 = await run(tableBytes)
    // The demo's providers, served from this process for as long as the workers sync against them.
    const providersScope = Effect.runSync(Scope.make())
    const providers = await Effect.runPromise(
      Scope.provide(startDemoProviders({ epoch: new Date(), broken: false }), providersScope)
    )
    const { accountId, queued } = await run(queueSyncs(providers))
    const workers = await Promise.all(Array.from({ length: SYNC_WORKERS }, (_, i) => startWorker(i)))
    // startWorker waits 3 s for each worker's start-up: the clock runs from when the first was spawned.
    const t0 = Date.now() - 3000
    let counts: Record<string, number> = {}
    for (;;) {
      counts = await run(syncCounts(accountId))
      if ((counts.queued ?? 0) + (counts.running ?? 0) === 0) break
      if (Date.now() - t0 > 30 * 60_000) {
        throw new Error(`sync drain: not done after 30 minutes (${JSON.stringify(counts)})`)
      }
      await new Promise((r) => setTimeout(r, 500))
    }
    const drainMs = Date.now() - t0
    const bytesSynced = await run(tableBytes)
    // The history rebuild a first sync asks for (a year of daily snapshots, signals, briefings), then the size
    // again: what a website with a year of provider data holds.
    let rebuilt = false
    for (const until = Date.now() + 10 * 60_000; Date.now() < until;) {
      if (await run(historyPending(accountId)) === 0) {
        rebuilt = true
        break
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
    const rebuildMs = Date.now() - t0
    const bytesRebuilt = await run(tableBytes)
    await Promise.all(workers.map((w) => w.stop()))
    await Effect.runPromise(Scope.close(providersScope, Exit.void))
    console.log(
      `\nsize of a website with a year of the demo's provider data (all tables, heap + indexes + TOAST, delta / ` +
        `${SYNCS}):`
    )
    console.log(
      `  after its sync: ${((bytesSynced - bytes0) / SYNCS / 1e6).toFixed(2)} MB; after the history rebuild${
        rebuilt ? ` (done ${(rebuildMs / 1000).toFixed(0)} s after the start)` : " (NOT finished within 10 minutes)"
      }: ${((bytesRebuilt - bytes0) / SYNCS / 1e6).toFixed(2)} MB`
    )
    console.log(
      `\nsync queue: ${queued} full syncs (${SYNCS} websites' Stripe, Plausible, Search Console), ` +
        `${SYNC_WORKERS} workers: drained in ${(drainMs / 1000).toFixed(1)} s (${JSON.stringify(counts)}), ${
          (queued / (drainMs / 60_000)).toFixed(1)
        } syncs/minute`
    )
    out.sync = {
      websites: SYNCS,
      syncs: queued,
      workers: SYNC_WORKERS,
      drainMs,
      counts,
      bytes0,
      bytesSynced,
      bytesRebuilt,
      rebuilt,
      rebuildMs
    }
  }
  console.log(`\n${JSON.stringify(out)}`)
}

main().then(() => process.exit(0), (e) => {
  log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
  process.exit(1)
})
