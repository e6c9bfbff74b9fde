/** 60 requests per token per minute, window aligned to the UTC minute, headers on every authenticated response. */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { h, makeTestApp, START, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("RateLimit", (it) => {
  const windowEnd = (ms: number) => (ms - (ms % 60_000) + 60_000) / 1000

  describe("rate limit", () => {
    it.effect("accepts 60 requests, then answers 429 with headers and body agreeing", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const { projects, secret } = yield* h.newAccount()
        const path = `/api/v1/projects/${projects[0].id}/health`
        for (let i = 1; i <= 60; i++) {
          const r = yield* h.raw("GET", path, { token: secret })
          expect(r.status).toBe(200)
          expect(r.headers.get("x-ratelimit-limit")).toBe("60")
          expect(r.headers.get("x-ratelimit-remaining")).toBe(String(60 - i))
          expect(r.headers.get("x-ratelimit-reset")).toBe(String(windowEnd(START)))
          expect(r.headers.get("retry-after")).toBeNull()
        }
        const limited = yield* h.raw("GET", path, { token: secret })
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
      }))

    it.effect("counts every authenticated request: errors (404, 400, 403) spend the budget too", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START + 60_000)
        const { account, secret } = yield* h.newAccount()
        const weak = yield* h.mint(account.id, { permissions: ["projects:read"] })
        const a = yield* h.api.projects.getHealth({ params: { id: "prj_nope" } }, { token: secret })
        expect(a.status).toBe(404)
        expect(a.headers.get("x-ratelimit-remaining")).toBe("59")
        const b = yield* h.raw("GET", "/api/v1/projects/x/analytics?period=bad", { token: secret })
        expect(b.status).toBe(400)
        expect(b.headers.get("x-ratelimit-remaining")).toBe("58")
        const c = yield* h.api.tokens.listTokens({ query: {} }, { token: weak.secret })
        expect(c.status).toBe(403)
        expect(c.headers.get("x-ratelimit-remaining")).toBe("59")
      }))

    it.effect("100 concurrent requests with one token: exactly 60 accepted", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START + 120_000)
        const { secret } = yield* h.newAccount()
        const results = yield* Effect.all(
          Array.from({ length: 100 }, () => h.api.projects.listProjects({ query: {} }, { token: secret })),
          { concurrency: "unbounded" }
        )
        const statuses = results.map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(60)
        expect(statuses.filter((s) => s === 429)).toHaveLength(40)
      }))

    it.effect("budgets are per token, and a new window starts a new budget", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START + 180_000)
        const { account, secret } = yield* h.newAccount()
        const other = yield* h.mint(account.id)
        for (let i = 0; i < 60; i++) yield* h.api.projects.listProjects({ query: {} }, { token: secret })
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(429)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: other.secret })).status).toBe(200)
        yield* TestClock.adjust(29_999) // still inside the same UTC minute (START is hh:mm:30)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(429)
        yield* TestClock.adjust(1)
        const fresh = yield* h.api.projects.listProjects({ query: {} }, { token: secret })
        expect(fresh.status).toBe(200)
        expect(fresh.headers.get("x-ratelimit-remaining")).toBe("59")
      }))

    it.effect("unauthenticated requests carry no rate-limit headers and spend nothing", () =>
      Effect.gen(function*() {
        const r = yield* h.api.projects.listProjects({ query: {} }, { token: null })
        expect(r.status).toBe(401)
        expect(r.headers.get("x-ratelimit-limit")).toBeNull()
      }))
  })

  describe("rate limit setting", () => {
    it.effect("SITEHEALTH_RATE_LIMIT changes the per-minute budget", () =>
      Effect.gen(function*() {
        // A second app for this test only, released with the test's scope.
        const small = yield* makeTestApp({ rateLimit: 3 })
        const { secret } = yield* small.newAccount()
        const statuses = []
        for (let i = 0; i < 4; i++) {
          statuses.push((yield* small.api.projects.listProjects({ query: {} }, { token: secret })).status)
        }
        expect(statuses).toEqual([200, 200, 200, 429])
      }))
  })
})
