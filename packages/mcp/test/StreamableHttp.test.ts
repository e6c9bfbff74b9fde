/** Streamable HTTP at /mcp on the API server, over real HTTP: auth, Origin, and calls through the app's router. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { awayFromMinuteEnd, envelopeOf, rest } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

const httpClient = async (token: string) => {
  const client = new Client({ name: "test", version: "0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", srv.baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } }
const post = (headers: Record<string, string>) =>
  fetch(new URL("/mcp", srv.baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(initialize)
  })

describe("/mcp", () => {
  it("401 with WWW-Authenticate without a Bearer token; 403 for a foreign Origin; loopback Origin allowed", async () => {
    const bare = await post({})
    expect(bare.status).toBe(401)
    expect(bare.headers.get("www-authenticate")).toMatch(/^Bearer/)
    const { secret } = await srv.newAccount()
    expect((await post({ authorization: `Bearer ${secret}`, origin: "https://evil.example" })).status).toBe(403)
    expect((await post({ authorization: `Bearer ${secret}`, origin: "http://localhost:3000" })).status).toBe(200)
  })

  it("401 with WWW-Authenticate for a malformed, unknown or revoked token, before any tool runs", async () => {
    const { account } = await srv.newAccount()
    const { secret: revoked, token } = await srv.mint(account.id)
    const { secret: admin } = await srv.mint(account.id)
    expect((await rest(srv.baseUrl, admin, "DELETE", `/api/v1/tokens/${token.id}`, { confirm: true })).status).toBe(200)
    const unknown = `svc_${"A".repeat(36)}`
    for (const [bearer, type] of [["svc_invalid", "invalid_token"], [unknown, "invalid_token"], [revoked, "token_revoked"]] as const) {
      const r = await post({ authorization: `Bearer ${bearer}` })
      expect(r.status, bearer).toBe(401)
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/)
      expect(((await r.json()) as any).error).toMatchObject({ code: 401, type })
    }
  })

  it("tools run in-process with REST's rules: data, 403, revoked 401, and the shared rate limit", async () => {
    await awayFromMinuteEnd()
    const { account, projects, secret } = await srv.newAccount()
    const id = projects[0]!.id
    const client = await httpClient(secret)
    expect((await client.listTools()).tools.length).toBe(16)
    const health: any = await client.callTool({ name: "get_health", arguments: { id } })
    expect(health.structuredContent).toEqual((await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${id}/health`)).body.data)

    const { secret: narrow } = await srv.mint(account.id, { permissions: ["projects:read"] })
    const denied: any = await (await httpClient(narrow)).callTool({ name: "get_analytics", arguments: { id } })
    expect(envelopeOf(denied)).toEqual((await rest(srv.baseUrl, narrow, "GET", `/api/v1/projects/${id}/analytics`)).body)


    // REST and MCP draw on one budget: 3 requests so far for this token (list's GET /tokens, get_health, REST).
    for (let i = 0; i < 57; i++) await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${id}/health`)
    const limited: any = await client.callTool({ name: "get_health", arguments: { id } })
    expect(limited.isError).toBe(true)
    expect(envelopeOf(limited).error).toMatchObject({ code: 429, limit: 60, remaining: 0 })
  })
})
