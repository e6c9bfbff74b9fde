/**
 * Faults, kept from rotting in `npm test` (the full scenarios are `npm run faults`, scripts/faults/):
 *
 * 0. Which database failures are "retry later" (503 + Retry-After) rather than a bug (500).
 * 1. Postgres stopped and restarted under load — scripts/faults/postgres-outage.ts itself, with shorter phases:
 *    a private embedded Postgres, the real server process, GETs and POST /expenses; every request during the
 *    outage 503 + Retry-After in the envelope, no 500, /readyz red then green, recovery without a restart, no
 *    acknowledged write lost.
 * 2. A provider that hangs, stalls mid-body, drops the connection or answers garbage — the real Plausible
 *    connector and ProviderHttp through the real sync runner on a private Postgres, behind a front that
 *    misbehaves on demand: the run fails cleanly (transient faults retried, the third attempt final; garbage
 *    final at once), the integration shows the error, and the data and cursor of the last good sync stay.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type FakePlausible, startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { runPostgresOutage } from "@sitehealth/faults/postgres-outage"
import { Clock, Effect, Layer } from "effect"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { isTransientDatabaseFailure } from "../src/http/RequestErrors.ts"
import { CredentialsCipher, makeCipher } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { makePlausibleConnector } from "../src/integrations/plausible/PlausibleConnector.ts"
import { ProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { SyncQueue } from "../src/integrations/SyncQueue.ts"
import type { SyncRunRecord } from "../src/store/Records.ts"
import { TrafficRepo } from "../src/traffic/TrafficRepo.ts"
import { MAX_ATTEMPTS, retryDelayMs, runNextSync } from "../src/worker/SyncRunner.ts"
import {
  BERLIN,
  PLAUSIBLE_DATA,
  PLAUSIBLE_KEY,
  PLAUSIBLE_SITE,
  PLAUSIBLE_STORED_SPAN
} from "./fixtures/plausibleFixtures.ts"
import { type Instance, usePrivatePostgres } from "./support/PrivatePostgres.ts"
import { TEST_KEY } from "./support/SyncFakes.ts"
import { START } from "./support/TestApp.ts"
import { followRealTimeFrom } from "./support/TestTime.ts"

describe("which database failures answer 503 (retry) rather than 500", () => {
  const unknown = (code: string | undefined) =>
    new SqlError({
      reason: new UnknownError({
        cause: Object.assign(new Error("pg said no"), code === undefined ? {} : { code }),
        message: "PgConnection: Query failed",
        operation: "query"
      })
    })
  it("a restart's SQLSTATEs (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) and connection errors are transient", () => {
    // 57P03 is "the database system is shutting down / starting up": seen on every restart (the outage above).
    for (const code of ["57P01", "57P02", "57P03"]) expect(isTransientDatabaseFailure(unknown(code)), code).toBe(true)
    expect(
      isTransientDatabaseFailure(
        new SqlError({
          reason: new ConnectionError({
            cause: new Error("ECONNREFUSED"),
            message: "PgConnection: Failed to connect",
            operation: "connect"
          })
        })
      )
    ).toBe(true)
  })
  it("bugs stay 500: another SQLSTATE, no SQLSTATE, or not a SqlError", () => {
    for (const code of ["57P04", "42P01", "23502", undefined]) {
      expect(isTransientDatabaseFailure(unknown(code)), String(code)).toBe(false)
    }
    expect(isTransientDatabaseFailure(new Error("57P03"))).toBe(false)
  })
})

describe("Postgres stopped and restarted under load (scripts/faults/postgres-outage.ts, shortened)", () => {
  it(
    "503 + Retry-After during the outage, no 500, /readyz red then green, recovers by itself, no acknowledged write " +
      "lost",
    async () => {
      const outcome = await runPostgresOutage({
        warmMs: 1_500,
        outageMs: 3_000,
        afterMs: 4_000,
        getLoops: 2,
        postLoops: 2,
        pauseMs: 40,
        log: () => {}
      })
      console.log(`faults: ${outcome.fault}: ${JSON.stringify(outcome.figures)}`)
      expect(outcome.checks.filter((c) => !c.ok)).toEqual([])
      expect(outcome.checks.length).toBeGreaterThanOrEqual(10)
    },
    120_000
  )
})

// ---------------------------------------------------------------------------------------------------------
// Providers that misbehave

/**
 * How the front answers one request: pass it to the fake Plausible; never answer; send the headers and part
 * of the body, then nothing; drop the connection; or a 200 whose body is not JSON.
 */
type Mode = "pass" | "hang" | "stall" | "reset" | "garbage"

// The fixtures' today under each test's TestClock, moving with real time: ProviderHttp's timeouts are real
// waits on real sockets, and a retry's delay is a `TestClock.adjust`.
const { instance: sqlInstance } = usePrivatePostgres({ dirPrefix: "sitehealth-faults-" })
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

let fake: FakePlausible
let front: Http.Server
let frontUrl = ""
/** The mode of every request from now on, unless `plan` has one queued for it. */
let mode: Mode = "pass"
const plan: Array<Mode> = []
const served: Array<Mode> = []

beforeAll(async () => {
  fake = await startFakePlausible({ apiKey: PLAUSIBLE_KEY, siteId: PLAUSIBLE_SITE, data: PLAUSIBLE_DATA() })
  front = Http.createServer((req, res) => {
    const m = plan.shift() ?? mode
    served.push(m)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      if (m === "hang") return // the socket stays open, nothing is ever sent
      if (m === "reset") return void req.socket.destroy()
      if (m === "stall") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100000" })
        return void res.write("{\"results\": [{\"dimensions\": [\"2026-11-")
      }
      if (m === "garbage") {
        res.writeHead(200, { "content-type": "application/json" })
        return void res.end("<html><body>502 Bad Gateway (but as a 200)</body></html>")
      }
      const upstream = await fetch(`${fake.url}${req.url}`, {
        method: req.method!,
        headers: { "content-type": "application/json", authorization: req.headers.authorization ?? "" },
        ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: Buffer.concat(chunks) })
      })
      res.writeHead(upstream.status, { "content-type": "application/json" })
      res.end(await upstream.text())
    })
  })
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve))
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`
})

afterAll(async () => {
  front.closeAllConnections()
  await new Promise<void>((resolve) => front.close(() => resolve()))
  await fake.close()
})

/** Short timeouts so that a hang costs well under a second per attempt; retries inside one attempt: 2. */
const TIMEOUT_MS = 300
const runner = Effect.promise(() =>
  sqlInstance(Layer.mergeAll(
    CredentialsCipher.layer(TEST_KEY),
    ProviderHttp.layer({ timeoutMs: TIMEOUT_MS, maxAttempts: 2, backoffBaseMs: 5, maxWaitMs: 50 })
  ))
)
const connectors = (
  provider: string
) => (provider === "plausible" ? makePlausibleConnector({ historyMonths: 1, pageLimit: 2 }) : undefined)

/** Everything the connector stored for the project. */
const stored = (projectId: string) =>
  Effect.flatMap(Effect.service(TrafficRepo), (t) => t.read(projectId, PLAUSIBLE_STORED_SPAN))

/** A project with Plausible connected through the front, and one good full sync stored. */
const syncedProject = (run: Instance) =>
  Effect.gen(function*() {
    mode = "pass"
    const account = yield* run.provide(createAccount({ name: "Provider faults" }))
    const project = yield* run.provide(
      createProject({ accountId: account.id, name: "Shop", domain: PLAUSIBLE_SITE, timezone: BERLIN, currency: "EUR" })
    )
    const at = yield* now
    yield* run.provide(Effect.flatMap(Effect.service(IntegrationsRepo), (r) =>
      r.connect({
        projectId: project.id,
        provider: "plausible",
        credentials: makeCipher(TEST_KEY).encrypt({ api_key: PLAUSIBLE_KEY, site_id: PLAUSIBLE_SITE }),
        baseUrl: frontUrl,
        syncIntervalMinutes: null,
        now: at
      })))
    yield* request(run, project.id, "full")
    // This file's runs only: another suite on the same database (DATABASE_URL) queues its own, with its own key.
    const first = yield* run.provide(runNextSync({ connectors, projectIds: [project.id] }))
    expect(first?.status, first?.error ?? "").toBe("succeeded")
    return project.id
  })

const request = (run: Instance, projectId: string, runMode: "full" | "incremental" = "incremental") =>
  run.provide(
    Effect.flatMap(Effect.service(SyncQueue), (q) =>
      Effect.flatMap(now, (at) =>
        q.request({ projectId, provider: "plausible", mode: runMode, requestedBy: "test", now: at })))
  )

/** What must not move when a sync fails: the stored rows and the cursor the next run starts from. */
const lastGood = (run: Instance, projectId: string) =>
  run.provide(Effect.gen(function*() {
    const connection = yield* (yield* IntegrationsRepo).connection(projectId, "plausible")
    return { data: yield* stored(projectId), cursor: connection?.state ?? null }
  }))

const integrationOf = (run: Instance, projectId: string) =>
  run.provide(
    Effect.map(
      Effect.flatMap(Effect.service(IntegrationsRepo), (r) => r.all(projectId)),
      (all) => all.find((i) => i.provider === "plausible")!
    )
  )

/** On a clock following real time from START: a runner, a project synced once, and its last good data and cursor. */
const syncedWithLastGood = Effect.gen(function*() {
  yield* followRealTimeFrom(START)
  const run = yield* runner
  const projectId = yield* syncedProject(run)
  return { run, projectId, before: yield* lastGood(run, projectId) }
})

describe("a provider that hangs, stalls or drops the connection", () => {
  it.effect(
    "each attempt times out (bounded), is retried later, and the third fails the run; the last good data and cursor " +
      "stay",
    () =>
      Effect.gen(function*() {
        const { before, projectId, run } = yield* syncedWithLastGood
        expect(before.data.days.length).toBeGreaterThan(0)
        // New data upstream: anything written by a failing run would show.
        fake.data = { ...PLAUSIBLE_DATA(), days: { ...PLAUSIBLE_DATA().days, "2026-11-19": [99, 99, 99, 0, 0] } }
        const { sync } = yield* request(run, projectId, "full")

        const attempts: Array<
          { readonly run: SyncRunRecord | null; readonly ms: number; readonly served: ReadonlyArray<Mode> }
        > = []
        for (const [n, fault] of (["hang", "stall", "reset"] as const).entries()) {
          mode = fault
          served.length = 0
          const t = Date.now()
          attempts.push({
            run: yield* run.provide(runNextSync({ connectors, projectIds: [projectId] })),
            ms: Date.now() - t,
            served: [...served]
          })
          // The retry is due after its delay (1 min, then 2 min).
          yield* TestClock.adjust(retryDelayMs(n + 1))
        }
        mode = "pass"

        expect(attempts.map((a) => [a.run?.id, a.run?.status, a.run?.attempts])).toEqual([
          [sync.id, "queued", 1],
          [sync.id, "queued", 2],
          [sync.id, "failed", MAX_ATTEMPTS]
        ])
        // Every request of an attempt met the fault; ProviderHttp tried each twice, then gave up.
        expect(attempts.map((a) => [...new Set(a.served)])).toEqual([["hang"], ["stall"], ["reset"]])
        expect(attempts[0].run?.error).toMatch(
          new RegExp(`^No answer from ${frontUrl}/api/v2/query within ${TIMEOUT_MS} ms`)
        )
        expect(attempts[1].run?.error).toMatch(new RegExp(`within ${TIMEOUT_MS} ms`))
        expect(attempts[2].run?.error).toMatch(/^Could not reach /)
        // Bounded: a hung provider costs each attempt its timeouts, not forever.
        for (const a of attempts.slice(0, 2)) expect(a.ms).toBeLessThan(2 * TIMEOUT_MS + 1_500)

        expect(yield* integrationOf(run, projectId)).toMatchObject({
          status: "error",
          lastError: attempts[2].run?.error
        })
        expect(yield* lastGood(run, projectId)).toEqual(before)

        // The provider is back: the next run succeeds from the kept cursor, and the error clears.
        yield* request(run, projectId)
        const recovered = yield* run.provide(runNextSync({ connectors, projectIds: [projectId] }))
        expect(recovered?.status, recovered?.error ?? "").toBe("succeeded")
        expect(yield* integrationOf(run, projectId)).toMatchObject({ status: "connected", lastError: null })
        fake.data = PLAUSIBLE_DATA()
      }),
    60_000
  )
})

describe("a provider that answers garbage mid-run", () => {
  it.effect(
    "fails the run at once (not retried): integration error, nothing of the run written, the last good data and " +
      "cursor stay",
    () =>
      Effect.gen(function*() {
        const { before, projectId, run } = yield* syncedWithLastGood
        fake.data = { ...PLAUSIBLE_DATA(), days: { ...PLAUSIBLE_DATA().days, "2026-11-19": [99, 99, 99, 0, 0] } }
        const { sync } = yield* request(run, projectId, "full")
        // The first pages come back fine, the third is an HTML page with status 200.
        plan.push("pass", "pass", "garbage")
        served.length = 0
        const failed = yield* run.provide(runNextSync({ connectors, projectIds: [projectId] }))
        expect(served.slice(0, 3)).toEqual(["pass", "pass", "garbage"])
        expect([failed?.id, failed?.status, failed?.attempts]).toEqual([sync.id, "failed", 1])
        expect(failed?.error).toMatch(/answered 200 with a body that is not JSON/)
        expect(yield* integrationOf(run, projectId)).toMatchObject({ status: "error", lastError: failed?.error })
        expect(yield* lastGood(run, projectId)).toEqual(before)
        plan.length = 0
        fake.data = PLAUSIBLE_DATA()
      }),
    60_000
  )
})
