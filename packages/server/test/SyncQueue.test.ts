/**
 * The sync queue on real PostgreSQL (DATABASE_URL, else a private embedded cluster), with two "processes"
 * (two connection pools with their own repositories) sharing it: two workers never run one integration at
 * once and run each queued sync exactly once; a worker killed mid-run leaves its run to the lease, and the
 * run taken over after the lease ends with the same data as an uninterrupted one; credentials are stored
 * as AES-256-GCM ciphertext, never as text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { CredentialsCipher, makeCipher } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { nextSlot } from "../src/integrations/Schedule.ts"
import { SyncQueue } from "../src/integrations/SyncQueue.ts"
import { drainSyncs, LEASE_MS, runNextSync, scheduleSyncs } from "../src/worker/SyncRunner.ts"
import { type Instance, usePrivatePostgres } from "./support/PrivatePostgres.ts"
import { fakeDay, makeFakeConnector, runnerLayer, SECRET, storedDays, TEST_KEY } from "./support/SyncFakes.ts"
import { START } from "./support/TestApp.ts"

const { instance: sqlInstance } = usePrivatePostgres({ dirPrefix: "sitehealth-syncq-" })
/** One "process": its own pool and repositories, the test key; effects run under the test's TestClock. */
const instance = Effect.promise(() => sqlInstance(runnerLayer()))
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const setup = (run: Instance, n: number) =>
  Effect.gen(function*() {
    const account = yield* run.provide(createAccount({ name: "Syncs", trialDays: 14 }))
    const cipher = makeCipher(TEST_KEY)
    const ids: Array<string> = []
    for (let i = 0; i < n; i++) {
      const p = yield* run.provide(createProject({ accountId: account.id, name: `S${i}`, domain: `s${i}.example` }))
      const at = yield* now
      yield* run.provide(Effect.flatMap(Effect.service(IntegrationsRepo), (r) =>
        r.connect({
          projectId: p.id,
          provider: "plausible",
          credentials: cipher.encrypt({ apiKey: SECRET }),
          baseUrl: null,
          syncIntervalMinutes: null,
          now: at
        })))
      ids.push(p.id)
    }
    return ids
  })

const request = (projectId: string) =>
  Effect.flatMap(
    Effect.service(SyncQueue),
    (q) =>
      Effect.flatMap(now, (at) =>
        q.request({ projectId, provider: "plausible", mode: "incremental", requestedBy: "test", now: at }))
  )

describe("SyncQueue on PostgreSQL", () => {
  it.effect(
    "two workers: every queued run runs exactly once, never two at once for one integration",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const b = yield* instance
        const ids = yield* setup(a, 6)
        const fake = makeFakeConnector({ slowMs: 30 })
        const connectors = () => fake.connector
        // Both processes request at once: one pending run per integration.
        const requested = yield* Effect.all(ids.flatMap((id) => [a.provide(request(id)), b.provide(request(id))]), {
          concurrency: "unbounded"
        })
        expect(requested.filter((r) => !r.alreadyQueued)).toHaveLength(ids.length)
        // This test's runs only: another suite on the same database (DATABASE_URL) queues its own.
        const [doneA, doneB] = yield* Effect.all([
          a.provide(drainSyncs({ connectors, projectIds: ids })),
          b.provide(drainSyncs({ connectors, projectIds: ids }))
        ], { concurrency: 2 })
        const ours = [...doneA, ...doneB].filter((r) => ids.includes(r.projectId))
        expect(ours.map((r) => r.projectId).sort()).toEqual([...ids].sort())
        expect(ours.every((r) => r.status === "succeeded" && r.attempts === 1)).toBe(true)
        expect(fake.maxInFlight).toBe(1)
        expect(fake.calls.filter((c) => ids.includes(c.projectId))).toHaveLength(ids.length)
        expect(doneA.length).toBeGreaterThan(0)
        expect(doneB.length).toBeGreaterThan(0)
      }),
    60_000
  )

  it.effect(
    "a worker killed mid-run: its run is taken over after the lease and ends with the same data as an uninterrupted " +
      "run",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const b = yield* instance
        const [killed, control] = yield* setup(a, 2)
        const fake = makeFakeConnector()
        const connectors = () => fake.connector
        const projectIds = [killed, control]
        // The control project syncs without interruption.
        yield* a.provide(request(control))
        yield* a.provide(drainSyncs({ connectors, projectIds }))
        // Worker A takes the run and hangs inside the connector; then it is killed (no release: a crash).
        const started = Deferred.makeUnsafe<void>()
        const release = Deferred.makeUnsafe<void>()
        fake.behaviour = { kind: "hang", started, release }
        const { sync } = yield* a.provide(request(killed))
        const fiber = yield* Effect.forkChild(
          a.provide(runNextSync({ connectors, releaseOnInterrupt: false, projectIds }))
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        fake.behaviour = { kind: "ok" }
        const stuck = yield* b.provide(Effect.flatMap(Effect.service(SyncQueue), (q) => q.find(sync.id)))
        expect([stuck?.status, stuck?.attempts]).toEqual(["running", 1])
        // B finds nothing to do while the lease holds…
        expect((yield* b.provide(drainSyncs({ connectors, projectIds }))).filter((r) => r.id === sync.id)).toEqual([])
        // …and takes the run over once it has expired.
        yield* TestClock.adjust(LEASE_MS + 1_000)
        const [taken] = (yield* b.provide(drainSyncs({ connectors, projectIds }))).filter((r) => r.id === sync.id)
        expect([taken.status, taken.attempts]).toEqual(["succeeded", 2])
        const from = "2026-11-14"
        const to = "2026-11-19"
        expect(yield* b.provide(storedDays(killed, from, to))).toEqual(yield* b.provide(storedDays(control, from, to)))
        expect(yield* b.provide(storedDays(killed, from, to))).toEqual(
          ["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19"].map(fakeDay)
        )
      }),
    60_000
  )

  it.effect(
    "two instances scheduling at once: each due integration gets one run, at its own slot, and the runs record the " +
      "next slot",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const b = yield* instance
        const ids = yield* setup(a, 6)
        const fake = makeFakeConnector()
        const connectors = () => fake.connector
        const mine = (runs: ReadonlyArray<{ readonly projectId: string }>) =>
          runs.filter((r) => ids.includes(r.projectId))
        const schedule = (i: Instance) => i.provide(scheduleSyncs({ defaultIntervalMinutes: 60, projectIds: ids }))
        // Nothing is due before the slots; after an hour every one of them has come, whatever its minute.
        expect(mine(yield* schedule(a))).toEqual([])
        yield* TestClock.adjust(60 * 60_000)
        const [fromA, fromB] = yield* Effect.all([schedule(a), schedule(b)], { concurrency: 2 })
        expect([...mine(fromA), ...mine(fromB)].map((r) => r.projectId).sort()).toEqual([...ids].sort())
        // Both instances drain: each run once; each integration's next run is its next slot.
        yield* Effect.all([
          a.provide(drainSyncs({ connectors, projectIds: ids })),
          b.provide(drainSyncs({ connectors, projectIds: ids }))
        ], {
          concurrency: 2
        })
        const at = new Date(yield* Clock.currentTimeMillis)
        for (const id of ids) {
          const connection = yield* a.provide(
            Effect.flatMap(Effect.service(IntegrationsRepo), (r) => r.connection(id, "plausible"))
          )
          expect([connection?.integration.failures, connection?.integration.nextSyncAt?.toISOString()])
            .toEqual([0, nextSlot(id, "plausible", 60, at).toISOString()])
        }
        expect(mine(yield* schedule(b))).toEqual([])
      }),
    60_000
  )

  it.effect(
    "credentials are ciphertext at rest: no plaintext in the row, nonce + tag around it, and they decrypt only with " +
      "the key",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const a = yield* instance
        const [projectId] = yield* setup(a, 1)
        const rows = yield* a.provide(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`SELECT credentials, i::text AS whole FROM integrations i WHERE project_id = ${projectId}`))
        const stored = new Uint8Array((rows[0] as any).credentials)
        const plaintext = JSON.stringify({ apiKey: SECRET })
        expect(stored.length).toBe(12 + Buffer.byteLength(plaintext) + 16)
        expect(Buffer.from(stored).toString("latin1")).not.toContain("TOPSECRET")
        expect((rows[0] as any).whole).not.toContain("TOPSECRET")
        const connection = yield* a.provide(Effect.flatMap(Effect.service(IntegrationsRepo), (r) =>
          r.connection(projectId, "plausible")))
        expect(
          yield* a.provide(
            Effect.flatMap(Effect.service(CredentialsCipher), (c) =>
              c.decrypt(connection!.credentials!))
          )
        ).toEqual({ apiKey: SECRET })
        const wrong = yield* Effect.result(makeCipher(new Uint8Array(32)).decrypt(stored))
        expect(wrong._tag).toBe("Failure")
      }),
    60_000
  )
})
