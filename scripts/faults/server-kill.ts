/**
 * Fault: the server process killed (SIGKILL: no drain, no finalizer) in the middle of a burst of writes.
 *
 *   npx node scripts/faults/server-kill.ts            (or `npm run faults`)
 *
 * A private embedded Postgres, the real server on it (worker off: nothing but the burst writes), BURST_LOOPS
 * loops POSTing expenses back to back, each with a unique description. After KILL_AFTER_MS the server gets
 * SIGKILL with requests in flight.
 *
 * Checks: every acknowledged (201) expense is in the database; every stored row is whole (the values sent)
 * and came with its data_version bump (insert and bump are ONE statement, so both or neither); Postgres holds
 * no session of the dead process (its open transactions rolled back, no lock left); a new server process on
 * the same database serves and takes writes at once. The requests cut off are "outcome unknown" to their
 * client: how many of them committed anyway is reported, and each is retried with its Idempotency-Key, as a
 * client resolves them: the retry must replay the ones that committed and write the others, once each (the
 * expense and its key's answer commit in one transaction, so a crash leaves both or neither).
 */
import { eventually, sleep } from "./lib/common.ts"
import { call, expenseBody, formatCounts, startLoad, statusCounts } from "./lib/http.ts"
import { dataVersion, query, seedAccount } from "./lib/postgres.ts"
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

export const FAULT = "Server killed (SIGKILL) mid-request"

export interface ServerKillOptions extends Logs {
  readonly loops: number
  readonly killAfterMs: number
}

export const DEFAULTS: ServerKillOptions = {
  loops: 8,
  killAfterMs: 2_000,
  log: stderrLog("server-kill")
}

export const runServerKill = (overrides: Partial<ServerKillOptions> = {}): Promise<FaultResult> =>
  withFaultSetting(async ({ db, startServer }) => {
    const o = { ...DEFAULTS, ...overrides }
    o.log(`private postgres on 127.0.0.1:${db.port}`)
    const { projectId, secret } = await seedAccount(db.url, "Kill")
    const initialVersion = await dataVersion(db.url, projectId)
    const first = await startServer({ name: "server", worker: false })
    o.log(`server pid ${first.proc.child.pid}; burst of ${o.loops} POST loops, SIGKILL after ${o.killAfterMs} ms`)

    const run = Math.random().toString(36).slice(2, 8)
    const path = `/api/v1/projects/${projectId}/expenses`
    const load = startLoad({
      concurrency: o.loops,
      pauseMs: 0,
      next: (loop, n) => {
        const description = `kill-${run}-${loop}-${n}`
        // The key is the description: a retry of this write sends both again.
        return call(first.base, "POST", path, {
          token: secret,
          body: expenseBody(description),
          tag: description,
          idempotencyKey: description,
          timeoutMs: 5_000
        })
      }
    })
    await sleep(o.killAfterMs)
    // Make sure requests are in flight at the kill: the loops never pause, so some always are.
    const killedAt = Date.now()
    first.proc.child.kill("SIGKILL")
    const exit = await first.proc.exited
    // The loops now only get refused connections: stop them at once.
    const outcomes = await load.stop()

    const checks: Array<Check> = []
    checks.push(check("the server died of SIGKILL", exit.signal === "SIGKILL", `exit ${JSON.stringify(exit)}`))

    // Postgres notices the closed sockets and rolls their transactions back; wait until none is left.
    const sessionsLeft = await eventually("the dead server's sessions to go", 10_000, async () => {
      const r = await query<{ n: number }>(
        db.url,
        (sql) =>
          sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sitehealth' AND pid <>
              pg_backend_pid()`
      )
      return r[0].n === 0 ? 0 : undefined
    }).catch(() => -1)
    checks.push(
      check(
        "Postgres holds no session (and no lock) of the dead process",
        sessionsLeft === 0,
        sessionsLeft === 0 ? "none within 10 s" : "sessions still open after 10 s"
      )
    )

    const acknowledged = outcomes.filter((x) => x.status === 201)
    const cut = outcomes.filter((x) => x.status === null && x.startedAt < killedAt)
    const other = outcomes.filter((x) => x.status !== null && x.status !== 201)
    const rows = await query<
      {
        description: string
        amount_minor: string
        category: string
        incurred_on: string
        recurrence: string
        currency: string
      }
    >(
      db.url,
      (sql) =>
        sql`SELECT description, amount_minor::text, category, to_char(incurred_on, 'YYYY-MM-DD') AS incurred_on,
            recurrence, currency
          FROM expenses WHERE project_id = ${projectId}`
    )
    const stored = new Map(rows.map((r) => [r.description, r]))
    const lost = acknowledged.filter((x) => !stored.has(x.tag!))
    checks.push(
      check(
        "no acknowledged write lost",
        acknowledged.length > 0 && lost.length === 0,
        `${acknowledged.length} acknowledged (201), ${acknowledged.length - lost.length} found, lost ${lost.length}`
      )
    )
    const sent = expenseBody("")
    const partial = rows.filter((r) =>
      Number(r.amount_minor) !== sent.amount || r.category !== sent.category || r.incurred_on !== sent.incurredOn ||
      r.recurrence !== sent.recurrence || r.currency !== "USD" || !r.description.startsWith(`kill-${run}-`)
    )
    const versionDelta = (await dataVersion(db.url, projectId)) - initialVersion
    checks.push(
      check(
        "no half-written row: each stored expense whole, each with its data_version bump",
        partial.length === 0 && versionDelta === rows.length,
        `${rows.length} rows, ${partial.length} differing from what was sent; data_version moved by ${versionDelta}`
      )
    )
    checks.push(
      check(
        "before the kill every answer was 201",
        other.length === 0,
        `other answers: ${formatCounts(statusCounts(other))}`
      )
    )
    const cutButCommitted = cut.filter((x) => stored.has(x.tag!)).length

    // A new process on the same database: serving, and writing, at once.
    const restartBegin = Date.now()
    // The setting's key and data dir, as the first had: the new process reads what the dead one stored.
    const second = await startServer({ name: "server-2", worker: false })
    const serving = Date.now()
    const after = await call(second.base, "POST", path, {
      token: secret,
      body: expenseBody(`kill-${run}-after`),
      tag: "after"
    })
    const list = await call(second.base, "GET", `${path}?limit=1`, { token: secret })
    checks.push(
      check(
        "a new server process on the same database serves and takes writes",
        after.status === 201 && list.status === 200,
        `POST → ${after.status}, GET → ${list.status}, serving ${serving - restartBegin} ms after start`
      )
    )

    // The client of each cut-off request does not know whether it was done: it retries with the same key, as
    // the CLI and MCP do. A keyed request commits its expense and its stored answer in one transaction, and the
    // dead process's transactions are gone (checked above), so every key is now either done (the expense
    // committed: the retry replays it) or free (nothing committed: the retry writes it) — never held. The retry
    // at once must answer 201, replayed exactly for the ones that had committed, and leave one expense each.
    const retry = (x: (typeof cut)[number]) =>
      call(second.base, "POST", path, { token: secret, body: expenseBody(x.tag!), tag: x.tag!, idempotencyKey: x.tag! })
    const retried = await Promise.all(cut.map(retry))
    const finalRows = await query<{ description: string; n: number }>(
      db.url,
      (sql) =>
        sql`SELECT description, count(*)::int AS n FROM expenses WHERE project_id = ${projectId} GROUP BY description`
    )
    const count = new Map(finalRows.map((r) => [r.description, r.n]))
    const duplicated = cut.filter((x) => (count.get(x.tag!) ?? 0) > 1).map((x) => x.tag!)
    const missing = cut.filter((x) => (count.get(x.tag!) ?? 0) === 0).map((x) => x.tag!)
    const replayedTags = new Set(retried.filter((x) => x.replayed).map((x) => x.tag!))
    const replayMismatch = cut.filter((x) => stored.has(x.tag!) !== replayedTags.has(x.tag!)).length
    checks.push(
      check(
        "a retry of each cut-off request with its Idempotency-Key writes it exactly once",
        duplicated.length === 0 && missing.length === 0 &&
          retried.every((x) => x.status === 201) && replayMismatch === 0,
        `${cut.length} retried at once: ${
          formatCounts(statusCounts(retried))
        } (${replayedTags.size} replayed, of ${cutButCommitted} that had committed;` +
          ` ${replayMismatch} replayed when not committed or run again when committed); stored twice: ` +
          `${duplicated.length}, missing: ${missing.length}`
      )
    )
    // Nothing of an unfinished request survives the crash: no key row without its answer.
    const unfinished = await query<{ n: number }>(
      db.url,
      (sql) => sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE status <> 'done' OR response_status IS NULL`
    )
    checks.push(
      check(
        "no idempotency key left unfinished by the crash",
        unfinished[0].n === 0,
        `${unfinished[0].n} rows not 'done'`
      )
    )

    return result(FAULT, checks, {
      "requests": `${outcomes.length}: ${formatCounts(statusCounts(outcomes))}`,
      "writes acknowledged / found / lost": `${acknowledged.length} / ${
        acknowledged.length - lost.length
      } / ${lost.length}`,
      "cut off by the kill (outcome unknown) / of them committed": `${cut.length} / ${cutButCommitted}`,
      "half-written rows": partial.length + Math.abs(versionDelta - rows.length),
      "cut-off writes retried with their key / stored twice": `${cut.length} / ${duplicated.length}`,
      "new process serving after": `${serving - restartBegin} ms`
    })
  })

if (isMain(import.meta.url)) runAsScript(FAULT, () => runServerKill())
