/**
 * The recompute worker on real PostgreSQL (DATABASE_URL, else a private embedded cluster): two workers
 * draining the queue at once compute every project exactly once and never one project concurrently
 * (project_jobs rows claimed FOR UPDATE SKIP LOCKED); a data write makes a project due again. Each test
 * drains only its own projects, so another suite on the same database keeps its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { MetricsRepo } from "../src/metrics/MetricsRepo.ts"
import { recomputeLocked } from "../src/recompute/Recompute.ts"
import { SignalsRepo } from "../src/snapshots/SignalsRepo.ts"
import { drainOnce } from "../src/worker/RecomputeWorker.ts"
import { plantedTraffic, traffic, YESTERDAY } from "./fixtures/signals.ts"
import { usePrivatePostgres } from "./support/PrivatePostgres.ts"
import { START } from "./support/TestApp.ts"

const { instance: sqlInstance } = usePrivatePostgres({ dirPrefix: "sitehealth-worker-" })
/** One "process"; its effects run under the test's TestClock, set to the fixtures' today (2026-11-20 12:00:30 UTC). */
const instance = Effect.promise(() => sqlInstance())

describe("RecomputeWorker", () => {
  it.effect(
    "two workers at once: every due project computed exactly once, never twice concurrently",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const b = yield* instance
        const account = yield* a.provide(createAccount({ name: "Workers", trialDays: 14 }))
        const ids: Array<string> = []
        for (let i = 0; i < 8; i++) {
          const p = yield* a.provide(createProject({ accountId: account.id, name: `W${i}`, domain: `w${i}.example` }))
          yield* a.provide(Effect.flatMap(MetricsRepo, (m) => m.writeDays(p.id, { traffic: plantedTraffic(30) })))
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
            // Real time, so that the two workers' connections really contend.
            Effect.andThen(TestClock.withLive(Effect.sleep("40 millis"))),
            Effect.andThen(recomputeLocked(projectId)),
            Effect.ensuring(Effect.sync(() => {
              inFlight.delete(projectId)
              computed.push(projectId)
            }))
          )
        const [doneA, doneB] = yield* Effect.all([
          a.provide(drainOnce({ compute: observed, projectIds: ids })),
          b.provide(drainOnce({ compute: observed, projectIds: ids }))
        ], { concurrency: 2 })
        const ours = (xs: ReadonlyArray<string>) => xs.filter((x) => ids.includes(x))
        expect(overlaps).toBe(0)
        expect([...ours(doneA), ...ours(doneB)].sort()).toEqual([...ids].sort()) // each exactly once, between them
        expect(ours(computed).sort()).toEqual([...ids].sort())
        expect(ours(doneA).length).toBeGreaterThan(0) // both took part
        expect(ours(doneB).length).toBeGreaterThan(0)
        // Each project got its one anomaly signal.
        for (const id of ids) {
          const active = yield* a.provide(Effect.flatMap(SignalsRepo, (s) => s.active(id)))
          expect(active.map((s) => s.kind)).toEqual(["anomaly_drop"])
        }

        // Nothing is due any more; a write to one project makes exactly that one due.
        expect(ours(yield* a.provide(drainOnce({ projectIds: ids })))).toEqual([])
        yield* b.provide(
          Effect.flatMap(MetricsRepo, (m) => m.writeDays(ids[3], { traffic: [traffic(YESTERDAY, 100)] }))
        )
        expect(ours(yield* b.provide(drainOnce({ projectIds: ids })))).toEqual([ids[3]])
        expect(yield* a.provide(Effect.flatMap(SignalsRepo, (s) => s.active(ids[3])))).toEqual([]) // resolved
      }),
    60_000
  )

  it.effect(
    "a computation that fails with a SQL error is postponed, and the worker goes on with the other projects",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const account = yield* a.provide(createAccount({ name: "Failing", trialDays: 14 }))
        const broken = yield* a.provide(
          createProject({ accountId: account.id, name: "Broken", domain: "broken.example" })
        )
        const fine = yield* a.provide(createProject({ accountId: account.id, name: "Fine", domain: "fine.example" }))
        // Only this test's projects: another suite sharing the database keeps its own (and its own fakes).
        const projectIds = [broken.id, fine.id]
        yield* a.provide(drainOnce({ projectIds }))
        yield* a.provide(Effect.flatMap(MetricsRepo, (m) => m.writeDays(broken.id, { traffic: plantedTraffic(30) })))
        yield* a.provide(Effect.flatMap(MetricsRepo, (m) => m.writeDays(fine.id, { traffic: plantedTraffic(30) })))
        const failing = (projectId: string) =>
          projectId === broken.id
            // A real SQL error inside the claim's transaction (the instance's context has the SqlClient).
            ? Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM no_such_table`).pipe(
              Effect.orDie,
              Effect.as(null)
            ) as unknown as ReturnType<typeof recomputeLocked>
            : recomputeLocked(projectId)
        const done = yield* a.provide(drainOnce({ compute: failing, projectIds }))
        expect(done.filter((id) => id === broken.id || id === fine.id).sort()).toEqual([broken.id, fine.id].sort())
        expect((yield* a.provide(Effect.flatMap(SignalsRepo, (s) => s.active(fine.id)))).map((s) => s.kind)).toEqual([
          "anomaly_drop"
        ])
        // Postponed, not retried in a loop: nothing is due until the retry time.
        expect(yield* a.provide(drainOnce({ compute: failing, projectIds }))).toEqual([])
      }),
    60_000
  )
})
