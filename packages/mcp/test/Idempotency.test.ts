/**
 * A tool call's POST carries an Idempotency-Key and is retried safely with it: the retry policy itself
 * (Retry.ts, with a fake Send), over stdio's typed client against a real server whose answer gets lost
 * after the app acted, and through /mcp's in-process dispatch.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { ExpensesRepo } from "@sitehealth/server/expenses/ExpensesRepo"
import { IdempotencyRepo } from "@sitehealth/server/http/IdempotencyRepo"
import { Effect } from "effect"
import type { ApiAnswer, ApiRequest } from "../src/Dispatch.ts"
import { withRetries } from "../src/Retry.ts"
import { inMemoryClient, rest } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

const fast = { attempts: 3, baseDelayMs: 1, inProgressDelayMs: 1 }
const ok: ApiAnswer = { status: 201, body: { status: "success", data: {} } }
const envelope = (status: number, type: string): ApiAnswer => ({
  status,
  body: { status: "error", error: { code: status, type, message: type } }
})

/** A Send that answers from a script and records what it was asked. */
const scripted = (answers: Array<ApiAnswer>) => {
  const seen: Array<ApiRequest> = []
  const send = async (request: ApiRequest) => {
    seen.push(request)
    return answers.shift() ?? ok
  }
  return { seen, send }
}

const expenseArgs = (id: string, description: string) => ({
  id,
  amount: 1200,
  category: "software",
  description,
  incurredOn: "2026-11-01",
  recurrence: "one_off"
})

const expensesOf = async (secret: string, projectId: string) =>
  (await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${projectId}/expenses?limit=100`)).body.data
    .expenses as Array<any>

describe("Retry.ts", () => {
  it("retries a POST on unreachable, 5xx and 409 in progress, with one key; at most 3 retries", async () => {
    const { seen, send } = scripted([
      envelope(503, "unreachable"),
      envelope(500, "internal_error"),
      envelope(409, "idempotency_request_in_progress")
    ])
    const answer = await withRetries(send, fast)({ method: "POST", url: "/api/v1/tokens", body: {} })
    expect(answer.status).toBe(201)
    expect(seen).toHaveLength(4)
    expect(seen[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(seen.map((r) => r.idempotencyKey)).size).toBe(1)

    const stuck = scripted([
      envelope(503, "unavailable"),
      envelope(503, "unavailable"),
      envelope(503, "unavailable"),
      envelope(503, "unavailable"),
      ok
    ])
    expect((await withRetries(stuck.send, fast)({ method: "POST", url: "/x", body: {} })).status).toBe(503)
    expect(stuck.seen).toHaveLength(4)
  })

  it("does not retry a POST's 4xx (another 409 included), nor any GET or DELETE", async () => {
    for (
      const answer of [
        envelope(400, "invalid_request"),
        envelope(409, "self_revoke"),
        envelope(422, "idempotency_key_reused"),
        envelope(404, "not_found")
      ]
    ) {
      const { seen, send } = scripted([answer])
      expect((await withRetries(send, fast)({ method: "POST", url: "/x", body: {} })).status).toBe(answer.status)
      expect(seen).toHaveLength(1)
    }
    for (const method of ["GET", "DELETE"]) {
      const { seen, send } = scripted([envelope(503, "unreachable")])
      expect((await withRetries(send, fast)({ method, url: "/x" })).status).toBe(503)
      expect(seen).toHaveLength(1)
      expect(seen[0]!.idempotencyKey).toBeUndefined()
    }
  })
})

describe("stdio's typed client", () => {
  it("create_expense whose answer is lost after the app acted: resent with the same key, one expense, the tool gets it", async () => {
    const { projects, secret } = await srv.newAccount()
    const id = projects[0]!.id
    const client = await inMemoryClient(srv.baseUrl, secret)
    srv.lost.push({ kind: "reset", when: (r) => r.method === "POST" })
    const before = srv.requests.length
    const result: any = await client.callTool({ name: "create_expense", arguments: expenseArgs(id, "lost once") })
    expect(result.isError, JSON.stringify(result)).toBeUndefined()
    const posts = srv.requests.slice(before).filter((r) => r.method === "POST")
    expect(posts).toHaveLength(2)
    expect(posts[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(posts[1]!.headers["idempotency-key"]).toBe(posts[0]!.headers["idempotency-key"])
    const stored = await expensesOf(secret, id)
    expect(stored).toHaveLength(1)
    expect(result.structuredContent.expense.id).toBe(stored[0].id)

    // A second call is a second action: its own key.
    await client.callTool({ name: "create_expense", arguments: expenseArgs(id, "another") })
    const keys = srv.requests.slice(before).filter((r) => r.method === "POST").map((r) => r.headers["idempotency-key"])
    expect(new Set(keys).size).toBe(2)
    expect(await expensesOf(secret, id)).toHaveLength(2)
    await client.close()
  })
})

describe("/mcp in-process dispatch", () => {
  it("sends a key on the POST and retries a 5xx with it: one expense", async () => {
    const { projects, secret } = await srv.newAccount()
    const id = projects[0]!.id
    const idempotency = await srv.run(Effect.service(IdempotencyRepo))
    const expenses = await srv.run(Effect.service(ExpensesRepo))
    const claim = idempotency.claim
    const insert = expenses.insert
    const keys: Array<string> = []
    ;(idempotency as { claim: typeof claim }).claim = (input) => {
      keys.push(input.key)
      return claim(input)
    } // The first insert dies (a 500); the retry's works.
    ;(expenses as { insert: typeof insert }).insert = () => {
      ;(expenses as { insert: typeof insert }).insert = insert
      return Effect.die(new Error("injected failure"))
    }
    try {
      const client = new Client({ name: "test", version: "0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL("/mcp", srv.baseUrl), {
          requestInit: { headers: { authorization: `Bearer ${secret}` } }
        })
      )
      const result: any = await client.callTool({ name: "create_expense", arguments: expenseArgs(id, "via /mcp") })
      expect(result.isError, JSON.stringify(result)).toBeUndefined()
      await client.close()
    } finally {
      ;(idempotency as { claim: typeof claim }).claim = claim
      ;(expenses as { insert: typeof insert }).insert = insert
    }
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(await expensesOf(secret, id)).toHaveLength(1)
  })
})
