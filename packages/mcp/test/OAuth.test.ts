/**
 * Connecting by URL with the MCP SDK's own client OAuth (`StreamableHTTPClientTransport` with an
 * `OAuthClientProvider`), over real HTTP: the 401 → protected-resource metadata → server metadata → dynamic
 * registration → authorization with PKCE → the owner's consent on the dashboard (its API, driven here with a
 * logged-in session, as the consent page does) → code → token → tools/list and tools/call → refresh → revoked
 * on the dashboard → 401. The refusals are in packages/server/test/contract/OAuth.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { createAccount, createProject } from "@sitehealth/server/accounts/Provisioning"
import { AuthRepo, newUserId } from "@sitehealth/server/dashboard/AuthRepo"
import { hashPassword } from "@sitehealth/server/dashboard/Passwords"
import { Effect } from "effect"
import * as Crypto from "node:crypto"
import { originAllowed } from "../src/HttpRoute.ts"
import { TestProvider } from "./support/OAuthProvider.ts"

const PASSWORD = "correct horse battery"
const REDIRECT = "http://127.0.0.1:53682/callback"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

interface Owner {
  readonly cookie: string
  readonly csrf: string
  readonly websites: ReadonlyArray<string>
}

/** A verified dashboard owner with two websites, logged in through the dashboard API. */
const logInOwner = async (): Promise<Owner> => {
  const email = `sdk-${Date.now().toString(36)}-${Crypto.randomBytes(3).toString("hex")}@example.test`
  const passwordHash = await Effect.runPromise(hashPassword(PASSWORD))
  const websites = await srv.run(Effect.gen(function*() {
    const account = yield* createAccount({ name: email })
    yield* (yield* AuthRepo).createUser({
      id: newUserId(),
      accountId: account.id,
      email,
      passwordHash,
      emailVerifiedAt: new Date(),
      createdAt: new Date()
    })
    const one = yield* createProject({ accountId: account.id, name: "Shop", domain: "shop.example" })
    const two = yield* createProject({ accountId: account.id, name: "Blog", domain: "blog.example" })
    return [one.id, two.id]
  }))
  const r = await fetch(new URL("/app/api/auth/login", srv.baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", origin: srv.baseUrl },
    body: JSON.stringify({ email, password: PASSWORD })
  })
  expect(r.status).toBe(200)
  const setCookie = r.headers.getSetCookie().join("\n")
  const cookie = /sitehealth_session=([^;]*)/.exec(setCookie)?.[1]
  if (cookie === undefined) throw new Error(`no session cookie in ${JSON.stringify([...r.headers])}`)
  return { cookie, csrf: ((await r.json()) as any).data.csrfToken, websites }
}

const dashboard = async (owner: Owner, method: string, path: string, body?: unknown) => {
  const r = await fetch(new URL(path, srv.baseUrl), {
    method,
    headers: {
      cookie: `sitehealth_session=${owner.cookie}`,
      ...(method === "GET" ? {} : { origin: srv.baseUrl, "x-csrf-token": owner.csrf }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: r.status, body: (await r.json()) as any }
}

const mcpStatus = async (bearer: string) =>
  (await fetch(new URL("/mcp", srv.baseUrl), {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream"
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
    })
  })).status

describe("connecting by URL with the MCP SDK's OAuth client", () => {
  it("discovery → registration → consent → token → tools → refresh → revoked on the dashboard → 401", async () => {
    const owner = await logInOwner()
    const provider = new TestProvider("SDK agent", REDIRECT)
    const url = new URL("/mcp", srv.baseUrl)

    // No token: the SDK reads the 401's resource_metadata, discovers, registers, and sends the owner to sign in.
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await expect(new Client({ name: "agent", version: "0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.client?.client_id).toMatch(/^cli_/)
    const authorizationUrl = provider.authorizationUrl!
    expect(authorizationUrl.pathname).toBe("/oauth/authorize")
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${srv.baseUrl}/mcp`)

    // The browser: /oauth/authorize sends it to the dashboard's consent page with the same request.
    const sent = await fetch(authorizationUrl, { redirect: "manual" })
    expect(sent.status).toBe(302)
    const consent = new URL(sent.headers.get("location")!, srv.baseUrl)
    expect(consent.pathname).toBe("/consent")
    const view = await dashboard(owner, "GET", `/app/api/oauth/consent${consent.search}`)
    expect(view.status).toBe(200)
    expect(view.body.data.client.name).toBe("SDK agent")
    expect(view.body.data.redirectHost).toBe("127.0.0.1:53682")
    const decision = await dashboard(owner, "POST", "/app/api/oauth/consent", {
      request: Object.fromEntries(consent.searchParams),
      approve: true,
      websites: [owner.websites[0]],
      permissions: ["projects:read"]
    })
    expect(decision.status).toBe(200)
    const back = new URL(decision.body.data.redirectTo)
    expect(back.origin + back.pathname).toBe(REDIRECT)
    expect(back.searchParams.get("state")).toBe(provider.sentState)

    // The client's redirect handler: the code for tokens, then connect again.
    await first.finishAuth(back.searchParams.get("code")!)
    expect(provider.saved?.access_token).toMatch(/^svc_/)
    const agent = new Client({ name: "agent", version: "0" })
    await agent.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    const tools = (await agent.listTools()).tools.map((t) => t.name)
    expect(tools).toContain("list_projects")
    const listed: any = await agent.callTool({ name: "list_projects", arguments: {} })
    expect(listed.isError).not.toBe(true)
    expect(listed.structuredContent.projects.map((p: any) => p.id)).toEqual([owner.websites[0]])

    // Refresh: a new access secret and refresh token; the old secret stops working, the new one works.
    const before = provider.saved!
    expect(await auth(provider, { serverUrl: url })).toBe("AUTHORIZED")
    const after = provider.saved!
    expect(after.access_token).not.toBe(before.access_token)
    expect(after.refresh_token).not.toBe(before.refresh_token)
    expect(await mcpStatus(before.access_token)).toBe(401)
    expect(await mcpStatus(after.access_token)).toBe(200)
    const again: any = await agent.callTool({ name: "list_projects", arguments: {} })
    expect(again.structuredContent.projects).toHaveLength(1)

    // The owner sees the client on the API / MCP page and revokes it: the next call is refused.
    const tokens = await dashboard(owner, "GET", "/app/api/tokens")
    const row = tokens.body.data.tokens.find((t: any) => t.name === "SDK agent (MCP sign-in)")
    expect(row).toMatchObject({ websites: [owner.websites[0]], permissions: ["projects:read"], status: "active" })
    expect((await dashboard(owner, "DELETE", `/app/api/tokens/${row.id}`)).status).toBe(200)
    expect(await mcpStatus(after.access_token)).toBe(401)
    provider.authorizationUrl = undefined
    // The SDK tries its refresh token (ended with the token), then asks the owner to sign in again.
    await expect(agent.callTool({ name: "list_projects", arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.authorizationUrl).toBeDefined()
    await agent.close()
  })

  it("PUBLIC_URL is the issuer, the resource's origin and an allowed Origin of /mcp", async () => {
    const publicUrl = "https://health.example.com"
    const other = await startServer({ publicUrl })
    try {
      const prm: any = await (await fetch(new URL("/.well-known/oauth-protected-resource/mcp", other.baseUrl))).json()
      expect(prm).toMatchObject({ resource: `${publicUrl}/mcp`, authorization_servers: [publicUrl] })
      const as: any = await (await fetch(new URL("/.well-known/oauth-authorization-server", other.baseUrl))).json()
      expect(as.issuer).toBe(publicUrl)
      expect(as.token_endpoint).toBe(`${publicUrl}/oauth/token`)
      const bare = await fetch(new URL("/mcp", other.baseUrl), { method: "POST", body: "{}" })
      expect(bare.headers.get("www-authenticate")).toContain(
        `resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`
      )
    } finally {
      await other.close()
    }
    expect(originAllowed(publicUrl, [publicUrl])).toBe(true)
    expect(originAllowed("http://localhost:5173", [publicUrl])).toBe(true)
    expect(originAllowed("https://evil.example", [publicUrl])).toBe(false)
    expect(originAllowed(publicUrl)).toBe(false)
  })
})
