/**
 * Fault: a worker process killed (SIGKILL) in the middle of a sync.
 *
 *   npx node scripts/faults/worker-kill.ts            (or `npm run faults`)
 *
 * A private embedded Postgres, a project with Plausible connected (credentials encrypted with the run's key),
 * a Plausible stand-in, and a queued sync. Worker A (`npm run worker`'s WorkerMain.ts) claims the run and
 * sits in the connector (the stand-in holds its first query); then A gets SIGKILL — no release, as in a crash
 * or an OOM kill. Worker B starts.
 *
 * Checks: the run is left `running` under A's lease (attempt 1), and B leaves it alone while the lease holds;
 * once the lease has run out B takes it over (attempt 2) and finishes it, the integration is connected with
 * a last success, and nothing else was synced twice. The lease is 5 minutes (SyncRunner.LEASE_MS); the script
 * does not wait that long: it moves the run's lease_until into the past, which is what the passing of those
 * minutes does, and the claim compares it with the worker's clock exactly as it would then.
 */
import { makeCipher, parseSecretKey } from "@sitehealth/server/integrations/Crypto"
import { IntegrationsRepo } from "@sitehealth/server/integrations/IntegrationsRepo"
import { SyncQueue } from "@sitehealth/server/integrations/SyncQueue"
import { Effect } from "effect"
import { eventually, sleep, WORKER } from "./lib/common.ts"
import { startFakePlausible } from "./lib/fake-plausible.ts"
import { query, seedAccount, withDatabase } from "./lib/postgres.ts"
import { saveLog, spawnNode } from "./lib/processes.ts"
import {
  type Check,
  check,
  type FaultResult,
  isMain,
  type Logs,
  result,
  runAsScript,
  stderrLog
} from "./lib/results.ts"
import { withFaultSetting } from "./lib/setting.ts"

export const FAULT = "Worker killed (SIGKILL) mid-sync"

export interface WorkerKillOptions extends Logs {
  /** How long B is watched leaving the leased run alone: more than one poll (5 s). */
  readonly leaseWatchMs: number
}

export const DEFAULTS: WorkerKillOptions = {
  leaseWatchMs: 6_000,
  log: stderrLog("worker-kill")
}

interface RunRow {
  readonly status: string
  readonly attempts: number
  readonly error: string | null
  readonly lease_left_ms: number | null
}

export const runWorkerKill = (overrides: Partial<WorkerKillOptions> = {}): Promise<FaultResult> =>
  withFaultSetting(async ({ db, dataDir, secretKey, stopAtEnd, releaseAtEnd }) => {
    const o = { ...DEFAULTS, ...overrides }
    const fake = await startFakePlausible()
    releaseAtEnd(fake.close)
    const { projectId } = await seedAccount(db.url, "Worker kill")
    const site = `kill-${Math.random().toString(36).slice(2, 8)}.example`
    const cipher = makeCipher(parseSecretKey(secretKey))
    const runId = await withDatabase(
      db.url,
      Effect.gen(function*() {
        yield* (yield* IntegrationsRepo).connect({
          projectId,
          provider: "plausible",
          credentials: cipher.encrypt({ api_key: "faults-key", site_id: site }),
          baseUrl: null,
          syncIntervalMinutes: null,
          now: new Date()
        })
        const { sync } = yield* (yield* SyncQueue).request({
          projectId,
          provider: "plausible",
          mode: "full",
          requestedBy: "faults",
          now: new Date()
        })
        return sync.id
      })
    )
    const runOf = async () =>
      (await query<RunRow>(db.url, (sql) =>
        sql`SELECT status, attempts, error,
              (EXTRACT(EPOCH FROM (lease_until - now())) * 1000)::int AS lease_left_ms
            FROM sync_runs WHERE id = ${runId}`))[0]
    const worker = (name: string) =>
      stopAtEnd(spawnNode(name, WORKER, {
        DATABASE_URL: db.url,
        SITEHEALTH_SECRET_KEY: secretKey,
        SITEHEALTH_DATA_DIR: dataDir,
        // Each worker calls the stand-in under its own prefix: the stand-in knows who ran the sync.
        PLAUSIBLE_API_BASE: `${fake.url}/${name}`
      }))

    const held = fake.hold(site)
    const a = worker("a")
    const call = await Promise.race([held, sleep(30_000).then(() => null)])
    const checks: Array<Check> = []
    if (call === null || call.instance !== "a") {
      return result(FAULT, [
        check("worker A took the sync", false, `no provider call from A within 30 s; log: ${saveLog(a)}`)
      ], {})
    }
    const killedAt = Date.now()
    a.child.kill("SIGKILL")
    const exit = await a.exited
    checks.push(
      check("worker A died of SIGKILL inside the connector", exit.signal === "SIGKILL", `exit ${JSON.stringify(exit)}`)
    )

    const stuck = await runOf()
    checks.push(
      check(
        "the run is left running under A's lease (attempt 1)",
        stuck.status === "running" && stuck.attempts === 1 && (stuck.lease_left_ms ?? 0) > 60_000,
        `status ${stuck.status}, attempts ${stuck.attempts}, lease ends in ${
          Math.round((stuck.lease_left_ms ?? 0) / 1000)
        } s`
      )
    )

    const b = worker("b")
    await b.waitFor("running recompute and syncs", 60_000)
    await sleep(o.leaseWatchMs)
    const whileLeased = await runOf()
    const bCallsWhileLeased = fake.calls.filter((c) => c.instance === "b" && c.site === site).length
    checks.push(
      check(
        "worker B leaves the run alone while the lease holds",
        whileLeased.status === "running" && whileLeased.attempts === 1 && bCallsWhileLeased === 0,
        `after ${o.leaseWatchMs} ms: status ${whileLeased.status}, attempts ${whileLeased.attempts}, B's provider ` +
          `calls ${bCallsWhileLeased}`
      )
    )

    // The 5 minutes pass: the lease is now over.
    await query(
      db.url,
      (sql) =>
        sql`UPDATE sync_runs SET lease_until = now() - interval '1 second' WHERE id = ${runId} AND status = 'running'`
    )
    const expiredAt = Date.now()
    const done = await eventually("worker B to finish the run", 30_000, async () => {
      const r = await runOf()
      return r.status === "succeeded" || r.status === "failed" ? r : undefined
    }).catch(() => null)
    const finishedAt = Date.now()
    const bCalls = fake.calls.filter((c) => c.instance === "b" && c.site === site).length
    checks.push(
      check(
        "after the lease, worker B takes the run over (attempt 2) and it succeeds",
        done !== null && done.status === "succeeded" && done.attempts === 2 && bCalls > 0,
        done === null
          ? "not finished 30 s after the lease ran out"
          : `status ${done.status}, attempts ${done.attempts}, error ${done.error}, B's provider calls ${bCalls}`
      )
    )
    const integration =
      (await query<{ status: string; last_success: boolean; last_error: string | null }>(db.url, (sql) =>
        sql`SELECT status, last_success_at IS NOT NULL AS last_success, last_error FROM integrations
          WHERE project_id = ${projectId} AND provider = 'plausible'`))[0]
    checks.push(
      check(
        "the integration is connected with a last success and no error",
        integration.status === "connected" && integration.last_success && integration.last_error === null,
        `status ${integration.status}, last success ${integration.last_success}, error ${integration.last_error}`
      )
    )
    const runs = await query<{ n: number }>(db.url, (sql) =>
      sql`SELECT count(*)::int AS n FROM sync_runs WHERE project_id = ${projectId}`)
    checks.push(
      check("one run in all (the kill neither lost it nor queued a second)", runs[0].n === 1, `${runs[0].n} run(s)`)
    )

    const saved = checks.every((c) =>
        c.ok
      )
      ? {}
      : { "worker B log": saveLog(b) }
    return result(FAULT, checks, {
      ...saved,
      "run attempts": done === null ? "unfinished" : `${done.attempts} (the killed one, then the takeover)`,
      "lease at the kill": `${Math.round((stuck.lease_left_ms ?? 0) / 1000)} s left (LEASE_MS = 5 min; fast-forwarded)`,
      "lease end → run finished by B": done === null ? "never" : `${finishedAt - expiredAt} ms`,
      "kill → lease end (the script's wait)": `${expiredAt - killedAt} ms`
    })
  })

if (isMain(import.meta.url)) runAsScript(FAULT, () => runWorkerKill())
