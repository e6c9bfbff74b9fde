/**
 * GET /projects/{id}/seo over the real router and both stores, with rows written through SearchRepo.write
 * (the hand-worked dataset of fixtures/seoFixtures.ts; harness today = 2026-11-20), plus the search and FX
 * repositories' own contracts: upserts, the per-day cap, dataThrough, and data_version bumps.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { FxRepo } from "../../src/fx/FxRepo.ts"
import { SearchRepo } from "../../src/search/SearchRepo.ts"
import { SEARCH_ROWS_PER_DAY, type SearchQueryDay, type SearchWrite } from "../../src/search/Types.ts"
import {
  SEO_EXPECTED_7D,
  SEO_EXPECTED_TOP_PAGES,
  SEO_EXPECTED_TOP_QUERIES,
  SEO_PAGES,
  SEO_QUERIES,
  SEO_TOTALS
} from "../fixtures/seoFixtures.ts"
import { h, store, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("ReportsSeo", (it) => {
  const write = (projectId: string, rows: SearchWrite) =>
    h.run(Effect.flatMap(SearchRepo, (s) => s.write(projectId, rows)))

  describe("GET /projects/{id}/seo", () => {
    it.effect("reports the hand-worked figures, the window ending at dataThrough", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* write(id, { totals: SEO_TOTALS, queries: SEO_QUERIES, pages: SEO_PAGES })
        const res = yield* h.api.reports.getSeo({ params: { id: id }, query: { period: "7d" } }, { token: secret })
        expect(res.status).toBe(200)
        const d = res.json.data
        expect(d.projectId).toBe(id)
        expect(d.period).toBe("7d")
        expect(d.window).toEqual(SEO_EXPECTED_7D.window)
        expect(d.dataThrough).toBe("2026-11-17")
        expect(d.lagDays).toBe(3)
        // The last days with data, which Google still revises (and the next sync fetches again): 11-14 … 11-17.
        expect(d.provisionalFrom).toBe("2026-11-14")
        expect(d.totals).toEqual(SEO_EXPECTED_7D.totals)
        const { series: previousSeries, ...previous } = d.previous
        expect(previous).toEqual({ window: SEO_EXPECTED_7D.previousWindow, totals: SEO_EXPECTED_7D.previousTotals })
        // One point per day of each window, zero-filled: 11-04 (10 clicks) and 11-10 (20) before, 11-11 (30) and 11-17
        // (45) now.
        expect(previousSeries.map((p: any) => [p.day, p.clicks])).toEqual([
          ["2026-11-04", 10],
          ["2026-11-05", 0],
          ["2026-11-06", 0],
          ["2026-11-07", 0],
          ["2026-11-08", 0],
          ["2026-11-09", 0],
          ["2026-11-10", 20]
        ])
        expect(d.series.map((p: any) => [p.day, p.clicks])).toEqual([
          ["2026-11-11", 30],
          ["2026-11-12", 0],
          ["2026-11-13", 0],
          ["2026-11-14", 0],
          ["2026-11-15", 0],
          ["2026-11-16", 0],
          ["2026-11-17", 45]
        ])
        expect(d.series[6]).toEqual({ day: "2026-11-17", clicks: 45, impressions: 500, ctr: 0.09, averagePosition: 6 })
        expect(d.change).toEqual(SEO_EXPECTED_7D.change)
        expect(d.topQueries).toEqual(SEO_EXPECTED_TOP_QUERIES)
        expect(d.topPages).toEqual(SEO_EXPECTED_TOP_PAGES)
      }))

    it.effect("defaults to 30d, answers an empty project with nulls, and refuses an unknown period", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        const empty = (yield* h.api.reports.getSeo({ params: { id: id }, query: {} }, { token: secret })).json.data
        expect(empty.period).toBe("30d")
        expect(empty.window).toEqual({ from: "2026-10-22", to: "2026-11-20" })
        expect(empty.dataThrough).toBeNull()
        expect(empty.lagDays).toBeNull()
        expect(empty.provisionalFrom).toBeNull()
        expect(empty.totals).toEqual({ clicks: 0, impressions: 0, ctr: null, averagePosition: null })
        expect(empty.topQueries).toEqual([])
        expect((yield* h.raw("GET", `/api/v1/projects/${id}/seo?period=5d`, { token: secret })).status).toBe(400)
      }))

    it.effect("reflects a write made after a read (upsert by day and key)", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* write(id, { totals: SEO_TOTALS, queries: SEO_QUERIES })
        const get = () =>
          Effect.gen(function*() {
            return (yield* h.api.reports.getSeo({ params: { id: id }, query: { period: "7d" } }, { token: secret }))
              .json.data
          })
        expect((yield* get()).totals.clicks).toBe(75)
        // 11-17 replaced (45 → 5 clicks); a new last day 11-18 moves the window one day on.
        yield* write(id, {
          totals: [{ day: "2026-11-17", clicks: 5, impressions: 500, positionWeighted: 3000 }],
          queries: [{ day: "2026-11-18", query: "beta", clicks: 1, impressions: 10, positionWeighted: 20 }]
        })
        const after = yield* get()
        expect(after.dataThrough).toBe("2026-11-18")
        expect(after.window).toEqual({ from: "2026-11-12", to: "2026-11-18" })
        expect(after.totals.clicks).toBe(5) // 11-11 left the window; 11-17 now 5
        // beta: 30 (11-12) + 1 (11-18); alpha 10 (11-17 only, 11-11 left the window)
        expect(after.topQueries.map((q: any) => [q.query, q.clicks])).toEqual([["beta", 31], ["alpha", 10], [
          "gamma",
          0
        ]])
      }))

    it.effect("needs seo:read; another account's project is 404; rows after today count nowhere", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        const t = yield* h.mint(account.id, { permissions: ["projects:read", "analytics:read"] })
        const denied = yield* h.api.reports.getSeo({ params: { id: id }, query: {} }, { token: t.secret })
        expect(denied.status).toBe(403)
        expect(denied.json.error.permission).toBe("seo:read")
        const other = yield* h.newAccount()
        expect((yield* h.api.reports.getSeo({ params: { id: id }, query: {} }, { token: other.secret })).status).toBe(
          404
        )
        yield* write(id, {
          totals: [
            { day: "2026-11-20", clicks: 7, impressions: 70, positionWeighted: 140 },
            { day: "2026-11-25", clicks: 999, impressions: 999, positionWeighted: 999 }
          ]
        })
        const d =
          (yield* h.api.reports.getSeo({ params: { id: id }, query: { period: "today" } }, { token: secret })).json.data
        expect(d).toMatchObject({
          window: { from: "2026-11-20", to: "2026-11-20" },
          dataThrough: "2026-11-20",
          lagDays: 0
        })
        expect(d.totals).toEqual({ clicks: 7, impressions: 70, ctr: 0.1, averagePosition: 2 })
      }))
  })

  describe("SearchRepo", () => {
    it.effect("keeps the top rows of each day, loads by day range and knows dataThrough", () =>
      Effect.gen(function*() {
        const { projects } = yield* h.newAccount()
        const id = projects[0].id
        expect(yield* h.run(Effect.flatMap(SearchRepo, (s) => s.dataThrough(id)))).toBeNull()
        // SEARCH_ROWS_PER_DAY + 2 queries on one day: q0 has the most clicks … the last two are dropped.
        const n = SEARCH_ROWS_PER_DAY + 2
        const rows: Array<SearchQueryDay> = Array.from({ length: n }, (_, i) => ({
          day: "2026-11-01",
          query: `q${String(i).padStart(4, "0")}`,
          clicks: n - i,
          impressions: 1000,
          positionWeighted: 1000
        }))
        yield* write(id, { queries: rows.slice(0, 300) })
        yield* write(id, { queries: rows.slice(300) })
        yield* write(id, {
          queries: [{ day: "2026-11-02", query: "other", clicks: 1, impressions: 2, positionWeighted: 3 }]
        })
        const day1 = yield* h.run(Effect.flatMap(SearchRepo, (s) => s.loadQueryDays(id, "2026-11-01", "2026-11-01")))
        expect(day1).toHaveLength(SEARCH_ROWS_PER_DAY)
        expect(new Set(day1.map((r) => r.query)).has(`q${String(n - 1).padStart(4, "0")}`)).toBe(false)
        expect(day1.find((r) => r.query === "q0000")).toEqual(rows[0])
        const both = yield* h.run(Effect.flatMap(SearchRepo, (s) => s.loadQueryDays(id, "2026-11-01", "2026-11-02")))
        expect(both).toHaveLength(SEARCH_ROWS_PER_DAY + 1)
        expect(yield* h.run(Effect.flatMap(SearchRepo, (s) => s.dataThrough(id)))).toBe("2026-11-02")
        yield* write(id, { pages: [{ day: "2026-11-05", page: "/x", clicks: 1, impressions: 1, positionWeighted: 1 }] })
        expect(yield* h.run(Effect.flatMap(SearchRepo, (s) => s.loadPageDays(id, "2026-11-01", "2026-11-30")))).toEqual(
          [
            { day: "2026-11-05", page: "/x", clicks: 1, impressions: 1, positionWeighted: 1 }
          ]
        )
        expect(yield* h.run(Effect.flatMap(SearchRepo, (s) => s.dataThrough(id)))).toBe("2026-11-05")
      }))

    // The in-memory store keeps no series cache, so it has no version to bump.
    it.effect.runIf(store === "postgres")(
      "bumps data_version on every write, and on every FX rate",
      () =>
        Effect.gen(function*() {
          const { projects } = yield* h.newAccount()
          const id = projects[0].id
          const version = () =>
            h.run(Effect.gen(function*() {
              const sql = yield* SqlClient.SqlClient
              const rows = yield* sql`SELECT data_version::int AS v FROM projects WHERE id = ${id}`
              return (rows[0] as any).v as number
            }))
          const v0 = yield* version()
          yield* write(id, { totals: SEO_TOTALS })
          const v1 = yield* version()
          expect(v1).toBe(v0 + 1)
          yield* h.run(
            Effect.flatMap(FxRepo, (fx) => fx.put([{ day: "2026-11-01", base: "EUR", quote: "USD", rate: 1.08 }]))
          )
          expect(yield* version()).toBe(v1 + 1)
        })
    )
  })

  describe("FxRepo", () => {
    it.effect("upserts by (base, quote, day) and lists in order", () =>
      Effect.gen(function*() {
        yield* h.run(Effect.flatMap(FxRepo, (fx) =>
          fx.put([
            { day: "2026-11-01", base: "chf", quote: "usd", rate: 1.1 },
            { day: "2026-10-01", base: "CHF", quote: "USD", rate: 1.2 }
          ])))
        yield* h.run(
          Effect.flatMap(FxRepo, (fx) => fx.put([{ day: "2026-11-01", base: "CHF", quote: "USD", rate: 1.15 }]))
        )
        const all = yield* h.run(Effect.flatMap(FxRepo, (fx) => fx.all()))
        expect(all.filter((r) => r.base === "CHF")).toEqual([
          { day: "2026-10-01", base: "CHF", quote: "USD", rate: 1.2 },
          { day: "2026-11-01", base: "CHF", quote: "USD", rate: 1.15 }
        ])
      }))
  })
})
