/**
 * Health, signals, briefing and the projects list over HTTP, against stored snapshots: computed once,
 * stored, recomputed when the data changes, de-duplicated, one briefing per local day. Today is
 * 2026-11-20 (Friday) in the harness clock (12:00:30 UTC). The planted series is fixtures/signals.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Health } from "@sitehealth/domain/Projects"
import { Clock, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createProject } from "../../src/accounts/Provisioning.ts"
import { WebsitesRepo } from "../../src/dashboard/WebsitesRepo.ts"
import { type DailyRows, MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { JobsRepo } from "../../src/recompute/JobsRepo.ts"
import { SnapshotsRepo } from "../../src/snapshots/SnapshotsRepo.ts"
import { plantedTraffic, traffic, YESTERDAY } from "../fixtures/signals.ts"
import { expectError } from "../support/Expect.ts"
import { h, START, store, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("ProjectsHealth", (it) => {
  // Every test starts at START, whatever the one before did to the clock.
  const fromStart = <A, E, R>(test: Effect.Effect<A, E, R>) => Effect.ensuring(test, TestClock.setTime(START))

  const HOUR = 3_600_000
  const writeDays = (projectId: string, rows: DailyRows) =>
    h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(projectId, rows)))

  const get = (path: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", path, { token })
      expect(r.status, r.text).toBe(200)
      expect(r.json.status).toBe("success")
      return r.json.data
    })

  describe("GET /projects/{id}/health", () => {
    it.effect("is computed once, stored, and recomputed when the data changes", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* writeDays(id, { traffic: plantedTraffic(100) })
        const first = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(first.date).toBe("2026-11-20")
        expect(first.window.current).toEqual({ from: "2026-10-21", to: YESTERDAY })
        // traffic only: coverage 0.3; first row 2026-09-24 → 57 days of history → 57/60 = 0.95; 0.3 × 1 × 0.95 = 0.285
        // → 0.29
        expect(first.confidenceFactors).toEqual({ value: 0.29, coverage: 0.3, freshness: 1, history: 0.95 })
        yield* TestClock.adjust(60_000)
        const again = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(again.computedAt).toBe(first.computedAt) // stored, not recomputed
        yield* writeDays(id, { traffic: [traffic(YESTERDAY, 500)] })
        const after = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(after.computedAt).toBe(new Date(yield* h.now).toISOString()) // the data changed: recomputed on read
        expect(after.dimensions.find((d: any) => d.name === "traffic").figures.visitors)
          .toBe(first.dimensions.find((d: any) => d.name === "traffic").figures.visitors + 400)
      })))

    it.effect("a stored snapshot is served byte for byte as it was first answered, until the data moves", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* writeDays(id, { traffic: plantedTraffic(100) })
        const computed = yield* h.api.projects.getHealth({ params: { id: id } }, { token: secret })
        yield* TestClock.adjust(1_000) // same rate-limit window: the headers still say where the budget stands
        const stored = yield* h.api.projects.getHealth({ params: { id: id } }, { token: secret })
        expect(stored.status).toBe(200)
        expect(stored.text).toBe(computed.text)
        expect(stored.headers.get("content-type")).toBe(computed.headers.get("content-type"))
        expect(stored.headers.get("x-ratelimit-remaining")).toBe(
          String(Number(computed.headers.get("x-ratelimit-remaining")) - 1)
        )
        // An hour on, the clock-driven rules may say something else: recomputed, not served as stored.
        yield* TestClock.adjust(HOUR)
        const aged = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(aged.computedAt).toBe(new Date(yield* h.now).toISOString())
      })))

    it.effect.skipIf(store !== "postgres")(
      "a snapshot rewritten by a writer that does not know the stored text is never served stale",
      () =>
        fromStart(Effect.gen(function*() {
          const { projects, secret } = yield* h.newAccount()
          const id = projects[0].id
          yield* writeDays(id, { traffic: plantedTraffic(100) })
          const first = yield* get(`/api/v1/projects/${id}/health`, secret)
          // What an instance of the previous version does during a rolling upgrade: it updates the row, not `encoded`.
          const rewritten = new Date(Date.parse(first.computedAt) + 1000).toISOString()
          yield* h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`UPDATE health_snapshots SET computed_at = ${rewritten}::timestamptz,
              body = jsonb_set(jsonb_set(body, '{score}', '7'), '{computedAt}', to_jsonb(${rewritten}::text))
            WHERE project_id = ${id}`))
          yield* TestClock.adjust(2_000)
          const served = yield* get(`/api/v1/projects/${id}/health`, secret)
          expect(served.computedAt).toBe(rewritten)
          expect(served.score).toBe(7)
          // Served the slow way once, the row now keeps the text of its own computation: the next request's fast path.
          const rows = yield* h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`SELECT encoded, encoded_computed_at = computed_at AS current FROM health_snapshots WHERE project_id = ${id}`))
          expect(rows).toHaveLength(1)
          expect((rows[0] as any).current).toBe(true)
          expect(JSON.parse((rows[0] as any).encoded)).toEqual(served)
          const again = yield* h.api.projects.getHealth({ params: { id: id } }, { token: secret })
          expect(again.json.data).toEqual(served)
        }))
    )

    it.effect("answers 404 for an unknown project and 403 outside the token's scope", () =>
      fromStart(Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        expectError(yield* h.api.projects.getHealth({ params: { id: "prj_doesnotexist" } }, { token: secret }), 404)
        const scoped = yield* h.mint(account.id, { projects: [projects[0].id] })
        expectError(
          yield* h.api.projects.getHealth({ params: { id: projects[1].id } }, { token: scoped.secret }),
          403,
          "project_out_of_scope"
        )
        expectError(
          yield* h.api.projects.listSignals({ params: { id: projects[1].id }, query: {} }, { token: scoped.secret }),
          403,
          "project_out_of_scope"
        )
        expectError(
          yield* h.api.projects.getBriefing({ params: { id: projects[1].id } }, { token: scoped.secret }),
          403,
          "project_out_of_scope"
        )
      })))
  })

  describe("GET /projects/{id}/signals", () => {
    it.effect("one planted anomaly → one stored signal, the same over runs, resolved when gone, a new one when back", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* writeDays(id, { traffic: plantedTraffic(30) })
        const first = yield* get(`/api/v1/projects/${id}/signals`, secret)
        expect(first.nextCursor).toBeNull()
        expect(first.signals).toHaveLength(1)
        const s = first.signals[0]
        expect(s).toMatchObject({
          dimension: "traffic",
          severity: "critical",
          kind: "anomaly_drop",
          subject: "visitors",
          metric: "visitors",
          day: YESTERDAY,
          actual: 30,
          expected: { value: 100.5, low: 74.43, high: 126.57 },
          change: -0.7015,
          active: true,
          resolvedAt: null,
          detectedAt: new Date(START).toISOString(),
          lastSeenAt: new Date(START).toISOString()
        })
        expect(s.id).toMatch(/^sig_/)

        // Two hours later (stored computation older than an hour): recomputed, still ONE signal, lastSeenAt advanced.
        yield* TestClock.adjust(2 * HOUR)
        const second = yield* get(`/api/v1/projects/${id}/signals`, secret)
        expect(second.signals.map((x: any) => [x.id, x.detectedAt, x.lastSeenAt])).toEqual([
          [s.id, s.detectedAt, new Date(yield* h.now).toISOString()]
        ])

        // The day is corrected to normal: the signal is resolved, listed after the active ones (none).
        yield* writeDays(id, { traffic: [traffic(YESTERDAY, 100)] })
        const resolved = yield* get(`/api/v1/projects/${id}/signals`, secret)
        expect(resolved.signals.map((x: any) => [x.id, x.active, x.resolvedAt])).toEqual([[
          s.id,
          false,
          new Date(yield* h.now).toISOString()
        ]])
        expect((yield* get(`/api/v1/projects/${id}/signals?active=true`, secret)).signals).toEqual([])
        expect((yield* get(`/api/v1/projects/${id}/signals?active=false`, secret)).signals.map((x: any) => x.id))
          .toEqual([s.id])

        // It comes back: a NEW signal opens, active first, the resolved one after it.
        yield* TestClock.adjust(60_000)
        yield* writeDays(id, { traffic: [traffic(YESTERDAY, 70)] })
        const back = yield* get(`/api/v1/projects/${id}/signals`, secret)
        expect(back.signals.map((x: any) => [x.active, x.severity])).toEqual([[true, "warning"], [false, "critical"]])
        expect(back.signals[0].id).not.toBe(s.id)
        expect(back.signals[1].id).toBe(s.id)
      })))

    it.effect("?dimension, ?severity, ?active narrow the list; unknown values and foreign cursors answer 400; pages", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        // Visitors AND pageviews planted on the Thursday: two signals (visitors critical, pageviews critical).
        yield* writeDays(id, {
          traffic: plantedTraffic(30).map((r) => (r.day === YESTERDAY ? { ...r, pageviews: 30 } : r))
        })
        const all = yield* get(`/api/v1/projects/${id}/signals`, secret)
        expect(all.signals.map((x: any) => x.subject).sort()).toEqual(["pageviews", "visitors"])
        expect((yield* get(`/api/v1/projects/${id}/signals?dimension=traffic&severity=critical`, secret)).signals)
          .toHaveLength(2)
        expect((yield* get(`/api/v1/projects/${id}/signals?dimension=revenue`, secret)).signals).toEqual([])
        expect((yield* get(`/api/v1/projects/${id}/signals?severity=info`, secret)).signals).toEqual([])
        expectError(yield* h.raw("GET", `/api/v1/projects/${id}/signals?dimension=weather`, { token: secret }), 400)
        expectError(yield* h.raw("GET", `/api/v1/projects/${id}/signals?severity=huge`, { token: secret }), 400)
        expectError(yield* h.raw("GET", `/api/v1/projects/${id}/signals?active=maybe`, { token: secret }), 400)
        expectError(
          yield* h.api.projects.listSignals({ params: { id: id }, query: { cursor: "nope" } }, { token: secret }),
          400,
          "invalid_cursor"
        )
        const p1 = yield* get(`/api/v1/projects/${id}/signals?limit=1`, secret)
        expect(p1.signals).toHaveLength(1)
        const p2 = yield* get(
          `/api/v1/projects/${id}/signals?limit=1&cursor=${encodeURIComponent(p1.nextCursor)}`,
          secret
        )
        expect(p2.nextCursor).toBeNull()
        expect([p1.signals[0].id, p2.signals[0].id]).toEqual(all.signals.map((x: any) => x.id))
      })))

    it.effect("a project without data has no signals", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        expect(yield* get(`/api/v1/projects/${projects[0].id}/signals`, secret)).toEqual({
          signals: [],
          nextCursor: null
        })
      })))
  })

  describe("GET /projects/{id}/briefing", () => {
    it.effect("is generated once per LOCAL day and stored (Pacific/Auckland, UTC+13 in November)", () =>
      fromStart(Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount({ projects: 0 })
        const p = yield* h.run(
          createProject({ accountId: account.id, name: "NZ", domain: "nz.example", timezone: "Pacific/Auckland" })
        )
        // 2026-11-20T12:00:30Z is 2026-11-21 01:00:30 in Auckland: local yesterday is Friday 2026-11-20.
        yield* writeDays(p.id, { traffic: plantedTraffic(200).map((r) => ({ ...r, day: shift(r.day) })) })
        const b1 = yield* get(`/api/v1/projects/${p.id}/briefing`, secret)
        expect(b1.date).toBe("2026-11-21")
        expect(b1.generatedAt).toBe(new Date(START).toISOString())
        expect(b1.yesterday.date).toBe("2026-11-20")
        // usual = median of the 4 previous Fridays (shifted Thursdays 100, 104, 96, 102) = (100 + 102) / 2 = 101
        expect(b1.yesterday.visitors).toEqual({ value: 200, usual: 101, change: 0.9802, state: "connected" })
        expect(b1.yesterday.pageviews).toEqual({ value: 300, usual: 300, change: 0, state: "connected" })
        expect(b1.priorities.map((x: any) => [x.rank, x.severity])).toEqual([[1, "info"]])
        expect(b1.headline).toMatch(/^Good news: visitors up 99% on a usual Friday/)
        expect(b1.whatChanged.map((s: any) => s.kind)).toEqual(["anomaly_spike"])

        // Later the same local day, even after the data changed: the identical briefing.
        yield* TestClock.adjust(5 * HOUR)
        yield* writeDays(p.id, { traffic: [traffic("2026-11-20", 100)] })
        expect(yield* get(`/api/v1/projects/${p.id}/briefing`, secret)).toEqual(b1)

        // 2026-11-21T11:30Z = 2026-11-22 00:30 in Auckland: a new local day, a new briefing.
        yield* TestClock.setTime(Date.parse("2026-11-21T11:30:00Z"))
        const b2 = yield* get(`/api/v1/projects/${p.id}/briefing`, secret)
        expect(b2.date).toBe("2026-11-22")
        expect(b2.generatedAt).toBe("2026-11-21T11:30:00.000Z")
        expect(b2.yesterday.date).toBe("2026-11-21")
      })))
  })

  /** The fixture's days one day later (its Thursday becomes a Friday). */
  const shiftBy = (day: string, days: number) =>
    new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
  const shift = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)

  describe("GET /projects", () => {
    it.effect("shows each project's stored snapshot and its trend over stored days", () =>
      fromStart(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        const [withData, empty] = projects
        // 8 days ago: 100 visitors/day from 10-13 only: previous window (09-12 … 10-12) empty → growth from 0 → 75.
        yield* TestClock.setTime(Date.parse("2026-11-12T12:00:00Z"))
        const days = Array.from(
          { length: 92 },
          (_, i) => new Date(Date.parse("2026-08-20T00:00:00Z") + i * 86_400_000).toISOString().slice(0, 10)
        )
        yield* writeDays(withData.id, { traffic: days.filter((d) => d >= "2026-10-13").map((d) => traffic(d, 100)) })
        const then = yield* get(`/api/v1/projects/${withData.id}/health`, secret)
        expect(then.score).toBe(75)
        // Back to today: every day since has 100 visitors, both windows full → flat → 50.
        yield* TestClock.setTime(START)
        yield* writeDays(withData.id, { traffic: days.filter((d) => d < "2026-10-13").map((d) => traffic(d, 100)) })
        const list = yield* get("/api/v1/projects", secret)
        const byId = Object.fromEntries(list.projects.map((p: any) => [p.id, p]))
        const now = yield* get(`/api/v1/projects/${withData.id}/health`, secret)
        expect(now.score).toBe(50)
        expect(byId[withData.id].health).toEqual({
          score: 50,
          confidence: now.confidence,
          status: "at_risk",
          computedAt: now.computedAt
        })
        expect(byId[withData.id].trend).toEqual({
          scoreChange7d: -25, // 50 now − 75 on 2026-11-12 (the latest stored day ≤ today − 7)
          scoreChange30d: null, // nothing stored on or before 2026-10-21
          points: [{ date: "2026-11-12", score: 75 }, { date: "2026-11-20", score: 50 }]
        })
        expect(byId[empty.id]).toMatchObject({
          health: { score: null, confidence: 0, status: "no_data" },
          trend: { scoreChange7d: null, scoreChange30d: null, points: [{ date: "2026-11-20", score: null }] }
        })
      })))

    it.effect("is served from kept entries byte for byte, and an edit, a new project, a trend point, new data or the hour shows at once", () =>
      fromStart(Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 3 })
        const [a, b] = projects
        const text = (path: string) =>
          Effect.map(h.raw("GET", path, { token: secret }), (r) => {
            expect(r.status, r.text).toBe(200)
            return r.text
          })
        const byId = (body: string) => Object.fromEntries(JSON.parse(body).data.projects.map((p: any) => [p.id, p]))
        // A name that JSON must escape, and data for one project.
        yield* h.run(Effect.flatMap(WebsitesRepo, (w) => w.update(account.id, a.id, { name: `Café "Zürich" \\ ✓` })))
        yield* writeDays(a.id, {
          traffic: Array.from({ length: 40 }, (_, i) => traffic(shiftBy("2026-11-19", -i), 100))
        })
        // The first read computes and keeps; the next ones (every page) answer the same bytes.
        for (
          const query of [
            "",
            "?limit=2",
            `?limit=2&cursor=${encodeURIComponent(JSON.parse(yield* text("/api/v1/projects?limit=2")).data.nextCursor)}`
          ]
        ) {
          const first = yield* text(`/api/v1/projects${query}`)
          expect(yield* text(`/api/v1/projects${query}`)).toBe(first)
          expect(yield* text(`/api/v1/projects${query}`)).toBe(first)
        }
        const kept = yield* text("/api/v1/projects")
        expect(byId(kept)[a.id].name).toBe(`Café "Zürich" \\ ✓`)

        // An edit shows at once (the project's own fields are read with the page, not kept).
        yield* h.run(
          Effect.flatMap(WebsitesRepo, (w) => w.update(account.id, b.id, { name: "Renamed", currency: "EUR" }))
        )
        const edited = byId(yield* text("/api/v1/projects"))
        expect(edited[b.id]).toMatchObject({ name: "Renamed", currency: "EUR", health: byId(kept)[b.id].health })

        // A new project shows at once; a deleted one goes.
        const added = yield* h.run(createProject({ accountId: account.id, name: "New", domain: "new.example" }))
        expect(Object.keys(byId(yield* text("/api/v1/projects")))).toContain(added.id)
        yield* h.run(Effect.flatMap(WebsitesRepo, (w) => w.remove(account.id, added.id)))
        expect(Object.keys(byId(yield* text("/api/v1/projects")))).not.toContain(added.id)

        // A snapshot written for an earlier day (a backfill) is a new trend point at once.
        const today = byId(yield* text("/api/v1/projects"))[b.id]
        expect(today.trend.points).toEqual([{ date: "2026-11-20", score: null }])
        const health = Schema.decodeUnknownSync(Health)({
          ...(yield* get(`/api/v1/projects/${b.id}/health`, secret)),
          score: 42
        })
        yield* h.run(Effect.flatMap(SnapshotsRepo, (snapshots) =>
          snapshots.putHealth({
            projectId: b.id,
            day: "2026-11-10",
            dataVersion: "0",
            computedAt: new Date(Date.parse("2026-11-10T12:00:00Z")),
            health
          })))
        expect(byId(yield* text("/api/v1/projects"))[b.id].trend.points).toEqual([{ date: "2026-11-10", score: 42 }, {
          date: "2026-11-20",
          score: null
        }])

        // A newer snapshot of today (a recompute of the same data) shows at once: writing it drops the kept entry.
        const version = yield* h.run(Effect.flatMap(JobsRepo, (jobs) => jobs.dataVersion(b.id)))
        yield* TestClock.adjust("1 second")
        const recomputedAt = new Date(yield* Clock.currentTimeMillis)
        yield* h.run(Effect.flatMap(SnapshotsRepo, (snapshots) =>
          snapshots.putHealth({
            projectId: b.id,
            day: "2026-11-20",
            dataVersion: version ?? "0",
            computedAt: recomputedAt,
            health: { ...health, score: 77 }
          })))
        const recomputed = byId(yield* text("/api/v1/projects"))[b.id]
        expect(recomputed.health.score).toBe(77)

        // New data: recomputed, kept again.
        const before = byId(yield* text("/api/v1/projects"))[a.id].health.computedAt
        yield* TestClock.adjust("1 minute")
        yield* writeDays(a.id, { traffic: [traffic("2026-11-19", 500)] })
        const after = yield* text("/api/v1/projects")
        expect(byId(after)[a.id].health.computedAt).not.toBe(before)
        expect(yield* text("/api/v1/projects")).toBe(after)
        // Past the hour: computed again.
        yield* TestClock.adjust(HOUR + 1000)
        const later = byId(yield* text("/api/v1/projects"))
        expect(later[a.id].health.computedAt).not.toBe(byId(after)[a.id].health.computedAt)
        expect(later[b.id].health.computedAt).not.toBe(byId(after)[b.id].health.computedAt)
      })))

    it.effect("a restricted token sees only its own projects; pages oldest first", () =>
      fromStart(Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 3 })
        const restricted = yield* h.mint(account.id, { projects: [projects[0].id, projects[2].id] })
        expect((yield* get("/api/v1/projects", restricted.secret)).projects.map((p: any) => p.id).sort())
          .toEqual([projects[0].id, projects[2].id].sort())
        const seen: Array<string> = []
        let cursor: string | null = null
        for (let page = 0; page < 3; page++) {
          const query: string = cursor === null ? "?limit=1" : `?limit=1&cursor=${encodeURIComponent(cursor)}`
          const data = yield* get(`/api/v1/projects${query}`, secret)
          seen.push(...data.projects.map((p: any) => p.id))
          cursor = data.nextCursor
        }
        expect(seen.sort()).toEqual(projects.map((p) => p.id).sort())
        expect(cursor).toBeNull()
      })))
  })
})
