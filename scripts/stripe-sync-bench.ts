/**
 * Sync time and peak memory of the real Stripe connector on a large account.
 *
 *   npm run bench:stripe                                   # 100,000 subscriptions, embedded Postgres
 *   npm run bench:stripe -- --subscriptions 10000
 *   DATABASE_URL=postgres://… npm run bench:stripe         # that database (adds one account + project)
 *   npm run bench:stripe -- --cpu-prof-incremental inc.cpuprofile   # a CPU profile of the incremental run
 * npm run bench:stripe -- --v8-default                   # without the worker's V8 settings (platform/HeapSettings.ts)
 *   DATABASE_URL=… npm run bench:stripe -- --full-only     # only the full sync; prints its project id
 *   DATABASE_URL=… npm run bench:stripe -- --incremental-only PROJECT   # only the day, on a copy of that database
 *     (an A/B of the incremental run: `CREATE DATABASE copy TEMPLATE full` per run, each tree on its own copy)
 *
 * A FakeStripe runs in a CHILD process (so its data does not count in the connector's memory) and serves
 * N subscriptions generated on demand from their index: 1–12 monthly invoices each (6.5 on average), one
 * charge per invoice (every 50th failed), a refund per 100 charges, every 10th subscription canceled (with
 * feedback), every 7th starting with a trial period, every 13th upgraded mid-period (proration lines),
 * every 11th with a 20 % coupon, five price levels. This process migrates a database, creates a project and
 * runs stripeConnector.sync through the real ProviderHttp (default timeouts and retries) into
 * PaymentsRepo.sql, sampling process.memoryUsage().rss every 20 ms: first a FULL sync (the first one of a
 * connection: streamed listing, version rebuild, rollup) of the account as it was the day before, then an
 * INCREMENTAL sync of the day's changes — the fake's /v1/events serves, in the 24 h before "now", a renewal of
 * every 30th subscription (invoice.paid with its new invoice, charge.succeeded, customer.subscription.updated
 * with its new current period) and every 30th refund issued (refund.created), objects the full sync did not
 * see. Prints JSON.
 */
import { startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { AccountsRepo } from "@sitehealth/server/accounts/AccountsRepo"
import { createAccount, createProject } from "@sitehealth/server/accounts/Provisioning"
import { FxRepo } from "@sitehealth/server/fx/FxRepo"
import { makeProviderHttp } from "@sitehealth/server/integrations/ProviderHttp"
import { stripeConnector } from "@sitehealth/server/integrations/stripe/StripeConnector"
import { runMigrations } from "@sitehealth/server/Migrations"
import { PaymentsRepo } from "@sitehealth/server/payments/PaymentsRepo"
import { pgLayer } from "@sitehealth/server/platform/Database"
import { startEmbeddedPostgres } from "@sitehealth/server/platform/EmbeddedPostgres"
import { applyHeapSettings, SYNC_HEAP_GROWING_PERCENT } from "@sitehealth/server/platform/HeapSettings"
import { ProjectsRepo } from "@sitehealth/server/projects/ProjectsRepo"
import { freePort } from "@sitehealth/server/test/support/Ports"
import { Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { fork } from "node:child_process"
import * as Fs from "node:fs"
import * as Inspector from "node:inspector/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { arg, args, DAY, generated, log, N, NOW } from "./stripe-bench-account.ts"

// ---------------------------------------------------------------------------------------------------
// The measurement (parent process)
// ---------------------------------------------------------------------------------------------------

const main = async () => {
  const child = fork(process.argv[1]!, ["--serve", "--subscriptions", String(N)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const fakeUrl = await new Promise<string>((resolve, reject) => {
    child.once("message", (m: any) => resolve(m.url))
    child.once("exit", (code) => reject(new Error(`fake stripe exited with ${code}`)))
  })
  const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-stripe-"))
  Fs.chmodSync(tmp, 0o711)
  let pg: { url: string; stop: () => Promise<void> } | null = null
  try {
    let url = process.env.DATABASE_URL ?? ""
    if (url === "") {
      log("starting an embedded postgres…")
      pg = await startEmbeddedPostgres({ dataDir: Path.join(tmp, "db"), port: await freePort(), log })
      url = pg.url
    }
    const db = Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(pgLayer(url)))
    const repos = Layer.mergeAll(AccountsRepo.sql, ProjectsRepo.sql, PaymentsRepo.sql).pipe(
      Layer.provideMerge(FxRepo.sql),
      Layer.provideMerge(db)
    )
    let peakRss = 0
    let peakHeap = 0
    let peakBeforeRollUp = 0 // the peak RSS of the run until its rollup: the listing's and the rebuild's
    const sample = () => {
      const m = process.memoryUsage()
      peakRss = Math.max(peakRss, m.rss)
      peakHeap = Math.max(peakHeap, m.heapUsed)
    }
    const result = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const only = arg("incremental-only", "")
        const project = only !== "" ? { id: only } : yield* createProject({
          accountId: (yield* createAccount({ name: "Stripe bench" })).id,
          name: "Big SaaS",
          domain: "big.example",
          timezone: "UTC",
          currency: "USD"
        })
        const inner = yield* PaymentsRepo
        let rollUpMs = 0
        let phase = "listing"
        // Where the time goes: commits of listed batches, of rebuilt versions, reads of staged objects.
        const spent = { listCommitsMs: 0, versionCommitsMs: 0, stagedReadsMs: 0 }
        const clock = <A>(key: keyof typeof spent, self: Effect.Effect<A>) =>
          Effect.suspend(() => {
            const t0 = performance.now()
            return self.pipe(Effect.ensuring(Effect.sync(() => void (spent[key] += performance.now() - t0))))
          })
        const timed = PaymentsRepo.of({
          ...inner,
          commit: (id, batch) =>
            clock(
              batch.replaceVersionsOf !== undefined ? "versionCommitsMs" : "listCommitsMs",
              inner.commit(id, batch)
            ),
          stagedAfter: (id, after, limit) => clock("stagedReadsMs", inner.stagedAfter(id, after, limit)),
          stagedOf: (id, groups) => clock("stagedReadsMs", inner.stagedOf(id, groups)),
          rollUp: (id) =>
            Effect.suspend(() => {
              const t0 = performance.now()
              log(`${phase}: rolling up…`)
              sample()
              peakBeforeRollUp = peakRss
              return inner.rollUp(id).pipe(Effect.ensuring(Effect.sync(() => void (rollUpMs = performance.now() - t0))))
            })
        })
        const http = makeProviderHttp()
        const run = (mode: "full" | "incremental", now: number, state: unknown) =>
          stripeConnector.sync({
            baseUrl: fakeUrl,
            credentials: { secret_key: "sk_test_fake" },
            http,
            projectId: project.id,
            timezone: "UTC",
            currency: "USD",
            now: new Date(now * 1000),
            mode,
            state
          }).pipe(Effect.provideService(PaymentsRepo, timed))
        sample()
        const rssBefore = process.memoryUsage().rss
        const timer = setInterval(sample, 20)
        const t0 = performance.now()
        // The account as of the day before.
        const full = only !== "" ? { counts: {} } : yield* run("full", NOW - DAY, null)
        clearInterval(timer)
        const fullMs = performance.now() - t0
        const fullRollUpMs = rollUpMs
        const fullSpent = { ...spent }
        spent.listCommitsMs = spent.versionCommitsMs = spent.stagedReadsMs = 0
        sample()
        const fullPeak = { rss: peakRss, heap: peakHeap, beforeRollUp: peakBeforeRollUp }
        const stored = (yield* sql`SELECT
          (SELECT count(*) FROM customers WHERE project_id = ${project.id})::int AS customers,
          (SELECT count(*) FROM subscription_versions WHERE project_id = ${project.id})::int AS versions,
          (SELECT count(*) FROM charges WHERE project_id = ${project.id})::int AS charges,
          (SELECT count(*) FROM refunds WHERE project_id = ${project.id})::int AS refunds,
          (SELECT count(*) FROM payments_staged WHERE project_id = ${project.id})::int AS staged,
          (SELECT count(*) FROM revenue_daily WHERE project_id = ${project.id})::int AS revenue_days,
          (SELECT count(*) FROM customer_mrr WHERE project_id = ${project.id})::int AS customer_mrr_spans,
          (SELECT count(*) FROM churn_events WHERE project_id = ${project.id})::int AS churn_events,
          (SELECT mrr_minor FROM revenue_daily WHERE project_id = ${project.id} ORDER BY day DESC LIMIT 1)::bigint::text
            AS last_mrr_minor`)[
          0
        ]
        if (args.includes("--full-only")) {
          console.log(
            JSON.stringify({ projectId: project.id, fullSeconds: Math.round(fullMs / 100) / 10, rowsStored: stored })
          )
          return null
        }
        const countsNow = sql`SELECT
          (SELECT count(*) FROM subscription_versions WHERE project_id = ${project.id})::int AS versions,
          (SELECT count(*) FROM charges WHERE project_id = ${project.id})::int AS charges,
          (SELECT count(*) FROM refunds WHERE project_id = ${project.id})::int AS refunds,
          (SELECT count(*) FROM payments_staged WHERE project_id = ${project.id})::int AS staged`

        // A day's changes: the events of the 24 h before NOW, read by an incremental run a minute after it (the
        // state as if the last full listing were a moment ago: the daily reconciliation is what the full sync
        // measures).
        yield* Effect.promise(() =>
          new Promise<void>((resolve) => {
            child.once("message", () => resolve())
            child.send({ day: "today" })
          })
        )
        phase = "incremental"
        peakRss = 0
        peakHeap = 0
        const profile = arg("cpu-prof-incremental", "")
        const session = profile === "" ? null : new Inspector.Session()
        if (session !== null) {
          session.connect()
          yield* Effect.promise(() => session.post("Profiler.enable").then(() => session.post("Profiler.start")))
        }
        const timer2 = setInterval(sample, 20)
        const t1 = performance.now()
        const incremental = yield* run("incremental", NOW + 60, { eventsCursor: NOW - DAY, reconciledAt: NOW })
          .pipe(Effect.ensuring(Effect.sync(() => clearInterval(timer2))))
        const incrementalMs = performance.now() - t1
        if (session !== null) {
          const { profile: cpu } = yield* Effect.promise(() => session.post("Profiler.stop"))
          Fs.writeFileSync(profile, JSON.stringify(cpu))
          session.disconnect()
          log(`incremental: CPU profile written to ${profile}`)
        }
        sample()
        const lastMrrAfter =
          (yield* sql`SELECT mrr_minor::bigint::text AS m FROM revenue_daily WHERE project_id = ${project.id} ORDER BY
              day DESC LIMIT 1`)[
            0
          ]
        const storedAfter = (yield* countsNow)[0]
        // The incremental rollup must leave exactly the rows a full rollup of the same data does.
        const derived = Effect.all([
          sql`SELECT * FROM revenue_daily WHERE project_id = ${project.id} ORDER BY day`,
          sql`SELECT * FROM customer_mrr WHERE project_id = ${project.id} ORDER BY customer_id, from_day`,
          sql`SELECT * FROM churn_events WHERE project_id = ${project.id} ORDER BY day, customer_id`,
          sql`SELECT * FROM revenue_unconverted_daily WHERE project_id = ${project.id} ORDER BY currency, day`
        ]).pipe(Effect.map((rows) => JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? String(v) : v))))
        const afterIncremental = yield* derived
        log("incremental: comparing with a full rollup…")
        yield* inner.rebuild(project.id)
        const incrementalEqualsFull = (yield* derived) === afterIncremental
        return {
          incrementalEqualsFull,
          full,
          fullMs,
          fullRollUpMs,
          fullSpent,
          incrementalSpent: { ...spent },
          stored,
          rssBefore,
          fullPeak,
          incremental,
          incrementalMs,
          incrementalRollUpMs: rollUpMs,
          incrementalPeak: { rss: peakRss, heap: peakHeap },
          lastMrrAfter,
          storedAfter
        }
      }).pipe(
        Effect.provide(repos),
        Effect.provideService(References.MinimumLogLevel, "Warn") // stdout is the JSON
      )
    )
    if (result === null) return
    const mb = (b: number) => Math.round(b / 1048576)
    const s1 = (ms: number) => Math.round(ms / 100) / 10
    console.log(JSON.stringify(
      {
        subscriptions: N,
        full: {
          syncSeconds: s1(result.fullMs),
          rollUpSeconds: s1(result.fullRollUpMs),
          dbSeconds: {
            listCommits: s1(result.fullSpent.listCommitsMs),
            versionCommits: s1(result.fullSpent.versionCommitsMs),
            stagedReads: s1(result.fullSpent.stagedReadsMs)
          },
          counts: result.full.counts,
          rowsStored: result.stored,
          memory: {
            rssBeforeMB: mb(result.rssBefore),
            peakRssMB: mb(result.fullPeak.rss),
            peakRssBeforeRollUpMB: mb(result.fullPeak.beforeRollUp),
            peakHeapUsedMB: mb(result.fullPeak.heap)
          }
        },
        incrementalOneDay: {
          syncSeconds: Math.round(result.incrementalMs) / 1000,
          rollUpSeconds: Math.round(result.incrementalRollUpMs) / 1000,
          dbSeconds: {
            listCommits: s1(result.incrementalSpent.listCommitsMs),
            versionCommits: s1(result.incrementalSpent.versionCommitsMs),
            stagedReads: s1(result.incrementalSpent.stagedReadsMs)
          },
          counts: result.incremental.counts,
          rowsStoredAfter: result.storedAfter,
          lastMrrMinorAfter: result.lastMrrAfter,
          derivedRowsEqualAFullRollup: result.incrementalEqualsFull,
          memory: { peakRssMB: mb(result.incrementalPeak.rss), peakHeapUsedMB: mb(result.incrementalPeak.heap) }
        },
        heapGrowingPercent: args.includes("--v8-default") ? "V8 default" : SYNC_HEAP_GROWING_PERCENT,
        loadAverage: Os.loadavg().map((l) => Math.round(l * 10) / 10),
        node: process.version,
        cpus: Os.cpus().length
      },
      null,
      2
    ))
  } finally {
    child.kill("SIGTERM")
    if (pg !== null) await pg.stop().catch(() => undefined)
    Fs.rmSync(tmp, { recursive: true, force: true })
  }
}

if (args.includes("--serve")) {
  const account = generated()
  const fake = await startFakeStripe(account.yesterday)
  log(`fake stripe with ${N} subscriptions on ${fake.url}, as of the day before`)
  // The day passes: the account as it is now, with the day's events.
  process.on("message", (m: any) => {
    if (m?.day !== "today") return
    fake.data = account.today
    process.send!({ today: true })
  })
  process.send!({ url: fake.url })
} else {
  // The worker's V8 settings (platform/HeapSettings.ts), unless --v8-default (V8's own sizing, for an A/B).
  if (!args.includes("--v8-default")) applyHeapSettings({ syncs: true })
  await main()
}
