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
describe("GET /projects/{id}/revenue, /churn, /seo", () => {
  it("revenue: MRR and ARR as of the last day with data, net of refunds over 30 days, and the changes", async () => {
    const { projects, secret } = await seeded()
    const r = await get(`/api/v1/projects/${projects[0].id}/revenue`, secret)
    expect(r).toEqual({
      projectId: projects[0].id,
      currency: "USD",
      asOf: "2026-11-19",
      mrr: usd(120000),
      arr: usd(1440000),
      activeSubscriptions: 110,
      arpu: usd(1091), // 120000 / 110 = 1090.9…
      last30Days: {
        window: { from: "2026-10-22", to: TODAY },
        gross: usd(100000),
        refunds: usd(5000),
        net: usd(95000),
        newSubscriptions: 16,
        churnedSubscriptions: 6
      },
      previous30Days: {
        window: { from: "2026-09-22", to: "2026-10-21" },
        gross: usd(60000),
        refunds: usd(1000),
        net: usd(59000),
        newSubscriptions: 5,
        churnedSubscriptions: 2
      },
      change: { net: 0.6102, mrr: 0.2 }
    })
  })

  it("churn: subscriptions and MRR at the start of each 30-day window and what was lost in it", async () => {
    const { projects, secret } = await seeded()
    const c = await get(`/api/v1/projects/${projects[0].id}/churn`, secret)
    expect(c).toEqual({
      projectId: projects[0].id,
      window: { from: "2026-10-22", to: TODAY },
      subscriptionsAtStart: 100, // the 10-21 row
      newSubscriptions: 16,
      churnedSubscriptions: 6,
      subscriptionsAtEnd: 110,
      customerChurnRate: 0.06,
      mrrAtStart: usd(100000),
      churnedMrr: usd(6000),
      revenueChurnRate: 0.06,
      // Start of 09-22..10-21 is the 09-10 row: 2 / 80 and 2000 / 90000.
      previous: { window: { from: "2026-09-22", to: "2026-10-21" }, customerChurnRate: 0.025, revenueChurnRate: 0.0222 }
    })
  })

  it("seo: clicks, impressions, CTR and impression-weighted position over 28 days", async () => {
    const { projects, secret } = await seeded()
    const s = await get(`/api/v1/projects/${projects[0].id}/seo`, secret)
    expect(s).toEqual({
      projectId: projects[0].id,
      window: { from: "2026-10-24", to: TODAY },
      totals: { clicks: 400, impressions: 20000, ctr: 0.02, averagePosition: 10 },
      previous: {
        window: { from: "2026-09-26", to: "2026-10-23" },
        totals: { clicks: 200, impressions: 5000, ctr: 0.04, averagePosition: 8 }
      },
      change: { clicks: 1, impressions: 3 }
    })
  })

  it("with no data: zeros, and null for every ratio", async () => {
    const { projects, secret } = await h.newAccount()
    const id = projects[0].id
    const r = await get(`/api/v1/projects/${id}/revenue`, secret)
    expect(r).toMatchObject({ asOf: null, mrr: usd(0), arr: usd(0), activeSubscriptions: 0, arpu: null, change: { net: null, mrr: null } })
    const c = await get(`/api/v1/projects/${id}/churn`, secret)
    expect(c).toMatchObject({ subscriptionsAtStart: 0, customerChurnRate: null, revenueChurnRate: null })
    const s = await get(`/api/v1/projects/${id}/seo`, secret)
    expect(s.totals).toEqual({ clicks: 0, impressions: 0, ctr: null, averagePosition: null })
    expect(s.change).toEqual({ clicks: null, impressions: null })
    const a = await get(`/api/v1/projects/${id}/analytics?period=all`, secret)
    expect(a.window).toEqual({ from: TODAY, to: TODAY })
    expect(a.totals).toEqual(zeroTotals)
  })

  it("revenue and churn need revenue:read, seo needs seo:read", async () => {
    const { account, projects } = await h.newAccount()
    const t = await h.mint(account.id, { permissions: ["projects:read", "analytics:read"] })
    for (const [report, permission] of [["revenue", "revenue:read"], ["churn", "revenue:read"], ["seo", "seo:read"]]) {
      const r = await h.call("GET", `/api/v1/projects/${projects[0].id}/${report}`, { token: t.secret })
      expectError(r, 403, "missing_permission")
      expect(r.json.error.permission).toBe(permission)
    }
  })
})

