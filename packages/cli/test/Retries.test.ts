/**
 * Retries against a real server: a rate limit of 1 request a minute for the real 429, and injected
 * answers (the API's own envelopes) placed in front of the app for 429 with a short Retry-After and 5xx.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli, serverForFile, type TestServer } from "./support/TestServer.ts"

let server: TestServer
let secret = ""
let xdg = ""
const env = () => ({ SITEHEALTH_URL: server.baseUrl, SITEHEALTH_TOKEN: secret, XDG_CONFIG_HOME: xdg })

const rateLimited = (retryAfter: string) => ({
  status: 429,
  headers: { "retry-after": retryAfter },
  body: {
    status: "error",
    error: { code: 429, message: "Rate limit exceeded", type: "rate_limited", limit: 60, remaining: 0, reset: 0 }
  }
})
const unavailable = {
  status: 503,
  headers: {},
  body: { status: "error", error: { code: 503, message: "Database unreachable", type: "unavailable" } }
}

serverForFile({ projects: 1, tmpPrefix: "sitehealth-cli-retry-", overrides: { rateLimit: 1 } }, (file) => {
  server = file.server
  secret = file.account.secret
  xdg = file.xdg
})

describe("retries", () => {
  it.live("429: waits Retry-After once, then succeeds", () =>
    Effect.gen(function*() {
      server.faults.push(rateLimited("1"))
      const before = server.requests.length
      const started = Date.now()
      // tokens list is the first real request of this token: within its limit of 1
      const run = yield* runCli(["tokens", "list", "--json"], env())
      expect(run.code).toBe(0)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
      expect(server.requests.length - before).toBe(2)
    }))

  it.live("429 twice: exit 7 after one retry; the real limiter's long Retry-After is not waited for", () =>
    Effect.gen(function*() {
      server.faults.push(rateLimited("1"), rateLimited("1"))
      const before = server.requests.length
      const run = yield* runCli(["projects", "list", "--json"], env())
      expect(run.code).toBe(7)
      expect(JSON.parse(run.stdout).error.code).toBe(429)
      expect(server.requests.length - before).toBe(2)

      // The real rate limit (1 a minute, in windows aligned to the UTC minute): a fresh token spends its one
      // request, then the CLI's gets a Retry-After longer than the 2 s cap in tests → exit 7 at once. Not in
      // the last seconds of a minute, where the window would roll over between the two.
      const msLeft = 60_000 - (Date.now() % 60_000)
      if (msLeft < 8_000) yield* Effect.sleep(msLeft + 100)
      const fresh = (yield* Effect.promise(() => server.newAccount(1))).secret
      const spent = yield* Effect.promise(() =>
        fetch(`${server.baseUrl}/api/v1/projects`, { headers: { authorization: `Bearer ${fresh}` } })
      )
      expect(spent.status).toBe(200)
      const real = yield* runCli(["projects", "list"], { ...env(), SITEHEALTH_TOKEN: fresh })
      expect(real.code).toBe(7)
      expect(real.stderr).toMatch(/retry after \d+s/)
    }))

  it.live("5xx: a GET backs off and retries; so does a POST, with the same Idempotency-Key every time", () =>
    Effect.gen(function*() {
      server.faults.push(unavailable, unavailable, unavailable, unavailable)
      const before = server.requests.length
      const get = yield* runCli(["projects", "list"], env())
      expect(get.code).toBe(3) // 503 every time: the server cannot reach its database
      expect(server.requests.length - before).toBe(4) // 1 + 3 retries

      server.faults.push(unavailable, unavailable, unavailable, unavailable)
      const beforePost = server.requests.length
      const post = yield* runCli(["tokens", "create", "--yes"], env())
      expect(post.code).toBe(3)
      const posts = server.requests.slice(beforePost)
      expect(posts).toHaveLength(4) // the preview's POST: 1 + 3 retries; the confirming one is never sent
      expect(posts.every((r) => r.method === "POST")).toBe(true)
      expect(posts[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(new Set(posts.map((r) => r.headers["idempotency-key"])).size).toBe(1)
    }))
})
