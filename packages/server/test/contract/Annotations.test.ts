/**
 * Annotations: add (201, the default category, validation), list (by day, from/to inclusive), change, delete
 * (soft: gone from the list, a second delete 404), scoped to the project, and the annotations:* permissions.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { plantedTraffic, YESTERDAY } from "../fixtures/signals.ts"
import { expectError } from "../support/Expect.ts"
import { h, START, TestApp } from "../support/TestApp.ts"

const path = (projectId: string) => `/api/v1/projects/${projectId}/annotations`

layer(TestApp.layer())("Annotations", (it) => {
  const add = (projectId: string, token: string, body: unknown) => h.raw("POST", path(projectId), { token, body })

  describe("adding and listing", () => {
    it.effect("201 with the annotation; category defaults to other; listed by day, then from/to inclusive", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const p = projects[0].id
        const later = yield* add(p, secret, { date: "2026-11-20", note: "Raised Pro to €29", category: "price_change" })
        expect(later.status, later.text).toBe(201)
        expect(later.json.data.annotation).toMatchObject({
          projectId: p,
          date: "2026-11-20",
          note: "Raised Pro to €29",
          category: "price_change"
        })
        expect(later.json.data.annotation.id).toMatch(/^ann_/)
        const earlier = yield* add(p, secret, { date: "2026-11-02", note: "Launched on Product Hunt" })
        expect(earlier.json.data.annotation.category).toBe("other")
        const all = yield* h.raw("GET", path(p), { token: secret })
        expect(all.status, all.text).toBe(200)
        expect(all.json.data.annotations.map((a: any) => a.date)).toEqual(["2026-11-02", "2026-11-20"])
        expect(all.json.data.truncated).toBe(false)
        const from = yield* h.raw("GET", `${path(p)}?from=2026-11-20`, { token: secret })
        expect(from.json.data.annotations.map((a: any) => a.note)).toEqual(["Raised Pro to €29"])
        const to = yield* h.raw("GET", `${path(p)}?to=2026-11-19`, { token: secret })
        expect(to.json.data.annotations.map((a: any) => a.note)).toEqual(["Launched on Product Hunt"])
        const none = yield* h.raw("GET", `${path(p)}?from=2026-11-03&to=2026-11-19`, { token: secret })
        expect(none.json.data.annotations).toEqual([])
      }))

    it.effect("400 for an empty or 281-character note, an impossible date, an unknown category; nothing stored", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const p = projects[0].id
        for (
          const [body, field] of [
            [{ date: "2026-11-02", note: "" }, "body.note"],
            [{ date: "2026-11-02", note: "x".repeat(281) }, "body.note"],
            [{ date: "2026-02-30", note: "Launch" }, "body.date"],
            [{ date: "2026-11-02", note: "Launch", category: "party" }, "body.category"],
            [{ note: "Launch" }, "body.date"]
          ] as const
        ) {
          const r = yield* add(p, secret, body)
          expectError(r, 400, "invalid_request")
          expect(r.json.error.issues.map((i: any) => i.path), r.text).toContain(field)
        }
        expect((yield* add(p, secret, { date: "2026-11-02", note: "x".repeat(280) })).status).toBe(201)
        const bad = yield* h.raw("GET", `${path(p)}?from=yesterday`, { token: secret })
        expectError(bad, 400, "invalid_request")
        const listed = yield* h.raw("GET", path(p), { token: secret })
        expect(listed.json.data.annotations).toHaveLength(1)
      }))
  })

  describe("changing and deleting", () => {
    it.effect("PATCH changes only what it names (an empty one nothing); DELETE is soft and then 404", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const p = projects[0].id
        const id = (yield* add(p, secret, { date: "2026-11-02", note: "Launch", category: "launch" })).json.data
          .annotation.id
        const moved = yield* h.raw("PATCH", `${path(p)}/${id}`, { token: secret, body: { date: "2026-11-03" } })
        expect(moved.status, moved.text).toBe(200)
        expect(moved.json.data.annotation).toMatchObject({ id, date: "2026-11-03", note: "Launch", category: "launch" })
        const same = yield* h.raw("PATCH", `${path(p)}/${id}`, { token: secret, body: {} })
        expect(same.json.data.annotation).toEqual(moved.json.data.annotation)
        const deleted = yield* h.raw("DELETE", `${path(p)}/${id}`, { token: secret })
        expect(deleted.status, deleted.text).toBe(200)
        expect(deleted.json.data).toMatchObject({ deleted: true, annotation: { id } })
        expect((yield* h.raw("GET", path(p), { token: secret })).json.data.annotations).toEqual([])
        expectError(yield* h.raw("DELETE", `${path(p)}/${id}`, { token: secret }), 404, "not_found")
        expectError(
          yield* h.raw("PATCH", `${path(p)}/${id}`, { token: secret, body: { note: "x" } }),
          404,
          "not_found"
        )
        if (h.store === "postgres") {
          const rows = (yield* h.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT deleted_at FROM annotations WHERE id = ${id}`)
          )) as ReadonlyArray<any>
          expect(rows).toHaveLength(1)
          expect(rows[0].deleted_at).not.toBeNull()
        }
      }))

    it.effect("another project's annotation is 404 by this project's path; a malformed id is 404", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        const [p1, p2] = [projects[0].id, projects[1].id]
        const id = (yield* add(p1, secret, { date: "2026-11-02", note: "Launch" })).json.data.annotation.id
        expectError(yield* h.raw("DELETE", `${path(p2)}/${id}`, { token: secret }), 404, "not_found")
        expectError(yield* h.raw("DELETE", `${path(p1)}/not-an-id`, { token: secret }), 404, "not_found")
        expect((yield* h.raw("GET", path(p1), { token: secret })).json.data.annotations).toHaveLength(1)
      }))
  })

  describe("as a likely cause", () => {
    // The planted drop is on YESTERDAY (2026-11-19, fixtures/signals.ts): an annotation of 2026-11-16 to 11-19 is
    // its likely cause, the latest such; one of 11-15 is too early; deleting it takes the cause away at once.
    it.effect("the signal and the briefing's priority name the annotation of its day or up to 3 days before", () =>
      Effect.ensuring(
        Effect.gen(function*() {
          const { projects, secret } = yield* h.newAccount()
          const p = projects[0].id
          yield* h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(p, { traffic: plantedTraffic(30) })))
          const signals = () =>
            Effect.map(h.raw("GET", `/api/v1/projects/${p}/signals`, { token: secret }), (r) => r.json.data.signals)
          expect((yield* signals())[0].likelyCause).toBeUndefined()
          yield* add(p, secret, { date: "2026-11-15", note: "Too early to count" })
          expect((yield* signals())[0].likelyCause).toBeUndefined()
          const launch = (yield* add(p, secret, { date: "2026-11-17", note: "New landing page", category: "launch" }))
            .json.data.annotation
          const [signal] = yield* signals()
          expect(signal.day).toBe(YESTERDAY)
          expect(signal.likelyCause).toEqual({
            annotationId: launch.id,
            date: "2026-11-17",
            note: "New landing page",
            category: "launch"
          })
          const briefing = (yield* h.raw("GET", `/api/v1/projects/${p}/briefing`, { token: secret })).json.data
          const priority = briefing.priorities.find((x: any) => x.signalId === signal.id)
          expect(priority.likelyCause).toEqual(signal.likelyCause)
          yield* h.raw("DELETE", `${path(p)}/${launch.id}`, { token: secret })
          expect((yield* signals())[0].likelyCause).toBeUndefined()
        }),
        TestClock.setTime(START)
      ))
  })

  describe("permissions", () => {
    it.effect("annotations:read lists but cannot add; annotations:write adds", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount()
        const p = projects[0].id
        const reader = yield* h.mint(account.id, { permissions: ["annotations:read"] })
        const writer = yield* h.mint(account.id, { permissions: ["annotations:write"] })
        expect((yield* h.raw("GET", path(p), { token: reader.secret })).status).toBe(200)
        const refused = yield* add(p, reader.secret, { date: "2026-11-02", note: "Launch" })
        expectError(refused, 403, "missing_permission")
        expect((yield* add(p, writer.secret, { date: "2026-11-02", note: "Launch" })).status).toBe(201)
        expectError(yield* h.raw("GET", path(p), { token: writer.secret }), 403, "missing_permission")
      }))
  })
})
