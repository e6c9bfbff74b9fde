/** Streamable HTTP at /mcp on the API server, over real HTTP: auth, Origin, and calls through the app's router. */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { Effect } from "effect"
import { awayFromMinuteEnd, envelopeOf, rest, scopedClient } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

/** An MCP client over /mcp with `token`, closed with the test's scope. */
const httpClient = (token: string) =>
  scopedClient(async () => {
    const client = new Client({ name: "test", version: "0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", srv.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } }
      })
    )
    return client
  })

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
}
const post = (headers: Record<string, string>) =>
  Effect.promise(() =>
    fetch(new URL("/mcp", srv.baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(initialize)
    })
  )

describe("/mcp", () => {
  it.live("401 with WWW-Authenticate without a Bearer token; 403 for a foreign Origin; loopback Origin allowed", () =>
    Effect.gen(function*() {
      const bare = yield* post({})
      expect(bare.status).toBe(401)
      expect(bare.headers.get("www-authenticate")).toMatch(/^Bearer/)
      const { secret } = yield* Effect.promise(() => srv.newAccount())
      expect((yield* post({ authorization: `Bearer ${secret}`, origin: "https://evil.example" })).status).toBe(403)
      expect((yield* post({ authorization: `Bearer ${secret}`, origin: "http://localhost:3000" })).status).toBe(200)
    }))

  it.live("401 with WWW-Authenticate for a malformed, unknown or revoked token, before any tool runs", () =>
    Effect.gen(function*() {
      const { account } = yield* Effect.promise(() => srv.newAccount())
      const { secret: revoked, token } = yield* Effect.promise(() => srv.mint(account.id))
      const { secret: admin } = yield* Effect.promise(() => srv.mint(account.id))
      expect(
        (yield* Effect.promise(() =>
          rest(srv.baseUrl, admin, "DELETE", `/api/v1/tokens/${token.id}`, { confirm: true })
        )).status
      ).toBe(200)
      const unknown = `svc_${"A".repeat(36)}`
      for (
        const [bearer, type] of [["svc_invalid", "invalid_token"], [unknown, "invalid_token"], [
          revoked,
          "token_revoked"
        ]] as const
      ) {
        const r = yield* post({ authorization: `Bearer ${bearer}` })
        expect(r.status, bearer).toBe(401)
        expect(r.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/)
        expect(((yield* Effect.promise(() => r.json())) as any).error).toMatchObject({ code: 401, type })
      }
    }))

  it.live("tools run in-process with REST's rules: data, 403, revoked 401, and the shared rate limit", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => awayFromMinuteEnd())
      const { account, projects, secret } = yield* Effect.promise(() => srv.newAccount())
      const id = projects[0]!.id
      const client = yield* httpClient(secret)
      expect((yield* Effect.promise(() => client.listTools())).tools.length).toBe(29)
      const health: any = yield* Effect.promise(() => client.callTool({ name: "get_health", arguments: { id } }))
      expect(health.structuredContent).toEqual(
        (yield* Effect.promise(() => rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${id}/health`))).body.data
      )

      const { secret: narrow } = yield* Effect.promise(() => srv.mint(account.id, { permissions: ["projects:read"] }))
      const narrowClient = yield* httpClient(narrow)
      const denied: any = yield* Effect.promise(() =>
        narrowClient.callTool({ name: "get_analytics", arguments: { id } })
      )
      expect(envelopeOf(denied)).toEqual(
        (yield* Effect.promise(() => rest(srv.baseUrl, narrow, "GET", `/api/v1/projects/${id}/analytics`))).body
      )

      // REST and MCP draw on one budget: 2 requests so far for this token (get_health, REST; tools/list is free).
      for (let i = 0; i < 58; i++) {
        yield* Effect.promise(() => rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${id}/health`))
      }
      const limited: any = yield* Effect.promise(() => client.callTool({ name: "get_health", arguments: { id } }))
      expect(limited.isError).toBe(true)
      expect(envelopeOf(limited).error).toMatchObject({ code: 429, limit: 60, remaining: 0 })
    }))
})
