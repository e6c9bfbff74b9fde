/** The real `sitehealth-mcp` bin over stdio against a real server: configuration, listing, calls, errors. */
import { spawnSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { BIN, envelopeOf, rest, stdioClient } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

describe("sitehealth-mcp over stdio", () => {
  it("without SITEHEALTH_TOKEN: a clear message on stderr, nothing on stdout, exit non-zero", () => {
    const run = spawnSync(process.execPath, [BIN], { env: { PATH: process.env.PATH ?? "" }, input: "", encoding: "utf8" })
    expect(run.status).not.toBe(0)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/SITEHEALTH_TOKEN is not set/)
  })

  it("lists the tools and answers calls exactly as REST does", async () => {
    const { account, projects, secret } = await srv.newAccount()
    const client = await stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl })
    expect((await client.listTools()).tools.length).toBe(16)
    const health: any = await client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
    expect(health.structuredContent).toEqual((await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${projects[0]!.id}/health`)).body.data)
    const { secret: noPerm } = await srv.mint(account.id, { permissions: ["projects:read"] })
    await client.close()

    const narrow = await stdioClient({ SITEHEALTH_TOKEN: noPerm, SITEHEALTH_URL: srv.baseUrl })
    const denied: any = await narrow.callTool({ name: "get_analytics", arguments: { id: projects[0]!.id } })
    expect(denied.isError).toBe(true)
    expect(envelopeOf(denied)).toEqual((await rest(srv.baseUrl, noPerm, "GET", `/api/v1/projects/${projects[0]!.id}/analytics`)).body)
    expect(envelopeOf(denied).error.code).toBe(403)
    await narrow.close()
  })

  it("--read-only and SITEHEALTH_MCP_READ_ONLY=1 register only read tools", async () => {
    const { secret } = await srv.newAccount()
    for (const [env, args] of [[{ SITEHEALTH_MCP_READ_ONLY: "1" }, []], [{}, ["--read-only"]]] as const) {
      const client = await stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl, ...env }, args)
      const tools = (await client.listTools()).tools
      expect(tools.map((t) => t.name)).not.toContain("create_expense")
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)
      expect(tools.length).toBe(11)
      await client.close()
    }
  })

  it("an unreachable server is an isError result, not a crash", async () => {
    const client = await stdioClient({ SITEHEALTH_TOKEN: "svc_nothing", SITEHEALTH_URL: "http://127.0.0.1:9" })
    const result: any = await client.callTool({ name: "list_projects", arguments: {} })
    expect(result.isError).toBe(true)
    expect(envelopeOf(result).error.type).toBe("unreachable")
    await client.close()
  })
})
