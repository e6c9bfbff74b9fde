/** The SEO report's pure computation on the hand-worked dataset of fixtures/seoFixtures.ts. */
import { describe, expect, it } from "@effect/vitest"
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
import type { ProjectId } from "@sitehealth/domain/Common"

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

  it("computes clicks, impressions, CTR and impression-weighted position exactly, with changes", () => {
    const r = seo(input)
    expect(r.totals).toEqual(SEO_EXPECTED_7D.totals)
    expect(r.previous.totals).toEqual(SEO_EXPECTED_7D.previousTotals)
    expect(r.change).toEqual(SEO_EXPECTED_7D.change)
  })

  it("lists top queries and pages with their changes", () => {
    const r = seo(input)
    expect(r.topQueries).toEqual(SEO_EXPECTED_TOP_QUERIES)
    expect(r.topPages).toEqual(SEO_EXPECTED_TOP_PAGES)
  })

  it("zero impressions → CTR null and position null; no data → window ends today", () => {
    expect(seoTotals([], { from: "2026-11-01", to: "2026-11-07" })).toEqual({ clicks: 0, impressions: 0, ctr: null, averagePosition: null })
    const r = seo({ ...input, dataThrough: null, totals: [], queries: [], pages: [] })
    expect(r.window).toEqual({ from: "2026-11-14", to: "2026-11-20" })
    expect(r.dataThrough).toBeNull()
    expect(r.lagDays).toBeNull()
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
    expect(seoWindows("30d", "2026-11-20", "2026-11-17", null).previous).toEqual({ from: "2026-09-19", to: "2026-10-18" })
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
    const collapsed = collapseTop(SEO_QUERIES, (r) => r.query, (query, day, s) => ({ day, query, ...s }), current, previous, 10)
    // beta has no previous row, so 3 current rows + 2 previous ones.
    expect(collapsed).toHaveLength(5)
    expect(topQueryChanges(collapsed, current, previous, 10)).toEqual(SEO_EXPECTED_TOP_QUERIES)
    const pages = collapseTop(SEO_PAGES, (r) => r.page, (page, day, s) => ({ day, page, ...s }), current, previous, 10)
    expect(topPageChanges(pages, current, previous, 10)).toEqual(SEO_EXPECTED_TOP_PAGES)
  })
})
