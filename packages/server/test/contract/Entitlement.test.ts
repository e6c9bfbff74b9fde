/** Once the trial or subscription has ended, every endpoint answers 402 trial_expired instead of data. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allEndpoints, makeHarness, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

describe("entitlement", () => {
  it("402 on every endpoint once the trial ends", async () => {
    const { account, projects, secret } = await h.newAccount()
    await h.endTrial(account.id)
    for (const [method, path] of allEndpoints(projects[0].id)) {
      const r = await h.call(method, path, { token: secret, ...(method === "GET" ? {} : { body: { confirm: true } }) })
      expect(r.status, `${method} ${path}`).toBe(402)
      expect(r.json).toEqual({
        status: "error",
        error: { code: "trial_expired", message: expect.any(String), type: "trial_expired" }
      })
      expect(r.text).not.toContain(projects[0].name)
    }
  })

  it("a 14-day trial is live on day 13 and ended on day 15", async () => {
    const { secret } = await h.newAccount({ trialDays: 14 })
    h.time.advance(13 * 86_400_000)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(200)
    h.time.advance(2 * 86_400_000)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(402)
  })

  it("an active subscription keeps it live after the trial; canceled stays live until its end", async () => {
    const { account, secret } = await h.newAccount()
    await h.endTrial(account.id)
    await h.setSubscription(account.id, "active", null)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(200)
    await h.setSubscription(account.id, "canceled", new Date(h.time.now() + 60_000))
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(200)
    await h.setSubscription(account.id, "canceled", new Date(h.time.now() - 1))
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(402)
    await h.setSubscription(account.id, "none", null)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(402)
  })

  it("nothing changes while ended: a confirmed mint is refused and no token appears", async () => {
    const { account, secret } = await h.newAccount()
    await h.endTrial(account.id)
    expect((await h.call("POST", "/api/v1/tokens", { token: secret, body: { confirm: true } })).status).toBe(402)
    await h.setSubscription(account.id, "active", null)
    const list = await h.call("GET", "/api/v1/tokens", { token: secret })
    expect(list.json.data.tokens).toHaveLength(1)
  })
})
