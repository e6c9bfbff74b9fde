/**
 * `what_changed`: the join (briefing figures + signals of the period per website), the ranking by money at
 * stake, the period's window, and the API's rules through the caller's token (scope, permission) on a real
 * server. The join and ranking use an API answered by the test (a `Send` over fixed answers shaped as the
 * contract's), since a fresh account has no signals; the rules run against the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import type { ApiRequest, Send } from "../src/Dispatch.ts"
import { whatChanged } from "../src/WhatChanged.ts"
import { inMemoryClient } from "./support/Mcp.ts"

const NOW = Date.parse("2026-11-28T08:00:00Z")
const HOUR = 3_600_000

const figure = (value: number, usual: number) => ({ value, state: "connected", usual, change: (value - usual) / usual })
const signal = (dimension: string, severity: string, amount: number | null, hoursAgo: number, title: string) => ({
  id: `sig_${title}`,
  dimension,
  severity,
  kind: `${dimension}_drop`,
  subject: null,
  title,
  detail: "",
  metric: dimension,
  day: "2026-11-27",
  actual: 1,
  expected: null,
  change: -0.4,
  moneyAtStake: amount === null ? null : { amount, currency: "EUR" },
  detectedAt: new Date(NOW - hoursAgo * HOUR).toISOString(),
  lastSeenAt: new Date(NOW).toISOString(),
  active: true,
  resolvedAt: null
})
const briefing = (visitors: number) => ({
  headline: "h",
  yesterday: {
    date: "2026-11-27",
    currency: "EUR",
    visitors: figure(visitors, 100),
    pageviews: figure(visitors * 2, 200),
    netRevenue: figure(5000, 10000),
    newCustomers: figure(1, 2),
    churnedCustomers: figure(0, 0.5),
    mrr: figure(90000, 91000)
  }
})

const API: Record<string, unknown> = {
  "/api/v1/projects?limit=100": {
    projects: [
      { id: "prj_a", name: "Calm", domain: "calm.example", currency: "EUR" },
      { id: "prj_b", name: "Shop", domain: "shop.example", currency: "EUR" },
      { id: "prj_c", name: "Blog", domain: "blog.example", currency: "EUR" }
    ],
    nextCursor: null
  },
  "/api/v1/projects/prj_a/briefing": briefing(100),
  "/api/v1/projects/prj_a/signals?active=true&limit=100": {
    // Detected 3 days ago: not a change since yesterday, one within 7d.
    signals: [signal("traffic", "warning", 90000, 72, "old")],
    nextCursor: null
  },
  "/api/v1/projects/prj_b/briefing": briefing(40),
  "/api/v1/projects/prj_b/signals?active=true&limit=100": {
    signals: [
      signal("traffic", "critical", null, 5, "traffic_down"),
      signal("revenue", "critical", 42000, 6, "failed_renewals"),
      signal("seo", "warning", 3000, 10, "ranking_drop")
    ],
    nextCursor: null
  },
  "/api/v1/projects/prj_c/briefing": briefing(100),
  "/api/v1/projects/prj_c/signals?active=true&limit=100": { signals: [], nextCursor: null }
}

/** The test's API: each known path answers its data in the success envelope; anything else 404. */
const fixed = (sent: Array<ApiRequest>): Send => async (request) => {
  sent.push(request)
  const data = API[request.url]
  return data === undefined
    ? { status: 404, body: { status: "error", error: { code: 404, type: "not_found", message: "nope" } } }
    : { status: 200, body: { status: "success", data } }
}

describe("what_changed", () => {
  it("joins each website's figures and the period's signals, ranked by money at stake", async () => {
    const sent: Array<ApiRequest> = []
    const result: any = await whatChanged(fixed(sent), {}, NOW)
    expect(result.isError).toBeUndefined()
    const data = result.structuredContent
    expect(data.since).toBe("yesterday")
    expect(data.websites.map((w: any) => w.id)).toEqual(["prj_b", "prj_a", "prj_c"])
    const shop = data.websites[0]
    expect(shop.moneyAtStake).toEqual({ amount: 45000, currency: "EUR" })
    expect(shop.changes.map((c: any) => c.title)).toEqual(["failed_renewals", "ranking_drop", "traffic_down"])
    expect(shop.rankings.map((c: any) => c.title)).toEqual(["ranking_drop"])
    expect(shop.traffic.visitors).toMatchObject({ value: 40, usual: 100, state: "connected" })
    expect(shop.revenue.netRevenue).toMatchObject({ value: 5000, usual: 10000 })
    // The old signal is outside "yesterday": no change, nothing at stake.
    expect(data.websites[1]).toMatchObject({ id: "prj_a", moneyAtStake: null, changes: [] })
    expect(result.content[1].text).toContain("most at stake: Shop")
    expect(sent).toHaveLength(1 + 2 * 3)

    const week: any = await whatChanged(fixed([]), { since: "7d" }, NOW)
    expect(week.structuredContent.websites.map((w: any) => w.id)).toEqual(["prj_a", "prj_b", "prj_c"])
    expect(week.structuredContent.websites[0].moneyAtStake).toEqual({ amount: 90000, currency: "EUR" })

    const bad: any = await whatChanged(fixed([]), { since: "forever" }, NOW)
    expect(bad.isError).toBe(true)
    expect(JSON.parse(bad.content[0].text).error).toMatchObject({ code: 400, type: "invalid_request" })
  })
})

describe("what_changed on a real server", () => {
  let srv: TestServer
  beforeAll(async () => {
    srv = await startServer()
  })
  afterAll(async () => {
    await srv.close()
  })

  it("reads only the token's websites; without projects:read it is not listed and the API refuses it", async () => {
    const { account, projects } = await srv.newAccount(2)
    const { secret } = await srv.mint(account.id, { projects: [projects[1]!.id], permissions: ["projects:read"] })
    const client = await inMemoryClient(srv.baseUrl, secret)
    const result: any = await client.callTool({ name: "what_changed", arguments: {} })
    expect(result.isError).not.toBe(true)
    expect(result.structuredContent.websites).toHaveLength(1)
    expect(result.structuredContent.websites[0]).toMatchObject({ id: projects[1]!.id, changes: [] })
    // A fresh website: its figures say they are not data yet, never a made-up 0.
    expect(result.structuredContent.websites[0].traffic.visitors.state).toBe("not_connected")
    await client.close()

    const { secret: seoOnly } = await srv.mint(account.id, { permissions: ["seo:read"] })
    const narrow = await inMemoryClient(srv.baseUrl, seoOnly)
    expect((await narrow.listTools()).tools.map((t) => t.name)).not.toContain("what_changed")
    const refused: any = await narrow.callTool({ name: "what_changed", arguments: {} })
    expect(refused.isError).toBe(true)
    expect(JSON.parse(refused.content[0].text).error.code).toBe(403)
    await narrow.close()
  })
})
