/**
 * The Search Console connector against a local fake Google (packages/fakes/src/FakeGsc.ts: token endpoint and
 * Search Analytics API), writing through the real SearchRepo of the harness and read back through GET /seo:
 * the hand-worked property of fixtures/gscFixtures.ts, startRow paging, the 2–3 day lag, OAuth refresh
 * (cached token, expiry mid-run, revoked refresh token), 429, 5xx, malformed bodies and idempotence.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { type FakeGsc, startFakeGsc } from "@sitehealth/fakes/FakeGsc"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import type { SyncContext } from "../src/integrations/Connector.ts"
import { makeTokenSource } from "../src/integrations/gsc/GoogleToken.ts"
import { type GscOptions, makeGscConnector, pacificDayShift } from "../src/integrations/gsc/GscConnector.ts"
import { makeTopPerDay } from "../src/integrations/gsc/GscMap.ts"
import { makeProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { addDays } from "../src/metrics/Dates.ts"
import { SearchRepo } from "../src/search/SearchRepo.ts"
import { GSC_CREDENTIALS, GSC_EXPECTED_7D, GSC_ROWS, GSC_TOTALS } from "./fixtures/gscFixtures.ts"
import { h, START, TestApp } from "./support/TestApp.ts"

const http = makeProviderHttp({ timeoutMs: 5_000, maxAttempts: 4, backoffBaseMs: 5, maxWaitMs: 5_000 })

/** The test's fake Google, stopped when the test ends. */
let fake: FakeGsc

const setup = (fakeOptions: { tokenUses?: number } = {}) =>
  Effect.gen(function*() {
    fake = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startFakeGsc({
          clientId: GSC_CREDENTIALS.client_id,
          clientSecret: GSC_CREDENTIALS.client_secret,
          refreshToken: GSC_CREDENTIALS.refresh_token,
          siteUrl: GSC_CREDENTIALS.site_url,
          rows: GSC_ROWS(),
          totals: GSC_TOTALS(),
          ...fakeOptions
        })
      ),
      (f) => Effect.promise(() => f.close())
    )
    const { projects, secret } = yield* h.newAccount()
    const tokens = makeTokenSource({ GOOGLE_TOKEN_URL: fake.tokenUrl })
    const connector = (over: GscOptions = {}) => makeGscConnector({ historyMonths: 1, rowLimit: 2, tokens, ...over })
    const ctx = (over: Partial<SyncContext> = {}): SyncContext => ({
      baseUrl: fake.url,
      credentials: GSC_CREDENTIALS,
      http,
      projectId: projects[0].id,
      timezone: "UTC",
      currency: "USD",
      now: new Date(START),
      mode: "full",
      state: null,
      ...over
    })
    return { id: projects[0].id, secret, ctx, connector, tokens }
  })

const run = <A>(effect: Effect.Effect<A, any, any>) => h.run(Effect.result(effect))
const failure = (r: Result.Result<any, any>) => (r as Result.Failure<any, any>).failure
const success = (r: Result.Result<any, any>) => (r as Result.Success<any, any>).success

const stored = (projectId: string) =>
  h.run(Effect.flatMap(SearchRepo, (s) =>
    Effect.all({
      totals: s.loadTotals(projectId, "2026-01-01", "2026-12-31"),
      queries: s.loadQueryDays(projectId, "2026-01-01", "2026-12-31"),
      pages: s.loadPageDays(projectId, "2026-01-01", "2026-12-31")
    }))).pipe(Effect.map((d) => ({
      totals: d.totals,
      // Sorted: the stores return rows in their own order.
      queries: [...d.queries].sort((a, b) => (`${a.day}|${a.query}` < `${b.day}|${b.query}` ? -1 : 1)),
      pages: [...d.pages].sort((a, b) => (`${a.day}|${a.page}` < `${b.day}|${b.page}` ? -1 : 1))
    })))

layer(TestApp.layer())("Search Console connector", (it) => {
  it.effect("stores the hand-worked property and the SEO report shows its figures exactly", () =>
    Effect.gen(function*() {
      const { id, secret, ctx, connector, tokens } = yield* setup()
      const outcome = yield* run(connector().sync(ctx()))
      expect(Result.isSuccess(outcome)).toBe(true)
      // Totals: 6 days; (date, query): 8 rows; (date, page): 7 (11-17 pricing groups two queries).
      expect(success(outcome).counts).toMatchObject({ days: 6, queries: 8, pages: 7 })
      expect(success(outcome).state).toEqual({ dataThrough: "2026-11-17" })
      expect(tokens.exchanges()).toBe(1) // one access token for the whole run

      const s = yield* stored(id)
      expect(s.totals.find((t) => t.day === "2026-11-17")).toEqual({
        day: "2026-11-17",
        clicks: 4,
        impressions: 65,
        positionWeighted: 455
      })
      expect(s.pages.find((p) => p.day === "2026-11-17")).toEqual({
        day: "2026-11-17",
        page: "https://shop.example/pricing",
        clicks: 3,
        impressions: 60,
        positionWeighted: 440
      })

      const seo =
        (yield* h.api.reports.getSeo({ params: { id }, query: { period: "7d" } }, { token: secret })).json.data
      expect(seo.window).toEqual(GSC_EXPECTED_7D.window)
      expect(seo.dataThrough).toBe(GSC_EXPECTED_7D.dataThrough)
      expect(seo.lagDays).toBe(GSC_EXPECTED_7D.lagDays)
      expect(seo.totals).toEqual(GSC_EXPECTED_7D.totals)
      const { series: previousSeries, ...previous } = seo.previous
      expect(previous).toEqual({ window: GSC_EXPECTED_7D.previousWindow, totals: GSC_EXPECTED_7D.previousTotals })
      // A point per day of each window, adding up to its totals.
      expect(seo.series).toHaveLength(7)
      expect(previousSeries).toHaveLength(7)
      expect(seo.series.reduce((sum: number, p: { readonly clicks: number }) => sum + p.clicks, 0)).toBe(
        GSC_EXPECTED_7D.totals.clicks
      )
      expect(previousSeries.reduce((sum: number, p: { readonly clicks: number }) => sum + p.clicks, 0)).toBe(
        GSC_EXPECTED_7D.previousTotals.clicks
      )
      expect(seo.series.find((p: { readonly day: string }) => p.day === "2026-11-17")).toMatchObject({
        clicks: 4,
        impressions: 65
      })
      expect(seo.change).toEqual(GSC_EXPECTED_7D.change)
      expect(seo.topQueries).toEqual(GSC_EXPECTED_7D.topQueries)
      expect(seo.topPages).toEqual(GSC_EXPECTED_7D.topPages)
    }))

  it.effect("asks up to today − 2 and pages with startRow until a short page", () =>
    Effect.gen(function*() {
      const { ctx, connector } = yield* setup()
      yield* run(connector().sync(ctx()))
      const queries = fake.apiRequests.filter((r) => r.path.endsWith("/searchAnalytics/query"))
      expect(
        queries.every((r) => r.path === "/webmasters/v3/sites/https%3A%2F%2Fshop.example%2F/searchAnalytics/query")
      ).toBe(true)
      expect(
        queries.every((r) =>
          r.body?.startDate === "2026-10-20" && r.body.endDate === "2026-11-18" && r.body.rowLimit === 2
        )
      ).toBe(true)
      const starts = (dims: string) =>
        queries.filter((r) => r.body?.dimensions.join() === dims).map((r) => r.body?.startRow)
      expect(starts("date")).toEqual([0, 2, 4, 6]) // 6 rows: 2, 2, 2, 0
      expect(starts("date,query")).toEqual([0, 2, 4, 6, 8]) // 8 rows
      expect(starts("date,page")).toEqual([0, 2, 4, 6]) // 7 rows: 2, 2, 2, 1
      expect(fake.tokenRequests).toEqual([{
        grant_type: "refresh_token",
        ...pick(GSC_CREDENTIALS, ["client_id", "client_secret", "refresh_token"])
      }])
    }))

  it.effect("refreshes the access token when it expires mid-run, and stores the same data", () =>
    Effect.gen(function*() {
      const { id: first, ctx: ctx1, connector: c1 } = yield* setup()
      yield* run(c1().sync(ctx1()))
      const reference = yield* stored(first)

      // Each access token dies after 5 API calls: 13 calls → 401 on the 6th and 11th, each refreshed once.
      const { id, ctx, connector, tokens } = yield* setup({ tokenUses: 5 })
      const outcome = yield* run(connector().sync(ctx()))
      expect(Result.isSuccess(outcome)).toBe(true)
      expect(tokens.exchanges()).toBe(3)
      expect(fake.apiRequests).toHaveLength(15)
      expect(new Set(fake.apiRequests.map((r) => r.authorization)).size).toBe(3)
      expect(yield* stored(id)).toEqual(reference)
    }))

  it.effect("keeps the access token until expires_in (minus a minute) runs out, then exchanges again", () =>
    Effect.gen(function*() {
      const { ctx, connector, tokens } = yield* setup()
      const c = connector()
      yield* run(c.validate(ctx()))
      // The file's clock is shared by its tests: back to START however this one ends.
      yield* Effect.gen(function*() {
        yield* TestClock.adjust(3599_000 - 61_000) // the fake's tokens live 3599 s: still valid with the minute's margin
        yield* run(c.validate(ctx()))
        expect(tokens.exchanges()).toBe(1)
        yield* TestClock.adjust(2_000)
        yield* run(c.validate(ctx()))
        expect(tokens.exchanges()).toBe(2)
        expect(fake.apiRequests[2].authorization).not.toBe(fake.apiRequests[0].authorization)
      }).pipe(Effect.ensuring(TestClock.setTime(START)))
    }))

  it.effect("says the refresh token was revoked (invalid_grant), in validate and sync, and stores nothing", () =>
    Effect.gen(function*() {
      const { id, ctx, connector } = yield* setup()
      const c = connector()
      expect(Result.isSuccess(yield* run(c.validate(ctx())))).toBe(true)
      expect(fake.apiRequests[0]).toMatchObject({
        method: "GET",
        path: "/webmasters/v3/sites/https%3A%2F%2Fshop.example%2F"
      })
      fake.revoke()
      const fresh = () =>
        makeGscConnector({ historyMonths: 1, tokens: makeTokenSource({ GOOGLE_TOKEN_URL: fake.tokenUrl }) })
      for (const r of [yield* run(fresh().validate(ctx())), yield* run(fresh().sync(ctx()))]) {
        expect(failure(r).kind).toBe("unauthorized")
        expect(failure(r).message).toContain("the refresh token was revoked; reconnect")
        for (const secret of [GSC_CREDENTIALS.refresh_token, GSC_CREDENTIALS.client_secret]) {
          expect(failure(r).message).not.toContain(secret)
        }
      }
      expect((yield* stored(id)).totals).toEqual([])
    }))

  it.effect("names a property the account cannot read", () =>
    Effect.gen(function*() {
      const { ctx, connector } = yield* setup()
      const r = yield* run(
        connector().validate(ctx({ credentials: { ...GSC_CREDENTIALS, site_url: "sc-domain:other.example" } }))
      )
      expect(failure(r).kind).toBe("forbidden")
      expect(failure(r).message).toContain("site_url")
    }))

  it.effect("waits for Retry-After on 429, backs off on 5xx, and fails a malformed body without writing", () =>
    Effect.gen(function*() {
      const { id, ctx, connector } = yield* setup()
      fake.apiScript.push({
        status: 429,
        headers: { "retry-after": "1" },
        body: JSON.stringify({ error: { code: 429, message: "Quota exceeded", status: "RESOURCE_EXHAUSTED" } })
      })
      fake.apiScript.push(null, { status: 500, body: "{}" }, { status: 503, body: "" })
      expect(Result.isSuccess(yield* run(connector().sync(ctx())))).toBe(true)
      expect(fake.apiRequests[1].at - fake.apiRequests[0].at).toBeGreaterThanOrEqual(950)
      const before = yield* stored(id)

      fake.options.totals = { ...GSC_TOTALS(), "2026-11-17": { clicks: 99, impressions: 999, position: 1 } }
      fake.apiScript.push(null, null, null, null, { status: 200, body: "<html>oops</html>" })
      const broken = yield* run(connector().sync(ctx()))
      expect(failure(broken).kind).toBe("malformed")
      fake.apiScript.push({
        status: 200,
        body: JSON.stringify({ rows: [{ keys: ["2026-11-17", "extra"], clicks: 1, impressions: 1, position: 1 }] })
      })
      const wrongShape = yield* run(connector().sync(ctx()))
      expect(failure(wrongShape).kind).toBe("malformed")
      expect(yield* stored(id)).toEqual(before)
    }))

  it.effect("is idempotent; an incremental run starts 3 days before the last stored day and follows the data", () =>
    Effect.gen(function*() {
      const { id, ctx, connector } = yield* setup()
      const first = success(yield* run(connector().sync(ctx())))
      const once = yield* stored(id)
      yield* run(connector().sync(ctx()))
      expect(yield* stored(id)).toEqual(once)

      // Two days later Search Console has finished 11-18 and 11-19 and revised 11-15.
      fake.options.totals = {
        ...GSC_TOTALS(),
        "2026-11-15": { clicks: 8, impressions: 70, position: 3 },
        "2026-11-18": { clicks: 1, impressions: 5, position: 2 },
        "2026-11-19": { clicks: 2, impressions: 8, position: 4 }
      }
      const n = fake.apiRequests.length
      const next = success(
        yield* run(
          connector().sync(ctx({ mode: "incremental", state: first.state, now: new Date(START + 2 * 86_400_000) }))
        )
      )
      const asked = fake.apiRequests.slice(n).flatMap((
        r
      ) => (r.body === null ? [] : [[r.body.startDate, r.body.endDate]]))
      expect(new Set(asked.map((a) => a.join()))).toEqual(new Set(["2026-11-14,2026-11-20"]))
      expect(next.state).toEqual({ dataThrough: "2026-11-19" })
      const after = yield* stored(id)
      expect(after.totals.find((t) => t.day === "2026-11-15")).toEqual({
        day: "2026-11-15",
        clicks: 8,
        impressions: 70,
        positionWeighted: 210
      })
      expect(after.totals.find((t) => t.day === "2026-11-12")).toEqual(once.totals.find((t) => t.day === "2026-11-12"))
    }))

  it.effect("maps Search Console's Pacific days to the website's days: the same date in UTC, the next one in Tokyo", () =>
    Effect.gen(function*() {
      expect(pacificDayShift("UTC", new Date(START))).toBe(0)
      expect(pacificDayShift("Europe/Berlin", new Date(START))).toBe(0)
      expect(pacificDayShift("America/New_York", new Date(START))).toBe(0)
      expect(pacificDayShift("Pacific/Honolulu", new Date(START))).toBe(0)
      expect(pacificDayShift("Asia/Dubai", new Date(START))).toBe(0) // 11:30 PST = 23:30 in Dubai
      expect(pacificDayShift("Asia/Kolkata", new Date(START))).toBe(1) // = 01:00 the next day
      expect(pacificDayShift("Asia/Tokyo", new Date(START))).toBe(1)
      expect(pacificDayShift("Asia/Tokyo", new Date("2026-07-01T12:00:00Z"))).toBe(1)
      const { id, ctx, connector } = yield* setup()
      const utc = yield* run(connector().sync(ctx()))
      expect(Result.isSuccess(utc)).toBe(true)
      const asStored = yield* stored(id)
      const { projects } = yield* h.newAccount()
      const tokyo = yield* run(connector().sync(ctx({ projectId: projects[0].id, timezone: "Asia/Tokyo" })))
      // The same Search Console dates asked (Pacific), the same cursor; the rows a day later.
      expect(success(tokyo).state).toEqual(success(utc).state)
      const shifted = yield* stored(projects[0].id)
      const next = <R extends { day: string }>(rows: ReadonlyArray<R>) =>
        rows.map((r) => ({ ...r, day: addDays(r.day, 1) }))
      expect(shifted.totals).toEqual(next(asStored.totals))
      expect(shifted.queries).toEqual(next(asStored.queries))
      expect(shifted.pages).toEqual(next(asStored.pages))
    }))
})

describe("per-day top rows", () => {
  it("keeps each day's top rows by clicks, impressions, then key, as the store trims them", () => {
    const top = makeTopPerDay(2)
    const r = (day: string, key: string, clicks: number, impressions: number) => ({
      day,
      key,
      clicks,
      impressions,
      positionWeighted: impressions
    })
    for (
      const row of [
        r("d1", "c", 1, 9),
        r("d1", "a", 5, 1),
        r("d1", "b", 1, 9),
        r("d1", "z", 0, 99),
        r("d2", "x", 0, 1),
        r("d1", "y", 2, 0)
      ]
    ) top.add(row)
    expect(top.rows().map((x) => `${x.day}:${x.key}`)).toEqual(["d1:a", "d1:y", "d2:x"])
    const many = makeTopPerDay(3)
    for (let i = 0; i < 100; i++) many.add(r("d", `k${String(i).padStart(3, "0")}`, i % 10, i))
    expect(many.rows().map((x) => x.key)).toEqual(["k099", "k089", "k079"])
  })
})

const pick = <T extends Record<string, string>>(o: T, keys: ReadonlyArray<keyof T>) =>
  Object.fromEntries(keys.map((k) => [k, o[k]]))
