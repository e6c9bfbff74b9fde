/** The real `sitehealth-mcp` bin over stdio against a real server: configuration, listing, calls, errors. */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { BIN, envelopeOf, rest, scopedClient, stdioClient } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

describe("sitehealth-mcp over stdio", () => {
  it("without SITEHEALTH_TOKEN: a clear message on stderr, nothing on stdout, exit non-zero", () => {
    const run = spawnSync(process.execPath, [BIN], {
      env: { PATH: process.env.PATH ?? "" },
      input: "",
      encoding: "utf8"
    })
    expect(run.status).not.toBe(0)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/SITEHEALTH_TOKEN is not set/)
  })

  it.live("lists the tools and answers calls exactly as REST does", () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* Effect.promise(() => srv.newAccount())
      const client = yield* scopedClient(() => stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl }))
      expect((yield* Effect.promise(() => client.listTools())).tools.length).toBe(29)
      const health: any = yield* Effect.promise(() =>
        client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
      )
      expect(health.structuredContent).toEqual(
        (yield* Effect.promise(() => rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${projects[0]!.id}/health`)))
          .body.data
      )
      const { secret: noPerm } = yield* Effect.promise(() => srv.mint(account.id, { permissions: ["projects:read"] }))

      const narrow = yield* scopedClient(() => stdioClient({ SITEHEALTH_TOKEN: noPerm, SITEHEALTH_URL: srv.baseUrl }))
      const denied: any = yield* Effect.promise(() =>
        narrow.callTool({ name: "get_analytics", arguments: { id: projects[0]!.id } })
      )
      expect(denied.isError).toBe(true)
      expect(envelopeOf(denied)).toEqual(
        (yield* Effect.promise(() => rest(srv.baseUrl, noPerm, "GET", `/api/v1/projects/${projects[0]!.id}/analytics`)))
          .body
      )
      expect(envelopeOf(denied).error.code).toBe(403)
    }))

  it.live("--read-only and SITEHEALTH_MCP_READ_ONLY=1 register only read tools", () =>
    Effect.gen(function*() {
      const { secret } = yield* Effect.promise(() => srv.newAccount())
      for (const [env, args] of [[{ SITEHEALTH_MCP_READ_ONLY: "1" }, []], [{}, ["--read-only"]]] as const) {
        // One bin at a time: each is closed before the next starts.
        yield* Effect.scoped(Effect.gen(function*() {
          const client = yield* scopedClient(() =>
            stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl, ...env }, args)
          )
          const tools = (yield* Effect.promise(() => client.listTools())).tools
          expect(tools.map((t) => t.name)).not.toContain("create_expense")
          expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)
          expect(tools.length).toBe(16)
        }))
      }
    }))

  it.live("an unreachable server is an isError result, not a crash", () =>
    Effect.gen(function*() {
      const client = yield* scopedClient(() =>
        stdioClient({ SITEHEALTH_TOKEN: "svc_nothing", SITEHEALTH_URL: "http://127.0.0.1:9" })
      )
      const result: any = yield* Effect.promise(() => client.callTool({ name: "list_projects", arguments: {} }))
      expect(result.isError).toBe(true)
      expect(envelopeOf(result).error.type).toBe("unreachable")
    }))
})
