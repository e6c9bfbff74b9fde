/**
 * The Plausible connector against a local fake of the Stats API v2 (packages/fakes/src/FakePlausible.ts), writing
 * through the real TrafficRepo of the harness and read back through GET /analytics: the hand-worked site of
 * fixtures/plausibleFixtures.ts, DST hours, pagination, 429 + Retry-After, 5xx, malformed bodies, a revoked
 * key, incremental ranges and idempotence.
 */
import { expect, layer } from "@effect/vitest"
import { type FakePlausible, startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { Effect, Result } from "effect"
import { createProject } from "../src/accounts/Provisioning.ts"
import type { SyncContext } from "../src/integrations/Connector.ts"
import { makePlausibleConnector, type PlausibleOptions } from "../src/integrations/plausible/PlausibleConnector.ts"
import { countryRows, hourRows } from "../src/integrations/plausible/PlausibleMap.ts"
import { makeProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { TrafficRepo } from "../src/traffic/TrafficRepo.ts"
import {
  BERLIN,
  PLAUSIBLE_DATA,
  PLAUSIBLE_EXPECTED_7D,
  PLAUSIBLE_EXPECTED_DST_HOURS,
  PLAUSIBLE_KEY,
  PLAUSIBLE_SITE,
  PLAUSIBLE_STORED_SPAN
} from "./fixtures/plausibleFixtures.ts"
import { h, START, TestApp } from "./support/TestApp.ts"

const http = makeProviderHttp({ timeoutMs: 5_000, maxAttempts: 4, backoffBaseMs: 5, maxWaitMs: 5_000 })
const OPTIONS: PlausibleOptions = { historyMonths: 1, pageLimit: 2 }

/** The test's fake Plausible, stopped when the test ends. */
let fake: FakePlausible

const setup = (data = PLAUSIBLE_DATA(), siteTimezone?: string) =>
  Effect.gen(function*() {
    fake = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startFakePlausible({
          apiKey: PLAUSIBLE_KEY,
          siteId: PLAUSIBLE_SITE,
          data,
          ...(siteTimezone === undefined ? {} : { siteTimezone })
        })
      ),
      (f) => Effect.promise(() => f.close())
    )
    const { account, secret } = yield* h.newAccount({ projects: 0 })
    const project = yield* h.run(
      createProject({ accountId: account.id, name: "Shop", domain: PLAUSIBLE_SITE, timezone: BERLIN })
    )
    const ctx = (over: Partial<SyncContext> = {}): SyncContext => ({
      baseUrl: fake.url,
      credentials: { api_key: PLAUSIBLE_KEY, site_id: PLAUSIBLE_SITE },
      http,
      projectId: project.id,
      timezone: BERLIN,
      currency: "EUR",
      now: new Date(START),
      mode: "full",
      state: null,
      ...over
    })
    return { id: project.id, secret, ctx }
  })

const sync = (c: SyncContext, options: PlausibleOptions = OPTIONS) =>
  h.run(Effect.result(makePlausibleConnector(options).sync(c)))

/** Everything stored for the run's span: hours, days, tops and uniques. */
const stored = (projectId: string) =>
  h.run(Effect.flatMap(TrafficRepo, (t) => t.read(projectId, PLAUSIBLE_STORED_SPAN)))

layer(TestApp.layer())("Plausible connector", (it) => {
  it.effect("stores the hand-worked site and the analytics report shows its figures exactly", () =>
    Effect.gen(function*() {
      const { id, secret, ctx } = yield* setup()
      const outcome = yield* sync(ctx())
      expect(Result.isSuccess(outcome)).toBe(true)
      const { counts, state } = (outcome as Result.Success<any, any>).success
      // Days 10-01 … 11-20 = 31 + 20 = 51. Hours: the 35 local days 10-17 … 11-20: 33 ordinary days × 24, the
      // DST day 10-25 with 25, and today up to the hour in progress (11-19T23:00Z … 11-20T12:00Z) = 14.
      expect(counts.days).toBe(51)
      expect(counts.hours).toBe(33 * 24 + 25 + 14)
      expect(counts.pages).toBe(9)
      expect(counts.sources).toBe(8)
      expect(counts.countries).toBe(8)
      expect(counts.uniques).toBe(2)
      expect(state).toEqual({ lastDay: "2026-11-20", siteTimezone: null }) // a Stats-only key: the project's zone

      const a =
        (yield* h.api.reports.getAnalytics({ params: { id }, query: { period: "7d" } }, { token: secret })).json.data
      expect(a.range).toMatchObject({
        from: "2026-11-14",
        to: "2026-11-20",
        timezone: BERLIN,
        start: "2026-11-13T23:00:00.000Z"
      })
      expect(a.totals).toEqual(PLAUSIBLE_EXPECTED_7D.totals)
      expect(a.previous.totals).toEqual(PLAUSIBLE_EXPECTED_7D.previousTotals)
      expect(a.change).toEqual(PLAUSIBLE_EXPECTED_7D.change)
      expect(a.topPages).toEqual(PLAUSIBLE_EXPECTED_7D.topPages)
      expect(a.topSources).toEqual(PLAUSIBLE_EXPECTED_7D.topSources)
      expect(a.topCountries).toEqual(PLAUSIBLE_EXPECTED_7D.topCountries)
      const countryCalls = fake.requests.filter((r) => r.body?.dimensions?.includes("visit:country")).map((r) => r.body)
      expect(countryCalls[0]).toMatchObject({
        metrics: ["visitors"],
        dimensions: ["time:day", "visit:country"],
        date_range: ["2026-10-01", "2026-11-20"]
      })
      // 8 country rows, 2 per page: 2, 2, 2, 2, then an empty page.
      expect(countryCalls.map((b) => b?.pagination?.offset)).toEqual([0, 2, 4, 6, 8])

      // Month buckets take the provider's uniques of exactly that span: October 5, November (to today) 25.
      const y =
        (yield* h.api.reports.getAnalytics({ params: { id }, query: { period: "12m" } }, { token: secret })).json.data
      const month = (label: string) => y.series.find((p: any) => p.label === label)
      expect(month("2026-10")).toMatchObject({
        visitors: 5,
        visitorsMethod: "range_uniques",
        pageviews: 10,
        sessions: 5
      })
      expect(month("2026-11")).toMatchObject({
        visitors: 25,
        visitorsMethod: "range_uniques",
        pageviews: 80,
        sessions: 35
      })
    }))

  it.effect("reads the site's time zone from Plausible's Sites API and places the hour labels in it; a key that may not read it leaves the project's", () =>
    Effect.gen(function*() {
      // One visit at 20:00 on 11-19 by the site's clock. The project is in Berlin.
      const data = {
        days: { "2026-11-19": [1, 1, 2, 0, 10] as const },
        hours: { "2026-11-19 20:00:00": [1, 1, 2, 0, 10] as const },
        pages: [],
        sources: [],
        countries: [],
        uniques: {}
      }
      const hourOf = (id: string) =>
        Effect.map(
          h.run(Effect.flatMap(TrafficRepo, (t) =>
            t.read(id, {
              hoursFrom: "2026-11-19T00:00:00.000Z",
              hoursTo: "2026-11-20T12:00:00.000Z",
              from: "2026-11-19",
              to: "2026-11-20",
              topFrom: "2026-11-19",
              topTo: "2026-11-20",
              top: 1
            }))),
          (read) => read.hours.filter((r) => r.visitors > 0).map((r) => r.hour)
        )
      // The site is in New York: 20:00 there is 01:00 UTC the next day.
      const ny = yield* Effect.scoped(Effect.gen(function*() {
        const ny = yield* setup(data, "America/New_York")
        const outcome = yield* sync(ny.ctx())
        expect((outcome as Result.Success<any, any>).success.state).toEqual({
          lastDay: "2026-11-20",
          siteTimezone: "America/New_York"
        })
        expect(fake.siteRequests.map((r) => r.authorization)).toEqual([`Bearer ${PLAUSIBLE_KEY}`])
        return ny
      }))
      expect(yield* hourOf(ny.id)).toEqual(["2026-11-20T01:00:00.000Z"])
      // The key cannot read the Sites API (401 there): the project's zone, Berlin — 20:00 is 19:00 UTC.
      const berlin = yield* setup(data)
      const fallback = yield* sync(berlin.ctx())
      expect((fallback as Result.Success<any, any>).success.state).toEqual({
        lastDay: "2026-11-20",
        siteTimezone: null
      })
      expect(yield* hourOf(berlin.id)).toEqual(["2026-11-19T19:00:00.000Z"])
    }))

  it.effect("puts the hours of Berlin's 25-hour DST day on the right UTC hours", () =>
    Effect.gen(function*() {
      const { id, ctx } = yield* setup()
      yield* sync(ctx())
      const hours = yield* h.run(Effect.flatMap(TrafficRepo, (t) =>
        t.read(id, {
          hoursFrom: "2026-10-24T22:00:00.000Z",
          hoursTo: "2026-10-25T23:00:00.000Z",
          from: "2026-10-25",
          to: "2026-10-25",
          topFrom: "2026-10-25",
          topTo: "2026-10-25",
          top: 10
        })))
      expect(hours.hours).toHaveLength(25) // a zero row for every UTC hour of the local day
      const nonZero = hours.hours.filter((r) => r.pageviews > 0).map((
        r
      ) => [r.hour, r.visitors, r.pageviews, r.sessions, r.bounces, r.durationSeconds])
      expect(nonZero).toEqual(PLAUSIBLE_EXPECTED_DST_HOURS)
      expect(hours.days).toEqual([{
        day: "2026-10-25",
        visitors: 5,
        pageviews: 10,
        sessions: 5,
        bounces: 1,
        durationSeconds: 150
      }])
    }))

  it.effect("keeps a day's countries by ISO 3166-1 alpha-2 code, leaving out values that are none", () =>
    Effect.sync(() => {
      const rows = countryRows([
        { dimensions: ["2026-11-14", "DE"], metrics: [6] },
        { dimensions: ["2026-11-14", "us"], metrics: [2] }, // a lower-case code is still the code
        { dimensions: ["2026-11-14", "US"], metrics: [1] }, // … and merges with its upper-case row
        { dimensions: ["2026-11-14", ""], metrics: [3] }, // not located
        { dimensions: ["2026-11-14", "Germany"], metrics: [4] }, // a name, not a code
        { dimensions: ["2026-11-15", "FR"], metrics: [null] }
      ])
      expect(rows).toEqual([
        { day: "2026-11-14", country: "DE", visitors: 6 },
        { day: "2026-11-14", country: "US", visitors: 3 },
        { day: "2026-11-15", country: "FR", visitors: 0 }
      ])
    }))

  it("maps the spring DST day (23 hours) without a 02:00", () => {
    // 2026-03-29 Berlin: 01:00 CET = 00:00Z, then 03:00 CEST = 01:00Z.
    const rows = hourRows(
      [{ dimensions: ["2026-03-29 01:00:00"], metrics: [1, 1, 1, 100, 5] }, {
        dimensions: ["2026-03-29 03:00:00"],
        metrics: [2, 2, 4, 0, 10]
      }],
      "2026-03-29",
      "2026-03-29",
      BERLIN,
      Date.parse("2026-04-01T00:00:00Z")
    )
    expect(rows).toHaveLength(23)
    expect(rows[0].hour).toBe("2026-03-28T23:00:00.000Z")
    expect(rows.filter((r) => r.visitors > 0)).toEqual([
      { hour: "2026-03-29T00:00:00.000Z", visitors: 1, pageviews: 1, sessions: 1, bounces: 1, durationSeconds: 5 },
      { hour: "2026-03-29T01:00:00.000Z", visitors: 2, pageviews: 4, sessions: 2, bounces: 0, durationSeconds: 20 }
    ])
  })

  it.effect("pages through breakdowns with pagination {limit, offset} until a short page", () =>
    Effect.gen(function*() {
      const { ctx } = yield* setup()
      yield* sync(ctx())
      const pageCalls = fake.requests.filter((r) => r.body?.dimensions?.includes("event:page")).map((r) =>
        r.body?.pagination
      )
      // 9 page rows, 2 per page: 2, 2, 2, 2, 1.
      expect(pageCalls).toEqual([{ limit: 2, offset: 0 }, { limit: 2, offset: 2 }, { limit: 2, offset: 4 }, {
        limit: 2,
        offset: 6
      }, { limit: 2, offset: 8 }])
      expect(
        fake.requests.every((r) => r.authorization === `Bearer ${PLAUSIBLE_KEY}` && r.body?.site_id === PLAUSIBLE_SITE)
      ).toBe(true)
    }))

  it.effect("waits for Retry-After on 429 and backs off on 5xx, then stores the same data", () =>
    Effect.gen(function*() {
      const { id, ctx } = yield* setup()
      fake.script.push({
        status: 429,
        headers: { "retry-after": "1" },
        body: JSON.stringify({ error: "Too many requests" })
      })
      fake.script.push(null, { status: 500, body: "{}" }, { status: 503, body: "" })
      const outcome = yield* sync(ctx())
      expect(Result.isSuccess(outcome)).toBe(true)
      expect(fake.requests[1].at - fake.requests[0].at).toBeGreaterThanOrEqual(950)
      const once = yield* stored(id)

      const { id: id2, ctx: ctx2 } = yield* setup()
      yield* sync(ctx2())
      expect(yield* stored(id2)).toEqual(once)
    }))

  it.effect("fails a malformed answer and leaves the stored data as it was", () =>
    Effect.gen(function*() {
      const { id, ctx } = yield* setup()
      yield* sync(ctx())
      const before = yield* stored(id)
      fake.data = { ...PLAUSIBLE_DATA(), days: { ...PLAUSIBLE_DATA().days, "2026-11-20": [99, 99, 99, 0, 0] } }
      // The first two pages of days come back fine; the third is not JSON (nothing is written).
      fake.script.push(null, null, { status: 200, body: "<html>maintenance</html>" })
      const failed = yield* sync(ctx())
      expect(Result.isFailure(failed)).toBe(true)
      expect((failed as Result.Failure<any, any>).failure.kind).toBe("malformed")
      expect(yield* stored(id)).toEqual(before)
      // A body that is JSON but not the v2 shape fails the same way.
      fake.script.push({
        status: 200,
        body: JSON.stringify({ results: [{ dimensions: ["2026-11-20"], metrics: ["many"] }] })
      })
      const wrong = yield* sync(ctx())
      expect((wrong as Result.Failure<any, any>).failure.kind).toBe("malformed")
      expect(yield* stored(id)).toEqual(before)
    }))

  it.effect("says the key was revoked (401), in validate and sync, without the key in the message", () =>
    Effect.gen(function*() {
      const { id, ctx } = yield* setup()
      const connector = makePlausibleConnector(OPTIONS)
      expect(Result.isSuccess(yield* h.run(Effect.result(connector.validate(ctx()))))).toBe(true)
      expect(fake.requests[0].body).toMatchObject({ metrics: ["visitors"], date_range: ["2026-11-19", "2026-11-19"] })
      fake.revoke()
      const v = yield* h.run(Effect.result(connector.validate(ctx())))
      const s = yield* sync(ctx())
      for (const r of [v, s]) {
        const e = (r as Result.Failure<any, any>).failure
        expect(e.kind).toBe("unauthorized")
        expect(e.message).toMatch(/reconnect/)
        expect(e.message).not.toContain(PLAUSIBLE_KEY)
      }
      expect((yield* stored(id)).days).toEqual([])
    }))

  it.effect("is idempotent, and an incremental run starts two days before the last day fetched", () =>
    Effect.gen(function*() {
      const { id, ctx } = yield* setup()
      const first = yield* sync(ctx())
      const after1 = yield* stored(id)
      yield* sync(ctx())
      expect(yield* stored(id)).toEqual(after1)

      // A day later: late events revise 11-19 (2 days back from the last fetched day 11-20 + 1).
      fake.data = {
        ...PLAUSIBLE_DATA(),
        days: { ...PLAUSIBLE_DATA().days, "2026-11-19": [3, 3, 6, 0, 40], "2026-11-21": [1, 1, 1, 100, 0] }
      }
      const n = fake.requests.length
      const next = yield* sync(
        ctx({
          mode: "incremental",
          state: (first as Result.Success<any, any>).success.state,
          now: new Date(START + 86_400_000)
        })
      )
      const dayCall = fake.requests.slice(n).find((r) =>
        r.body?.dimensions?.[0] === "time:day" && r.body.dimensions.length === 1
      )
      expect(dayCall?.body?.date_range).toEqual(["2026-11-18", "2026-11-21"])
      expect((next as Result.Success<any, any>).success.counts.days).toBe(4)
      const after2 = yield* stored(id)
      expect(after2.days.find((d) => d.day === "2026-11-19")).toEqual({
        day: "2026-11-19",
        visitors: 3,
        pageviews: 6,
        sessions: 3,
        bounces: 0,
        durationSeconds: 120
      })
      expect(after2.days.find((d) => d.day === "2026-11-14")).toEqual(after1.days.find((d) => d.day === "2026-11-14"))
    }))
})
