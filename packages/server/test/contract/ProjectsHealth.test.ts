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
describe("GET /projects/{id}/health", () => {
  it("scores five dimensions and weights them into one score with a confidence", async () => {
    const { projects, secret } = await seeded({ expense: true })
    const health = await get(`/api/v1/projects/${projects[0].id}/health`, secret)
    // 0.3 × 100 + 0.3 × 100 + 0.15 × 40 + 0.15 × 100 + 0.1 × 62 = 87.2
    expect(health).toMatchObject({
      projectId: projects[0].id,
      score: 87,
      status: "healthy",
      // Σ weight × share of the 60 days with a row: (0.3·5 + 0.3·4 + 0.15·4 + 0.15·3 + 0.1·4) / 60
      confidence: 0.07,
      computedAt: nowIso(),
      window: { current: { from: "2026-10-22", to: TODAY }, previous: { from: "2026-09-22", to: "2026-10-21" } }
    })
    expect(health.dimensions.map((d: any) => d.name)).toEqual(["traffic", "revenue", "retention", "seo", "profitability"])
    const dim = Object.fromEntries(health.dimensions.map((d: any) => [d.name, d]))
    expect(dim.traffic).toMatchObject({
      score: 100, weight: 0.3, confidence: 0.08, status: "healthy", metric: "visitors", current: 1350, previous: 500, change: 1.7
    })
    expect(dim.revenue).toMatchObject({
      score: 100, weight: 0.3, confidence: 0.07, status: "healthy", metric: "net_revenue", current: 95000, previous: 59000, change: 0.6102
    })
    // 100 − 1000 × 0.06 = 40
    expect(dim.retention).toMatchObject({
      score: 40, weight: 0.15, confidence: 0.07, status: "at_risk", metric: "customer_churn_rate", current: 0.06, previous: 0.025, change: 1.4
    })
    expect(dim.seo).toMatchObject({
      score: 100, weight: 0.15, confidence: 0.05, status: "healthy", metric: "clicks", current: 400, previous: 200, change: 1
    })
    // margin (95000 − 83600) / 95000 = 0.12 → 50 + 12 = 62; previous window had no expenses (margin 1).
    expect(dim.profitability).toMatchObject({
      score: 62, weight: 0.1, confidence: 0.07, status: "watch", metric: "profit_margin", current: 0.12, previous: 1, change: -0.88
    })
    for (const d of health.dimensions) expect(d.summary).toBeTypeOf("string")
  })

  it("counts a monthly expense pro rata in profitability, and a deleted expense not at all", async () => {
    const { projects, secret } = await seeded()
    const id = projects[0].id
    const created = await h.call("POST", `/api/v1/projects/${id}/expenses`, {
      token: secret,
      body: { amount: 73000, category: "payroll", description: "Contractor", incurredOn: "2026-10-22", recurrence: "monthly" }
    })
    expect(created.status, created.text).toBe(201)
    const profitability = (health: any) => health.dimensions.find((d: any) => d.name === "profitability")

    // 73000 × 12 / 365 per day × 30 days = 72000; margin (95000 − 72000) / 95000 = 0.2421 → 74.
    // It started with the current window, so the previous window carries none of it.
    const withExpense = await get(`/api/v1/projects/${id}/health`, secret)
    expect(profitability(withExpense)).toMatchObject({ score: 74, current: 0.2421, previous: 1, change: -0.7579 })
    expect(withExpense.score).toBe(88) // 30 + 30 + 6 + 15 + 7.4

    const deleted = await h.call("DELETE", `/api/v1/projects/${id}/expenses/${created.json.data.expense.id}`, { token: secret })
    expect(deleted.status, deleted.text).toBe(200)
    const withoutExpense = await get(`/api/v1/projects/${id}/health`, secret)
    expect(profitability(withoutExpense)).toMatchObject({ score: 100, current: 1, previous: 1, change: 0 })
    expect(withoutExpense.score).toBe(91) // 30 + 30 + 6 + 15 + 10
  })

  it("renormalises the weights over the dimensions that have data", async () => {
    const { projects, secret } = await h.newAccount()
    await writeDays(projects[0].id, {
      search: [searchDay("2026-10-01", 60, 500, 2500), searchDay("2026-10-02", 40, 500, 2500), searchDay("2026-11-01", 90, 1000, 5000)]
    })
    const health = await get(`/api/v1/projects/${projects[0].id}/health`, secret)
    // Only SEO: clicks 90 vs 100 → 50 − 10 = 40, with the whole weight; confidence 0.15 × 3/60.
    expect(health).toMatchObject({ score: 40, status: "at_risk", confidence: 0.01 })
    const dim = Object.fromEntries(health.dimensions.map((d: any) => [d.name, d]))
    expect(dim.seo).toMatchObject({ score: 40, weight: 1, change: -0.1 })
    for (const name of ["traffic", "revenue", "retention", "profitability"]) {
      expect(dim[name]).toMatchObject({ score: null, weight: 0, status: "no_data", current: null, previous: null, change: null })
    }
  })

  it("a project with no data has score null and status no_data", async () => {
    const { projects, secret } = await h.newAccount()
    const health = await get(`/api/v1/projects/${projects[0].id}/health`, secret)
    expect(health).toMatchObject({ score: null, status: "no_data", confidence: 0 })
    expect(health.dimensions).toHaveLength(5)
    for (const d of health.dimensions) {
      expect(d).toMatchObject({ score: null, weight: 0, confidence: 0, status: "no_data" })
    }
  })

  it("answers 404 for an unknown project and 403 outside the token's scope", async () => {
    const { account, projects, secret } = await h.newAccount({ projects: 2 })
    expectError(await h.call("GET", "/api/v1/projects/prj_doesnotexist/health", { token: secret }), 404)
    const scoped = await h.mint(account.id, { projects: [projects[0].id] })
    expectError(await h.call("GET", `/api/v1/projects/${projects[1].id}/health`, { token: scoped.secret }), 403, "project_out_of_scope")
    expect((await h.call("GET", `/api/v1/projects/${projects[0].id}/health`, { token: scoped.secret })).status).toBe(200)
  })
})

/** A project whose visitors fell 80% over 30 days (1500 → 300) and 50% over the last week (200 → 100). */
const dropRows: DailyRows = {
  traffic: [
    traffic("2026-10-01", 1000, 2000, 1000, 0, 0),
    traffic("2026-10-10", 500, 1000, 500, 0, 0),
    traffic("2026-11-10", 200, 400, 200, 0, 0),
    traffic("2026-11-20", 100, 200, 100, 0, 0)
  ]
}

describe("GET /projects/{id}/signals", () => {
  it("a big traffic drop produces traffic signals, most severe first", async () => {
    const { projects, secret } = await h.newAccount()
    const id = projects[0].id
    await writeDays(id, dropRows)
    const { nextCursor, signals } = await get(`/api/v1/projects/${id}/signals`, secret)
    expect(nextCursor).toBeNull()
    expect(signals.map((s: any) => [s.kind, s.dimension, s.severity])).toEqual([
      ["traffic_drop", "traffic", "critical"],
      ["traffic_drop_week", "traffic", "warning"]
    ])
    expect(signals[0]).toMatchObject({
      id: expect.stringMatching(/^sig_/),
      metric: "visitors",
      current: 300,
      previous: 1500,
      change: -0.8,
      window: { from: "2026-10-22", to: TODAY },
      detectedOn: TODAY
    })
    expect(signals[1]).toMatchObject({ current: 100, previous: 200, change: -0.5, window: { from: "2026-11-14", to: TODAY } })
    // Stable for the day.
    const again = await get(`/api/v1/projects/${id}/signals`, secret)
    expect(again.signals.map((s: any) => s.id)).toEqual(signals.map((s: any) => s.id))

    const health = await get(`/api/v1/projects/${id}/health`, secret)
    expect(health).toMatchObject({ score: 0, status: "critical" })
  })

  it("?dimension and ?severity narrow the list; unknown values answer 400", async () => {
    const { projects, secret } = await h.newAccount()
    const id = projects[0].id
    await writeDays(id, dropRows)
    const kinds = async (query: string) =>
      (await get(`/api/v1/projects/${id}/signals${query}`, secret)).signals.map((s: any) => s.kind)
    expect(await kinds("?dimension=traffic")).toEqual(["traffic_drop", "traffic_drop_week"])
    expect(await kinds("?severity=critical")).toEqual(["traffic_drop"])
    expect(await kinds("?severity=warning")).toEqual(["traffic_drop_week"])
    expect(await kinds("?dimension=traffic&severity=critical")).toEqual(["traffic_drop"])
    expect(await kinds("?dimension=traffic&severity=info")).toEqual([])
    expect(await kinds("?dimension=revenue")).toEqual([])

    const badDimension = await h.call("GET", `/api/v1/projects/${id}/signals?dimension=speed`, { token: secret })
    expectError(badDimension, 400, "invalid_request")
    expect(badDimension.json.error.issues.map((i: any) => i.path)).toContain("query.dimension")
    const badSeverity = await h.call("GET", `/api/v1/projects/${id}/signals?severity=high`, { token: secret })
    expectError(badSeverity, 400, "invalid_request")
    expect(badSeverity.json.error.issues.map((i: any) => i.path)).toContain("query.severity")
  })

  it("pages with ?limit and nextCursor", async () => {
    const { projects, secret } = await h.newAccount()
    const id = projects[0].id
    await writeDays(id, dropRows)
    const first = await get(`/api/v1/projects/${id}/signals?limit=1`, secret)
    expect(first.signals.map((s: any) => s.kind)).toEqual(["traffic_drop"])
    expect(first.nextCursor).toBeTypeOf("string")
    const second = await get(`/api/v1/projects/${id}/signals?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`, secret)
    expect(second.signals.map((s: any) => s.kind)).toEqual(["traffic_drop_week"])
    expect(second.nextCursor).toBeNull()
    expectError(await h.call("GET", `/api/v1/projects/${id}/signals?cursor=garbage`, { token: secret }), 400)
    expectError(await h.call("GET", `/api/v1/projects/${id}/signals?limit=0`, { token: secret }), 400)
  })

  it("ranks warnings before information, then by the size of the change", async () => {
    const { projects, secret } = await seeded({ expense: true })
    const { signals } = await get(`/api/v1/projects/${projects[0].id}/signals`, secret)
    expect(signals.map((s: any) => [s.kind, s.severity, s.change])).toEqual([
      ["churn_spike", "warning", 1.4],
      ["thin_margin", "warning", -0.88],
      ["traffic_growth", "info", 1.7],
      ["seo_growth", "info", 1],
      ["revenue_growth", "info", 0.6102]
    ])
    expect(signals.map((s: any) => s.dimension)).toEqual(["retention", "profitability", "traffic", "seo", "revenue"])
  })

  it("a project with no data has no signals", async () => {
    const { projects, secret } = await h.newAccount()
    expect(await get(`/api/v1/projects/${projects[0].id}/signals`, secret)).toEqual({ signals: [], nextCursor: null })
  })
})

describe("GET /projects/{id}/briefing", () => {
  it("has today's date, the health snapshot, yesterday's figures and ranked priorities", async () => {
    const { projects, secret } = await seeded({ expense: true })
    const id = projects[0].id
    const b = await get(`/api/v1/projects/${id}/briefing`, secret)
    expect(b.projectId).toBe(id)
    expect(b.date).toBe(TODAY)
    expect(b.generatedAt).toBe(nowIso())
    expect(b.health).toEqual({ score: 87, confidence: 0.07, status: "healthy", computedAt: nowIso() })
    expect(b.headline).toBe("Health 87/100 (healthy): customer churn at 6.0% over the last 30 days.")
    expect(b.yesterday).toEqual({
      date: "2026-11-19",
      visitors: 0,
      pageviews: 0,
      revenue: usd(20000),
      newSubscriptions: 6,
      churnedSubscriptions: 1
    })
    // Both warnings, topped up to three with the largest information signal.
    expect(b.priorities.map((p: any) => [p.rank, p.dimension, p.severity])).toEqual([
      [1, "retention", "warning"],
      [2, "profitability", "warning"],
      [3, "traffic", "info"]
    ])
    const { signals } = await get(`/api/v1/projects/${id}/signals`, secret)
    expect(b.priorities.map((p: any) => p.signalId)).toEqual(signals.slice(0, 3).map((s: any) => s.id))
    for (const p of b.priorities) {
      expect(p.title.length).toBeGreaterThan(0)
      expect(p.action.length).toBeGreaterThan(0)
    }
  })

  it("with no data: today's date, no priorities and a quiet headline", async () => {
    const { projects, secret } = await h.newAccount()
    const b = await get(`/api/v1/projects/${projects[0].id}/briefing`, secret)
    expect(b).toMatchObject({
      date: TODAY,
      headline: "All quiet: not enough data for a health score yet.",
      health: { score: null, status: "no_data", confidence: 0 },
      yesterday: { date: "2026-11-19", visitors: 0, pageviews: 0, revenue: usd(0), newSubscriptions: 0, churnedSubscriptions: 0 },
      priorities: []
    })
  })
})

describe("GET /projects", () => {
  it("lists the account's projects, each with its health snapshot", async () => {
    const { projects, secret } = await seeded({ projects: 2, expense: true })
    const [withData, empty] = projects
    const list = await get("/api/v1/projects", secret)
    expect(list.nextCursor).toBeNull()
    const byId = Object.fromEntries(list.projects.map((p: any) => [p.id, p]))
    expect(Object.keys(byId).sort()).toEqual([withData.id, empty.id].sort())
    expect(byId[withData.id]).toEqual({
      id: withData.id,
      name: withData.name,
      domain: withData.domain,
      timezone: "UTC",
      currency: "USD",
      createdAt: withData.createdAt.toISOString(),
      health: { score: 87, confidence: 0.07, status: "healthy", computedAt: nowIso() }
    })
    expect(byId[empty.id].health).toEqual({ score: null, confidence: 0, status: "no_data", computedAt: nowIso() })
    // The snapshot agrees with the full health report.
    const health = await get(`/api/v1/projects/${withData.id}/health`, secret)
    expect(byId[withData.id].health).toEqual({
      score: health.score,
      confidence: health.confidence,
      status: health.status,
      computedAt: health.computedAt
    })
  })

  it("a restricted token sees only its own projects", async () => {
    const { account, projects, secret } = await h.newAccount({ projects: 3 })
    await writeDays(projects[2].id, dropRows)
    const restricted = await h.mint(account.id, { projects: [projects[0].id, projects[2].id] })
    const list = await get("/api/v1/projects", restricted.secret)
    expect(list.projects.map((p: any) => p.id).sort()).toEqual([projects[0].id, projects[2].id].sort())
    const p2 = list.projects.find((p: any) => p.id === projects[2].id)
    expect(p2.health).toMatchObject({ score: 0, status: "critical" })

    const one = await h.mint(account.id, { projects: [projects[1].id] })
    expect((await get("/api/v1/projects", one.secret)).projects.map((p: any) => p.id)).toEqual([projects[1].id])
    // The all-access token sees all three; another account sees none of them.
    expect((await get("/api/v1/projects", secret)).projects).toHaveLength(3)
    const other = await h.newAccount({ projects: 0 })
    expect(await get("/api/v1/projects", other.secret)).toEqual({ projects: [], nextCursor: null })
  })

  it("pages with ?limit and nextCursor, oldest first", async () => {
    const { account, secret } = await h.newAccount({ projects: 0 })
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      ids.push((await h.run(createProject({ accountId: account.id, name: `P${i}`, domain: `p${i}.example` }))).id)
      h.time.advance(1_000)
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    for (let page = 0; page < 3; page++) {
      const query: string = cursor === null ? "?limit=1" : `?limit=1&cursor=${encodeURIComponent(cursor)}`
      const data = await get(`/api/v1/projects${query}`, secret)
      seen.push(...data.projects.map((p: any) => p.id))
      cursor = data.nextCursor
    }
    expect(seen).toEqual(ids)
    expect(cursor).toBeNull()
  })
})
