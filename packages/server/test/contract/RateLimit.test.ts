/** 60 requests per token per minute, window aligned to the UTC minute, headers on every authenticated response. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHarness, START, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const windowEnd = (ms: number) => (ms - (ms % 60_000) + 60_000) / 1000

describe("rate limit", () => {
  it("accepts 60 requests, then answers 429 with headers and body agreeing", async () => {
    h.time.set(START)
    const { projects, secret } = await h.newAccount()
    const path = `/api/v1/projects/${projects[0].id}/health`
    for (let i = 1; i <= 60; i++) {
      const r = await h.call("GET", path, { token: secret })
      expect(r.status).toBe(200)
      expect(r.headers.get("x-ratelimit-limit")).toBe("60")
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(60 - i))
      expect(r.headers.get("x-ratelimit-reset")).toBe(String(windowEnd(START)))
      expect(r.headers.get("retry-after")).toBeNull()
    }
    const limited = await h.call("GET", path, { token: secret })
    expect(limited.status).toBe(429)
    expect(limited.json.error).toEqual({
      code: 429,
      message: expect.any(String),
      type: "rate_limited",
      limit: 60,
      remaining: 0,
      reset: windowEnd(START)
    })
    expect(limited.headers.get("x-ratelimit-limit")).toBe("60")
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
    expect(limited.headers.get("x-ratelimit-reset")).toBe(String(limited.json.error.reset))
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("counts every authenticated request: errors (404, 400, 403) spend the budget too", async () => {
    h.time.set(START + 60_000)
    const { account, secret } = await h.newAccount()
    const weak = await h.mint(account.id, { permissions: ["projects:read"] })
    const a = await h.call("GET", "/api/v1/projects/prj_nope/health", { token: secret })
    expect(a.status).toBe(404)
    expect(a.headers.get("x-ratelimit-remaining")).toBe("59")
    const b = await h.call("GET", "/api/v1/projects/x/analytics?period=bad", { token: secret })
    expect(b.status).toBe(400)
    expect(b.headers.get("x-ratelimit-remaining")).toBe("58")
    const c = await h.call("GET", "/api/v1/tokens", { token: weak.secret })
    expect(c.status).toBe(403)
    expect(c.headers.get("x-ratelimit-remaining")).toBe("59")
  })

  it("100 concurrent requests with one token: exactly 60 accepted", async () => {
    h.time.set(START + 120_000)
    const { secret } = await h.newAccount()
    const results = await Promise.all(
      Array.from({ length: 100 }, () => h.call("GET", "/api/v1/projects", { token: secret }))
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(60)
    expect(statuses.filter((s) => s === 429)).toHaveLength(40)
  })

  it("budgets are per token, and a new window starts a new budget", async () => {
    h.time.set(START + 180_000)
    const { account, secret } = await h.newAccount()
    const other = await h.mint(account.id)
    for (let i = 0; i < 60; i++) await h.call("GET", "/api/v1/projects", { token: secret })
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(429)
    expect((await h.call("GET", "/api/v1/projects", { token: other.secret })).status).toBe(200)
    h.time.advance(29_999) // still inside the same UTC minute (START is hh:mm:30)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(429)
    h.time.advance(1)
    const fresh = await h.call("GET", "/api/v1/projects", { token: secret })
    expect(fresh.status).toBe(200)
    expect(fresh.headers.get("x-ratelimit-remaining")).toBe("59")
  })

  it("unauthenticated requests carry no rate-limit headers and spend nothing", async () => {
    const r = await h.call("GET", "/api/v1/projects", { token: null })
    expect(r.status).toBe(401)
    expect(r.headers.get("x-ratelimit-limit")).toBeNull()
  })
})

describe("rate limit setting", () => {
  it("SITEHEALTH_RATE_LIMIT changes the per-minute budget", async () => {
    const small = await makeHarness({ rateLimit: 3 })
    try {
      const { secret } = await small.newAccount()
      const statuses = []
      for (let i = 0; i < 4; i++) statuses.push((await small.call("GET", "/api/v1/projects", { token: secret })).status)
      expect(statuses).toEqual([200, 200, 200, 429])
    } finally {
      await small.close()
    }
  })
})
