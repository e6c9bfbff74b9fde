/** Reports always reflect the latest stored data: no read path may serve figures older than a write. */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { addDays } from "../../src/metrics/Dates.ts"
import { makeHarness, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const TODAY = "2026-11-20"
const trafficDays = (n: number, visitors: number) =>
  Array.from({ length: n }, (_, i) => ({
    day: addDays(TODAY, -i),
    visitors,
    pageviews: visitors * 2,
    sessions: visitors,
    bounces: 0,
    durationSeconds: visitors * 60
  }))
const revenueDays = (n: number, gross: number) =>
  Array.from({ length: n }, (_, i) => ({
    day: addDays(TODAY, -i),
    grossMinor: gross,
    refundsMinor: 0,
    mrrMinor: 30 * gross,
    activeSubscriptions: 10,
    newSubscriptions: 0,
    churnedSubscriptions: 0,
    churnedMrrMinor: 0
  }))

describe("freshness", () => {
  it("health, analytics and profitability change as soon as data is written, added or deleted", async () => {
    const { projects, secret } = await h.newAccount()
    const id = projects[0].id
    const get = async (path: string) => (await h.call("GET", `/api/v1/projects/${id}/${path}`, { token: secret })).json.data
    const write = (rows: Parameters<MetricsRepo["Service"]["writeDays"]>[1]) =>
      h.run(Effect.flatMap(MetricsRepo, (m) => m.writeDays(id, rows)))

    const snapshot = async () =>
      (await h.call("GET", "/api/v1/projects", { token: secret })).json.data.projects.find((p: any) => p.id === id).health
    expect((await get("health")).status).toBe("no_data")
    expect((await snapshot()).status).toBe("no_data")
    await write({ traffic: trafficDays(60, 100), revenue: revenueDays(60, 1000) })
    expect((await snapshot()).status).not.toBe("no_data")
    const first = await get("health")
    expect(first.dimensions.find((d: any) => d.name === "traffic").current).toBe(3000)
    expect((await get("analytics?period=7d")).totals.visitors).toBe(700)

    const listed = await snapshot()
    await write({ traffic: trafficDays(1, 500) }) // today's row replaced
    expect((await get("health")).dimensions.find((d: any) => d.name === "traffic").current).toBe(3400)
    expect((await snapshot()).score).not.toBe(listed.score)
    expect((await get("analytics?period=7d")).totals.visitors).toBe(1100)

    const profit = async () => (await get("health")).dimensions.find((d: any) => d.name === "profitability")
    const before = await profit()
    const created = await h.call("POST", `/api/v1/projects/${id}/expenses`, {
      token: secret,
      body: { amount: 15_000, category: "advertising", description: "Ads", incurredOn: TODAY, recurrence: "one_off" }
    })
    expect(created.status).toBe(201)
    const withExpense = await profit()
    expect(withExpense.current).toBeLessThan(before.current ?? 1)
    const del = await h.call("DELETE", `/api/v1/projects/${id}/expenses/${created.json.data.expense.id}`, { token: secret })
    expect(del.status).toBe(200)
    expect(await profit()).toEqual(before)
  })
})
