/**
 * GET /projects/{id}/analytics over the real router, in both stores, on golden data
 * (fixtures/traffic.ts). The harness clock is 2026-11-20T12:00:30Z; every figure is worked out by hand.
 * Also: event ingest produces exactly the expected aggregate rows in this store.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createProject } from "../../src/accounts/Provisioning.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"
import type { TrafficEvent, TrafficWrite } from "../../src/traffic/Types.ts"
import {
  AFTER_BATCH_1,
  AFTER_BATCH_2,
  EVENTS_BATCH_1,
  EVENTS_BATCH_2,
  EVENTS_TZ,
  PROVIDER
} from "../fixtures/traffic.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("ReportsAnalytics", (it) => {
  const traffic = <A>(f: (t: TrafficRepo["Service"]) => Effect.Effect<A>) => h.run(Effect.flatMap(TrafficRepo, f))
  const write = (projectId: string, rows: TrafficWrite) => traffic((t) => t.write(projectId, rows))
  const ingest = (projectId: string, events: ReadonlyArray<TrafficEvent>) =>
    traffic((t) => t.ingestEvents(projectId, events, EVENTS_TZ))

  const get = (path: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", path, { token })
      expect(r.status, r.text).toBe(200)
      expect(r.json.status).toBe("success")
      return r.json.data
    })

  const provider = () =>
    Effect.gen(function*() {
      const acc = yield* h.newAccount()
      yield* write(acc.projects[0].id, PROVIDER)
      return { id: acc.projects[0].id, secret: acc.secret, path: `/api/v1/projects/${acc.projects[0].id}/analytics` }
    })

  describe("GET /projects/{id}/analytics, one test per period (UTC project, provider rows)", () => {
    it.effect("today: hours so far against yesterday up to 12:00:30, the 12:00 hour pro rata", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=today`, secret)
        expect(a.granularity).toBe("hour")
        expect(a.range).toEqual({
          start: "2026-11-20T00:00:00.000Z",
          end: "2026-11-20T12:00:30.000Z",
          timezone: "UTC",
          from: "2026-11-20",
          to: "2026-11-20"
        })
        // hours 00:00 + 12:00: 5+6 = 11 visitors, 10+12 = 22 views, 11 sessions, 1+2 = 3 bounces, 500+600 = 1100 s
        expect(a.totals).toEqual({
          visitors: 11,
          visitorsMethod: "sum_of_hourly_uniques",
          pageviews: 22,
          sessions: 11,
          bounceRate: 0.2727,
          avgSessionSeconds: 100,
          pagesPerSession: 2
        })
        // yesterday 11:00 whole + 12:00 × 30/3600 = 1/120: visitors 10 + 1 = 11, views 20 + 2 = 22, sessions 10 + 1,
        // bounces 5 + 0.5 = 5.5 → 5.5/11 = 0.5, seconds 1000 + 100 = 1100 → 100; the 13:00 row (999) is after the
        // cutoff
        const { series: previousSeries, ...previous } = a.previous
        expect(previous).toEqual({
          range: {
            start: "2026-11-19T00:00:00.000Z",
            end: "2026-11-19T12:00:30.000Z",
            timezone: "UTC",
            from: "2026-11-19",
            to: "2026-11-19"
          },
          totals: {
            visitors: 11,
            visitorsMethod: "sum_of_hourly_uniques",
            pageviews: 22,
            sessions: 11,
            bounceRate: 0.5,
            avgSessionSeconds: 100,
            pagesPerSession: 2
          }
        })
        // Yesterday's hours 00:00 … 12:00 to overlay today's, each hour whole (the 12:00 hour's 120, not its 1/120)
        expect(previousSeries.map((p: any) => p.visitors)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 120])
        // bounce (0.2727 − 0.5)/0.5 = −0.4546
        expect(a.change).toEqual({
          visitors: 0,
          pageviews: 0,
          sessions: 0,
          bounceRate: -0.4546,
          avgSessionSeconds: 0,
          pagesPerSession: 0
        })
        expect(a.series).toHaveLength(13) // 00:00 … 12:00
        expect(a.series.map((p: any) => p.visitors)).toEqual([5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6])
        expect(a.series[12]).toEqual({
          label: "2026-11-20T12:00+00:00",
          start: "2026-11-20T12:00:00.000Z",
          from: "2026-11-20",
          to: "2026-11-20",
          visitors: 6,
          visitorsMethod: "sum_of_hourly_uniques",
          pageviews: 12,
          sessions: 6
        })
        // today's pages: "/" 15 of 22 views, "/pricing" 7; sources: google 7 of 11 visitors, direct 4.
        // Previous = yesterday's daily top × the share of yesterday's hourly figure before 12:00:30: page views
        // (20 + 240/120) / (20 + 240 + 999) = 22/1259, visitors (10 + 120/120) / (10 + 120 + 999) = 11/1129.
        // "/": 200 × 22/1259 = 3.49 → 3, (15−3)/3 = 4; google: 70 × 11/1129 = 0.68 → 1, (7−1)/1 = 6; "/pricing",
        // direct: none
        expect(a.topPages).toEqual([
          { path: "/", visitors: 8, pageviews: 15, share: 0.6818, previousPageviews: 3, pageviewsChange: 4 },
          { path: "/pricing", visitors: 3, pageviews: 7, share: 0.3182, previousPageviews: 0, pageviewsChange: null }
        ])
        expect(a.topSources).toEqual([
          { source: "google", visitors: 7, sessions: 7, share: 0.6364, previousVisitors: 1, visitorsChange: 6 },
          { source: "direct", visitors: 4, sessions: 4, share: 0.3636, previousVisitors: 0, visitorsChange: null }
        ])
        // countries today: DE 6/11 = 0.5455, previous 60 × 11/1129 = 0.58 → 1, (6−1)/1 = 5; FR 5/11 = 0.4545, none then
        expect(a.topCountries).toEqual([
          { country: "DE", visitors: 6, share: 0.5455, previousVisitors: 1, visitorsChange: 5 },
          { country: "FR", visitors: 5, share: 0.4545, previousVisitors: 0, visitorsChange: null }
        ])
      }))

    it.effect("yesterday: the whole day from its daily row, against the day before; 24 hour points", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=yesterday`, secret)
        expect(a.range).toEqual({
          start: "2026-11-19T00:00:00.000Z",
          end: "2026-11-20T00:00:00.000Z",
          timezone: "UTC",
          from: "2026-11-19",
          to: "2026-11-19"
        })
        // 11-19: 60/150 = 0.4, 15000/150 = 100, 300/150 = 2; 11-18: 25/50 = 0.5, 100, 80/50 = 1.6
        expect(a.totals).toEqual({
          visitors: 100,
          visitorsMethod: "sum_of_daily_uniques",
          pageviews: 300,
          sessions: 150,
          bounceRate: 0.4,
          avgSessionSeconds: 100,
          pagesPerSession: 2
        })
        expect(a.previous.totals).toEqual({
          visitors: 40,
          visitorsMethod: "sum_of_daily_uniques",
          pageviews: 80,
          sessions: 50,
          bounceRate: 0.5,
          avgSessionSeconds: 100,
          pagesPerSession: 1.6
        })
        // (100−40)/40 = 1.5, (300−80)/80 = 2.75, (150−50)/50 = 2, (0.4−0.5)/0.5 = −0.2, 0, (2−1.6)/1.6 = 0.25
        expect(a.change).toEqual({
          visitors: 1.5,
          pageviews: 2.75,
          sessions: 2,
          bounceRate: -0.2,
          avgSessionSeconds: 0,
          pagesPerSession: 0.25
        })
        expect(a.series).toHaveLength(24)
        expect([a.series[11].visitors, a.series[12].visitors, a.series[13].visitors]).toEqual([10, 120, 999])
        // pages of 11-19: "/" 200 of 300 views (none the day before), "/docs" 100 (11-18: 40 → (100−40)/40 = 1.5)
        expect(a.topPages).toEqual([
          { path: "/", visitors: 60, pageviews: 200, share: 0.6667, previousPageviews: 0, pageviewsChange: null },
          { path: "/docs", visitors: 30, pageviews: 100, share: 0.3333, previousPageviews: 40, pageviewsChange: 1.5 }
        ])
        // google 70 of 100 visitors; 11-18: 10 → (70−10)/10 = 6
        expect(a.topSources).toEqual([{
          source: "google",
          visitors: 70,
          sessions: 90,
          share: 0.7,
          previousVisitors: 10,
          visitorsChange: 6
        }])
        // DE 60, 11-18: 20 → (60−20)/20 = 2; US 40, none then
        expect(a.topCountries).toEqual([
          { country: "DE", visitors: 60, share: 0.6, previousVisitors: 20, visitorsChange: 2 },
          { country: "US", visitors: 40, share: 0.4, previousVisitors: 0, visitorsChange: null }
        ])
      }))

    it.effect("7d: the provider's range uniques; pages summed over the days", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=7d`, secret)
        expect(a.granularity).toBe("day")
        expect(a.range.from).toBe("2026-11-14")
        expect(a.totals).toEqual({
          visitors: 105,
          visitorsMethod: "range_uniques",
          pageviews: 402,
          sessions: 211,
          bounceRate: 0.4171,
          avgSessionSeconds: 100,
          pagesPerSession: 1.9052
        })
        expect(a.change.visitors).toBe(-0.475) // (105 − 200)/200
        // "/" 200+15 = 215 views (share 215/402 = 0.5348), 60+8 = 68 visitors; "/docs" 40+100 = 140 (0.3483), 20+30 =
        // 50;
        // "/pricing" 7 (0.0174). Previous 11-07 … 11-13 (11-10): "/" 172 → 43/172 = 0.25, "/docs" 80 → 60/80 = 0.75,
        // "/pricing" none
        expect(a.topPages).toEqual([
          { path: "/", visitors: 68, pageviews: 215, share: 0.5348, previousPageviews: 172, pageviewsChange: 0.25 },
          { path: "/docs", visitors: 50, pageviews: 140, share: 0.3483, previousPageviews: 80, pageviewsChange: 0.75 },
          { path: "/pricing", visitors: 3, pageviews: 7, share: 0.0174, previousPageviews: 0, pageviewsChange: null }
        ])
        // google 10+70+7 = 87 of 105 visitors = 0.8286, sessions 12+90+7 = 109, previous 58 → 29/58 = 0.5; direct 4/105
        // = 0.0381
        expect(a.topSources).toEqual([
          { source: "google", visitors: 87, sessions: 109, share: 0.8286, previousVisitors: 58, visitorsChange: 0.5 },
          { source: "direct", visitors: 4, sessions: 4, share: 0.0381, previousVisitors: 0, visitorsChange: null }
        ])
        // DE 20+60+6 = 86 (86/105 = 0.819), previous 120 → −34/120 = −0.2833; US 40 (0.381), 80 → −0.5; FR 5 (0.0476),
        // none
        expect(a.topCountries).toEqual([
          { country: "DE", visitors: 86, share: 0.819, previousVisitors: 120, visitorsChange: -0.2833 },
          { country: "US", visitors: 40, share: 0.381, previousVisitors: 80, visitorsChange: -0.5 },
          { country: "FR", visitors: 5, share: 0.0476, previousVisitors: 0, visitorsChange: null }
        ])
      }))

    it.effect("the store sums the previous range for the keys of the top only", () =>
      Effect.gen(function*() {
        const { id } = yield* provider()
        const q = {
          hoursFrom: "2026-11-20T00:00:00Z",
          hoursTo: "2026-11-20T00:00:00Z",
          from: "2026-11-14",
          to: "2026-11-20",
          topFrom: "2026-11-14",
          topTo: "2026-11-20",
          top: 1
        }
        const w = yield* traffic((t) => t.read(id, { ...q, prevTopFrom: "2026-11-07", prevTopTo: "2026-11-13" }))
        expect([w.pages, w.previousPages]).toEqual([[{ path: "/", visitors: 68, pageviews: 215 }], [{
          path: "/",
          visitors: 50,
          pageviews: 172
        }]])
        expect([w.sources, w.previousSources]).toEqual([[{ source: "google", visitors: 87, sessions: 109 }], [{
          source: "google",
          visitors: 58,
          sessions: 70
        }]])
        // US had 80 in the previous range but is not in the top 1: not read
        expect([w.countries, w.previousCountries]).toEqual([[{ country: "DE", visitors: 86 }], [{
          country: "DE",
          visitors: 120
        }]])
        // Without a previous range, nothing previous is read
        const none = yield* traffic((t) => t.read(id, q))
        expect([none.previousPages, none.previousSources, none.previousCountries]).toEqual([[], [], []])
      }))

    it.effect("30d (the default): sum of daily uniques, zero-filled days", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(path, secret)
        expect(a.period).toBe("30d")
        expect(a.range).toMatchObject({
          from: "2026-10-22",
          to: "2026-11-20",
          start: "2026-10-22T00:00:00.000Z",
          end: "2026-11-21T00:00:00.000Z"
        })
        // 11-10, 11-18, 11-19, 11-20: 200+40+100+11 = 351; views 400+80+300+22 = 802; sessions 250+50+150+11 = 461;
        // bounces 100+25+60+3 = 188 → 0.4078; 46100 s / 461 = 100; 802/461 = 1.7397
        expect(a.totals).toEqual({
          visitors: 351,
          visitorsMethod: "sum_of_daily_uniques",
          pageviews: 802,
          sessions: 461,
          bounceRate: 0.4078,
          avgSessionSeconds: 100,
          pagesPerSession: 1.7397
        })
        // previous 09-22…10-21: 10-15 only
        expect(a.previous.range).toMatchObject({ from: "2026-09-22", to: "2026-10-21" })
        expect(a.previous.totals).toMatchObject({ visitors: 500, pageviews: 1000, sessions: 600, bounceRate: 0.5 })
        expect(a.change).toMatchObject({ visitors: -0.298, pageviews: -0.198 }) // (351−500)/500, (802−1000)/1000
        expect(a.series).toHaveLength(30)
        expect(a.series.filter((p: any) => p.visitors > 0).map((p: any) => p.label)).toEqual([
          "2026-11-10",
          "2026-11-18",
          "2026-11-19",
          "2026-11-20"
        ])
        expect(yield* get(`${path}?period=30d`, secret)).toEqual(a)
      }))

    it.effect("3m: calendar months to date; an empty previous period gives null changes", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=3m`, secret)
        expect(a.granularity).toBe("day")
        expect(a.range).toMatchObject({ from: "2026-09-01", to: "2026-11-20" })
        expect(a.series).toHaveLength(81) // 30 + 31 + 20
        expect(a.totals.visitors).toBe(851) // 500 + 351
        expect(a.previous.range).toMatchObject({ from: "2026-06-12", to: "2026-08-31" })
        expect(a.previous.totals).toMatchObject({ visitors: 0, sessions: 0, bounceRate: null, avgSessionSeconds: null })
        expect(a.change).toEqual({
          visitors: null,
          pageviews: null,
          sessions: null,
          bounceRate: null,
          avgSessionSeconds: null,
          pagesPerSession: null
        })
      }))

    it.effect("12m: month buckets, October from the stored month uniques", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=12m`, secret)
        expect(a.granularity).toBe("month")
        expect(a.series.map((p: any) => [p.label, p.visitors, p.visitorsMethod])).toEqual([
          ["2025-12", 0, "sum_of_daily_uniques"],
          ["2026-01", 7, "sum_of_daily_uniques"],
          ["2026-02", 0, "sum_of_daily_uniques"],
          ["2026-03", 0, "sum_of_daily_uniques"],
          ["2026-04", 0, "sum_of_daily_uniques"],
          ["2026-05", 0, "sum_of_daily_uniques"],
          ["2026-06", 0, "sum_of_daily_uniques"],
          ["2026-07", 0, "sum_of_daily_uniques"],
          ["2026-08", 0, "sum_of_daily_uniques"],
          ["2026-09", 0, "sum_of_daily_uniques"],
          ["2026-10", 480, "range_uniques"],
          ["2026-11", 351, "sum_of_daily_uniques"]
        ])
        expect(a.totals).toMatchObject({ visitors: 858, pageviews: 1816 }) // 7+500+351; 14+1000+802
        expect(a.previous.totals.visitors).toBe(3) // 2025-11-30, in 2024-12-11…2025-11-30
      }))

    it.effect("all: since the first stored day, no previous", () =>
      Effect.gen(function*() {
        const { path, secret } = yield* provider()
        const a = yield* get(`${path}?period=all`, secret)
        expect(a.range).toMatchObject({ from: "2025-11-30", to: "2026-11-20", start: "2025-11-30T00:00:00.000Z" })
        expect(a.series).toHaveLength(13)
        expect(a.totals.visitors).toBe(861)
        expect(a.previous).toBeNull()
        expect(a.change.visitors).toBeNull()
        // no previous period: the tops' previous figures and changes are null
        expect(a.topPages[0]).toMatchObject({ path: "/", previousPageviews: null, pageviewsChange: null })
        expect(a.topSources[0]).toMatchObject({ source: "google", previousVisitors: null, visitorsChange: null })
        expect(a.topCountries[0]).toEqual({
          country: "DE",
          visitors: 206,
          share: 0.2393,
          previousVisitors: null,
          visitorsChange: null
        })
      }))

    it.effect("rejects an unknown period with 400 listing the allowed values", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        for (const period of ["5y", "90d", "ALL", ""]) {
          const r = yield* h.raw("GET", `/api/v1/projects/${projects[0].id}/analytics?period=${period}`, {
            token: secret
          })
          expectError(r, 400, "invalid_request")
          const issue = r.json.error.issues.find((i: any) => i.path === "query.period")
          expect(issue, r.text).toBeDefined()
          for (const allowed of ["today", "yesterday", "7d", "30d", "3m", "12m", "all"]) {
            expect(issue.message).toContain(`"${allowed}"`)
          }
        }
      }))

    it.effect("needs analytics:read, and hides other accounts' projects", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount()
        const t = yield* h.mint(account.id, { permissions: ["projects:read", "revenue:read", "seo:read"] })
        const r = yield* h.api.reports.getAnalytics({ params: { id: projects[0].id }, query: { period: "7d" } }, {
          token: t.secret
        })
        expectError(r, 403, "missing_permission")
        const other = yield* h.newAccount()
        expectError(
          yield* h.api.reports.getAnalytics({ params: { id: projects[0].id }, query: {} }, { token: other.secret }),
          404,
          "not_found"
        )
      }))
  })

  describe("event ingest (Europe/Berlin), aggregated on write", () => {
    const readAll = (projectId: string) =>
      traffic((t) =>
        t.read(projectId, {
          hoursFrom: "2026-11-01T00:00:00Z",
          hoursTo: "2026-12-01T00:00:00Z",
          from: "2026-11-01",
          to: "2026-11-30",
          topFrom: "2026-11-20",
          topTo: "2026-11-20",
          top: 10
        })
      )
    const berlinProject = () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount({ projects: 0 })
        const p = yield* h.run(
          createProject({ accountId: account.id, name: "Berlin", domain: "berlin.example", timezone: EVENTS_TZ })
        )
        return { id: p.id, secret }
      })

    it.effect("writes exactly the hourly and local-daily rows, and re-aggregates a continued session where it started", () =>
      Effect.gen(function*() {
        const { id } = yield* berlinProject()
        yield* ingest(id, EVENTS_BATCH_1)
        let w = yield* readAll(id)
        expect(w.hours).toEqual(AFTER_BATCH_1.hours)
        expect(w.days).toEqual(AFTER_BATCH_1.days)
        expect(w.uniques).toEqual(AFTER_BATCH_1.uniques)
        // 11-20's tops as the read sums them (one day, so the stored rows)
        expect(w.pages).toEqual(AFTER_BATCH_1.pages.filter((p) => p.day === "2026-11-20").map(({ day: _, ...p }) => p))
        expect(w.sources).toEqual(
          AFTER_BATCH_1.sources.filter((s) => s.day === "2026-11-20").map(({ day: _, ...s }) => s)
        )
        expect(w.countries).toEqual([]) // events carry no country

        yield* ingest(id, EVENTS_BATCH_2)
        w = yield* readAll(id)
        expect(w.hours).toEqual(AFTER_BATCH_2.hours)
        expect(w.days).toEqual(AFTER_BATCH_2.days)
        expect(w.pages).toEqual(AFTER_BATCH_2.pages.filter((p) => p.day === "2026-11-20").map(({ day: _, ...p }) => p))
        expect(w.sources).toEqual(
          AFTER_BATCH_2.sources.filter((s) => s.day === "2026-11-20").map(({ day: _, ...s }) => s)
        )
        // 11-19's tops are stored too
        const before = yield* traffic((t) =>
          t.read(id, {
            hoursFrom: "2026-11-19T00:00:00Z",
            hoursTo: "2026-11-19T00:00:00Z",
            from: "2026-11-19",
            to: "2026-11-19",
            topFrom: "2026-11-19",
            topTo: "2026-11-19",
            top: 10
          })
        )
        expect(before.pages).toEqual([{ path: "/", visitors: 1, pageviews: 1 }, {
          path: "/blog",
          visitors: 1,
          pageviews: 1
        }])
        expect(before.sources).toEqual([{ source: "google", visitors: 1, sessions: 1 }, {
          source: "twitter",
          visitors: 1,
          sessions: 1
        }])
      }))

    it.effect("the report reads the ingested aggregates: today in Berlin (13:00:30 CET)", () =>
      Effect.gen(function*() {
        const { id, secret } = yield* berlinProject()
        yield* ingest(id, EVENTS_BATCH_1)
        yield* ingest(id, EVENTS_BATCH_2)
        const a = yield* get(`/api/v1/projects/${id}/analytics?period=today`, secret)
        expect(a.range).toEqual({
          start: "2026-11-19T23:00:00.000Z",
          end: "2026-11-20T12:00:30.000Z",
          timezone: EVENTS_TZ,
          from: "2026-11-20",
          to: "2026-11-20"
        })
        // hours 23:00Z (2,2,1,1,20) + 00:00Z (1,1,0,0,0) + 08:00Z (1,1,1,1,10): 4 hourly visitors, 4 views, 2 sessions,
        // 2 bounces
        expect(a.totals).toEqual({
          visitors: 4,
          visitorsMethod: "sum_of_hourly_uniques",
          pageviews: 4,
          sessions: 2,
          bounceRate: 1,
          avgSessionSeconds: 15,
          pagesPerSession: 2
        })
        // yesterday 00:00–13:00:30 local had nothing (the 11-19 events are at 23:30 and 23:50): every change null
        expect(a.previous.totals).toMatchObject({ visitors: 0, sessions: 0, bounceRate: null })
        expect(a.change).toEqual({
          visitors: null,
          pageviews: null,
          sessions: null,
          bounceRate: null,
          avgSessionSeconds: null,
          pagesPerSession: null
        })
        expect(a.series).toHaveLength(14) // 00:00 … 13:00 local
        expect(a.series.slice(0, 2).map((p: any) => [p.label, p.visitors])).toEqual([["2026-11-20T00:00+01:00", 2], [
          "2026-11-20T01:00+01:00",
          1
        ]])
        // 7d, day buckets: 11-19 has 2 visitors, 11-20 has 2 (distinct per local day)
        const week = yield* get(`/api/v1/projects/${id}/analytics?period=7d`, secret)
        expect(week.series.slice(-2).map((p: any) => [p.label, p.visitors, p.pageviews])).toEqual([
          ["2026-11-19", 2, 2],
          ["2026-11-20", 2, 4]
        ])
        expect(week.totals).toMatchObject({
          visitors: 4,
          visitorsMethod: "sum_of_daily_uniques",
          pageviews: 6,
          sessions: 4,
          bounceRate: 0.5
        })
      }))
  })
})
