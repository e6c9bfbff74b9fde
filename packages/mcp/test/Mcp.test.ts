/**
 * The MCP server against a real sitehealth server (the app over in-memory repositories, on a real port):
 * the tool list is the contract's, every MCP result matches what REST answers for the same token.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { operationByName } from "@sitehealth/domain/Api"
import type { Permission } from "@sitehealth/domain/Permissions"
import { decodeInput } from "../src/ApiClientSend.ts"
import { requestFor } from "../src/Dispatch.ts"
import { deriveTools, toolNameOf } from "../src/Tools.ts"
import { awayFromMinuteEnd, endedTrialAccount, envelopeOf, inMemoryClient, rest } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

const contractEndpoints = (): Array<string> =>
  Object.values((SiteHealthApi as any).groups).flatMap((g: any) =>
    Object.values(g.endpoints).map((e: any) => e.identifier as string)
  )

describe("tools/list", () => {
  it("has one tool per endpoint whose annotation names one (none for dashboard-only ones) and no other", async () => {
    const { secret } = await srv.newAccount()
    const client = await inMemoryClient(srv.baseUrl, secret)
    const listed = (await client.listTools()).tools.map((t) => t.name).sort()
    const expected = contractEndpoints()
      .filter((name) => operationByName(name)?.mcp !== null)
      .map(toolNameOf)
      .concat("what_changed") // composed of the projects group's reads (WhatChanged.ts)
      .sort()
    expect(listed).toEqual(expected)
    expect(listed).toEqual([
      "create_annotation",
      "create_expense",
      "create_token",
      "create_webhook",
      "delete_annotation",
      "delete_expense",
      "delete_webhook",
      "get_analytics",
      "get_briefing",
      "get_churn",
      "get_health",
      "get_revenue",
      "get_seo",
      "get_webhook",
      "list_annotations",
      "list_expenses",
      "list_integrations",
      "list_projects",
      "list_signals",
      "list_tokens",
      "list_webhook_deliveries",
      "list_webhooks",
      "redeliver_webhook",
      "revoke_token",
      "sync_integration",
      "test_webhook",
      "update_annotation",
      "update_webhook",
      "what_changed"
    ])
    await client.close()
  })

  it("declares all four annotations on every tool, by the operation's kind", async () => {
    for (const spec of deriveTools()) {
      const a = spec.definition.annotations
      expect(Object.keys(a).sort()).toEqual([
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
        "readOnlyHint",
        "title"
      ])
      // Only sync_integration and test_webhook reach beyond sitehealth; reads, revoking and deleting are idempotent.
      expect(a.openWorldHint).toBe(["sync_integration", "test_webhook"].includes(spec.definition.name))
      expect(a.idempotentHint).toBe(
        spec.kind === "read" ||
          ["revoke_token", "delete_expense", "delete_webhook", "update_annotation", "delete_annotation"].includes(
            spec.definition.name
          )
      )
      expect(a.readOnlyHint).toBe(spec.kind === "read")
      expect(a.destructiveHint).toBe(spec.kind === "destructive")
      expect(spec.definition.outputSchema.type).toBe("object")
      expect(spec.definition.inputSchema.type).toBe("object")
    }
    const kinds = Object.fromEntries(deriveTools().map((t) => [t.definition.name, t.kind]))
    expect(kinds).toMatchObject({
      create_expense: "write",
      create_token: "write",
      sync_integration: "write",
      delete_expense: "destructive",
      revoke_token: "destructive"
    })
  })

  it("lists only what the token's permissions allow, and only reads in read-only mode", async () => {
    const { account } = await srv.newAccount()
    const { secret } = await srv.mint(account.id, { permissions: ["projects:read", "tokens:read"] })
    const narrow = await inMemoryClient(srv.baseUrl, secret)
    expect((await narrow.listTools()).tools.map((t) => t.name).sort()).toEqual([
      "get_briefing",
      "get_health",
      "list_projects",
      "list_signals",
      "list_tokens",
      "what_changed"
    ])
    await narrow.close()

    const { secret: root } = await srv.newAccount()
    const readOnly = await inMemoryClient(srv.baseUrl, root, true)
    const tools = (await readOnly.listTools()).tools
    expect(tools.length).toBe(16)
    for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true)
    const refused = await readOnly.callTool({ name: "create_expense", arguments: {} })
    expect(refused.isError).toBe(true)
    await readOnly.close()
  })
})

describe("tools/call matches REST", () => {
  const cases = [
    {
      tool: "get_health",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/health`,
      permission: "projects:read"
    },
    {
      tool: "get_analytics",
      args: (p: string) => ({ id: p, period: "7d" }),
      url: (p: string) => `/api/v1/projects/${p}/analytics?period=7d`,
      permission: "analytics:read"
    },
    {
      tool: "list_expenses",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/expenses`,
      permission: "expenses:read"
    },
    {
      tool: "get_revenue",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/revenue`,
      permission: "revenue:read"
    },
    {
      tool: "get_briefing",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/briefing`,
      permission: "projects:read"
    },
    {
      tool: "list_signals",
      args: (p: string) => ({ id: p, severity: "warning" }),
      url: (p: string) => `/api/v1/projects/${p}/signals?severity=warning`,
      permission: "projects:read"
    },
    {
      tool: "get_churn",
      args: (p: string) => ({ id: p, period: "3m" }),
      url: (p: string) => `/api/v1/projects/${p}/churn?period=3m`,
      permission: "revenue:read"
    },
    {
      tool: "get_seo",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/seo`,
      permission: "seo:read"
    },
    {
      tool: "list_integrations",
      args: (p: string) => ({ id: p }),
      url: (p: string) => `/api/v1/projects/${p}/integrations`,
      permission: "integrations:read"
    }
  ] as const

  /**
   * An account with two projects (`mine`, `other`) and its all-access token, and the four refusals every tool
   * must give as REST does: a token with only `permissions` (403), one scoped to `mine` asking for `other`
   * (403), a revoked one (401), and an ended trial's (402).
   */
  const refusalsOf = async (permissions: ReadonlyArray<Permission>) => {
    const { account, projects, secret } = await srv.newAccount(2)
    const [mine, other] = [projects[0]!.id, projects[1]!.id]
    const { secret: noPerm } = await srv.mint(account.id, { permissions })
    const { secret: scoped } = await srv.mint(account.id, { projects: [mine] })
    const { secret: revoked, token: revokedToken } = await srv.mint(account.id)
    expect((await rest(srv.baseUrl, secret, "DELETE", `/api/v1/tokens/${revokedToken.id}`, { confirm: true })).status)
      .toBe(200)
    const ended = await endedTrialAccount(srv)
    const refusals = [
      { token: noPerm, project: mine, status: 403 },
      { token: scoped, project: other, status: 403 },
      { token: revoked, project: mine, status: 401 },
      { token: ended.secret, project: ended.project.id, status: 402 }
    ]
    return { secret, mine, other, refusals }
  }

  for (const c of cases) {
    it(`${c.tool}: allowed, missing permission, out of scope, revoked, ended trial`, async () => {
      const { mine, refusals, secret } = await refusalsOf(
        c.permission === "projects:read" ? ["analytics:read"] : ["projects:read"]
      )
      const situations = [{ token: secret, project: mine, status: 200 }, ...refusals]
      for (const s of situations) {
        const viaRest = await rest(srv.baseUrl, s.token, "GET", c.url(s.project))
        expect(viaRest.status).toBe(s.status)
        const client = await inMemoryClient(srv.baseUrl, s.token)
        const result: any = await client.callTool({ name: c.tool, arguments: c.args(s.project) })
        await client.close()
        if (s.status === 200) {
          expect(result.isError).toBeFalsy()
          expect(result.structuredContent).toEqual(viaRest.body.data)
          expect(JSON.parse(result.content[0].text)).toEqual(viaRest.body.data)
        } else {
          expect(result.isError).toBe(true)
          expect(envelopeOf(result)).toEqual(viaRest.body)
          expect(result.content[0].text).not.toMatch(/at .*\.ts:\d+/)
        }
      }
    })
  }

  // Writing tools: every refusal is REST's, and a refused call changes nothing (checked by listing after).
  const writes = [
    {
      tool: "create_expense",
      permission: "expenses:write",
      method: "POST",
      args: (p: string) => ({
        id: p,
        amount: 100,
        currency: "USD",
        category: "hosting",
        description: "VPS",
        incurredOn: "2026-11-01",
        recurrence: "one_off"
      }),
      url: (p: string) => `/api/v1/projects/${p}/expenses`,
      body: {
        amount: 100,
        currency: "USD",
        category: "hosting",
        description: "VPS",
        incurredOn: "2026-11-01",
        recurrence: "one_off"
      }
    },
    {
      tool: "delete_expense",
      permission: "expenses:write",
      method: "DELETE",
      args: (p: string) => ({ id: p, expenseId: "exp_0000000000000000" }),
      url: (p: string) => `/api/v1/projects/${p}/expenses/exp_0000000000000000`,
      body: undefined
    },
    {
      tool: "sync_integration",
      permission: "integrations:sync",
      method: "POST",
      args: (p: string) => ({ id: p, provider: "plausible" }),
      url: (p: string) => `/api/v1/projects/${p}/integrations/plausible/sync`,
      body: {}
    }
  ] as const

  for (const c of writes) {
    it(`${c.tool}: missing permission, out of scope, revoked and ended trial are REST's refusals, and change nothing`, async () => {
      const { mine, other, refusals, secret } = await refusalsOf(["projects:read", "expenses:read"])
      for (const s of refusals) {
        const viaRest = await rest(srv.baseUrl, s.token, c.method, c.url(s.project), c.body)
        expect(viaRest.status).toBe(s.status)
        const client = await inMemoryClient(srv.baseUrl, s.token)
        const result: any = await client.callTool({ name: c.tool, arguments: c.args(s.project) })
        await client.close()
        expect(result.isError).toBe(true)
        expect(envelopeOf(result)).toEqual(viaRest.body)
      }
      for (const p of [mine, other]) {
        expect((await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${p}/expenses`)).body.data.expenses).toEqual(
          []
        )
        const integrations =
          (await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${p}/integrations`)).body.data.integrations
        expect(integrations.every((i: any) => i.lastRun === null)).toBe(true)
      }
    })
  }

  it("create_expense then delete_expense, matching what REST lists", async () => {
    const { projects, secret } = await srv.newAccount()
    const id = projects[0]!.id
    const client = await inMemoryClient(srv.baseUrl, secret)
    const created: any = await client.callTool({
      name: "create_expense",
      arguments: {
        id,
        amount: 1250,
        currency: "USD",
        category: "hosting",
        description: "VPS",
        incurredOn: "2026-11-01",
        recurrence: "one_off"
      }
    })
    expect(created.isError, JSON.stringify(created)).toBeFalsy()
    const expenseId = created.structuredContent.expense.id
    const listed = await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${id}/expenses`)
    expect(listed.body.data.expenses.map((e: any) => e.id)).toContain(expenseId)
    const deleted: any = await client.callTool({ name: "delete_expense", arguments: { id, expenseId } })
    expect(deleted.structuredContent.deleted).toBe(true)
    const again: any = await client.callTool({ name: "delete_expense", arguments: { id, expenseId } })
    expect(again.isError).toBe(true)
    expect(envelopeOf(again).error.code).toBe(404)
    await client.close()
  })

  it("invalid arguments answer the API's own 400 envelope", async () => {
    const { projects, secret } = await srv.newAccount()
    const client = await inMemoryClient(srv.baseUrl, secret)
    const result: any = await client.callTool({
      name: "get_analytics",
      arguments: { id: projects[0]!.id, period: "fortnight" }
    })
    const viaRest = await rest(
      srv.baseUrl,
      secret,
      "GET",
      `/api/v1/projects/${projects[0]!.id}/analytics?period=fortnight`
    )
    expect(result.isError).toBe(true)
    expect(envelopeOf(result)).toEqual(viaRest.body)
    expect(viaRest.status).toBe(400)
    await client.close()
  })
})

describe("confirmation gate", () => {
  it("create_token and revoke_token change nothing without confirm, and say so", async () => {
    const { account, secret } = await srv.newAccount()
    const { token: target } = await srv.mint(account.id, { permissions: ["projects:read"] })
    const client = await inMemoryClient(srv.baseUrl, secret)
    const tokensNow = async () =>
      (await rest(srv.baseUrl, secret, "GET", "/api/v1/tokens")).body.data.tokens.map((t: any) => `${t.id}:${t.status}`)
        .sort()
    const before = await tokensNow()

    const preview: any = await client.callTool({
      name: "create_token",
      arguments: { name: "agent", permissions: ["projects:read"] }
    })
    expect(preview.isError).toBeFalsy()
    expect(preview.structuredContent.preview).toBe(true)
    expect(preview.content[1].text).toMatch(/Nothing changed.*"confirm": true/)
    const revokePreview: any = await client.callTool({ name: "revoke_token", arguments: { id: target.id } })
    expect(revokePreview.structuredContent.preview).toBe(true)
    expect(revokePreview.content[1].text).toMatch(/Nothing changed/)
    expect(await tokensNow()).toEqual(before)

    const minted: any = await client.callTool({
      name: "create_token",
      arguments: { name: "agent", permissions: ["projects:read"], confirm: true, reveal_secret: true }
    })
    expect(minted.structuredContent.secret).toMatch(/^svc_/)
    const revoked: any = await client.callTool({ name: "revoke_token", arguments: { id: target.id, confirm: true } })
    expect(revoked.structuredContent.token.status).toBe("revoked")
    expect((await tokensNow()).length).toBe(before.length + 1)
    expect(await tokensNow()).toContain(`${target.id}:revoked`)
    await client.close()
  })
})

describe("rate limit", () => {
  it("the 61st call in a minute returns the 429 envelope with limit, remaining and reset", async () => {
    await awayFromMinuteEnd()
    const { projects, secret } = await srv.newAccount()
    // No tools/list here, so every one of the 61 requests is a tool call.
    const client = await inMemoryClient(srv.baseUrl, secret, true)
    let last: any
    for (let i = 0; i < 61; i++) {
      last = await client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
    }
    expect(last.isError).toBe(true)
    const envelope = envelopeOf(last)
    expect(envelope.error).toMatchObject({ code: 429, limit: 60, remaining: 0 })
    expect(typeof envelope.error.reset).toBe("number")
    await client.close()
  })
})

describe("prompts and resources", () => {
  it("morning_briefing and diagnose_traffic name tools that exist, with the project; a missing project is refused", async () => {
    const { projects, secret } = await srv.newAccount()
    const id = projects[0]!.id
    const client = await inMemoryClient(srv.baseUrl, secret)
    const tools = new Set((await client.listTools()).tools.map((t) => t.name))
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual([
      "diagnose_traffic",
      "morning_briefing"
    ])
    const briefing = await client.getPrompt({ name: "morning_briefing", arguments: { project: id } })
    const traffic = await client.getPrompt({ name: "diagnose_traffic", arguments: { project: id, period: "30d" } })
    for (
      const [prompt, named] of [[briefing, ["get_briefing", "list_signals"]], [traffic, [
        "get_analytics",
        "list_signals"
      ]]] as const
    ) {
      const text = (prompt.messages[0]!.content as { text: string }).text
      expect(text).toContain(id)
      for (const tool of named) {
        expect(text).toContain(tool)
        expect(tools.has(tool)).toBe(true)
      }
    }
    expect(((traffic.messages[0]!.content) as { text: string }).text).toContain("\"30d\"")
    await expect(client.getPrompt({ name: "diagnose_traffic", arguments: {} })).rejects.toThrow(/project/)
    await expect(client.getPrompt({ name: "morning_briefing", arguments: { project: "nope" } })).rejects.toThrow(
      /project/
    )
    // Without a project: every website the token may see, ranked by money at stake.
    const all = ((await client.getPrompt({ name: "morning_briefing", arguments: {} })).messages[0]!.content as {
      text: string
    }).text
    expect(all).toContain("all my websites")
    for (const tool of ["list_projects", "get_briefing"]) {
      expect(all).toContain(tool)
      expect(tools.has(tool)).toBe(true)
    }
    expect(all).toContain("money at stake")
    await client.close()
  })

  it("completion/complete: project ids the token may see (by id, name or domain prefix), periods; unknown refs -32602", async () => {
    const { account, projects, secret } = await srv.newAccount(2)
    const [first, second] = [projects[0]!, projects[1]!]
    const { secret: scoped } = await srv.mint(account.id, { projects: [second.id] })
    const client = await inMemoryClient(srv.baseUrl, secret)
    expect(client.getServerCapabilities()?.completions).toEqual({})
    const complete = (c: typeof client, ref: any, name: string, value: string) =>
      c.complete({ ref, argument: { name, value } }).then((r) => r.completion)
    const prompt = { type: "ref/prompt", name: "morning_briefing" }
    const template = { type: "ref/resource", uri: "sitehealth://projects/{id}/health" }
    expect((await complete(client, prompt, "project", "prj_")).values.sort()).toEqual([first.id, second.id].sort())
    expect((await complete(client, prompt, "project", first.id.slice(0, 10))).values).toEqual([first.id])
    expect((await complete(client, template, "id", second.domain.toUpperCase())).values).toEqual([second.id])
    expect((await complete(client, prompt, "project", "zzz")).values).toEqual([])
    expect((await complete(client, { type: "ref/prompt", name: "diagnose_traffic" }, "period", "3")).values).toEqual([
      "30d",
      "3m"
    ])
    // A narrower token completes to its own websites only.
    const narrow = await inMemoryClient(srv.baseUrl, scoped)
    expect((await complete(narrow, prompt, "project", "")).values).toEqual([second.id])
    await expect(complete(client, { type: "ref/prompt", name: "nope" }, "project", "")).rejects.toThrow(
      /Unknown prompt/
    )
    await expect(complete(client, { type: "ref/resource", uri: "sitehealth://x/{id}" }, "id", "")).rejects.toThrow(
      /Unknown resource template/
    )
    await client.close()
    await narrow.close()
  })

  it("each project in the token's scope is a health resource whose content is the API's health data", async () => {
    const { account, projects, secret } = await srv.newAccount(2)
    const { secret: scoped } = await srv.mint(account.id, { projects: [projects[1]!.id] })
    const client = await inMemoryClient(srv.baseUrl, scoped)
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    expect(uris).toEqual([`sitehealth://projects/${projects[1]!.id}/health`])
    const read = await client.readResource({ uri: uris[0]! })
    const viaRest = await rest(srv.baseUrl, secret, "GET", `/api/v1/projects/${projects[1]!.id}/health`)
    const content = JSON.parse((read.contents[0] as { text: string }).text)
    expect(content.score).toEqual(viaRest.body.data.score)
    expect(content.projectId).toBe(projects[1]!.id)
    await client.close()
  })
})

describe("the typed client (stdio)", () => {
  it("decodes every well-formed call with the endpoint's own schemas, so HttpApiClient sends it; ill-formed ones go raw to the API", () => {
    const spec = (name: string) => deriveTools().find((t) => t.definition.name === name)!
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["list_projects", { limit: "10" }],
      ["get_health", { id: "prj_1" }],
      ["list_signals", { id: "prj_1", dimension: "traffic", severity: "warning", active: "true" }],
      ["get_analytics", { id: "prj_1", period: "12m" }],
      ["get_revenue", { id: "prj_1", period: "3m" }],
      ["sync_integration", { id: "prj_1", provider: "stripe", mode: "full" }],
      ["create_expense", {
        id: "prj_1",
        amount: 1250,
        currency: "USD",
        category: "hosting",
        description: "VPS",
        incurredOn: "2026-11-01",
        recurrence: "one_off"
      }],
      ["delete_expense", { id: "prj_1", expenseId: "exp_1" }],
      ["create_token", { name: "ci", permissions: ["projects:read"] }],
      ["revoke_token", { id: "tok_1" }]
    ]
    for (const [name, args] of calls) expect(decodeInput(requestFor(spec(name), args).tool!), name).not.toBeNull()
    // Not decodable by the contract: the API itself answers (its 400 with issues), not a client-side error.
    expect(decodeInput(requestFor(spec("get_analytics"), { id: "prj_1", period: "5y" }).tool!)).toBeNull()
    expect(decodeInput(requestFor(spec("create_expense"), { id: "prj_1", amount: -5 }).tool!)).toBeNull()
  })
})
