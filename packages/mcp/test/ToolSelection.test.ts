/**
 * Which tools a session lists, over the in-memory transport, stdio and /mcp:
 * - by the caller's own identity (GET /tokens/current), for every token — also one without tokens:read;
 * - a failed identity lookup is not remembered: a session opened while rate limited recovers;
 * - --read-only / --toolsets on stdio, ?read_only= / ?toolsets= / X-MCP-Readonly / X-MCP-Toolsets on /mcp;
 * - at /mcp, initialize, tools/list, prompts/list and resources/list spend no rate limit; tool calls do.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { errorBody } from "@sitehealth/domain/Envelope"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { awayFromMinuteEnd, BIN, inMemoryClient, scopedClient, stdioClient } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

const names = (client: Client) => Effect.promise(async () => (await client.listTools()).tools.map((t) => t.name).sort())

const httpClient = (token: string, search = "", headers: Record<string, string> = {}) =>
  scopedClient(async () => {
    const client = new Client({ name: "test", version: "0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`/mcp${search}`, srv.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } }
      })
    )
    return client
  })

const REPORT_READS = ["get_analytics", "get_churn", "get_revenue", "get_seo"]

describe("listing by the caller's own identity", () => {
  it.live("a token without tokens:read lists exactly what its permissions allow, on every transport", () =>
    Effect.gen(function*() {
      const { account } = yield* Effect.promise(() => srv.newAccount())
      const { secret } = yield* Effect.promise(() =>
        srv.mint(account.id, { permissions: ["analytics:read", "expenses:write"] })
      )
      const expected = ["create_expense", "delete_expense", "get_analytics"]
      expect(yield* names(yield* scopedClient(() => inMemoryClient(srv.baseUrl, secret)))).toEqual(expected)
      expect(yield* names(yield* httpClient(secret))).toEqual(expected)
      expect(
        yield* names(yield* scopedClient(() => stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl })))
      ).toEqual(expected)
    }))

  it.live("a session opened while the identity lookup fails lists the selection, then the token's tools once it answers", () =>
    Effect.gen(function*() {
      const { account } = yield* Effect.promise(() => srv.newAccount())
      const { secret } = yield* Effect.promise(() => srv.mint(account.id, { permissions: ["seo:read"] }))
      const client = yield* scopedClient(() => inMemoryClient(srv.baseUrl, secret))
      // The next request the server receives (the session's GET /tokens/current) is answered 429.
      srv.faults.push({
        status: 429,
        headers: { "retry-after": "1" },
        body: errorBody(429, "Rate limit exceeded", "rate_limited")
      })
      const whileLimited = yield* names(client)
      expect(whileLimited.length).toBe(29) // every tool: 17 (what_changed included), the 8 of webhooks and the 4 of annotations
      expect(srv.requests.at(-1)!.path).toBe("/api/v1/tokens/current")
      // Not remembered: the next tools/list asks again and lists what the token allows.
      expect(yield* names(client)).toEqual(["get_seo"])
      expect(yield* names(client)).toEqual(["get_seo"])
    }))

  it.live("at /mcp a token whose whole budget is spent still lists only its own tools", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => awayFromMinuteEnd())
      const { account } = yield* Effect.promise(() => srv.newAccount())
      const { secret } = yield* Effect.promise(() => srv.mint(account.id, { permissions: ["revenue:read"] }))
      for (let i = 0; i < 60; i++) {
        yield* Effect.promise(() =>
          fetch(new URL("/api/v1/projects", srv.baseUrl), { headers: { authorization: `Bearer ${secret}` } })
        )
      }
      const spent = yield* Effect.promise(() =>
        fetch(new URL("/api/v1/projects", srv.baseUrl), { headers: { authorization: `Bearer ${secret}` } })
      )
      expect(spent.status).toBe(429)
      expect(yield* names(yield* httpClient(secret))).toEqual(["get_churn", "get_revenue"])
    }))
})

describe("tool selection", () => {
  it.live("stdio: --toolsets and --read-only (flags and environment)", () =>
    Effect.gen(function*() {
      const { secret } = yield* Effect.promise(() => srv.newAccount())
      const env = { SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl }
      const cases: ReadonlyArray<readonly [Record<string, string>, ReadonlyArray<string>, ReadonlyArray<string>]> = [
        [{}, ["--toolsets", "reports,expenses", "--read-only"], [...REPORT_READS, "list_expenses"]],
        [{}, ["--toolsets=tokens"], ["create_token", "list_tokens", "revoke_token"]],
        [{ SITEHEALTH_MCP_TOOLSETS: "integrations", SITEHEALTH_MCP_READ_ONLY: "1" }, [], ["list_integrations"]]
      ]
      for (const [extra, args, expected] of cases) {
        yield* Effect.scoped(Effect.gen(function*() {
          const client = yield* scopedClient(() => stdioClient({ ...env, ...extra }, args))
          expect(yield* names(client), args.join(" ")).toEqual([...expected].sort())
        }))
      }
    }))

  it("stdio: an unknown toolset is refused at start with the valid names, exit 2", () => {
    const run = spawnSync(process.execPath, [BIN, "--toolsets", "reports,nope"], {
      env: { PATH: process.env.PATH ?? "", SITEHEALTH_TOKEN: "svc_x" },
      input: "",
      encoding: "utf8"
    })
    expect(run.status).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(
      /Unknown toolset nope; the toolsets are projects, reports, integrations, expenses, annotations, tokens/
    )
  })

  it.live("/mcp: ?toolsets= and ?read_only=, or X-MCP-Toolsets and X-MCP-Readonly; a tool outside the selection is refused", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* Effect.promise(() => srv.newAccount())
      expect(yield* names(yield* httpClient(secret, "?toolsets=reports,expenses&read_only=true"))).toEqual(
        [...REPORT_READS, "list_expenses"].sort()
      )
      const viaHeaders = yield* httpClient(secret, "", { "x-mcp-toolsets": "expenses", "x-mcp-readonly": "false" })
      expect(yield* names(viaHeaders)).toEqual(["create_expense", "delete_expense", "list_expenses"])
      const refused: any = yield* Effect.promise(() =>
        viaHeaders.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
      )
      expect(refused.isError).toBe(true)
      expect(JSON.parse(refused.content[0].text).error).toMatchObject({ code: 404, type: "unknown_tool" })
      expect(JSON.parse(refused.content[0].text).error.message).toMatch(/toolsets expenses/)
    }))

  it.live("/mcp: a bad selection is a 400 envelope naming it", () =>
    Effect.gen(function*() {
      const { secret } = yield* Effect.promise(() => srv.newAccount())
      for (const search of ["?toolsets=nope", "?read_only=maybe"]) {
        const r = yield* Effect.promise(() =>
          fetch(new URL(`/mcp${search}`, srv.baseUrl), {
            method: "POST",
            headers: {
              authorization: `Bearer ${secret}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream"
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          })
        )
        expect(r.status, search).toBe(400)
        const body: any = yield* Effect.promise(() => r.json())
        expect(body.error).toMatchObject({ code: 400, type: "invalid_request" })
      }
    }))
})

describe("the rate limit at /mcp", () => {
  it.live("61 tools/list (and prompts/list, resources/list) spend nothing; a tool call then succeeds and spends one", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => awayFromMinuteEnd(20_000))
      const { projects, secret } = yield* Effect.promise(() => srv.newAccount())
      const client = yield* httpClient(secret)
      for (let i = 0; i < 61; i++) yield* Effect.promise(() => client.listTools())
      yield* Effect.promise(() => client.listPrompts())
      yield* Effect.promise(() => client.listResources())
      const health: any = yield* Effect.promise(() =>
        client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
      )
      expect(health.isError, health.content?.[0]?.text).toBeFalsy()
      // One tool call and this request: 58 left of 60.
      const r = yield* Effect.promise(() =>
        fetch(new URL("/api/v1/projects", srv.baseUrl), { headers: { authorization: `Bearer ${secret}` } })
      )
      expect(r.headers.get("x-ratelimit-remaining")).toBe("58")
    }))
})
