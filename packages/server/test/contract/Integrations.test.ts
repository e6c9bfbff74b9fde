/**
 * Integrations over the real router, on both stores: the list (status, last success, last run, last
 * error — never a credential), queueing a sync (202, one pending run per integration, 404 when not
 * connected), the runner carrying runs to their end (success with counts and a cursor; a failure that
 * leaves the data as it was; transient failures retried, the third one final), the scheduler, and the
 * dashboard-only actions (403).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { nextSlot, slotOffsetMs } from "../../src/integrations/Schedule.ts"
import type { IntegrationRecord } from "../../src/store/Records.ts"
import { drainSyncs, scheduleSyncs } from "../../src/worker/SyncRunner.ts"
import { expectError } from "../support/Expect.ts"
import { fakeDay, makeFakeConnector, runnerLayer, SECRET, storedDays, TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Integrations", (it) => {
  const fake = makeFakeConnector()
  const lookup = (provider: string) => (provider === "plausible" ? fake.connector : undefined)
  // These projects' runs only: the postgres contract files share one database, and another file's runs (the
  // demo's real connections among them) are not this file's to run with these fakes.
  const drain = (...projectIds: [string, ...Array<string>]) =>
    h.run(drainSyncs({ connectors: lookup, projectIds }).pipe(Effect.provide(runnerLayer())))

  /** Connects like the admin CLI does: credentials encrypted with the test key. */
  const connectEncrypted = (
    projectId: string,
    provider: string,
    credentials: Record<string, string> = { apiKey: SECRET },
    syncIntervalMinutes: number | null = null
  ) =>
    h.run(Effect.gen(function*() {
      const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
      return yield* (yield* IntegrationsRepo).connect({
        projectId,
        provider,
        credentials: cipher.encrypt(credentials),
        baseUrl: null,
        syncIntervalMinutes,
        now: new Date(yield* h.now)
      })
    }))

  const upsert = (projectId: string, provider: string, extra: Partial<IntegrationRecord> = {}) =>
    h.run(Effect.gen(function*() {
      const repo = yield* IntegrationsRepo
      return yield* repo.upsert({
        projectId,
        provider,
        status: "connected",
        connectedAt: new Date(yield* h.now),
        lastSyncedAt: null,
        lastError: null,
        ...extra
      })
    }))

  const integrationsPath = (projectId: string) => `/api/v1/projects/${projectId}/integrations`

  const listIntegrations = (projectId: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.api.integrations.listIntegrations({ params: { id: projectId } }, { token })
      expect(r.status, r.text).toBe(200)
      expect(r.text).not.toContain("TOPSECRET")
      return r.json.data.integrations as Array<any>
    })
  const requestSync = (projectId: string, provider: string, token: string, body?: unknown) =>
    Effect.gen(function*() {
      const r = yield* h.raw("POST", `/api/v1/projects/${projectId}/integrations/${provider}/sync`, {
        token,
        ...(body === undefined ? {} : { body })
      })
      expect(r.status, r.text).toBe(202)
      return r.json.data as { sync: any; alreadyQueued: boolean }
    })

  /** A new account whose first project has Plausible (the fake connector) connected. */
  const withPlausible = () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      yield* connectEncrypted(projectId, "plausible")
      return { projectId, secret }
    })
  /** The same, synced once to success. */
  const syncedOnce = () =>
    Effect.gen(function*() {
      fake.behaviour = { kind: "ok" }
      const connected = yield* withPlausible()
      yield* requestSync(connected.projectId, "plausible", connected.secret)
      yield* drain(connected.projectId)
      return connected
    })

  const notConnected = (provider: string, kind: string) => ({
    provider,
    kind,
    status: "not_connected",
    connectedAt: null,
    lastSuccessAt: null,
    lastRun: null,
    lastError: null,
    syncIntervalMinutes: null,
    nextSyncAt: null,
    consecutiveFailures: 0
  })

  describe("GET /projects/{id}/integrations", () => {
    it.effect("lists stripe, plausible and google-search-console, all not_connected by default", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.api.integrations.listIntegrations({ params: { id: projects[0].id } }, { token: secret })
        expect(r.status, r.text).toBe(200)
        expect(r.json).toEqual({
          status: "success",
          data: {
            projectId: projects[0].id,
            integrations: [
              notConnected("stripe", "payments"),
              notConnected("plausible", "analytics"),
              notConnected("google-search-console", "search")
            ]
          }
        })
      }))

    it.effect("shows a connected integration (with the default or its own interval), and an errored one", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const connectedAt = new Date((yield* h.now) - 86_400_000)
        const lastSyncedAt = new Date((yield* h.now) - 3_600_000)
        yield* upsert(projects[0].id, "stripe", { connectedAt, lastSyncedAt })
        yield* upsert(projects[0].id, "google-search-console", {
          status: "error",
          lastError: "API key revoked",
          syncIntervalMinutes: 15
        })
        const list = yield* listIntegrations(projects[0].id, secret)
        expect(list.map((i) => i.provider)).toEqual(["stripe", "plausible", "google-search-console"])
        expect(list[0]).toEqual({
          provider: "stripe",
          kind: "payments",
          status: "connected",
          connectedAt: connectedAt.toISOString(),
          lastSuccessAt: lastSyncedAt.toISOString(),
          lastRun: null,
          lastError: null,
          syncIntervalMinutes: 60,
          // Never scheduled yet: its first slot after the connection (integrations/Schedule.ts).
          nextSyncAt: nextSlot(projects[0].id, "stripe", 60, connectedAt).toISOString(),
          consecutiveFailures: 0
        })
        expect(list[2]).toMatchObject({ status: "error", lastError: "API key revoked", syncIntervalMinutes: 15 })
      }))

    it.effect("needs integrations:read and the project in the token's scope", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount({ projects: 2 })
        const noRead = yield* h.mint(account.id, { permissions: ["projects:read", "integrations:sync"] })
        const r = yield* h.api.integrations.listIntegrations({ params: { id: projects[0].id } }, {
          token: noRead.secret
        })
        expectError(r, 403, "missing_permission")
        expect(r.json.error.permission).toBe("integrations:read")
        const scoped = yield* h.mint(account.id, { projects: [projects[0].id] })
        expectError(
          yield* h.api.integrations.listIntegrations({ params: { id: projects[1].id } }, { token: scoped.secret }),
          403,
          "project_out_of_scope"
        )
        expectError(
          yield* h.api.integrations.listIntegrations({ params: { id: "prj_doesnotexist" } }, { token: scoped.secret }),
          404
        )
      }))
  })

  describe("POST /projects/{id}/integrations/{provider}/sync", () => {
    it.effect("queues a run (202), returns the same one while it is pending, and the list shows it as lastRun", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* withPlausible()
        const first = yield* requestSync(projectId, "plausible", secret)
        expect(first.alreadyQueued).toBe(false)
        expect(first.sync).toEqual({
          id: expect.stringMatching(/^syn_/),
          provider: "plausible",
          mode: "incremental",
          status: "queued",
          requestedAt: new Date(yield* h.now).toISOString(),
          startedAt: null,
          finishedAt: null,
          counts: null,
          error: null
        })
        yield* TestClock.adjust(1_000)
        const second = yield* requestSync(projectId, "plausible", secret, { mode: "full" })
        expect(second).toEqual({ sync: first.sync, alreadyQueued: true })
        const list = yield* listIntegrations(projectId, secret)
        expect(list[1].lastRun).toEqual(first.sync)
        expect(list[0].lastRun).toBeNull()
      }))

    it.effect("accepts {mode:'full'} and {}, and rejects an unknown mode or field with 400 (nothing queued)", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* withPlausible()
        yield* connectEncrypted(projectId, "stripe")
        const badMode = yield* h.raw("POST", `/api/v1/projects/${projectId}/integrations/${"plausible"}/sync`, {
          token: secret,
          body: { mode: "x" }
        })
        expectError(badMode, 400, "invalid_request")
        expect(badMode.json.error.issues.map((i: any) => i.path)).toContain("body.mode")
        expectError(
          yield* h.raw("POST", `/api/v1/projects/${projectId}/integrations/${"plausible"}/sync`, {
            token: secret,
            body: { mdoe: "full" }
          }),
          400,
          "invalid_request"
        )
        expectError(
          yield* h.raw("POST", `/api/v1/projects/${projectId}/integrations/${"plausible"}/sync`, {
            token: secret,
            rawBody: "{mode"
          }),
          400,
          "invalid_json"
        )
        expect((yield* listIntegrations(projectId, secret)).every((i) => i.lastRun === null)).toBe(true)
        expect((yield* requestSync(projectId, "plausible", secret, { mode: "full" })).sync).toMatchObject({
          mode: "full",
          status: "queued"
        })
        expect((yield* requestSync(projectId, "stripe", secret, {})).sync).toMatchObject({
          mode: "incremental",
          status: "queued"
        })
      }))

    it.effect("queues one run per integration under concurrent requests, apart per project", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        yield* connectEncrypted(projects[0].id, "plausible")
        yield* connectEncrypted(projects[1].id, "plausible")
        const results = yield* Effect.all(
          Array.from({ length: 5 }, () =>
            h.api.integrations.syncIntegration(
              { params: { id: projects[0].id, provider: "plausible" }, payload: null },
              { token: secret }
            )),
          { concurrency: "unbounded" }
        )
        for (const r of results) expect(r.status, r.text).toBe(202)
        expect(new Set(results.map((r) => r.json.data.sync.id)).size).toBe(1)
        expect(results.filter((r) => r.json.data.alreadyQueued === false)).toHaveLength(1)
        const other = yield* requestSync(projects[1].id, "plausible", secret)
        expect(other.alreadyQueued).toBe(false)
        expect(other.sync.id).not.toBe(results[0].json.data.sync.id)
      }))

    it.effect("answers 404 for a provider that is not connected, an unknown or old provider name, and a foreign project", () =>
      Effect.gen(function*() {
        const other = yield* h.newAccount()
        yield* connectEncrypted(other.projects[0].id, "plausible")
        const { projects, secret } = yield* h.newAccount()
        yield* connectEncrypted(projects[0].id, "plausible")
        expectError(
          yield* h.api.integrations.syncIntegration({
            params: { id: projects[0].id, provider: "stripe" },
            payload: null
          }, { token: secret }),
          404,
          "not_found"
        )
        for (const p of ["paypal", "Plausible", "google_search_console", "google-search-console", "demo"]) {
          expectError(
            yield* h.api.integrations.syncIntegration({ params: { id: projects[0].id, provider: p }, payload: null }, {
              token: secret
            }),
            404,
            "not_found"
          )
        }
        expectError(
          yield* h.api.integrations.syncIntegration({
            params: { id: "prj_doesnotexist", provider: "plausible" },
            payload: null
          }, { token: secret }),
          404
        )
        expectError(
          yield* h.api.integrations.syncIntegration({
            params: { id: other.projects[0].id, provider: "plausible" },
            payload: null
          }, { token: secret }),
          404
        )
        expect((yield* listIntegrations(projects[0].id, secret)).every((i) => i.lastRun === null)).toBe(true)
      }))

    it.effect("needs integrations:sync: 403 naming the permission, and nothing is queued", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        yield* connectEncrypted(projects[0].id, "plausible")
        const readOnly = yield* h.mint(account.id, { permissions: ["integrations:read"] })
        const r = yield* h.api.integrations.syncIntegration({
          params: { id: projects[0].id, provider: "plausible" },
          payload: null
        }, { token: readOnly.secret })
        expectError(r, 403, "missing_permission")
        expect(r.json.error.permission).toBe("integrations:sync")
        expect((yield* listIntegrations(projects[0].id, secret))[1].lastRun).toBeNull()
      }))
  })

  describe("the runner", () => {
    it.effect("a drain scoped to projects claims only their runs: another project's queued run stays queued, older or not", () =>
      Effect.gen(function*() {
        fake.behaviour = { kind: "ok" }
        const other = yield* withPlausible()
        const mine = yield* withPlausible()
        const otherRun = yield* requestSync(other.projectId, "plausible", other.secret)
        yield* TestClock.adjust(1_000)
        yield* requestSync(mine.projectId, "plausible", mine.secret)
        const done = yield* h.run(
          drainSyncs({ connectors: lookup, projectIds: [mine.projectId] }).pipe(Effect.provide(runnerLayer()))
        )
        expect(done.map((r) => [r.projectId, r.status])).toEqual([[mine.projectId, "succeeded"]])
        const [, plausible] = yield* listIntegrations(other.projectId, other.secret)
        expect(plausible.lastRun).toMatchObject({ id: otherRun.sync.id, status: "queued" })
        // A drain whose scope holds it takes it (the worker's holds every project).
        expect(
          (yield* drain(mine.projectId, other.projectId)).filter((r) => r.projectId === other.projectId).map((r) =>
            r.status
          )
        ).toEqual([
          "succeeded"
        ])
      }))

    it.effect("runs a queued sync to success: counts, cursor, lastSuccessAt; the next run continues from the cursor", () =>
      Effect.gen(function*() {
        fake.behaviour = { kind: "ok" }
        const { projectId, secret } = yield* withPlausible()
        const queued = yield* requestSync(projectId, "plausible", secret)
        yield* TestClock.adjust(5_000)
        const done = (yield* drain(projectId)).filter((r) => r.projectId === projectId)
        expect(done.map((r) => r.status)).toEqual(["succeeded"])
        // First run: no cursor → the 6 days 2026-11-14 … 2026-11-19 (yesterday).
        expect(fake.calls.filter((c) => c.projectId === projectId)).toEqual([{
          projectId,
          state: null,
          mode: "incremental",
          apiKey: SECRET
        }])
        const [, plausible] = yield* listIntegrations(projectId, secret)
        const finishedAt = new Date(yield* h.now).toISOString()
        expect(plausible).toMatchObject({ status: "connected", lastSuccessAt: finishedAt, lastError: null })
        expect(plausible.lastRun).toEqual({
          ...queued.sync,
          status: "succeeded",
          startedAt: finishedAt,
          finishedAt,
          counts: { days: 6 },
          error: null
        })
        expect(yield* h.run(storedDays(projectId, "2026-11-14", "2026-11-19"))).toEqual(
          ["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19"].map(fakeDay)
        )

        // A day later: the connector is handed its cursor and writes only 2026-11-20.
        yield* TestClock.adjust(86_400_000)
        yield* requestSync(projectId, "plausible", secret)
        yield* drain(projectId)
        expect(fake.calls.filter((c) => c.projectId === projectId).at(-1)).toMatchObject({
          state: { lastDay: "2026-11-19" }
        })
        expect((yield* listIntegrations(projectId, secret))[1].lastRun).toMatchObject({
          status: "succeeded",
          counts: { days: 1 }
        })
        yield* TestClock.adjust(-86_400_000)
      }))

    it.effect("a rejected key fails the run at once: integration error with the message, data as it was, no credential anywhere", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* syncedOnce()
        const before = yield* h.run(storedDays(projectId, "2026-11-01", "2026-11-19"))
        fake.behaviour = {
          kind: "fail",
          error: "unauthorized",
          message: "http://fake/api answered 401: Invalid API key"
        }
        yield* TestClock.adjust(1_000)
        const r = yield* requestSync(projectId, "plausible", secret, { mode: "full" })
        yield* drain(projectId)
        const [, plausible] = yield* listIntegrations(projectId, secret)
        expect(plausible).toMatchObject({ status: "error", lastError: "http://fake/api answered 401: Invalid API key" })
        expect(plausible.lastRun).toMatchObject({
          id: r.sync.id,
          status: "failed",
          mode: "full",
          counts: null,
          error: "http://fake/api answered 401: Invalid API key"
        })
        expect(yield* h.run(storedDays(projectId, "2026-11-01", "2026-11-19"))).toEqual(before)
        // Recovery: the next successful run clears the error.
        fake.behaviour = { kind: "ok" }
        yield* TestClock.adjust(1_000)
        yield* requestSync(projectId, "plausible", secret)
        yield* drain(projectId)
        expect((yield* listIntegrations(projectId, secret))[1]).toMatchObject({ status: "connected", lastError: null })
      }))

    it.effect("credentials that do not decrypt (another key) fail the run with a clear message", () =>
      Effect.gen(function*() {
        fake.behaviour = { kind: "ok" }
        const { projects, secret } = yield* h.newAccount()
        yield* connectEncrypted(projects[0].id, "plausible")
        yield* requestSync(projects[0].id, "plausible", secret)
        const [run] = (yield* h.run(
          drainSyncs({ connectors: lookup, projectIds: [projects[0].id] }).pipe(
            Effect.provide(runnerLayer(new Uint8Array(32)))
          )
        ))
          .filter((r) => r.projectId === projects[0].id)
        expect(run.status).toBe("failed")
        expect(run.error).toMatch(/cannot be decrypted with this server's SITEHEALTH_SECRET_KEY/)
      }))

    it.effect("a transient failure is retried later; the third failed attempt fails the run and the integration", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* withPlausible()
        fake.behaviour = { kind: "fail", error: "server", message: "http://fake/api answered 503" }
        const { sync } = yield* requestSync(projectId, "plausible", secret)
        const mine = () =>
          Effect.gen(function*() {
            return (yield* drain(projectId)).filter((r) => r.projectId === projectId)
          })
        expect((yield* mine()).map((r) => [r.status, r.attempts])).toEqual([["queued", 1]])
        // Not before its retry time (1 min after attempt 1, 2 min after attempt 2).
        expect(yield* mine()).toEqual([])
        expect((yield* requestSync(projectId, "plausible", secret)).alreadyQueued).toBe(true)
        expect((yield* listIntegrations(projectId, secret))[1].status).toBe("connected")
        yield* TestClock.adjust(60_000)
        expect((yield* mine()).map((r) => [r.status, r.attempts])).toEqual([["queued", 2]])
        yield* TestClock.adjust(120_000)
        const [last] = yield* mine()
        expect([last.id, last.status, last.attempts, last.error]).toEqual([
          sync.id,
          "failed",
          3,
          "http://fake/api answered 503"
        ])
        expect((yield* listIntegrations(projectId, secret))[1]).toMatchObject({
          status: "error",
          lastError: "http://fake/api answered 503"
        })
      }))

    it.effect("the scheduler queues an incremental run at each of the integration's slots (its own interval here), never a second pending one", () =>
      Effect.gen(function*() {
        fake.behaviour = { kind: "ok" }
        const { projects } = yield* h.newAccount()
        const projectId = projects[0].id
        const start = yield* h.now
        yield* connectEncrypted(projectId, "plausible", { apiKey: SECRET }, 30)
        yield* upsert(projectId, "stripe") // a display row without credentials is never scheduled
        const schedule = () =>
          Effect.gen(function*() {
            return (yield* h.run(scheduleSyncs({ defaultIntervalMinutes: 60, projectIds: [projectId] }))).filter((r) =>
              r.projectId === projectId
            )
          })
        // Its slots: the same minute of every half hour, that minute fixed by the project and provider.
        const slot = nextSlot(projectId, "plausible", 30, new Date(start))
        expect(slot.getTime()).toBeGreaterThan(start)
        expect(slot.getTime()).toBeLessThanOrEqual(start + 30 * 60_000)
        expect(slot.getTime() % (30 * 60_000)).toBe(slotOffsetMs(projectId, "plausible", 30))
        expect(yield* schedule()).toEqual([])
        yield* TestClock.adjust(slot.getTime() - start - 1_000)
        expect(yield* schedule()).toEqual([])
        yield* TestClock.adjust(1_000)
        const [queued, ...rest] = yield* schedule()
        expect(rest).toEqual([])
        expect(queued).toMatchObject({
          provider: "plausible",
          mode: "incremental",
          status: "queued",
          requestedBy: "scheduler"
        })
        expect(yield* schedule()).toEqual([])
        yield* drain(projectId)
        // The next one at the next slot, 30 min later.
        yield* TestClock.adjust(30 * 60_000 - 1_000)
        expect(yield* schedule()).toEqual([])
        yield* TestClock.adjust(1_000)
        expect((yield* schedule()).map((r) => r.provider)).toEqual(["plausible"])
        yield* drain(projectId)
        yield* TestClock.adjust(start - (yield* h.now))
      }))

    it.effect("disconnecting drops the queued run and the credentials; the synced data stays", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* syncedOnce()
        yield* requestSync(projectId, "plausible", secret)
        expect(
          yield* h.run(Effect.flatMap(Effect.service(IntegrationsRepo), (r) => r.disconnect(projectId, "plausible")))
        ).toBe(true)
        expect((yield* drain(projectId)).filter((r) => r.projectId === projectId)).toEqual([])
        expect((yield* listIntegrations(projectId, secret))[1]).toMatchObject({ status: "not_connected" })
        expect(yield* h.run(storedDays(projectId, "2026-11-19", "2026-11-19"))).toEqual([fakeDay("2026-11-19")])
        expectError(
          yield* h.api.integrations.syncIntegration(
            { params: { id: projectId, provider: "plausible" }, payload: null },
            { token: secret }
          ),
          404
        )
      }))
  })

  describe("dashboard-only actions", () => {
    it.effect("connecting or disconnecting a provider answers 403 dashboard_only and changes nothing", () =>
      Effect.gen(function*() {
        const { projectId, secret } = yield* withPlausible()
        expectError(
          yield* h.raw("POST", `${integrationsPath(projectId)}/stripe`, { token: secret, body: {} }),
          403,
          "dashboard_only"
        )
        expectError(
          yield* h.raw("DELETE", `${integrationsPath(projectId)}/stripe`, { token: secret }),
          403,
          "dashboard_only"
        )
        expectError(
          yield* h.raw("DELETE", `${integrationsPath(projectId)}/plausible`, { token: secret }),
          403,
          "dashboard_only"
        )
        const [stripe, plausible] = yield* listIntegrations(projectId, secret)
        expect(stripe.status).toBe("not_connected")
        expect(plausible.status).toBe("connected")
      }))

    it.effect("deleting a website answers 403 dashboard_only and the website is still there", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const projectId = projects[0].id
        const r = yield* h.api.projects.deleteProject({ params: { id: projectId } }, { token: secret })
        expectError(r, 403, "dashboard_only")
        const list = yield* h.api.projects.listProjects({ query: {} }, { token: secret })
        expect(list.json.data.projects.map((p: any) => p.id)).toEqual([projectId])
      }))
  })
})
