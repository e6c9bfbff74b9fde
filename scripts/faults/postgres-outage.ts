/**
 * Fault: Postgres stopped and restarted under load.
 *
 *   npx node scripts/faults/postgres-outage.ts            (or `npm run faults`, which runs every fault)
 *
 * A private embedded Postgres (a temporary directory, a free port — never the machine's shared cluster), the
 * real server (main.ts, its worker in-process) on it, and a steady load of GETs and POST /expenses (each with a
 * unique description; which ones got 201 is recorded). Then: Postgres is stopped (fast shutdown: sessions cut,
 * open transactions rolled back) for OUTAGE_MS, started again on the same port, and the load goes on.
 *
 * Checks: every request that ran wholly inside the outage answered 503 in the envelope with Retry-After; none
 * answered 500 or went unanswered, before, during, across the transitions or after; /readyz went 503 during
 * and 200 after; the same server process served 2xx again by itself; every acknowledged (201) expense is in
 * the database afterwards (writes lost: 0) and each expense's data_version bump is there
 * (insert + bump are one statement); the in-process worker caught up once the database was back.
 */
import { eventually, sleep } from "./lib/common.ts"
import { call, expenseBody, formatCounts, type Outcome, pollReadiness, startLoad, statusCounts } from "./lib/http.ts"
import { dataVersion, query, seedAccount } from "./lib/postgres.ts"
import { saveLog } from "./lib/processes.ts"
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

export const FAULT = "Postgres stopped and restarted under load"

export interface OutageOptions extends Logs {
  /** Load before the outage. */
  readonly warmMs: number
  /** How long Postgres stays down. */
  readonly outageMs: number
  /** Load after Postgres is back. */
  readonly afterMs: number
  /** Concurrent GET loops and POST loops, and each loop's pause between requests. */
  readonly getLoops: number
  readonly postLoops: number
  readonly pauseMs: number
}

export const DEFAULTS: OutageOptions = {
  warmMs: 3_000,
  outageMs: 5_000,
  afterMs: 5_000,
  getLoops: 3,
  postLoops: 2,
  pauseMs: 25,
  log: stderrLog("postgres-outage")
}

/** A request's place in time relative to the outage. */
type Window = "before" | "stopping" | "outage" | "restarting" | "after"

export const runPostgresOutage = (overrides: Partial<OutageOptions> = {}): Promise<FaultResult> =>
  withFaultSetting(async ({ db, startServer }) => {
    const o = { ...DEFAULTS, ...overrides }
    o.log(`private postgres on 127.0.0.1:${db.port} (${db.dir})`)
    const { projectId, secret } = await seedAccount(db.url, "Outage")
    const initialVersion = await dataVersion(db.url, projectId)
    const srv = await startServer({ name: "server", worker: true })
    const pid = srv.proc.child.pid
    o.log(`server pid ${pid} on ${srv.base}`)

    const gets = [
      `/api/v1/projects`,
      `/api/v1/projects/${projectId}/expenses?limit=5`,
      `/api/v1/projects/${projectId}/health`
    ]
    const run = Math.random().toString(36).slice(2, 8)
    const load = startLoad({
      concurrency: o.getLoops + o.postLoops,
      pauseMs: o.pauseMs,
      next: (loop, n) => {
        if (loop < o.getLoops) return call(srv.base, "GET", gets[(loop + n) % gets.length], { token: secret })
        const description = `outage-${run}-${loop}-${n}`
        // Keyed, as the CLI and MCP send their POSTs: a refused one is retried below with the same key.
        return call(srv.base, "POST", `/api/v1/projects/${projectId}/expenses`, {
          token: secret,
          body: expenseBody(description),
          tag: description,
          idempotencyKey: description
        })
      }
    })
    const readiness = pollReadiness(srv.base, 200)

    await sleep(o.warmMs)
    const stopBegin = Date.now()
    await db.stop()
    const down = Date.now()
    o.log(`postgres stopped (${down - stopBegin} ms)`)
    await sleep(o.outageMs)
    const startBegin = Date.now()
    await db.start()
    const up = Date.now()
    o.log(`postgres started again (${up - startBegin} ms)`)
    await sleep(o.afterMs)
    const outcomes = await load.stop()
    const samples = await readiness.stop()
    const loadEnded = Date.now()

    const windowOf = (x: Outcome): Window =>
      x.endedAt <= stopBegin ?
        "before"
        : x.startedAt >= down && x.endedAt <= startBegin ?
        "outage"
        : x.startedAt >= up ?
        "after"
        : x.startedAt < down ?
        "stopping"
        : "restarting"
    const by = (w: Window) => outcomes.filter((x) => windowOf(x) === w)
    const ok2xx = (x: Outcome) => x.status !== null && x.status >= 200 && x.status < 300 && x.enveloped
    const good503 = (x: Outcome) =>
      x.status === 503 && x.enveloped && x.errorType === "unavailable" && x.retryAfter !== null &&
      /^\d+$/.test(x.retryAfter) && Number(x.retryAfter) > 0
    const sample = (
      xs: ReadonlyArray<Outcome>
    ) => (xs.length === 0
      ? ""
      : `; e.g. ${xs[0].method} ${xs[0].path} → ${xs[0].status ?? xs[0].failure} ${xs[0].body.slice(0, 200)}`)

    const before = by("before")
    const outage = by("outage")
    const after = by("after")
    const transitions = [...by("stopping"), ...by("restarting")]
    const checks: Array<Check> = []

    const badBefore = before.filter((x) => !ok2xx(x))
    checks.push(
      check(
        "baseline: every request before the outage answered 2xx",
        before.length > 0 && badBefore.length === 0,
        `${before.length} requests: ${formatCounts(statusCounts(before))}${sample(badBefore)}`
      )
    )

    const badOutage = outage.filter((x) => !good503(x))
    checks.push(
      check(
        "during the outage: every request answered 503 `unavailable` in the envelope with Retry-After",
        outage.length > 0 && badOutage.length === 0,
        `${outage.length} requests: ${formatCounts(statusCounts(outage))}; Retry-After ${
          [...new Set(outage.map((x) => x.retryAfter))].join(",")
        }${sample(badOutage)}`
      )
    )

    const badTransition = transitions.filter((x) => !ok2xx(x) && !good503(x))
    checks.push(
      check(
        "across the stop and the start: each request answered 2xx or the enveloped 503",
        badTransition.length === 0,
        `${transitions.length} requests: ${formatCounts(statusCounts(transitions))}${sample(badTransition)}`
      )
    )

    const fiveHundreds = outcomes.filter((x) => x.status !== null && x.status >= 500 && x.status !== 503)
    const unanswered = outcomes.filter((x) => x.status === null)
    checks.push(
      check(
        "no 500 (nor other 5xx but 503) and no request left unanswered",
        fiveHundreds.length === 0 && unanswered.length === 0,
        `${fiveHundreds.length} other 5xx, ${unanswered.length} unanswered (of ${outcomes.length})${
          sample([...fiveHundreds, ...unanswered])
        }`
      )
    )

    const redDuring = samples.filter((s) => s.at > down && s.at <= startBegin)
    const lastReady = samples[samples.length - 1]
    checks.push(
      check(
        "/readyz: 503 during the outage, 200 after",
        redDuring.length > 0 && redDuring.every((s) => s.status === 503) && lastReady?.status === 200,
        `${redDuring.length} probes during: ${
          [...new Set(redDuring.map((s) => s.status))].join(",")
        }; last probe: ${lastReady?.status}`
      )
    )

    const firstOk = after.filter(ok2xx).sort((a, b) => a.endedAt - b.endedAt)[0]
    const firstOkPost = after.filter((x) =>
      x.method === "POST" && x.status === 201
    ).sort((a, b) => a.endedAt - b.endedAt)[0]
    const firstReady = samples.filter((s) => s.at >= up && s.status === 200).sort((a, b) => a.at - b.at)[0]
    // Recovered means it stays recovered: everything in the last half of the after-window is 2xx.
    const settled = after.filter((x) => x.startedAt >= up + o.afterMs / 2)
    checks.push(
      check(
        "recovered by itself: the same process serves 2xx again",
        srv.proc.alive() && srv.proc.child.pid === pid &&
          firstOk !== undefined && settled.length > 0 && settled.every(ok2xx),
        `first 2xx ${firstOk ? firstOk.endedAt - up : "—"} ms after Postgres was up; ${after.length} requests after: ${
          formatCounts(statusCounts(after))
        }`
      )
    )

    // Writes: every 201 is in the database; nothing answered 503 was written anyway; each insert bumped the version.
    const posts = outcomes.filter((x) => x.method === "POST")
    const acknowledged = posts.filter((x) => x.status === 201).map((x) => x.tag!)
    const refused = posts.filter((x) => x.status !== 201).map((x) => x.tag!)
    const rows = await query<{ description: string }>(db.url, (sql) =>
      sql`SELECT description FROM expenses WHERE project_id = ${projectId} AND deleted_at IS NULL`)
    const stored = new Map<string, number>()
    for (const r of rows) {
      stored.set(r.description, (stored.get(r.description) ?? 0) + 1)
    }
    const lost = acknowledged.filter((d) =>
      !stored.has(d)
    )
    const duplicated = [...stored.entries()].filter(([, n]) => n > 1)
    const refusedButStored = refused.filter((d) => stored.has(d))
    checks.push(
      check(
        "no acknowledged write lost",
        lost.length === 0 && duplicated.length === 0,
        `${acknowledged.length} acknowledged (201), ${
          acknowledged.length - lost.length
        } found; lost ${lost.length}; duplicated ${duplicated.length}`
      )
    )
    const versionDelta = (await dataVersion(db.url, projectId)) - initialVersion
    checks.push(
      check(
        "no half-written expense: one data_version bump per stored expense",
        versionDelta === rows.length,
        `${rows.length} expenses stored, data_version moved by ${versionDelta}`
      )
    )

    // The clients of the refused writes retry them with the same key once the service is back. A key whose
    // claim was written before the outage cut its request short stays held ('running': 409 in progress)
    // until it counts as abandoned (IdempotencyRepo.ABANDONED_AFTER_MS, fast-forwarded here); then the retry
    // runs. Every refused write must end up stored exactly once.
    const path = `/api/v1/projects/${projectId}/expenses`
    const retry = (description: string) =>
      call(srv.base, "POST", path, {
        token: secret,
        body: expenseBody(description),
        tag: description,
        idempotencyKey: description
      })
    const retriedAtOnce: Array<Outcome> = []
    for (let i = 0; i < refused.length; i += 8) {
      retriedAtOnce.push(...(await Promise.all(refused.slice(i, i + 8).map(retry))))
    }
    const held = retriedAtOnce.filter((x) => x.status === 409).map((x) => x.tag!)
    if (held.length > 0) {
      await query(db.url, (sql) =>
        sql`UPDATE idempotency_keys SET created_at = created_at - interval '1 hour' WHERE status = 'running' AND key IN
            ${sql.in(held)}`)
    }
    const retriedLater: Array<Outcome> = []
    for (let i = 0; i < held.length; i += 8) {
      retriedLater.push(...(await Promise.all(held.slice(i, i + 8).map(retry))))
    }
    const finalRows = await query<{ description: string; n: number }>(
      db.url,
      (sql) =>
        sql`SELECT description, count(*)::int AS n FROM expenses WHERE project_id = ${projectId} AND deleted_at IS NULL
            GROUP BY description`
    )
    const finalCount = new Map(finalRows.map((r) => [r.description, r.n]))
    const notOnce = posts.filter((x) =>
      finalCount.get(x.tag!) !== 1
    ).map((x) => x.tag!)
    const retryAnswers = [...retriedAtOnce.filter((x) => x.status !== 409), ...retriedLater]
    checks.push(
      check(
        "each refused write, retried with its Idempotency-Key, is stored exactly once (and every write is)",
        notOnce.length === 0 && retryAnswers.every((x) => x.status === 201),
        `${refused.length} retried: at once ${
          formatCounts(statusCounts(retriedAtOnce))
        }; after their keys were abandoned ` +
          `${
            formatCounts(statusCounts(retriedLater))
          }; writes not stored exactly once: ${notOnce.length} of ${posts.length}`
      )
    )

    // The in-process worker: its round failed during the outage; once back it must catch up by itself.
    const caughtUp = await eventually("the worker to recompute the project", 30_000, async () => {
      const r = await query<{ behind: boolean }>(
        db.url,
        (sql) =>
          sql`SELECT j.computed_version IS DISTINCT FROM p.data_version AS behind
            FROM projects p LEFT JOIN project_jobs j ON j.project_id = p.id WHERE p.id = ${projectId}`
      )
      return r[0]?.behind === false ? Date.now() : undefined
    }).catch(() => null)
    checks.push(
      check(
        "the in-process worker caught up after the outage (project recomputed at its latest data_version)",
        caughtUp !== null,
        caughtUp === null ? "still behind 30 s after the load" : `${caughtUp - loadEnded} ms after the load ended`
      )
    )

    const log = srv.proc.output()
    const unexpected = log.split("unexpected error").length - 1
    checks.push(
      check(
        "the server logged no unexpected error (no 500 path taken)",
        unexpected === 0,
        `${unexpected} "unexpected error" lines`
      )
    )

    const saved = checks.every((c) => c.ok) ? {} : { "server log": saveLog(srv.proc) }
    return result(FAULT, checks, {
      ...saved,
      "outage (Postgres down)": `${startBegin - down} ms (+ ${down - stopBegin} ms to stop, ${
        up - startBegin
      } ms to start)`,
      "requests": `${outcomes.length}: ${formatCounts(statusCounts(outcomes))}`,
      "requests during the outage": `${outage.length}: ${formatCounts(statusCounts(outage))}`,
      "requests across the stop/start": `${transitions.length}: ${formatCounts(statusCounts(transitions))}`,
      "writes acknowledged / found / lost": `${acknowledged.length} / ${
        acknowledged.length - lost.length
      } / ${lost.length}`,
      // Not a loss: a commit whose answer the outage swallowed. The client was told 503 and will retry; the
      // Idempotency-Key makes that retry safe. Expected 0 (a fast shutdown lets a finished commit answer).
      "writes refused (503) yet stored": `${refusedButStored.length} of ${refused.length}`,
      "refused writes retried with their key → 201 at once / held (409) until abandoned": `${
        retriedAtOnce.filter((x) => x.status === 201).length
      } / ${held.length}`,
      "time to recover (Postgres up → first 2xx)": firstOk ? `${firstOk.endedAt - up} ms` : "never",
      "time to recover (Postgres up → first 201)": firstOkPost ? `${firstOkPost.endedAt - up} ms` : "never",
      "time to ready (Postgres up → /readyz 200)": firstReady ? `${firstReady.at - up} ms` : "never",
      "server log: database-unavailable warnings": log.split("database unavailable").length - 1
    })
  })

if (isMain(import.meta.url)) runAsScript(FAULT, () => runPostgresOutage())
