/**
 * The CLI's POSTs against a real server whose answers get lost after the app acted (a reset connection, a
 * proxy's 502) or that answers 409 in progress: the CLI sends the same request again with the same
 * Idempotency-Key, and the API acts once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { apiClient, runCli, serverForFile, type TestServer } from "./support/TestServer.ts"

let server: TestServer
let secret = ""
let projectId = ""
let xdg = ""
const env = () => ({ SITEHEALTH_URL: server.baseUrl, SITEHEALTH_TOKEN: secret, XDG_CONFIG_HOME: xdg })

const badGateway = {
  kind: "replaced" as const,
  status: 502,
  headers: {},
  body: { status: "error", error: { code: 502, message: "Bad gateway", type: "bad_gateway" } }
}

const createExpense = (description: string) =>
  runCli(
    [
      "expenses",
      "create",
      projectId,
      "--amount",
      "2900",
      "--category",
      "hosting",
      "--description",
      description,
      "--date",
      "2026-11-01",
      "--json"
    ],
    env()
  )

/** The project's expenses, as the API lists them (through the contract's typed client). */
const expenses = () =>
  Effect.flatMap(
    apiClient(server.baseUrl, secret),
    (api) => api.expenses.listExpenses({ params: { id: projectId }, query: { limit: 100 } })
  ).pipe(
    Effect.map((page) => page.expenses)
  )

serverForFile({ projects: 1, tmpPrefix: "sitehealth-cli-idem-" }, (file) => {
  server = file.server
  secret = file.account.secret
  projectId = file.account.projects[0]!.id
  xdg = file.xdg
})

describe("POST retries with one Idempotency-Key", () => {
  it.live("the answer is lost (connection reset) after the expense was created: the retry gets it back, one expense", () =>
    Effect.gen(function*() {
      server.lost.push({ kind: "reset", when: (r) => r.method === "POST" })
      const before = server.requests.length
      const run = yield* createExpense("reset once")
      expect(run.code, run.stderr).toBe(0)
      const posts = server.requests.slice(before).filter((r) => r.method === "POST")
      expect(posts).toHaveLength(2)
      expect(posts[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(posts[1]!.headers["idempotency-key"]).toBe(posts[0]!.headers["idempotency-key"])
      expect(posts[1]!.body).toBe(posts[0]!.body)
      const created = (yield* expenses()).filter((e) => e.description === "reset once")
      expect(created).toHaveLength(1)
      // What the CLI printed is the expense the first attempt created (the API replayed it).
      expect(JSON.parse(run.stdout).expense.id).toBe(created[0]!.id)
    }))

  it.live("a proxy's 502 after the app acted, twice: retried with the same key, one expense", () =>
    Effect.gen(function*() {
      server.lost.push({ ...badGateway, when: (r) => r.method === "POST" }, {
        ...badGateway,
        when: (r) => r.method === "POST"
      })
      const before = server.requests.length
      const run = yield* createExpense("502 twice")
      expect(run.code, run.stderr).toBe(0)
      const posts = server.requests.slice(before).filter((r) => r.method === "POST")
      expect(posts).toHaveLength(3)
      expect(new Set(posts.map((p) => p.headers["idempotency-key"])).size).toBe(1)
      expect((yield* expenses()).filter((e) => e.description === "502 twice")).toHaveLength(1)
    }))

  it.live("409 in progress: waits its Retry-After and sends the same request again", () =>
    Effect.gen(function*() {
      server.faults.push({
        status: 409,
        headers: { "retry-after": "1" },
        body: {
          status: "error",
          error: { code: 409, message: "still running", type: "idempotency_request_in_progress" }
        }
      })
      const before = server.requests.length
      const started = Date.now()
      const run = yield* createExpense("after 409")
      expect(run.code, run.stderr).toBe(0)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
      const posts = server.requests.slice(before).filter((r) => r.method === "POST")
      expect(posts).toHaveLength(2)
      expect(posts[1]!.headers["idempotency-key"]).toBe(posts[0]!.headers["idempotency-key"])
      expect((yield* expenses()).filter((e) => e.description === "after 409")).toHaveLength(1)
    }))

  it.live("every call gets its own key: two creates are two expenses", () =>
    Effect.gen(function*() {
      const before = server.requests.length
      expect((yield* createExpense("twice")).code).toBe(0)
      expect((yield* createExpense("twice")).code).toBe(0)
      const keys = server.requests.slice(before).filter((r) => r.method === "POST").map((r) =>
        r.headers["idempotency-key"]
      )
      expect(new Set(keys).size).toBe(2)
      expect((yield* expenses()).filter((e) => e.description === "twice")).toHaveLength(2)
    }))

  it.live("a mint whose answer was lost: one token, and the CLI says its secret cannot be shown (exit 1)", () =>
    Effect.gen(function*() {
      server.lost.push({ kind: "reset", when: (r) => r.method === "POST" && r.body.includes("\"confirm\":true") })
      const countTokens = () =>
        Effect.flatMap(apiClient(server.baseUrl, secret), (api) => api.tokens.listTokens({ query: { limit: 100 } }))
          .pipe(
            Effect.map((page) => page.tokens)
          )
      const run = yield* runCli(["tokens", "create", "--name", "lost-in-transit", "--yes"], env())
      expect(run.code).toBe(1)
      const minted = (yield* countTokens()).filter((t) => t.name === "lost-in-transit")
      expect(minted).toHaveLength(1)
      expect(run.stderr).toContain(minted[0]!.id)
      expect(run.stderr).toMatch(/secret cannot be shown again/)
      expect(run.stdout).not.toMatch(/svc_[A-Za-z0-9]{20,}/)
    }))
})
