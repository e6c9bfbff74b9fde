/**
 * The sync schedule over the real router, on both stores, under TestClock: a failing connection backs off
 * (interval × 2^(n−1)) with its error, failure count and next run in the integrations list, and a success
 * resets it to its slots; a new connection's first sync rebuilds the health history, signals and briefings
 * of the whole span it brought (integrations/Schedule.ts, recompute/Recompute.ts rebuildHistory).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Connector } from "../../src/integrations/Connector.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { nextSlot } from "../../src/integrations/Schedule.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import { addDays, eachDay } from "../../src/metrics/Dates.ts"
import { SnapshotsRepo } from "../../src/snapshots/SnapshotsRepo.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"
import { drainSyncs, rebuildPendingHistories, scheduleSyncs } from "../../src/worker/SyncRunner.ts"
import { makeFakeConnector, runnerLayer, SECRET, TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const MIN = 60_000
const HOUR = 60 * MIN

layer(TestApp.layer())("Sync schedule", (it) => {
  const TODAY = "2026-11-20" // the harness clock: 2026-11-20T12:00:30Z, projects in UTC
  const fake = makeFakeConnector()

  /**
   * 120 days of 200 visitors a day up to yesterday, but 30 on DROP_DAY: one anomaly, detected and resolved —
   * after 30 days of zeros, as Plausible answers for the days before a site existed (no history to replay).
   */
  const HISTORY_FROM = addDays(TODAY, -120)
  const DROP_DAY = addDays(TODAY, -10)
  const history: Connector<TrafficRepo> = {
    provider: "google-search-console",
    kind: "search",
    defaultBaseUrl: "http://127.0.0.1:9",
    baseUrlEnv: null,
    credentialFields: ["apiKey"],
    validate: () => Effect.void,
    sync: (ctx) =>
      Effect.gen(function*() {
        const days = eachDay(addDays(HISTORY_FROM, -30), addDays(TODAY, -1)).map((day) => {
          const visitors = day < HISTORY_FROM ? 0 : day === DROP_DAY ? 30 : 200
          return { day, visitors, pageviews: 2 * visitors, sessions: visitors, bounces: 0, durationSeconds: 0 }
        })
        yield* (yield* TrafficRepo).write(ctx.projectId, { days })
        return { counts: { days: days.length }, state: { lastDay: addDays(TODAY, -1) } }
      })
  }
  const lookup = (provider: string) =>
    provider === "plausible" ? fake.connector : provider === "google-search-console" ? history : undefined
  // This file's runs only: the postgres contract files share one database, and another file's runs (the demo's
  // real connections among them) are not this file's to schedule or to run with these fakes.
  const drain = (projectId: string) =>
    h.run(drainSyncs({ connectors: lookup, projectIds: [projectId] }).pipe(Effect.provide(runnerLayer())))
  const schedule = (projectId: string) =>
    Effect.map(
      h.run(scheduleSyncs({ defaultIntervalMinutes: 60, projectIds: [projectId] })),
      (runs) => runs.filter((r) => r.projectId === projectId)
    )

  const connect = (projectId: string, provider: string, syncIntervalMinutes: number | null = null) =>
    h.run(Effect.gen(function*() {
      const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
      return yield* (yield* IntegrationsRepo).connect({
        projectId,
        provider,
        credentials: cipher.encrypt({ apiKey: SECRET }),
        baseUrl: null,
        syncIntervalMinutes,
        now: new Date(yield* h.now)
      })
    }))
  const integrationOf = (projectId: string, provider: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.api.integrations.listIntegrations({ params: { id: projectId } }, { token })
      expect(r.status, r.text).toBe(200)
      return (r.json.data.integrations as Array<any>).find((i) => i.provider === provider)
    })
  const nowDate = Effect.map(h.now, (ms) => new Date(ms))

  describe("back-off", () => {
    it.effect("a failing connection backs off 1 h, 2 h, 4 h with its error surfaced; a success resets it to its slots", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const projectId = projects[0].id
        const start = yield* h.now
        yield* connect(projectId, "plausible")
        fake.behaviour = { kind: "fail", error: "unauthorized", message: "http://fake/api answered 401" }
        const r = yield* h.api.integrations.syncIntegration({
          params: { id: projectId, provider: "plausible" },
          payload: null
        }, { token: secret })
        expect(r.status, r.text).toBe(202)
        expect((yield* drain(projectId)).filter((x) => x.projectId === projectId).map((x) => x.status)).toEqual([
          "failed"
        ])

        // Each failed run: one more failure, the wait doubles; the error is in the list all along.
        for (const [failures, waitHours] of [[1, 1], [2, 2], [3, 4]] as const) {
          const failedAt = yield* nowDate
          expect(yield* integrationOf(projectId, "plausible", secret)).toMatchObject({
            status: "error",
            lastError: "http://fake/api answered 401",
            consecutiveFailures: failures,
            nextSyncAt: new Date(failedAt.getTime() + waitHours * HOUR).toISOString(),
            syncIntervalMinutes: 60
          })
          yield* TestClock.adjust(waitHours * HOUR - MIN)
          expect(yield* schedule(projectId)).toEqual([]) // not before its back-off
          yield* TestClock.adjust(MIN)
          expect((yield* schedule(projectId)).map((x) => [x.provider, x.requestedBy])).toEqual([[
            "plausible",
            "scheduler"
          ]])
          if (failures < 3) yield* drain(projectId)
        }

        // The provider answers again: the run succeeds, the failures reset, the next run is at the next slot.
        fake.behaviour = { kind: "ok" }
        yield* drain(projectId)
        const at = yield* nowDate
        expect(yield* integrationOf(projectId, "plausible", secret)).toMatchObject({
          status: "connected",
          lastError: null,
          consecutiveFailures: 0,
          lastSuccessAt: at.toISOString(),
          nextSyncAt: nextSlot(projectId, "plausible", 60, at).toISOString()
        })
        yield* TestClock.adjust(start - (yield* h.now))
      }))
  })

  describe("history after the first sync", () => {
    it.effect("a new connection's first sync rebuilds health history, signals and briefings for every backfilled day", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const projectId = projects[0].id
        yield* connect(projectId, "google-search-console")
        const r = yield* h.api.integrations.syncIntegration({
          params: { id: projectId, provider: "google-search-console" },
          payload: null
        }, { token: secret })
        expect(r.status, r.text).toBe(202)
        const [run] = (yield* drain(projectId)).filter((x) => x.projectId === projectId)
        expect([run.status, run.counts]).toEqual(["succeeded", { days: 150 }])

        // A health snapshot for every day from the day after the first day with visits to yesterday, and today's.
        const snapshots = yield* h.run(Effect.gen(function*() {
          const repo = yield* SnapshotsRepo
          const out: Array<string> = []
          for (const day of eachDay(addDays(HISTORY_FROM, -40), TODAY)) {
            if ((yield* repo.healthOf(projectId, day)) !== null) out.push(day)
          }
          return out
        }))
        expect(snapshots).toEqual(eachDay(addDays(HISTORY_FROM, 1), TODAY))
        // The trend is there on day one: a point a day and a 7-day change, not a single point.
        const listed = yield* h.api.projects.listProjects({ query: {} }, { token: secret })
        expect(listed.status, listed.text).toBe(200)
        const trend = (listed.json.data.projects as Array<any>).find((p) => p.id === projectId).trend
        expect(trend.points).toHaveLength(31) // today and the 30 days before it
        expect(trend.scoreChange7d).not.toBeNull()

        // The drop was detected the day after it (its noon) and resolved the day after that.
        const signals = yield* h.api.projects.listSignals({ params: { id: projectId }, query: {} }, { token: secret })
        expect(signals.status, signals.text).toBe(200)
        const drops = (signals.json.data.signals as Array<any>).filter((s) => s.kind === "anomaly_drop")
        const detected = `${addDays(DROP_DAY, 1)}T12:00:00.000Z`
        const resolved = `${addDays(DROP_DAY, 2)}T12:00:00.000Z`
        expect(drops.map((s) => [s.subject, s.day, s.detectedAt, s.resolvedAt, s.active]).sort()).toEqual([
          ["pageviews", DROP_DAY, detected, resolved, false],
          ["visitors", DROP_DAY, detected, resolved, false]
        ])

        // A briefing for every rebuilt day; the one of the day after the drop names it.
        const briefings = yield* h.run(Effect.gen(function*() {
          const repo = yield* SnapshotsRepo
          const out: Record<string, unknown> = {}
          for (const day of eachDay(addDays(HISTORY_FROM, 1), addDays(TODAY, -1))) {
            out[day] = yield* repo.briefingOf(projectId, day)
          }
          return out
        }))
        expect(Object.values(briefings).every((b) => b !== null)).toBe(true)
        expect(JSON.stringify(briefings[addDays(DROP_DAY, 1)])).toContain("anomaly_drop")
        expect(JSON.stringify(briefings[addDays(DROP_DAY, 3)])).not.toContain("anomaly_drop")

        // A later (incremental) run of the same connection does not rebuild again.
        const r2 = yield* h.api.integrations.syncIntegration({
          params: { id: projectId, provider: "google-search-console" },
          payload: null
        }, { token: secret })
        expect(r2.status).toBe(202)
        expect((yield* drain(projectId)).filter((x) => x.projectId === projectId).map((x) => x.status)).toEqual([
          "succeeded"
        ])
        expect(yield* h.run(Effect.flatMap(IntegrationsRepo, (r) => r.historyPending(1000)))).not.toContain(projectId)
        const again = yield* h.api.projects.listSignals({ params: { id: projectId }, query: {} }, { token: secret })
        expect((again.json.data.signals as Array<any>).filter((s) => s.kind === "anomaly_drop").map((s) => s.id).sort())
          .toEqual(drops.map((s) => s.id).sort())
      }))

    it.effect("a worker that dies between the sync's success and the rebuild leaves the history pending; the next round rebuilds it, once", () =>
      Effect.gen(function*() {
        const { projects } = yield* h.newAccount()
        const projectId = projects[0].id
        yield* connect(projectId, "google-search-console")
        // What the dead worker did: the run's data written and its success recorded (history pending), no rebuild.
        const at = yield* nowDate
        yield* h.run(Effect.gen(function*() {
          const queue = yield* SyncQueue
          yield* queue.request({
            projectId,
            provider: "google-search-console",
            mode: "full",
            requestedBy: "test",
            now: at
          })
          const run = yield* queue.claim(at, 60_000, [projectId])
          const days = eachDay(HISTORY_FROM, addDays(TODAY, -1)).map((day) => ({
            day,
            visitors: 200,
            pageviews: 400,
            sessions: 200,
            bounces: 0,
            durationSeconds: 0
          }))
          yield* (yield* TrafficRepo).write(projectId, { days })
          expect(
            yield* queue.succeed({
              run: run!,
              counts: { days: days.length },
              state: null,
              now: at,
              nextSyncAt: new Date(at.getTime() + HOUR),
              historyPending: true
            })
          ).toBe(true)
        }))
        const snapshotOf = (day: string) => h.run(Effect.flatMap(SnapshotsRepo, (r) => r.healthOf(projectId, day)))
        expect(yield* snapshotOf(addDays(TODAY, -30))).toBeNull()
        expect(yield* h.run(Effect.flatMap(IntegrationsRepo, (r) => r.historyPending(1000)))).toContain(projectId)
        // The next round of the sync worker.
        expect(yield* h.run(rebuildPendingHistories(1000))).toContain(projectId)
        expect(yield* snapshotOf(addDays(TODAY, -30))).not.toBeNull()
        expect(yield* h.run(Effect.flatMap(IntegrationsRepo, (r) => r.historyPending(1000)))).not.toContain(projectId)
        expect(yield* h.run(rebuildPendingHistories(1000))).not.toContain(projectId)
      }))
  })
})
