/**
 * The recompute worker on real PostgreSQL (DATABASE_URL, else a private embedded cluster): two workers
 * draining the queue at once compute every project exactly once and never one project concurrently
 * (project_jobs rows claimed FOR UPDATE SKIP LOCKED); a data write makes a project due again.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { MetricsRepo } from "../src/metrics/MetricsRepo.ts"
import { SignalsRepo } from "../src/snapshots/SignalsRepo.ts"
import { drainOnce } from "../src/worker/RecomputeWorker.ts"
import { recomputeLocked } from "../src/worker/Recompute.ts"
import { makeTestClock, START } from "./support/Harness.ts"
import { usePrivatePostgres } from "./support/PrivatePostgres.ts"
import { plantedTraffic, traffic, YESTERDAY } from "./fixtures/signals.ts"

// The fixtures' today (2026-11-20 12:00:30 UTC) for every "process"; sleeping still takes real time.
const time = makeTestClock(START)
const { instance } = usePrivatePostgres({ clock: time.clock, dirPrefix: "sitehealth-worker-" })

describe("RecomputeWorker", () => {
  it("two workers at once: every due project computed exactly once, never twice concurrently", async () => {
    const a = await instance()
    const b = await instance()
    const account = await a(createAccount({ name: "Workers", trialDays: 14 }))
    const ids: Array<string> = []
    for (let i = 0; i < 8; i++) {
      const p = await a(createProject({ accountId: account.id, name: `W${i}`, domain: `w${i}.example` }))
      await a(Effect.flatMap(MetricsRepo, (m) => m.writeDays(p.id, { traffic: plantedTraffic(30) })))
      ids.push(p.id)
    }
    const inFlight = new Set<string>()
    const computed: Array<string> = []
    let overlaps = 0
    // Slow computations make the two workers contend for the same rows.
    const observed = (projectId: string) =>
      Effect.sync(() => {
        if (inFlight.has(projectId)) overlaps++
        inFlight.add(projectId)
      }).pipe(
        Effect.andThen(Effect.sleep("40 millis")),
        Effect.andThen(recomputeLocked(projectId)),
        Effect.ensuring(Effect.sync(() => {
          inFlight.delete(projectId)
          computed.push(projectId)
        }))
      )
    const [doneA, doneB] = await Promise.all([a(drainOnce({ compute: observed })), b(drainOnce({ compute: observed }))])
    const ours = (xs: ReadonlyArray<string>) => xs.filter((x) => ids.includes(x))
    expect(overlaps).toBe(0)
    expect([...ours(doneA), ...ours(doneB)].sort()).toEqual([...ids].sort()) // each exactly once, between them
    expect(ours(computed).sort()).toEqual([...ids].sort())
    expect(ours(doneA).length).toBeGreaterThan(0) // both took part
    expect(ours(doneB).length).toBeGreaterThan(0)
    // Each project got its one anomaly signal.
    for (const id of ids) {
      const active = await a(Effect.flatMap(SignalsRepo, (s) => s.active(id)))
      expect(active.map((s) => s.kind)).toEqual(["anomaly_drop"])
    }

    // Nothing is due any more; a write to one project makes exactly that one due.
    expect(ours(await a(drainOnce()))).toEqual([])
    await b(Effect.flatMap(MetricsRepo, (m) => m.writeDays(ids[3], { traffic: [traffic(YESTERDAY, 100)] })))
    expect(ours(await b(drainOnce()))).toEqual([ids[3]])
    expect(await a(Effect.flatMap(SignalsRepo, (s) => s.active(ids[3])))).toEqual([]) // resolved
  }, 60_000)

  it("a computation that fails with a SQL error is postponed, and the worker goes on with the other projects", async () => {
    const a = await instance()
    const account = await a(createAccount({ name: "Failing", trialDays: 14 }))
    const broken = await a(createProject({ accountId: account.id, name: "Broken", domain: "broken.example" }))
    const fine = await a(createProject({ accountId: account.id, name: "Fine", domain: "fine.example" }))
    // Any other project still due from the test above is drained first.
    await a(drainOnce())
    await a(Effect.flatMap(MetricsRepo, (m) => m.writeDays(broken.id, { traffic: plantedTraffic(30) })))
    await a(Effect.flatMap(MetricsRepo, (m) => m.writeDays(fine.id, { traffic: plantedTraffic(30) })))
    const failing = (projectId: string) =>
      projectId === broken.id
        // A real SQL error inside the claim's transaction (the instance's context has the SqlClient).
        ? Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM no_such_table`).pipe(
          Effect.orDie, Effect.as(null)) as unknown as ReturnType<typeof recomputeLocked>
        : recomputeLocked(projectId)
    const done = await a(drainOnce({ compute: failing }))
    expect(done.filter((id) => id === broken.id || id === fine.id).sort()).toEqual([broken.id, fine.id].sort())
    expect((await a(Effect.flatMap(SignalsRepo, (s) => s.active(fine.id)))).map((s) => s.kind)).toEqual(["anomaly_drop"])
    // Postponed, not retried in a loop: nothing is due until the retry time.
    expect(await a(drainOnce({ compute: failing }))).toEqual([])
  }, 60_000)
})
