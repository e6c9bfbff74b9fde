/**
 * The sync queue on real PostgreSQL (DATABASE_URL, else a private embedded cluster), with two "processes"
 * (two connection pools with their own repositories) sharing it: two workers never run one integration at
 * once and run each queued sync exactly once; a worker killed mid-run leaves its run to the lease, and the
 * run taken over after the lease ends with the same data as an uninterrupted one; credentials are stored
 * as AES-256-GCM ciphertext, never as text.
 */
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { CredentialsCipher, makeCipher } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { SyncQueue } from "../src/integrations/SyncQueue.ts"
import { drainSyncs, LEASE_MS, runNextSync } from "../src/integrations/SyncRunner.ts"
import { makeTestClock, START } from "./support/Harness.ts"
import { usePrivatePostgres } from "./support/PrivatePostgres.ts"
import { fakeDay, makeFakeConnector, runnerLayer, SECRET, storedDays, TEST_KEY } from "./support/SyncFakes.ts"

const time = makeTestClock(START)
const { instance: sqlInstance } = usePrivatePostgres({ clock: time.clock, dirPrefix: "sitehealth-syncq-" })
/** One "process": its own pool and repositories, the test clock, the test key. */
const instance = () => sqlInstance(runnerLayer())

const setup = async (run: Awaited<ReturnType<typeof instance>>, n: number) => {
  const account = await run(createAccount({ name: "Syncs", trialDays: 14 }))
  const cipher = makeCipher(TEST_KEY)
  const ids: Array<string> = []
  for (let i = 0; i < n; i++) {
    const p = await run(createProject({ accountId: account.id, name: `S${i}`, domain: `s${i}.example` }))
    await run(Effect.flatMap(Effect.service(IntegrationsRepo), (r) => r.connect({
      projectId: p.id, provider: "plausible", credentials: cipher.encrypt({ apiKey: SECRET }), baseUrl: null,
      syncIntervalMinutes: null, now: new Date(time.now())
    })))
    ids.push(p.id)
  }
  return ids
}

const request = (projectId: string) =>
  Effect.flatMap(Effect.service(SyncQueue), (q) =>
    q.request({ projectId, provider: "plausible", mode: "incremental", requestedBy: "test", now: new Date(time.now()) }))

describe("SyncQueue on PostgreSQL", () => {
  it("two workers: every queued run runs exactly once, never two at once for one integration", async () => {
    const a = await instance()
    const b = await instance()
    const ids = await setup(a, 6)
    const fake = makeFakeConnector({ slowMs: 30 })
    const connectors = () => fake.connector
    // Both processes request at once: one pending run per integration.
    const requested = await Promise.all(ids.flatMap((id) => [a(request(id)), b(request(id))]))
    expect(requested.filter((r) => !r.alreadyQueued)).toHaveLength(ids.length)
    const [doneA, doneB] = await Promise.all([a(drainSyncs({ connectors })), b(drainSyncs({ connectors }))])
    const ours = [...doneA, ...doneB].filter((r) => ids.includes(r.projectId))
    expect(ours.map((r) => r.projectId).sort()).toEqual([...ids].sort())
    expect(ours.every((r) => r.status === "succeeded" && r.attempts === 1)).toBe(true)
    expect(fake.maxInFlight).toBe(1)
    expect(fake.calls.filter((c) => ids.includes(c.projectId))).toHaveLength(ids.length)
    expect(doneA.length).toBeGreaterThan(0)
    expect(doneB.length).toBeGreaterThan(0)
  }, 60_000)

  it("a worker killed mid-run: its run is taken over after the lease and ends with the same data as an uninterrupted run", async () => {
    const a = await instance()
    const b = await instance()
    const [killed, control] = await setup(a, 2)
    const fake = makeFakeConnector()
    const connectors = () => fake.connector
    // The control project syncs without interruption.
    await a(request(control))
    await a(drainSyncs({ connectors }))
    // Worker A takes the run and hangs inside the connector; then it is killed (no release: a crash).
    const started = Deferred.makeUnsafe<void>()
    const release = Deferred.makeUnsafe<void>()
    fake.behaviour = { kind: "hang", started, release }
    const { sync } = await a(request(killed))
    const fiber = Effect.runFork(a.provide(runNextSync({ connectors, releaseOnInterrupt: false })))
    await Effect.runPromise(Deferred.await(started))
    await Effect.runPromise(Fiber.interrupt(fiber))
    fake.behaviour = { kind: "ok" }
    const stuck = await b(Effect.flatMap(Effect.service(SyncQueue), (q) => q.find(sync.id)))
    expect([stuck?.status, stuck?.attempts]).toEqual(["running", 1])
    // B finds nothing to do while the lease holds…
    expect((await b(drainSyncs({ connectors }))).filter((r) => r.id === sync.id)).toEqual([])
    // …and takes the run over once it has expired.
    time.advance(LEASE_MS + 1_000)
    const [taken] = (await b(drainSyncs({ connectors }))).filter((r) => r.id === sync.id)
    expect([taken.status, taken.attempts]).toEqual(["succeeded", 2])
    const from = "2026-11-14"
    const to = "2026-11-19"
    expect(await b(storedDays(killed, from, to))).toEqual(await b(storedDays(control, from, to)))
    expect(await b(storedDays(killed, from, to))).toEqual(["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19"].map(fakeDay))
    time.advance(-(LEASE_MS + 1_000))
  }, 60_000)

  it("credentials are ciphertext at rest: no plaintext in the row, nonce + tag around it, and they decrypt only with the key", async () => {
    const a = await instance()
    const [projectId] = await setup(a, 1)
    const rows = await a(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`SELECT credentials, i::text AS whole FROM integrations i WHERE project_id = ${projectId}`))
    const stored = new Uint8Array((rows[0] as any).credentials)
    const plaintext = JSON.stringify({ apiKey: SECRET })
    expect(stored.length).toBe(12 + Buffer.byteLength(plaintext) + 16)
    expect(Buffer.from(stored).toString("latin1")).not.toContain("TOPSECRET")
    expect((rows[0] as any).whole).not.toContain("TOPSECRET")
    const connection = await a(Effect.flatMap(Effect.service(IntegrationsRepo), (r) => r.connection(projectId, "plausible")))
    expect(await a(Effect.flatMap(Effect.service(CredentialsCipher), (c) => c.decrypt(connection!.credentials!)))).toEqual({ apiKey: SECRET })
    const wrong = await Effect.runPromise(Effect.result(makeCipher(new Uint8Array(32)).decrypt(stored)))
    expect(wrong._tag).toBe("Failure")
  }, 60_000)
})
