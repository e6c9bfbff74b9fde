/**
 * bench/scale.ts's options and seed: the command line, the loopback database, and the account of N websites
 * with `--days` days of rows that every later step of the bench reads (seeded once, recorded in `scale_seed`).
 */
import { createAccount, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { SqlRepos } from "@sitehealth/server/Layers"
import { runMigrations } from "@sitehealth/server/Migrations"
import { pgLayer } from "@sitehealth/server/platform/Database"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import { parseArgs } from "node:util"

export const REPO_ROOT = Path.resolve(import.meta.dirname, "..")
const CHUNK = 1_000
const ZONES = ["Europe/Berlin", "America/New_York", "UTC", "Asia/Tokyo", "Australia/Sydney"]

const { values } = parseArgs({
  options: {
    websites: { type: "string", default: "10000" },
    days: { type: "string", default: "365" },
    scoped: { type: "string", default: "500" },
    "page-size": { type: "string", default: "100" },
    passes: { type: "string", default: "10" },
    "recompute-seconds": { type: "string", default: "60" },
    syncs: { type: "string", default: "100" },
    "sync-workers": { type: "string", default: "2" },
    skip: { type: "string", default: "" }
  }
})
const int = (name: string, raw: string) => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`)
  return n
}
export const WEBSITES = int("websites", values.websites)
export const DAYS = int("days", values.days)
export const SCOPED = Math.min(WEBSITES, int("scoped", values.scoped))
export const PAGE_SIZE = int("page-size", values["page-size"])
export const PASSES = int("passes", values.passes)
export const RECOMPUTE_SECONDS = int("recompute-seconds", values["recompute-seconds"])
export const SYNCS = int("syncs", values.syncs)
export const SYNC_WORKERS = int("sync-workers", values["sync-workers"])
export const SKIP = new Set(values.skip.split(",").filter((s) => s !== ""))

export const url = (process.env.DATABASE_URL ?? "").trim()
if (url === "") {
  throw new Error("bench:scale needs DATABASE_URL (a database of its own: it adds an account with every website)")
}
if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname)) {
  throw new Error("bench:scale runs against a loopback database only")
}

export const log = (m: string) => process.stderr.write(`bench scale ${new Date().toISOString().slice(11, 19)}: ${m}\n`)
export const run = <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> =>
  Effect.runPromise(
    effect.pipe(Effect.provide(SqlRepos.pipe(Layer.provideMerge(pgLayer(url))))) as Effect.Effect<A, E, never>
  )
const label = `websites-${WEBSITES}-days-${DAYS}`
/** The credentials key of this run: the bench encrypts the sync websites' credentials, the workers decrypt them. */
export const SECRET_KEY = randomBytes(32)

interface Seeded {
  readonly accountId: string
  readonly scopedSecret: string
  readonly seedSeconds: number | null
}

/** Seeds once; later runs reuse the websites but mint a new scoped token (secrets are never stored). */
export const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* runMigrations
  yield* sql`CREATE TABLE IF NOT EXISTS scale_seed (label text PRIMARY KEY, account_id text NOT NULL, finished_at
      timestamptz)`
  const done = yield* sql<
    { account_id: string; finished_at: Date | null }
  >`SELECT account_id, finished_at FROM scale_seed WHERE label = ${label}`
  let accountId: string
  let seedSeconds: number | null = null
  if (done.length === 1 && done[0].finished_at !== null) {
    accountId = done[0].account_id
    log(`reusing the seed of ${done[0].finished_at.toISOString()} (${label})`)
  } else {
    if (done.length === 1) {
      log("the last seed did not finish: removing it")
      yield* sql`DELETE FROM accounts WHERE id = ${done[0].account_id}`
      yield* sql`DELETE FROM scale_seed WHERE label = ${label}`
    }
    const t0 = Date.now()
    const account = yield* createAccount({ name: "Scale account", trialDays: 3650 })
    accountId = account.id
    yield* sql`INSERT INTO scale_seed (label, account_id) VALUES (${label}, ${accountId})`
    const today = new Date().toISOString().slice(0, 10)
    for (let from = 1; from <= WEBSITES; from += CHUNK) {
      const to = Math.min(WEBSITES, from + CHUNK - 1)
      // Ids of the API's shape (prj_ + base62); created a second apart, so the list's order is the number's, and
      // at millisecond precision as the API creates them (the list's cursor carries milliseconds).
      yield* sql`INSERT INTO projects (id, account_id, name, domain, timezone, currency, created_at)
          SELECT 'prj_scale' || lpad(i::text, 7, '0'), ${accountId}, 'Website ' || i, 'site' || i || '.example',
            (${ZONES})[1 + i % ${ZONES.length}], CASE WHEN i % 3 = 0 THEN 'USD' ELSE 'EUR' END,
            date_trunc('milliseconds', now()) - make_interval(secs => ${WEBSITES} - i)
          FROM generate_series(${from}::int, ${to}::int) AS i`
      // Per website and day: traffic with a weekly rhythm and a per-site size; revenue of a growing MRR;
      // search clicks and impressions. Deterministic, so a reseed writes the same rows.
      const series = sql`FROM generate_series(${from}::int, ${to}::int) AS i
          CROSS JOIN generate_series(${today}::date - ${DAYS}::int, ${today}::date - 1, interval '1 day') AS d
          CROSS JOIN LATERAL (SELECT 'prj_scale' || lpad(i::text, 7, '0') AS id, (10 + i % 997) AS size,
            extract(isodow FROM d)::int AS dow, (${today}::date - d::date) AS age) AS x`
      yield* sql`INSERT INTO traffic_daily (project_id, day, visitors, pageviews, sessions, bounces, duration_seconds)
          SELECT id, d::date, size * (8 - dow % 7), size * (8 - dow % 7) * 3, size * (8 - dow % 7), size * (8 - dow % 7)
            / 2,
            size * (8 - dow % 7) * 45 ${series}`
      yield* sql`INSERT INTO revenue_daily (project_id, day, gross_minor, refunds_minor, failed_payments, failed_minor,
          mrr_minor,
            customers, new_mrr_minor, expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor,
              reactivation_mrr_minor,
            new_customers, churned_customers, reactivated_customers)
          SELECT id, d::date, size * 900, size * (age % 11), age % 3, (age % 3) * 1900, size * 1000 * (400 - age) / 400,
            size * (400 - age) / 40, size * 300, size * 20, size * 10, size * 150, 0, size / 100 + 1, size / 200, 0
              ${series}`
      yield* sql`INSERT INTO search_daily (project_id, day, clicks, impressions, position_weighted)
          SELECT id, d::date, size * (8 - dow % 7) / 4, size * (8 - dow % 7) * 12, size * (8 - dow % 7) * 12 * (8 + i %
            20) ${series}`
      log(`  ${to.toLocaleString("en-US")} / ${WEBSITES.toLocaleString("en-US")} websites`)
    }
    yield* sql`ANALYZE`
    yield* sql`UPDATE scale_seed SET finished_at = now() WHERE label = ${label}`
    seedSeconds = Math.round((Date.now() - t0) / 100) / 10
    log(`seeded in ${seedSeconds} s`)
  }
  const scope = (yield* sql<{ id: string }>`SELECT id FROM projects WHERE account_id = ${accountId}
      ORDER BY created_at, id LIMIT ${SCOPED}`).map((r) => r.id)
  const { secret } = yield* mintToken({
    accountId,
    name: `scale ${SCOPED}`,
    projects: scope,
    permissions: ["projects:read"]
  })
  return { accountId, scopedSecret: secret, seedSeconds } satisfies Seeded
})

/** Per table: bytes (heap, indexes, TOAST), rows; per website and per website-year. */
export const sizes = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const websites = Number(
      (yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM projects WHERE account_id = ${accountId}`)[0].n
    )
    const all = Number((yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM projects`)[0].n)
    const rows = yield* sql<{ table: string; bytes: string; rows: string }>`
        SELECT c.relname AS table, pg_total_relation_size(c.oid)::text AS bytes, c.reltuples::bigint::text AS rows
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC`
    return {
      websites,
      allWebsites: all,
      tables: rows.map((r) => ({ table: r.table, bytes: Number(r.bytes), rows: Number(r.rows) }))
    }
  })
