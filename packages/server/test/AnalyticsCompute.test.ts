/**
 * The analytics report's pure functions on golden data (fixtures/traffic.ts). Every expected figure is
 * worked out by hand in the comments next to it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import { analytics, planAnalytics } from "../src/metrics/Analytics.ts"
import { affectedBy, aggregateEvents } from "../src/traffic/Aggregate.ts"
import type { TrafficWindow } from "../src/traffic/Types.ts"
import { AFTER_BATCH_1, day, DST_HOURS, EVENTS_BATCH_1, EVENTS_TZ, hour, PROVIDER } from "./fixtures/traffic.ts"

const PID = "prj_test" as ProjectId
const empty: TrafficWindow = {
  hours: [],
  days: [],
  pages: [],
  sources: [],
  countries: [],
  uniques: [],
  previousPages: [],
  previousSources: [],
  previousCountries: []
}
const report = (
  period: Parameters<typeof planAnalytics>[0],
  timezone: string,
  nowIso: string,
  data: Partial<TrafficWindow>
) => {
  const now = Date.parse(nowIso)
  return analytics({ projectId: PID, plan: planAnalytics(period, timezone, now), now, data: { ...empty, ...data } })
}
/** The provider fixture, filtered as TrafficRepo.read would for the plan (days / hours in range). */
const providerFor = (period: Parameters<typeof planAnalytics>[0], nowIso: string) => {
  const q = planAnalytics(period, "UTC", Date.parse(nowIso)).query
  return {
    hours: PROVIDER.hours!.filter((h) => h.hour >= q.hoursFrom && h.hour < q.hoursTo),
    days: PROVIDER.days!.filter((d) => d.day >= q.from && d.day <= q.to),
    uniques: PROVIDER.uniques!.filter((u) => u.from >= q.from && u.to <= q.to)
  }
}

describe("DST days in Europe/Berlin (hour granularity)", () => {
  it("2026-03-29 has 23 hour points, 02:00 missing, bounded by local midnights", () => {
    const a = report("yesterday", "Europe/Berlin", "2026-03-30T10:00:00Z", {
      hours: DST_HOURS.filter((h) => h.hour >= "2026-03-28T23" && h.hour < "2026-03-29T22")
    })
    expect(a.granularity).toBe("hour")
    expect(a.range).toEqual({
      start: "2026-03-28T23:00:00.000Z", // 00:00+01:00
      end: "2026-03-29T22:00:00.000Z", // 00:00+02:00 on 03-30, exclusive
      timezone: "Europe/Berlin",
      from: "2026-03-29",
      to: "2026-03-29"
    })
    expect(a.series).toHaveLength(23)
    expect(a.series.slice(0, 3).map((p) => [p.label, p.start, p.visitors])).toEqual([
      ["2026-03-29T00:00+01:00", "2026-03-28T23:00:00.000Z", 1],
      ["2026-03-29T01:00+01:00", "2026-03-29T00:00:00.000Z", 2],
      ["2026-03-29T03:00+02:00", "2026-03-29T01:00:00.000Z", 3]
    ])
    expect(a.series.at(-1)).toMatchObject({
      label: "2026-03-29T23:00+02:00",
      start: "2026-03-29T21:00:00.000Z",
      visitors: 4,
      from: "2026-03-29"
    })
    // The 03-28 23:00 (900) and 03-30 00:00 (800) rows are outside: 1+2+3+4 = 10.
    expect(a.series.reduce((s, p) => s + p.visitors, 0)).toBe(10)
    expect(a.previous!.range).toMatchObject({
      start: "2026-03-27T23:00:00.000Z",
      end: "2026-03-28T23:00:00.000Z",
      from: "2026-03-28"
    })
    // The previous day by hour too (24 hours on 03-28), so the plan reads its hours.
    expect(planAnalytics("yesterday", "Europe/Berlin", Date.parse("2026-03-30T10:00:00Z")).query.hoursFrom).toBe(
      "2026-03-27T23:00:00.000Z"
    )
    expect(a.previous!.series).toHaveLength(24)
    expect(a.previous!.series[0]).toMatchObject({ label: "2026-03-28T00:00+01:00", start: "2026-03-27T23:00:00.000Z" })
  })

  it("2026-10-25 has 25 hour points, 02:00 twice", () => {
    const a = report("yesterday", "Europe/Berlin", "2026-10-26T10:00:00Z", {
      hours: DST_HOURS.filter((h) => h.hour >= "2026-10-24T22" && h.hour < "2026-10-25T23")
    })
    expect(a.range.start).toBe("2026-10-24T22:00:00.000Z")
    expect(a.range.end).toBe("2026-10-25T23:00:00.000Z")
    expect(a.series).toHaveLength(25)
    expect(a.series.slice(0, 4).map((p) => [p.label, p.visitors])).toEqual([
      ["2026-10-25T00:00+02:00", 1],
      ["2026-10-25T01:00+02:00", 0], // zero-filled
      ["2026-10-25T02:00+02:00", 5],
      ["2026-10-25T02:00+01:00", 6]
    ])
    expect(a.series.at(-1)).toMatchObject({
      label: "2026-10-25T23:00+01:00",
      start: "2026-10-25T22:00:00.000Z",
      visitors: 7
    })
  })
})

describe("today against the same elapsed time yesterday", () => {
  // Berlin, now 09:30Z = 10:30 CET on 11-20. Today: hours 23:00Z (00:00 local) … 09:00Z (10:00 local).
  // Previous: 11-19 00:00 local (11-18T23:00Z) up to 11-19 10:30 local (09:30Z): the 09:00Z hour counts half.
  const hours = [
    hour("2026-11-18T23:00:00.000Z", 10, 20, 10, 5, 1000), // yesterday 00:00: whole
    hour("2026-11-19T09:00:00.000Z", 20, 40, 20, 10, 2000), // yesterday 10:00: × 30/60 → 10, 20, 10, 5, 1000
    hour("2026-11-19T10:00:00.000Z", 1000, 1000, 1000, 0, 0), // yesterday 11:00: after 10:30, never counted
    hour("2026-11-19T23:00:00.000Z", 5, 10, 5, 1, 500), // today 00:00
    hour("2026-11-20T09:00:00.000Z", 25, 50, 25, 4, 2500) // today 10:00, in progress: whole
  ]
  const a = report("today", "Europe/Berlin", "2026-11-20T09:30:00Z", { hours })

  it("totals today's hours so far", () => {
    expect(a.range).toEqual({
      start: "2026-11-19T23:00:00.000Z",
      end: "2026-11-20T09:30:00.000Z",
      timezone: "Europe/Berlin",
      from: "2026-11-20",
      to: "2026-11-20"
    })
    // 5+25 = 30 visitors, 10+50 = 60 views, 5+25 = 30 sessions, 1+4 = 5 bounces, 500+2500 = 3000 s
    expect(a.totals).toEqual({
      visitors: 30,
      visitorsMethod: "sum_of_hourly_uniques",
      pageviews: 60,
      sessions: 30,
      bounceRate: 0.1667,
      avgSessionSeconds: 100,
      pagesPerSession: 2 // 5/30, 3000/30, 60/30
    })
  })

  it("compares with yesterday 00:00–10:30, the 10:00 hour pro rata", () => {
    expect(a.previous!.range).toEqual({
      start: "2026-11-18T23:00:00.000Z",
      end: "2026-11-19T09:30:00.000Z",
      timezone: "Europe/Berlin",
      from: "2026-11-19",
      to: "2026-11-19"
    })
    // 10 + 20/2 = 20 visitors, 20 + 40/2 = 40 views, 10 + 10 = 20 sessions, 5 + 5 = 10 bounces, 1000 + 1000 s
    expect(a.previous!.totals).toEqual({
      visitors: 20,
      visitorsMethod: "sum_of_hourly_uniques",
      pageviews: 40,
      sessions: 20,
      bounceRate: 0.5,
      avgSessionSeconds: 100,
      pagesPerSession: 2
    })
    // (30−20)/20 = 0.5 ×3; bounce (0.1667 − 0.5)/0.5 = −0.6666; the others unchanged
    expect(a.change).toEqual({
      visitors: 0.5,
      pageviews: 0.5,
      sessions: 0.5,
      bounceRate: -0.6666,
      avgSessionSeconds: 0,
      pagesPerSession: 0
    })
  })

  it("has one point per local hour so far, zero-filled", () => {
    expect(a.series.map((p) => p.label)).toEqual(
      Array.from({ length: 11 }, (_, i) => `2026-11-20T${String(i).padStart(2, "0")}:00+01:00`)
    )
    expect(a.series.map((p) => p.visitors)).toEqual([5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25])
  })

  it("gives yesterday's hours up to the same local hour as the previous series, each hour whole", () => {
    expect(a.previous!.series.map((p) => p.label)).toEqual(
      Array.from({ length: 11 }, (_, i) => `2026-11-19T${String(i).padStart(2, "0")}:00+01:00`)
    )
    // The 10:00 hour is whole here (20), as today's in-progress hour is in `series`; only the totals prorate it.
    expect(a.previous!.series.map((p) => p.visitors)).toEqual([10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20])
  })
})

describe("tops with their previous figures and change", () => {
  it("7d: the previous 7 days' sums of the same keys; 0 when absent then, change null", () => {
    const plan = planAnalytics("7d", "UTC", Date.parse("2026-11-20T12:00:00Z"))
    expect([plan.query.prevTopFrom, plan.query.prevTopTo]).toEqual(["2026-11-07", "2026-11-13"])
    const a = report("7d", "UTC", "2026-11-20T12:00:00Z", {
      days: [day("2026-11-18", 20, 40, 20, 5, 100)], // totals: 20 visitors, 40 pageviews
      pages: [{ path: "/", visitors: 13, pageviews: 32 }, { path: "/new", visitors: 5, pageviews: 8 }],
      previousPages: [{ path: "/", visitors: 6, pageviews: 16 }],
      sources: [{ source: "google", visitors: 10, sessions: 12 }],
      previousSources: [{ source: "google", visitors: 8, sessions: 9 }],
      countries: [{ country: "DE", visitors: 10 }, { country: "US", visitors: 6 }],
      previousCountries: [{ country: "DE", visitors: 4 }]
    })
    // "/": (32−16)/16 = 1, share 32/40 = 0.8; "/new": no rows then → 0, change null, share 8/40 = 0.2
    expect(a.topPages).toEqual([
      { path: "/", visitors: 13, pageviews: 32, share: 0.8, previousPageviews: 16, pageviewsChange: 1 },
      { path: "/new", visitors: 5, pageviews: 8, share: 0.2, previousPageviews: 0, pageviewsChange: null }
    ])
    // google: (10−8)/8 = 0.25, share 10/20 = 0.5
    expect(a.topSources).toEqual([{
      source: "google",
      visitors: 10,
      sessions: 12,
      share: 0.5,
      previousVisitors: 8,
      visitorsChange: 0.25
    }])
    // DE: (10−4)/4 = 1.5, share 0.5; US: 6/20 = 0.3, none then
    expect(a.topCountries).toEqual([
      { country: "DE", visitors: 10, share: 0.5, previousVisitors: 4, visitorsChange: 1.5 },
      { country: "US", visitors: 6, share: 0.3, previousVisitors: 0, visitorsChange: null }
    ])
  })

  it("today: yesterday's daily tops × the share of yesterday's hourly figure before the cutoff", () => {
    // Berlin, now 09:30Z = 10:30 CET on 11-20; cutoff yesterday 10:30 local = 11-19T09:30Z.
    const hours = [
      hour("2026-11-18T23:00:00.000Z", 10, 20, 10, 0, 0), // yesterday 00:00: before the cutoff, whole
      hour("2026-11-19T09:00:00.000Z", 20, 40, 20, 0, 0), // yesterday 10:00: half before the cutoff → 10, 20
      hour("2026-11-19T15:00:00.000Z", 20, 100, 20, 0, 0), // yesterday 16:00: after it
      hour("2026-11-19T23:00:00.000Z", 5, 10, 5, 0, 0) // today 00:00
    ]
    // Yesterday before the cutoff: visitors 10 + 10 = 20 of 10 + 20 + 20 = 50 → 0.4; pageviews 20 + 20 = 40 of 160 →
    // 0.25
    const plan = planAnalytics("today", "Europe/Berlin", Date.parse("2026-11-20T09:30:00Z"))
    expect([plan.query.prevTopFrom, plan.query.prevTopTo]).toEqual(["2026-11-19", "2026-11-19"])
    const a = report("today", "Europe/Berlin", "2026-11-20T09:30:00Z", {
      hours,
      pages: [{ path: "/", visitors: 4, pageviews: 10 }],
      previousPages: [{ path: "/", visitors: 30, pageviews: 60 }], // 60 × 0.25 = 15 → (10−15)/15 = −0.3333
      sources: [{ source: "google", visitors: 5, sessions: 5 }],
      previousSources: [{ source: "google", visitors: 5, sessions: 6 }], // 5 × 0.4 = 2 → (5−2)/2 = 1.5
      countries: [{ country: "DE", visitors: 5 }],
      previousCountries: [{ country: "DE", visitors: 14 }] // 14 × 0.4 = 5.6 → 6 → (5−6)/6 = −0.1667
    })
    expect(a.topPages).toEqual([{
      path: "/",
      visitors: 4,
      pageviews: 10,
      share: 1,
      previousPageviews: 15,
      pageviewsChange: -0.3333
    }])
    expect(a.topSources).toEqual([{
      source: "google",
      visitors: 5,
      sessions: 5,
      share: 1,
      previousVisitors: 2,
      visitorsChange: 1.5
    }])
    expect(a.topCountries).toEqual([{
      country: "DE",
      visitors: 5,
      share: 1,
      previousVisitors: 6,
      visitorsChange: -0.1667
    }])

    // Without hourly figures yesterday there is nothing to prorate by: previous null, change null.
    const b = report("today", "Europe/Berlin", "2026-11-20T09:30:00Z", {
      hours: hours.slice(3),
      countries: [{ country: "DE", visitors: 5 }],
      previousCountries: [{ country: "DE", visitors: 14 }]
    })
    expect(b.topCountries).toEqual([{
      country: "DE",
      visitors: 5,
      share: 1,
      previousVisitors: null,
      visitorsChange: null
    }])
  })

  it("all: no previous period, so previous and change are null", () => {
    const plan = planAnalytics("all", "UTC", Date.parse("2026-11-20T12:00:00Z"))
    expect(plan.query.prevTopFrom ?? null).toBeNull()
    const a = report("all", "UTC", "2026-11-20T12:00:00Z", {
      days: [day("2026-11-18", 20, 40, 20, 5, 100)],
      pages: [{ path: "/", visitors: 13, pageviews: 32 }],
      sources: [{ source: "google", visitors: 10, sessions: 12 }],
      countries: [{ country: "DE", visitors: 10 }]
    })
    expect(a.topPages[0]).toMatchObject({ previousPageviews: null, pageviewsChange: null })
    expect(a.topSources[0]).toMatchObject({ previousVisitors: null, visitorsChange: null })
    expect(a.topCountries[0]).toEqual({
      country: "DE",
      visitors: 10,
      share: 0.5,
      previousVisitors: null,
      visitorsChange: null
    })
  })
})

describe("rates, changes and series without data", () => {
  it("null for every zero denominator, zeros in every bucket", () => {
    const a = report("30d", "UTC", "2026-11-20T12:00:00Z", {})
    expect(a.totals).toEqual({
      visitors: 0,
      visitorsMethod: "sum_of_daily_uniques",
      pageviews: 0,
      sessions: 0,
      bounceRate: null,
      avgSessionSeconds: null,
      pagesPerSession: null
    })
    expect(a.change).toEqual({
      visitors: null,
      pageviews: null,
      sessions: null,
      bounceRate: null,
      avgSessionSeconds: null,
      pagesPerSession: null
    })
    expect(a.series).toHaveLength(30)
    expect(a.series.every((p) => p.visitors === 0 && p.pageviews === 0 && p.sessions === 0)).toBe(true)
    // visitors and views but no sessions: the per-session rates stay null
    const b = report("yesterday", "UTC", "2026-11-20T12:00:00Z", { days: [day("2026-11-19", 4, 9, 0, 0, 0)] })
    expect(b.totals).toMatchObject({
      visitors: 4,
      pageviews: 9,
      bounceRate: null,
      avgSessionSeconds: null,
      pagesPerSession: null
    })
    expect(b.change.visitors).toBeNull() // the day before had 0
  })
})

describe("provider rows (UTC, now 2026-11-20T12:00:30Z)", () => {
  const NOW = "2026-11-20T12:00:30Z"

  it("7d: range uniques for exactly the range, sum of daily uniques for the previous range", () => {
    const a = report("7d", "UTC", NOW, providerFor("7d", NOW))
    expect(a.granularity).toBe("day")
    expect(a.range).toMatchObject({
      from: "2026-11-14",
      to: "2026-11-20",
      start: "2026-11-14T00:00:00.000Z",
      end: "2026-11-21T00:00:00.000Z"
    })
    // visitors: stored uniques 105 (the daily sum would be 11 + 100 + 40 = 151); views 22+300+80 = 402;
    // sessions 11+150+50 = 211; bounces 3+60+25 = 88 → 0.4171; 21100 s / 211 = 100; 402/211 = 1.9052
    expect(a.totals).toEqual({
      visitors: 105,
      visitorsMethod: "range_uniques",
      pageviews: 402,
      sessions: 211,
      bounceRate: 0.4171,
      avgSessionSeconds: 100,
      pagesPerSession: 1.9052
    })
    // previous 11-07…11-13: only 11-10
    expect(a.previous!.totals).toEqual({
      visitors: 200,
      visitorsMethod: "sum_of_daily_uniques",
      pageviews: 400,
      sessions: 250,
      bounceRate: 0.4,
      avgSessionSeconds: 100,
      pagesPerSession: 1.6
    })
    // (105−200)/200, (402−400)/400, (211−250)/250, (0.4171−0.4)/0.4 = 0.04275 → 0.0428, 0,
    // (1.9052−1.6)/1.6 = 0.19075, which is 0.190749… in binary floating point → 0.1907
    expect(a.change).toEqual({
      visitors: -0.475,
      pageviews: 0.005,
      sessions: -0.156,
      bounceRate: 0.0428,
      avgSessionSeconds: 0,
      pagesPerSession: 0.1907
    })
    expect(a.series.map((p) => [p.label, p.visitors])).toEqual([
      ["2026-11-14", 0],
      ["2026-11-15", 0],
      ["2026-11-16", 0],
      ["2026-11-17", 0],
      ["2026-11-18", 40],
      ["2026-11-19", 100],
      ["2026-11-20", 11]
    ])
    // The previous range day by day, to overlay bucket by bucket: only 11-10 has traffic.
    expect(a.previous!.series.map((p) => [p.label, p.visitors])).toEqual([
      ["2026-11-07", 0],
      ["2026-11-08", 0],
      ["2026-11-09", 0],
      ["2026-11-10", 200],
      ["2026-11-11", 0],
      ["2026-11-12", 0],
      ["2026-11-13", 0]
    ])
  })

  it("12m: month buckets, month uniques where stored for the whole month", () => {
    const a = report("12m", "UTC", NOW, providerFor("12m", NOW))
    expect(a.granularity).toBe("month")
    expect(a.range).toMatchObject({ from: "2025-12-01", to: "2026-11-20" })
    expect(a.series.map((p) => p.label)).toEqual([
      "2025-12",
      "2026-01",
      "2026-02",
      "2026-03",
      "2026-04",
      "2026-05",
      "2026-06",
      "2026-07",
      "2026-08",
      "2026-09",
      "2026-10",
      "2026-11"
    ])
    expect(a.series[1]).toMatchObject({
      from: "2026-01-01",
      to: "2026-01-31",
      visitors: 7,
      visitorsMethod: "sum_of_daily_uniques"
    })
    // October: stored uniques 480 instead of the daily sum 500
    expect(a.series[10]).toMatchObject({
      from: "2026-10-01",
      to: "2026-10-31",
      visitors: 480,
      visitorsMethod: "range_uniques",
      pageviews: 1000
    })
    // November is clipped to the range: 200 + 40 + 100 + 11 = 351
    expect(a.series[11]).toMatchObject({
      from: "2026-11-01",
      to: "2026-11-20",
      visitors: 351,
      start: "2026-11-01T00:00:00.000Z"
    })
    // totals: daily sum 7 + 500 + 351 = 858 (no stored uniques for the 12m range)
    expect(a.totals).toMatchObject({ visitors: 858, visitorsMethod: "sum_of_daily_uniques", pageviews: 1816 })
    // previous: the 355 days before, 2024-12-11…2025-11-30: only the 2025-11-30 row
    expect(a.previous!.range).toMatchObject({ from: "2024-12-11", to: "2025-11-30" })
    expect(a.previous!.totals.visitors).toBe(3)
  })

  it("all: from the first stored day, month buckets, no previous", () => {
    const a = report("all", "UTC", NOW, providerFor("all", NOW))
    expect(a.range).toMatchObject({ from: "2025-11-30", to: "2026-11-20" })
    expect(a.series).toHaveLength(13)
    expect(a.series[0]).toMatchObject({ label: "2025-11", from: "2025-11-30", to: "2025-11-30", visitors: 3 })
    expect(a.previous).toBeNull()
    expect(a.totals.visitors).toBe(861) // 3 + 858
    expect(a.change.visitors).toBeNull()
  })
})

describe("event aggregation rules (the in-memory twin of the SQL rollup)", () => {
  it("distinct visitors per LOCAL day, sessions where they start", () => {
    const affected = affectedBy(EVENTS_BATCH_1.map((e) => Date.parse(e.at)), EVENTS_TZ)
    expect(affected).toEqual({
      hours: ["2026-11-19T22:00:00.000Z", "2026-11-19T23:00:00.000Z", "2026-11-20T08:00:00.000Z"],
      days: ["2026-11-19", "2026-11-20"],
      months: ["2026-11"]
    })
    const rows = aggregateEvents(EVENTS_BATCH_1, EVENTS_TZ, affected)
    const byKey = <A extends object>(list: ReadonlyArray<A>) =>
      [...list].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
    expect(byKey(rows.hours)).toEqual(byKey(AFTER_BATCH_1.hours))
    expect(byKey(rows.days)).toEqual(byKey(AFTER_BATCH_1.days))
    expect(byKey(rows.pages)).toEqual(byKey(AFTER_BATCH_1.pages))
    expect(byKey(rows.sources)).toEqual(byKey(AFTER_BATCH_1.sources))
    expect(rows.uniques).toEqual(AFTER_BATCH_1.uniques)
  })
})
