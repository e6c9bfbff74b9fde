/**
 * Reports and what the service says about a project, computed from known daily rows. Today is 2026-11-20
 * in the harness clock (12:00:30 UTC); every expected figure below is worked out by hand from the rows
 * written here and the definitions in metrics/Compute.ts.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createProject } from "../../src/accounts/Provisioning.ts"
import { MetricsRepo, type DailyRows } from "../../src/metrics/MetricsRepo.ts"
import type { RevenueDay, SearchDay, TrafficDay } from "../../src/metrics/Rows.ts"
import { expectError } from "../support/Expect.ts"
import { makeHarness, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const TODAY = "2026-11-20"
const nowIso = () => new Date(h.time.now()).toISOString()

const traffic = (day: string, visitors: number, pageviews: number, sessions: number, bounces: number, durationSeconds: number): TrafficDay => ({
  day,
  visitors,
  pageviews,
  sessions,
  bounces,
  durationSeconds
})

const revenueDay = (
  day: string,
  grossMinor: number,
  refundsMinor: number,
  mrrMinor: number,
  activeSubscriptions: number,
  newSubscriptions: number,
  churnedSubscriptions: number,
  churnedMrrMinor: number
): RevenueDay => ({ day, grossMinor, refundsMinor, mrrMinor, activeSubscriptions, newSubscriptions, churnedSubscriptions, churnedMrrMinor })

const searchDay = (day: string, clicks: number, impressions: number, positionWeighted: number): SearchDay => ({
  day,
  clicks,
  impressions,
  positionWeighted
})

/**
 * The known rows. Windows for today = 2026-11-20:
 * - 7d 11-14..11-20 (previous 11-07..11-13); 30d 10-22..11-20 (previous 09-22..10-21)
 * - SEO: 28 days 10-24..11-20 (previous 09-26..10-23)
 * - the 11-21 / 11-25 rows are in the future and must count nowhere.
 */
const ROWS: DailyRows = {
  traffic: [
    traffic("2026-01-05", 7, 14, 8, 4, 800),
    traffic("2026-10-01", 500, 1000, 600, 300, 60000),
    traffic("2026-10-25", 1000, 2000, 1100, 550, 110000),
    traffic("2026-11-13", 200, 400, 250, 100, 25000),
    traffic("2026-11-15", 50, 100, 60, 30, 6000),
    traffic("2026-11-20", 100, 300, 120, 60, 12000),
    traffic("2026-11-21", 9999, 9999, 9999, 0, 0)
  ],
  revenue: [
    revenueDay("2026-09-10", 0, 0, 90000, 80, 0, 0, 0),
    revenueDay("2026-10-10", 50000, 0, 100000, 100, 5, 2, 2000),
    revenueDay("2026-10-21", 10000, 1000, 100000, 100, 0, 0, 0),
    revenueDay("2026-11-01", 80000, 5000, 110000, 105, 10, 5, 5000),
    revenueDay("2026-11-19", 20000, 0, 120000, 110, 6, 1, 1000),
    revenueDay("2026-11-25", 999999, 0, 999999, 999, 0, 0, 0)
  ],
  search: [
    searchDay("2026-10-20", 200, 5000, 40000),
    searchDay("2026-11-10", 300, 10000, 50000),
    searchDay("2026-11-18", 100, 10000, 150000)
  ]
}

/** One-off expense of 836.00 USD on 11-05: profit margin (95000 − 83600) / 95000 = 0.12 in the last 30 days. */
const EXPENSE = { amount: 83600, category: "advertising", description: "Ads", incurredOn: "2026-11-05", recurrence: "one_off" }

const writeDays = (projectId: string, rows: DailyRows) =>
  h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(projectId, rows)))

/** A fresh account whose first project holds ROWS (and the expense when asked); the rest are empty. */
const seeded = async (options: { readonly projects?: number; readonly expense?: boolean } = {}) => {
  const acc = await h.newAccount({ projects: options.projects ?? 1 })
  await writeDays(acc.projects[0].id, ROWS)
  if (options.expense) {
    const r = await h.call("POST", `/api/v1/projects/${acc.projects[0].id}/expenses`, { token: acc.secret, body: EXPENSE })
    expect(r.status, r.text).toBe(201)
  }
  return acc
}

const get = async (path: string, token: string) => {
  const r = await h.call("GET", path, { token })
  expect(r.status, r.text).toBe(200)
  expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
  expect(r.json.status).toBe("success")
  return r.json.data
}


const zeroTotals = { visitors: 0, pageviews: 0, sessions: 0, bounceRate: null, pagesPerSession: null, avgSessionSeconds: null }
const usd = (amount: number) => ({ amount, currency: "USD" })

describe("GET /projects/{id}/analytics", () => {
  it("period=7d: totals of the last 7 days, the 7 before, the change and a point per day", async () => {
    const { projects, secret } = await seeded()
    const id = projects[0].id
    const a = await get(`/api/v1/projects/${id}/analytics?period=7d`, secret)
    expect(a.projectId).toBe(id)
    expect(a.period).toBe("7d")
    expect(a.timezone).toBe("UTC")
    expect(a.window).toEqual({ from: "2026-11-14", to: TODAY })
    expect(a.totals).toEqual({ visitors: 150, pageviews: 400, sessions: 180, bounceRate: 0.5, pagesPerSession: 2.2222, avgSessionSeconds: 100 })
    expect(a.previous).toEqual({
      window: { from: "2026-11-07", to: "2026-11-13" },
      totals: { visitors: 200, pageviews: 400, sessions: 250, bounceRate: 0.4, pagesPerSession: 1.6, avgSessionSeconds: 100 }
    })
    expect(a.change).toEqual({ visitors: -0.25, pageviews: 0, sessions: -0.28 })
    expect(a.series).toEqual([
      { date: "2026-11-14", visitors: 0, pageviews: 0, sessions: 0 },
      { date: "2026-11-15", visitors: 50, pageviews: 100, sessions: 60 },
      { date: "2026-11-16", visitors: 0, pageviews: 0, sessions: 0 },
      { date: "2026-11-17", visitors: 0, pageviews: 0, sessions: 0 },
      { date: "2026-11-18", visitors: 0, pageviews: 0, sessions: 0 },
      { date: "2026-11-19", visitors: 0, pageviews: 0, sessions: 0 },
      { date: TODAY, visitors: 100, pageviews: 300, sessions: 120 }
    ])
  })

  it("defaults to 30d, the same as period=30d", async () => {
    const { projects, secret } = await seeded()
    const id = projects[0].id
    const a = await get(`/api/v1/projects/${id}/analytics`, secret)
    expect(a.period).toBe("30d")
    expect(a.window).toEqual({ from: "2026-10-22", to: TODAY })
    // 10-25 + 11-13 + 11-15 + 11-20
    expect(a.totals).toEqual({ visitors: 1350, pageviews: 2800, sessions: 1530, bounceRate: 0.4837, pagesPerSession: 1.8301, avgSessionSeconds: 100 })
    expect(a.previous).toEqual({
      window: { from: "2026-09-22", to: "2026-10-21" },
      totals: { visitors: 500, pageviews: 1000, sessions: 600, bounceRate: 0.5, pagesPerSession: 1.6667, avgSessionSeconds: 100 }
    })
    expect(a.change).toEqual({ visitors: 1.7, pageviews: 1.8, sessions: 1.55 })
    expect(a.series).toHaveLength(30)
    expect(a.series[0]).toEqual({ date: "2026-10-22", visitors: 0, pageviews: 0, sessions: 0 })
    expect(a.series[3]).toEqual({ date: "2026-10-25", visitors: 1000, pageviews: 2000, sessions: 1100 })
    expect(a.series.reduce((s: number, p: any) => s + p.visitors, 0)).toBe(1350)
    expect(await get(`/api/v1/projects/${id}/analytics?period=30d`, secret)).toEqual(a)
  })

  it("today, yesterday, 3m, 12m and all", async () => {
    const { projects, secret } = await seeded()
    const path = `/api/v1/projects/${projects[0].id}/analytics?period=`

    const today = await get(`${path}today`, secret)
    expect(today.window).toEqual({ from: TODAY, to: TODAY })
    expect(today.totals).toEqual({ visitors: 100, pageviews: 300, sessions: 120, bounceRate: 0.5, pagesPerSession: 2.5, avgSessionSeconds: 100 })
    expect(today.previous).toEqual({ window: { from: "2026-11-19", to: "2026-11-19" }, totals: zeroTotals })
    // Growth from nothing has no ratio: null, never Infinity.
    expect(today.change).toEqual({ visitors: null, pageviews: null, sessions: null })

    const yesterday = await get(`${path}yesterday`, secret)
    expect(yesterday.window).toEqual({ from: "2026-11-19", to: "2026-11-19" })
    expect(yesterday.totals).toEqual(zeroTotals)
    expect(yesterday.series).toEqual([{ date: "2026-11-19", visitors: 0, pageviews: 0, sessions: 0 }])

    const m3 = await get(`${path}3m`, secret)
    expect(m3.window).toEqual({ from: "2026-09-01", to: TODAY })
    expect(m3.previous.window).toEqual({ from: "2026-06-12", to: "2026-08-31" })
    expect(m3.totals.visitors).toBe(1850)
    expect(m3.series).toHaveLength(81)

    const m12 = await get(`${path}12m`, secret)
    expect(m12.window).toEqual({ from: "2025-12-01", to: TODAY })
    expect(m12.previous.window).toEqual({ from: "2024-12-11", to: "2025-11-30" })
    expect(m12.totals.visitors).toBe(1857)
    expect(m12.previous.totals.visitors).toBe(0)

    const all = await get(`${path}all`, secret)
    expect(all.period).toBe("all")
    expect(all.window).toEqual({ from: "2026-01-05", to: TODAY })
    expect(all.previous).toBeNull()
    expect(all.change).toEqual({ visitors: null, pageviews: null, sessions: null })
    // Everything up to today, nothing of the future row.
    expect(all.totals).toEqual({
      visitors: 1857,
      pageviews: 3814,
      sessions: 2138,
      bounceRate: 0.4883,
      pagesPerSession: 1.7839,
      avgSessionSeconds: 100
    })
    expect(all.series).toHaveLength(320)
  })

  it("rejects an unknown period with 400 listing the allowed values", async () => {
    const { projects, secret } = await h.newAccount()
    for (const period of ["5y", "90d", "ALL", ""]) {
      const r = await h.call("GET", `/api/v1/projects/${projects[0].id}/analytics?period=${period}`, { token: secret })
      expectError(r, 400, "invalid_request")
      const issue = r.json.error.issues.find((i: any) => i.path === "query.period")
      expect(issue, r.text).toBeDefined()
      for (const allowed of ["today", "yesterday", "7d", "30d", "3m", "12m", "all"]) {
        expect(issue.message).toContain(`"${allowed}"`)
      }
    }
  })

  it("counts days in the project's own time zone", async () => {
    const { account, secret } = await h.newAccount({ projects: 0 })
    // 12:00:30 UTC on 11-20 is 02:00:30 on 11-21 in Kiritimati (UTC+14).
    const p = await h.run(createProject({ accountId: account.id, name: "East", domain: "east.example", timezone: "Pacific/Kiritimati" }))
    await writeDays(p.id, { traffic: [traffic("2026-11-20", 10, 20, 10, 5, 1000), traffic("2026-11-21", 42, 84, 40, 10, 4000)] })
    const today = await get(`/api/v1/projects/${p.id}/analytics?period=today`, secret)
    expect(today.timezone).toBe("Pacific/Kiritimati")
    expect(today.window).toEqual({ from: "2026-11-21", to: "2026-11-21" })
    expect(today.totals.visitors).toBe(42)
    expect(today.previous.totals.visitors).toBe(10)
    expect(today.change.visitors).toBe(3.2)
    const briefing = await get(`/api/v1/projects/${p.id}/briefing`, secret)
    expect(briefing.date).toBe("2026-11-21")
    expect(briefing.yesterday).toMatchObject({ date: "2026-11-20", visitors: 10, pageviews: 20 })
  })

  it("needs analytics:read", async () => {
    const { account, projects } = await h.newAccount()
    const t = await h.mint(account.id, { permissions: ["projects:read", "revenue:read", "seo:read"] })
    const r = await h.call("GET", `/api/v1/projects/${projects[0].id}/analytics?period=7d`, { token: t.secret })
    expectError(r, 403, "missing_permission")
    expect(r.json.error.permission).toBe("analytics:read")
  })
})

