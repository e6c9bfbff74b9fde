/**
 * The Plausible connector against a local fake of the Stats API v2 (test/fakes/FakePlausible.ts), writing
 * through the real TrafficRepo of the harness and read back through GET /analytics: the hand-worked site of
 * fixtures/plausibleFixtures.ts, DST hours, pagination, 429 + Retry-After, 5xx, malformed bodies, a revoked
 * key, incremental ranges and idempotence.
 */
import { Effect, Result } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { createProject } from "../src/accounts/Provisioning.ts"
import type { SyncContext } from "../src/integrations/Connector.ts"
import { hourRows } from "../src/integrations/plausible/PlausibleMap.ts"
import { makePlausibleConnector, type PlausibleOptions } from "../src/integrations/plausible/PlausibleConnector.ts"
import { makeProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { TrafficRepo } from "../src/traffic/TrafficRepo.ts"
import { type FakePlausible, startFakePlausible } from "./fakes/FakePlausible.ts"
import {
  BERLIN,
  PLAUSIBLE_DATA,
  PLAUSIBLE_EXPECTED_7D,
  PLAUSIBLE_EXPECTED_DST_HOURS,
  PLAUSIBLE_KEY,
  PLAUSIBLE_SITE,
  PLAUSIBLE_STORED_SPAN
} from "./fixtures/plausibleFixtures.ts"
import { type Harness, makeHarness, START } from "./support/Harness.ts"

const http = makeProviderHttp({ timeoutMs: 5_000, maxAttempts: 4, backoffBaseMs: 5, maxWaitMs: 5_000 })
const OPTIONS: PlausibleOptions = { historyMonths: 1, pageLimit: 2 }

let h: Harness
let fake: FakePlausible
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())
afterEach(async () => {
  await fake?.close()
})

const setup = async (data = PLAUSIBLE_DATA(), siteTimezone?: string) => {
  fake = await startFakePlausible({ apiKey: PLAUSIBLE_KEY, siteId: PLAUSIBLE_SITE, data, ...(siteTimezone === undefined ? {} : { siteTimezone }) })
  const { account, secret } = await h.newAccount({ projects: 0 })
  const project = await h.run(createProject({ accountId: account.id, name: "Shop", domain: PLAUSIBLE_SITE, timezone: BERLIN }))
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
}

const sync = (c: SyncContext, options: PlausibleOptions = OPTIONS) => h.run(Effect.result(makePlausibleConnector(options).sync(c)))

/** Everything stored for the run's span: hours, days, tops and uniques. */
const stored = (projectId: string) =>
  h.run(Effect.flatMap(TrafficRepo, (t) => t.read(projectId, PLAUSIBLE_STORED_SPAN)))

describe("Plausible connector", () => {
  it("stores the hand-worked site and the analytics report shows its figures exactly", async () => {
    const { id, secret, ctx } = await setup()
    const outcome = await sync(ctx())
    expect(Result.isSuccess(outcome)).toBe(true)
    const { counts, state } = (outcome as Result.Success<any, any>).success
    // Days 10-01 … 11-20 = 31 + 20 = 51. Hours: the 35 local days 10-17 … 11-20: 33 ordinary days × 24, the
    // DST day 10-25 with 25, and today up to the hour in progress (11-19T23:00Z … 11-20T12:00Z) = 14.
    expect(counts.days).toBe(51)
    expect(counts.hours).toBe(33 * 24 + 25 + 14)
    expect(counts.pages).toBe(7)
    expect(counts.sources).toBe(6)
    expect(counts.uniques).toBe(2)
    expect(state).toEqual({ lastDay: "2026-11-20", siteTimezone: null }) // a Stats-only key: the project's zone

    const a = (await h.call("GET", `/api/v1/projects/${id}/analytics?period=7d`, { token: secret })).json.data
    expect(a.range).toMatchObject({ from: "2026-11-14", to: "2026-11-20", timezone: BERLIN, start: "2026-11-13T23:00:00.000Z" })
    expect(a.totals).toEqual(PLAUSIBLE_EXPECTED_7D.totals)
    expect(a.previous.totals).toEqual(PLAUSIBLE_EXPECTED_7D.previousTotals)
    expect(a.change).toEqual(PLAUSIBLE_EXPECTED_7D.change)
    expect(a.topPages).toEqual(PLAUSIBLE_EXPECTED_7D.topPages)
    expect(a.topSources).toEqual(PLAUSIBLE_EXPECTED_7D.topSources)

    // Month buckets take the provider's uniques of exactly that span: October 5, November (to today) 25.
    const y = (await h.call("GET", `/api/v1/projects/${id}/analytics?period=12m`, { token: secret })).json.data
    const month = (label: string) => y.series.find((p: any) => p.label === label)
    expect(month("2026-10")).toMatchObject({ visitors: 5, visitorsMethod: "range_uniques", pageviews: 10, sessions: 5 })
    expect(month("2026-11")).toMatchObject({ visitors: 25, visitorsMethod: "range_uniques", pageviews: 80, sessions: 35 })
  })

  it("reads the site's time zone from Plausible's Sites API and places the hour labels in it; a key that may not read it leaves the project's", async () => {
    // One visit at 20:00 on 11-19 by the site's clock. The project is in Berlin.
    const data = { days: { "2026-11-19": [1, 1, 2, 0, 10] as const }, hours: { "2026-11-19 20:00:00": [1, 1, 2, 0, 10] as const }, pages: [], sources: [], uniques: {} }
    const hourOf = async (id: string) => {
      const read = await h.run(Effect.flatMap(TrafficRepo, (t) =>
        t.read(id, { hoursFrom: "2026-11-19T00:00:00.000Z", hoursTo: "2026-11-20T12:00:00.000Z", from: "2026-11-19", to: "2026-11-20", topFrom: "2026-11-19", topTo: "2026-11-20", top: 1 })))
      return read.hours.filter((r) => r.visitors > 0).map((r) => r.hour)
    }
    // The site is in New York: 20:00 there is 01:00 UTC the next day.
    const ny = await setup(data, "America/New_York")
    const outcome = await sync(ny.ctx())
    expect((outcome as Result.Success<any, any>).success.state).toEqual({ lastDay: "2026-11-20", siteTimezone: "America/New_York" })
    expect(fake.siteRequests.map((r) => r.authorization)).toEqual([`Bearer ${PLAUSIBLE_KEY}`])
    expect(await hourOf(ny.id)).toEqual(["2026-11-20T01:00:00.000Z"])
    await fake.close()
    // The key cannot read the Sites API (401 there): the project's zone, Berlin — 20:00 is 19:00 UTC.
    const berlin = await setup(data)
    const fallback = await sync(berlin.ctx())
    expect((fallback as Result.Success<any, any>).success.state).toEqual({ lastDay: "2026-11-20", siteTimezone: null })
    expect(await hourOf(berlin.id)).toEqual(["2026-11-19T19:00:00.000Z"])
  })

  it("puts the hours of Berlin's 25-hour DST day on the right UTC hours", async () => {
    const { id, ctx } = await setup()
    await sync(ctx())
    const hours = await h.run(Effect.flatMap(TrafficRepo, (t) =>
      t.read(id, { hoursFrom: "2026-10-24T22:00:00.000Z", hoursTo: "2026-10-25T23:00:00.000Z", from: "2026-10-25", to: "2026-10-25", topFrom: "2026-10-25", topTo: "2026-10-25", top: 10 })))
    expect(hours.hours).toHaveLength(25) // a zero row for every UTC hour of the local day
    const nonZero = hours.hours.filter((r) => r.pageviews > 0).map((r) => [r.hour, r.visitors, r.pageviews, r.sessions, r.bounces, r.durationSeconds])
    expect(nonZero).toEqual(PLAUSIBLE_EXPECTED_DST_HOURS)
    expect(hours.days).toEqual([{ day: "2026-10-25", visitors: 5, pageviews: 10, sessions: 5, bounces: 1, durationSeconds: 150 }])
  })

  it("maps the spring DST day (23 hours) without a 02:00", () => {
    // 2026-03-29 Berlin: 01:00 CET = 00:00Z, then 03:00 CEST = 01:00Z.
    const rows = hourRows(
      [{ dimensions: ["2026-03-29 01:00:00"], metrics: [1, 1, 1, 100, 5] }, { dimensions: ["2026-03-29 03:00:00"], metrics: [2, 2, 4, 0, 10] }],
      "2026-03-29", "2026-03-29", BERLIN, Date.parse("2026-04-01T00:00:00Z")
    )
    expect(rows).toHaveLength(23)
    expect(rows[0].hour).toBe("2026-03-28T23:00:00.000Z")
    expect(rows.filter((r) => r.visitors > 0)).toEqual([
      { hour: "2026-03-29T00:00:00.000Z", visitors: 1, pageviews: 1, sessions: 1, bounces: 1, durationSeconds: 5 },
      { hour: "2026-03-29T01:00:00.000Z", visitors: 2, pageviews: 4, sessions: 2, bounces: 0, durationSeconds: 20 }
    ])
  })

  it("pages through breakdowns with pagination {limit, offset} until a short page", async () => {
    const { ctx } = await setup()
    await sync(ctx())
    const pageCalls = fake.requests.filter((r) => r.body?.dimensions?.includes("event:page")).map((r) => r.body.pagination)
    // 7 page rows, 2 per page: 2, 2, 2, 1.
    expect(pageCalls).toEqual([{ limit: 2, offset: 0 }, { limit: 2, offset: 2 }, { limit: 2, offset: 4 }, { limit: 2, offset: 6 }])
    expect(fake.requests.every((r) => r.authorization === `Bearer ${PLAUSIBLE_KEY}` && r.body.site_id === PLAUSIBLE_SITE)).toBe(true)
  })

  it("waits for Retry-After on 429 and backs off on 5xx, then stores the same data", async () => {
    const { id, ctx } = await setup()
    fake.script.push({ status: 429, headers: { "retry-after": "1" }, body: JSON.stringify({ error: "Too many requests" }) })
    fake.script.push(null, { status: 500, body: "{}" }, { status: 503, body: "" })
    const outcome = await sync(ctx())
    expect(Result.isSuccess(outcome)).toBe(true)
    expect(fake.requests[1].at - fake.requests[0].at).toBeGreaterThanOrEqual(950)
    const once = await stored(id)

    await fake.close()
    const { id: id2, ctx: ctx2 } = await setup()
    await sync(ctx2())
    expect(await stored(id2)).toEqual(once)
  })

  it("fails a malformed answer and leaves the stored data as it was", async () => {
    const { id, ctx } = await setup()
    await sync(ctx())
    const before = await stored(id)
    fake.data = { ...PLAUSIBLE_DATA(), days: { ...PLAUSIBLE_DATA().days, "2026-11-20": [99, 99, 99, 0, 0] } }
    // The first two pages of days come back fine; the third is not JSON (nothing is written).
    fake.script.push(null, null, { status: 200, body: "<html>maintenance</html>" })
    const failed = await sync(ctx())
    expect(Result.isFailure(failed)).toBe(true)
    expect((failed as Result.Failure<any, any>).failure.kind).toBe("malformed")
    expect(await stored(id)).toEqual(before)
    // A body that is JSON but not the v2 shape fails the same way.
    fake.script.push({ status: 200, body: JSON.stringify({ results: [{ dimensions: ["2026-11-20"], metrics: ["many"] }] }) })
    const wrong = await sync(ctx())
    expect((wrong as Result.Failure<any, any>).failure.kind).toBe("malformed")
    expect(await stored(id)).toEqual(before)
  })

  it("says the key was revoked (401), in validate and sync, without the key in the message", async () => {
    const { id, ctx } = await setup()
    const connector = makePlausibleConnector(OPTIONS)
    expect(Result.isSuccess(await h.run(Effect.result(connector.validate(ctx()))))).toBe(true)
    expect(fake.requests[0].body).toMatchObject({ metrics: ["visitors"], date_range: ["2026-11-19", "2026-11-19"] })
    fake.revoke()
    const v = await h.run(Effect.result(connector.validate(ctx())))
    const s = await sync(ctx())
    for (const r of [v, s]) {
      const e = (r as Result.Failure<any, any>).failure
      expect(e.kind).toBe("unauthorized")
      expect(e.message).toMatch(/reconnect/)
      expect(e.message).not.toContain(PLAUSIBLE_KEY)
    }
    expect((await stored(id)).days).toEqual([])
  })

  it("is idempotent, and an incremental run starts two days before the last day fetched", async () => {
    const { id, ctx } = await setup()
    const first = await sync(ctx())
    const after1 = await stored(id)
    await sync(ctx())
    expect(await stored(id)).toEqual(after1)

    // A day later: late events revise 11-19 (2 days back from the last fetched day 11-20 + 1).
    fake.data = { ...PLAUSIBLE_DATA(), days: { ...PLAUSIBLE_DATA().days, "2026-11-19": [3, 3, 6, 0, 40], "2026-11-21": [1, 1, 1, 100, 0] } }
    const n = fake.requests.length
    const next = await sync(ctx({ mode: "incremental", state: (first as Result.Success<any, any>).success.state, now: new Date(START + 86_400_000) }))
    const dayCall = fake.requests.slice(n).find((r) => r.body?.dimensions?.[0] === "time:day" && r.body.dimensions.length === 1)
    expect(dayCall?.body.date_range).toEqual(["2026-11-18", "2026-11-21"])
    expect((next as Result.Success<any, any>).success.counts.days).toBe(4)
    const after2 = await stored(id)
    expect(after2.days.find((d) => d.day === "2026-11-19")).toEqual({ day: "2026-11-19", visitors: 3, pageviews: 6, sessions: 3, bounces: 0, durationSeconds: 120 })
    expect(after2.days.find((d) => d.day === "2026-11-14")).toEqual(after1.days.find((d) => d.day === "2026-11-14"))
  })
})
