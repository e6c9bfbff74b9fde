/**
 * What the agent pays: tools/list for a full-access token ≤ 50 KB (48.2 KB with the webhook and annotation tools, docs/mcp.md), output schemas without `$defs`, results
 * as compact JSON plus a one-line summary, and a minted secret only when asked for (`reveal_secret`).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { Effect } from "effect"
import { INSTRUCTIONS } from "../src/Server.ts"
import { inMemoryClient, rest, scopedClient } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

const SECRET = /svc_[0-9A-Za-z]{30,}/

describe("tools/list cost", () => {
  it.live("a full-access token's tools/list is at most 50 KB, with shallow output schemas", () =>
    Effect.gen(function*() {
      const { secret } = yield* Effect.promise(() => srv.newAccount())
      const client = yield* scopedClient(() => inMemoryClient(srv.baseUrl, secret))
      const listed = yield* Effect.promise(() => client.listTools())
      expect(listed.tools.length).toBe(29)
      const bytes = Buffer.byteLength(JSON.stringify(listed))
      expect(bytes).toBeLessThanOrEqual(50 * 1024) // ~27 KB before the webhook and annotation tools and what_changed
      for (const tool of listed.tools) {
        expect(tool.outputSchema, tool.name).toBeDefined()
        expect(JSON.stringify(tool.outputSchema), tool.name).not.toContain("$defs")
        expect(Buffer.byteLength(JSON.stringify(tool)), tool.name).toBeLessThanOrEqual(4 * 1024)
      }
      // The envelope is described once, in the server's instructions.
      expect(client.getInstructions()).toBe(INSTRUCTIONS)
      expect(INSTRUCTIONS).toMatch(/isError/)
    }))

  it.live("results are compact JSON and a short summary line; the SDK validates them against the trimmed schemas", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* Effect.promise(() => srv.newAccount(3))
      const client = yield* scopedClient(() => inMemoryClient(srv.baseUrl, secret))
      yield* Effect.promise(() => client.listTools()) // the client validates structuredContent against outputSchema from here on
      const listed: any = yield* Effect.promise(() => client.callTool({ name: "list_projects", arguments: {} }))
      expect(listed.isError).toBeFalsy()
      expect(listed.content[0].text).toBe(JSON.stringify(listed.structuredContent))
      expect(listed.content[0].text).not.toContain("\n")
      expect(listed.content[1].text).toMatch(/^list_projects: 3 projects/)
      expect(listed.content[1].text.length).toBeLessThan(200)
      const id = projects[0]!.id
      for (
        const [name, args] of [
          ["get_health", { id }],
          ["get_briefing", { id }],
          ["list_signals", { id }],
          ["get_analytics", { id, period: "30d" }],
          ["get_revenue", { id }],
          ["get_churn", { id }],
          ["get_seo", { id }],
          ["list_integrations", { id }],
          ["list_expenses", { id }],
          ["list_tokens", {}]
        ] as const
      ) {
        const result: any = yield* Effect.promise(() => client.callTool({ name, arguments: args }))
        expect(result.isError, `${name}: ${result.content?.[0]?.text}`).toBeFalsy()
        expect(result.content[1].text, name).toMatch(new RegExp(`^${name}: `))
      }
    }))
})

describe("minting through MCP", () => {
  /** A new account's MCP client, its tools, and create_token among them. */
  const mintingClient = Effect.gen(function*() {
    const { secret } = yield* Effect.promise(() => srv.newAccount())
    const client = yield* scopedClient(() => inMemoryClient(srv.baseUrl, secret))
    const tools = (yield* Effect.promise(() => client.listTools())).tools
    return { secret, client, tools, createToken: tools.find((t) => t.name === "create_token")! }
  })
  /** How many tokens the account has, as REST lists them. */
  const tokenCount = (secret: string) =>
    Effect.promise(async () =>
      (await rest(srv.baseUrl, secret, "GET", "/api/v1/tokens")).body.data.tokens.length as number
    )

  it.live("without reveal_secret the token is minted but its secret never reaches the result; with it, it does", () =>
    Effect.gen(function*() {
      const { client, createToken, secret } = yield* mintingClient
      expect(createToken.description).toMatch(/reveal_secret: true.*model's context/)
      expect(createToken.inputSchema.properties).toHaveProperty("reveal_secret")
      const count = () => tokenCount(secret)
      const before = yield* count()

      const minted: any = yield* Effect.promise(() =>
        client.callTool({
          name: "create_token",
          arguments: { name: "agent", permissions: ["projects:read"], confirm: true }
        })
      )
      expect(minted.isError).toBeFalsy()
      expect(JSON.stringify(minted)).not.toMatch(SECRET)
      expect(minted.structuredContent).toMatchObject({
        secret: null,
        secretWithheld: true,
        token: { name: "agent", status: "active" }
      })
      expect(minted.content[1].text).toMatch(/withheld/)
      expect(yield* count()).toBe(before + 1)

      const revealed: any = yield* Effect.promise(() =>
        client.callTool({
          name: "create_token",
          arguments: { name: "agent2", permissions: ["projects:read"], confirm: true, reveal_secret: true }
        })
      )
      expect(revealed.structuredContent.secret).toMatch(SECRET)
      // The secret is in the JSON once, not repeated in the summary line.
      expect(revealed.content[1].text).not.toMatch(SECRET)
      const works = yield* Effect.promise(() =>
        rest(srv.baseUrl, revealed.structuredContent.secret, "GET", "/api/v1/projects")
      )
      expect(works.status).toBe(200)
    }))

  it.live("reveal_secret is create_token's own argument: in its strict schema, a boolean, refused by every other tool, never sent", () =>
    Effect.gen(function*() {
      const { client, createToken, secret, tools } = yield* mintingClient
      expect(createToken.inputSchema.additionalProperties).toBe(false)
      expect((createToken.inputSchema.properties as any).reveal_secret).toMatchObject({ type: "boolean" })
      // Its own and the webhook tools' that answer a signing secret (create_webhook, update_webhook); no other.
      expect(tools.filter((t) => "reveal_secret" in (t.inputSchema.properties ?? {})).map((t) => t.name).sort())
        .toEqual(["create_token", "create_webhook", "update_webhook"])
      const count = () => tokenCount(secret)
      const before = yield* count()

      const notBoolean: any = yield* Effect.promise(() =>
        client.callTool({
          name: "create_token",
          arguments: { name: "agent", permissions: ["projects:read"], confirm: true, reveal_secret: "yes" }
        })
      )
      expect(notBoolean.isError).toBe(true)
      const envelope = JSON.parse(notBoolean.content[0].text)
      expect(envelope.error).toMatchObject({ code: 400, type: "invalid_request" })
      expect(envelope.error.issues.map((i: any) => i.path)).toEqual(["arguments.reveal_secret"])
      expect(yield* count()).toBe(before)

      const elsewhere: any = yield* Effect.promise(() =>
        client.callTool({ name: "list_tokens", arguments: { reveal_secret: true } })
      )
      expect(elsewhere.isError).toBe(true)
      expect(JSON.parse(elsewhere.content[0].text).error.issues.map((i: any) => i.path)).toEqual([
        "arguments.reveal_secret"
      ])

      // Accepted (and taken off before the request: the API refuses unknown body fields with a 400).
      const preview: any = yield* Effect.promise(() =>
        client.callTool({
          name: "create_token",
          arguments: { name: "agent", permissions: ["projects:read"], reveal_secret: false }
        })
      )
      expect(preview.isError).toBeFalsy()
      expect(preview.structuredContent.preview).toBe(true)
      expect(yield* count()).toBe(before)
    }))
})
