/** The SEO report's pure computation on the hand-worked dataset of fixtures/seoFixtures.ts. */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import { collapseTop, seo, seoTotals, seoWindows, topPageChanges, topQueryChanges } from "../src/metrics/Seo.ts"
import {
  SEO_DATA_THROUGH,
  SEO_EXPECTED_7D,
  SEO_EXPECTED_TOP_PAGES,
  SEO_EXPECTED_TOP_QUERIES,
  SEO_PAGES,
  SEO_QUERIES,
  SEO_TODAY,
  SEO_TOTALS
} from "./fixtures/seoFixtures.ts"

const input = {
  projectId: "prj_seo" as ProjectId,
  period: "7d" as const,
  today: SEO_TODAY,
  dataThrough: SEO_DATA_THROUGH,
  firstDay: null,
  totals: SEO_TOTALS,
  queries: SEO_QUERIES,
  pages: SEO_PAGES
}

describe("seo", () => {
  it("ends the window at dataThrough, not today, and says so", () => {
    const r = seo(input)
    expect(r.window).toEqual(SEO_EXPECTED_7D.window)
    expect(r.previous.window).toEqual(SEO_EXPECTED_7D.previousWindow)
    expect(r.dataThrough).toBe("2026-11-17")
    expect(r.lagDays).toBe(SEO_EXPECTED_7D.lagDays)
    expect(r.period).toBe("7d")
  })

  it("marks the last days with data provisional: 11-14 … 11-17, the days Google revises and a sync asks again", () => {
    expect(seo(input).provisionalFrom).toBe("2026-11-14")
    expect(seoWindows("30d", "2026-11-20", "2026-11-18", null).provisionalFrom).toBe("2026-11-15")
  })

  it("computes clicks, impressions, CTR and impression-weighted position exactly, with changes", () => {
    const r = seo(input)
    expect(r.totals).toEqual(SEO_EXPECTED_7D.totals)
    expect(r.previous.totals).toEqual(SEO_EXPECTED_7D.previousTotals)
    expect(r.change).toEqual(SEO_EXPECTED_7D.change)
  })

  it("gives one point per day of each window, zero-filled, each day's figures as the totals compute them", () => {
    const r = seo(input)
    const zero = { clicks: 0, impressions: 0, ctr: null, averagePosition: null }
    // 11-11: 30 clicks / 1000 impressions → CTR 0.03, position 3000/1000 = 3; 11-17: 45/500 → 0.09, 3000/500 = 6
    expect(r.series).toEqual([
      { day: "2026-11-11", clicks: 30, impressions: 1000, ctr: 0.03, averagePosition: 3 },
      { day: "2026-11-12", ...zero },
      { day: "2026-11-13", ...zero },
      { day: "2026-11-14", ...zero },
      { day: "2026-11-15", ...zero },
      { day: "2026-11-16", ...zero },
      { day: "2026-11-17", clicks: 45, impressions: 500, ctr: 0.09, averagePosition: 6 }
    ])
    // previous 11-04…11-10: 11-04 10/200 → 0.05, 1000/200 = 5; 11-10 20/300 → 0.0667, 1200/300 = 4
    expect(r.previous.series.map((p) => [p.day, p.clicks, p.ctr, p.averagePosition])).toEqual([
      ["2026-11-04", 10, 0.05, 5],
      ["2026-11-05", 0, null, null],
      ["2026-11-06", 0, null, null],
      ["2026-11-07", 0, null, null],
      ["2026-11-08", 0, null, null],
      ["2026-11-09", 0, null, null],
      ["2026-11-10", 20, 0.0667, 4]
    ])
  })

  it("lists top queries and pages with their changes", () => {
    const r = seo(input)
    expect(r.topQueries).toEqual(SEO_EXPECTED_TOP_QUERIES)
    expect(r.topPages).toEqual(SEO_EXPECTED_TOP_PAGES)
  })

  it("zero impressions → CTR null and position null; no data → window ends today", () => {
    expect(seoTotals([], { from: "2026-11-01", to: "2026-11-07" })).toEqual({
      clicks: 0,
      impressions: 0,
      ctr: null,
      averagePosition: null
    })
    const r = seo({ ...input, dataThrough: null, totals: [], queries: [], pages: [] })
    expect(r.window).toEqual({ from: "2026-11-14", to: "2026-11-20" })
    expect(r.dataThrough).toBeNull()
    expect(r.lagDays).toBeNull()
    expect(r.provisionalFrom).toBeNull()
    expect(r.totals).toEqual({ clicks: 0, impressions: 0, ctr: null, averagePosition: null })
    expect(r.change).toEqual({ clicks: null, impressions: null, ctr: null, averagePosition: null })
    expect(r.topQueries).toEqual([])
  })
})

describe("seoWindows", () => {
  const w = (period: Parameters<typeof seoWindows>[0], dataThrough: string | null, firstDay: string | null = null) =>
    seoWindows(period, "2026-11-20", dataThrough, firstDay).window
  it("anchors every period at the last day with data", () => {
    expect(w("30d", "2026-11-17")).toEqual({ from: "2026-10-19", to: "2026-11-17" })
    expect(w("today", "2026-11-17")).toEqual({ from: "2026-11-17", to: "2026-11-17" })
    expect(w("yesterday", "2026-11-17")).toEqual({ from: "2026-11-17", to: "2026-11-17" })
    expect(w("yesterday", "2026-11-20")).toEqual({ from: "2026-11-19", to: "2026-11-19" })
    expect(w("3m", "2026-11-17")).toEqual({ from: "2026-09-01", to: "2026-11-17" })
    expect(w("all", "2026-11-17", "2026-03-02")).toEqual({ from: "2026-03-02", to: "2026-11-17" })
    // A data day after today (a zone ahead of the project's) never moves the window past today.
    expect(w("7d", "2026-11-21")).toEqual({ from: "2026-11-14", to: "2026-11-20" })
    expect(seoWindows("7d", "2026-11-20", "2026-11-21", null)).toMatchObject({ dataThrough: "2026-11-20", lagDays: 0 })
    expect(seoWindows("30d", "2026-11-20", "2026-11-17", null).previous).toEqual({
      from: "2026-09-19",
      to: "2026-10-18"
    })
  })
})

describe("topQueryChanges", () => {
  const current = SEO_EXPECTED_7D.window
  const previous = SEO_EXPECTED_7D.previousWindow
  it("orders by current clicks (then impressions) and honours the limit", () => {
    expect(topQueryChanges(SEO_QUERIES, current, previous, 2).map((r) => r.query)).toEqual(["beta", "alpha"])
    expect(topQueryChanges(SEO_QUERIES, current, previous, 0)).toEqual([])
  })

  it("gives the same answer on the store's collapsed rows as on the raw days", () => {
    const collapsed = collapseTop(
      SEO_QUERIES,
      (r) => r.query,
      (query, day, s) => ({ day, query, ...s }),
      current,
      previous,
      10
    )
    // beta has no previous row, so 3 current rows + 2 previous ones.
    expect(collapsed).toHaveLength(5)
    expect(topQueryChanges(collapsed, current, previous, 10)).toEqual(SEO_EXPECTED_TOP_QUERIES)
    const pages = collapseTop(SEO_PAGES, (r) => r.page, (page, day, s) => ({ day, page, ...s }), current, previous, 10)
    expect(topPageChanges(pages, current, previous, 10)).toEqual(SEO_EXPECTED_TOP_PAGES)
  })
})
