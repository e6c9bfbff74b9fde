/**
 * Golden tests of the hourly traffic anomaly detector (metrics/HourlyAnomaly.ts) on series computed by hand: the
 * Poisson floor makes the expected range of a steady count c exactly c ± 3.5√c (100 → 65–135).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  detectHour,
  type HourCount,
  hourlyAnomaly,
  hourlyMoneyAtStake,
  hoursToCheck,
  likelyCause,
  sameLocalHours,
  shareMoves
} from "../src/metrics/HourlyAnomaly.ts"

const HOUR = "2026-03-02T14:00:00.000Z" // a Monday
const WEEK_MS = 7 * 86_400_000
const weeksBack = (iso: string, w: number) => new Date(Date.parse(iso) - w * WEEK_MS).toISOString()

/** `baseline[w − 1]` visitors w weeks before `hour`, pageviews twice that; then the hour itself. */
const series = (baseline: ReadonlyArray<number>, actual: number, hour = HOUR): Array<HourCount> => [
  ...baseline.map((v, i) => ({ hour: weeksBack(hour, i + 1), visitors: v, pageviews: 2 * v })),
  { hour, visitors: actual, pageviews: 2 * actual }
]

const STEADY = [100, 96, 104, 98, 102, 100, 97, 103] // median 100, MAD 2.5 → scale 0.6745 × √100 = 6.745

describe("hourly anomaly: expected range", () => {
  it("a spike: 160 against a usual 100 (range 65–135), z = 6", () => {
    const a = hourlyAnomaly(series(STEADY, 160), HOUR, "UTC", "visitors")
    expect(a).toEqual({
      hour: HOUR,
      localDay: "2026-03-02",
      localHour: "2026-03-02 14:00",
      metric: "visitors",
      direction: "spike",
      severity: "info",
      actual: 160,
      expected: 100,
      low: 65,
      high: 135,
      z: 6,
      weeks: 8
    })
  })

  it("a drop: 50 is a warning (z = −5), 40 critical (z = −6)", () => {
    const warning = hourlyAnomaly(series(STEADY, 50), HOUR, "UTC", "visitors")
    expect(warning).toMatchObject({ direction: "drop", severity: "warning", z: -5, expected: 100, low: 65 })
    const critical = hourlyAnomaly(series(STEADY, 40), HOUR, "UTC", "visitors")
    expect(critical).toMatchObject({ direction: "drop", severity: "critical", z: -6 })
  })

  it("inside the range is no alert (125, 70)", () => {
    expect(hourlyAnomaly(series(STEADY, 125), HOUR, "UTC", "visitors")).toBeNull()
    expect(hourlyAnomaly(series(STEADY, 70), HOUR, "UTC", "visitors")).toBeNull()
  })

  it("normal week-to-week variation widens the range: 150 after 60–140 weeks is no alert", () => {
    // median 105, MAD 25 → half-width 3.5 × 25 / 0.6745 ≈ 130; z of 150 = 0.6745 × 45 / 25 ≈ 1.2.
    expect(hourlyAnomaly(series([60, 140, 80, 120, 100, 90, 110, 130], 150), HOUR, "UTC", "visitors")).toBeNull()
  })

  it("low volume is no alert: 2 → 5, and 2 → 15 (below 20 either way)", () => {
    expect(detectHour(series([2, 2, 2, 2, 2, 2, 2, 2], 5), HOUR, "UTC")).toBeNull()
    expect(hourlyAnomaly(series([2, 2, 2, 2, 2, 2, 2, 2], 15), HOUR, "UTC", "visitors")).toBeNull()
  })

  it("too little history (3 weeks) or no row for the hour yet: no verdict", () => {
    expect(hourlyAnomaly(series([100, 100, 100], 10), HOUR, "UTC", "visitors")).toBeNull()
    expect(hourlyAnomaly(series(STEADY, 10).slice(0, -1), HOUR, "UTC", "visitors")).toBeNull()
  })

  it("a baseline hour without a row after tracking began counts as 0", () => {
    // Week 5 (102) missing, so 0: the median of [0, 96, 97, 98, 100, 100, 103, 104] is 99.
    const rows = series(STEADY, 160).filter((r) => r.hour !== weeksBack(HOUR, 5))
    expect(hourlyAnomaly(rows, HOUR, "UTC", "visitors")).toMatchObject({ weeks: 8, expected: 99 })
  })

  it("pageviews only when visitors show nothing", () => {
    const rows = series(STEADY, 100).map((r) => (r.hour === HOUR ? { ...r, pageviews: 400 } : r))
    expect(detectHour(rows, HOUR, "UTC")).toMatchObject({ metric: "pageviews", direction: "spike", expected: 200 })
    expect(detectHour(series(STEADY, 160), HOUR, "UTC")).toMatchObject({ metric: "visitors" })
  })
})

describe("hourly anomaly: the website's clock (DST)", () => {
  const BERLIN = "Europe/Berlin"
  it("the same local hour across the spring change: 14:00 CEST after 14:00 CET is 13:00Z, not 12:00Z", () => {
    expect(sameLocalHours(Date.parse("2026-03-30T12:00:00Z"), BERLIN, 3).map((t) => new Date(t).toISOString()))
      .toEqual(["2026-03-23T13:00:00.000Z", "2026-03-16T13:00:00.000Z", "2026-03-09T13:00:00.000Z"])
  })

  it("a wall time that did not exist (02:00 on 2026-03-29) is left out", () => {
    expect(sameLocalHours(Date.parse("2026-04-05T00:00:00Z"), BERLIN, 2).map((t) => new Date(t).toISOString()))
      .toEqual(["2026-03-22T01:00:00.000Z"])
  })

  it("a steady 14:00 is no drop after the change, though the same UTC hour was the 13:00 lunch peak", () => {
    const hour = "2026-03-30T12:00:00.000Z" // 14:00 CEST
    const rows: Array<HourCount> = []
    for (let w = 1; w <= 8; w++) {
      const local14 = new Date(Date.parse("2026-03-30T13:00:00Z") - w * WEEK_MS).toISOString() // 14:00 CET
      rows.push({ hour: weeksBack(hour, w), visitors: 500, pageviews: 1000 }) // 13:00 CET
      rows.push({ hour: local14, visitors: 100, pageviews: 200 })
    }
    rows.push({ hour, visitors: 100, pageviews: 200 })
    expect(detectHour(rows, hour, BERLIN)).toBeNull()
    const drop = detectHour(rows.map((r) => (r.hour === hour ? { ...r, visitors: 30 } : r)), hour, BERLIN)
    expect(drop).toMatchObject({ direction: "drop", expected: 100, localHour: "2026-03-30 14:00" })
  })
})

describe("hourly anomaly: likely cause and money at stake", () => {
  const none = { day: [], usual: [] }
  it("the source whose share fell most explains a drop", () => {
    const sources = {
      day: [{ name: "google", visitors: 20 }, { name: "direct", visitors: 80 }],
      usual: [{ name: "google", visitors: 500 }, { name: "direct", visitors: 500 }]
    }
    expect(shareMoves(sources.day, sources.usual)).toEqual([
      { name: "google", change: -0.3 },
      { name: "direct", change: 0.3 }
    ])
    expect(likelyCause({ direction: "drop", sources, pages: none, rankings: [] }))
      .toEqual({ kind: "source", name: "google", change: -0.3 })
    expect(likelyCause({ direction: "spike", sources, pages: none, rankings: [] }))
      .toEqual({ kind: "source", name: "direct", change: 0.3 })
  })

  it("a page new to the day explains a spike; a share moving under 5 points explains nothing", () => {
    const pages = {
      day: [{ name: "/launch", visitors: 60 }, { name: "/", visitors: 40 }],
      usual: [{ name: "/", visitors: 1000 }]
    }
    expect(likelyCause({ direction: "spike", sources: none, pages, rankings: [] }))
      .toEqual({ kind: "page", name: "/launch", change: 0.6 })
    const steady = {
      day: [{ name: "/", visitors: 97 }, { name: "/a", visitors: 3 }],
      usual: [{ name: "/", visitors: 1 }]
    }
    expect(likelyCause({ direction: "spike", sources: none, pages: steady, rankings: [] })).toBeNull()
  })

  it("a lost ranking explains a drop the shares do not", () => {
    const rankings = [{ query: "widgets", placesLost: 4 }, { query: "blue widgets", placesLost: 12.5 }]
    expect(likelyCause({ direction: "drop", sources: none, pages: none, rankings }))
      .toEqual({ kind: "ranking", name: "blue widgets", change: 12.5 })
    expect(likelyCause({ direction: "spike", sources: none, pages: none, rankings })).toBeNull()
  })

  it("money at stake: lost visitors × revenue per visitor, for drops of visitors alone", () => {
    const drop = hourlyAnomaly(series(STEADY, 40), HOUR, "UTC", "visitors")!
    expect(hourlyMoneyAtStake(drop, 50)).toBe(3000) // 60 lost × 50 cents
    expect(hourlyMoneyAtStake(drop, null)).toBeNull()
    expect(hourlyMoneyAtStake(hourlyAnomaly(series(STEADY, 160), HOUR, "UTC", "visitors")!, 50)).toBeNull()
  })

  it("the hours checked: the last three complete UTC hours, oldest first", () => {
    expect(hoursToCheck(Date.parse("2026-03-02T15:20:00Z"), 3)).toEqual([
      "2026-03-02T12:00:00.000Z",
      "2026-03-02T13:00:00.000Z",
      "2026-03-02T14:00:00.000Z"
    ])
  })
})
