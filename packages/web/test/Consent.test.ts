/**
 * An MCP client connecting by URL, in a real browser (chromium through playwright-core) over the demo account
 * of a real server: /oauth/authorize without a session → the log-in page, which will return to the consent
 * page → logged in, the consent page names the client and where the browser returns → the owner keeps one
 * website and approves → the browser lands on the client's redirect URI with a code and the state → the code
 * gives a token of that website alone → the API / MCP page lists it under the client's name. axe in both themes;
 * screenshots into test/artifacts/. Skipped, saying so, where /usr/bin/chromium is missing.
 */
import AxeBuilder from "@axe-core/playwright"
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { TestProvider } from "@sitehealth/mcp/test/support/OAuthProvider"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DemoServer, startDemoServer } from "./support/ReportsServer.ts"
import { ARTIFACTS, buildWeb, CHROMIUM, CHROMIUM_ARGS, ensureArtifacts } from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) console.warn(`[web] consent browser test skipped: ${CHROMIUM} is missing`)

const REDIRECT = "http://127.0.0.1:53999/callback"

describe.skipIf(!hasChromium)("consent for an MCP client in chromium", () => {
  let browser: Browser
  let page: Page
  let server: DemoServer
  const consoleErrors: Array<string> = []

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    server = await startDemoServer()
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", locale: "en-US" })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    page.on("pageerror", (e) => consoleErrors.push(String(e)))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const check = async (name: string) => {
    await page.waitForLoadState("networkidle")
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(bad.map((v) => `${v.id}: ${v.help}`), `${name} ${scheme}`).toEqual([])
      await page.screenshot({
        path: Path.join(ARTIFACTS, `${name}${scheme === "dark" ? "-dark" : ""}.png`),
        fullPage: true
      })
    }
    await page.emulateMedia({ colorScheme: "light" })
  }

  it(
    "log in and return → consent names the client → one website approved → code → a token of that website",
    async () => {
      const registered = (await (await fetch(`${server.base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "Browser agent", redirect_uris: [REDIRECT] })
      })).json()) as any
      const verifier = Crypto.randomBytes(32).toString("base64url")
      const challenge = Crypto.createHash("sha256").update(verifier).digest("base64url")
      const query = new URLSearchParams({
        client_id: registered.client_id,
        redirect_uri: REDIRECT,
        response_type: "code",
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "browser-state",
        scope: "projects:read analytics:read expenses:write",
        resource: `${server.base}/mcp`
      })
      // The client's redirect URI: the browser's arrival there is the answer (no server listens on it).
      let callback: URL | undefined
      await page.route(`${REDIRECT}**`, (route) => {
        callback = new URL(route.request().url())
        return route.fulfill({ status: 200, contentType: "text/html", body: "<title>Signed in</title><p>Done</p>" })
      })

      await page.goto(`/oauth/authorize?${query}`)
      await page.waitForURL(/\/login\?next=/)
      const next = new URL(page.url()).searchParams.get("next")!
      expect(next).toBe(`/consent?${query}`)
      // Logged in (the demo's one-time link), the owner goes back where the log-in page would send them.
      await page.goto(server.loginLink)
      await page.waitForURL(/\/overview$/)
      await page.goto(next)
      await page.getByRole("heading", { name: "Connect an MCP client" }).waitFor()
      const form = page.locator("form.panel")
      await expect.poll(() => form.textContent()).toContain("Browser agent")
      expect(await form.textContent()).toContain("127.0.0.1:53999")
      // The client's scope is preselected, but never a write permission.
      expect(await page.locator("input[value=\"projects:read\"]").isChecked()).toBe(true)
      expect(await page.locator("input[value=\"analytics:read\"]").isChecked()).toBe(true)
      expect(await page.locator("input[value=\"expenses:write\"]").isChecked()).toBe(false)
      expect(await page.locator("input[value=\"revenue:read\"]").isChecked()).toBe(false)
      await check("consent")

      const websites = page.locator("input[name=\"website\"]")
      expect(await websites.count()).toBe(3)
      const kept = await websites.first().getAttribute("value")
      for (let i = 1; i < 3; i++) await websites.nth(i).uncheck()
      await page.getByRole("button", { name: "Approve" }).click()
      await page.waitForURL(`${REDIRECT}**`)
      expect(callback?.searchParams.get("state")).toBe("browser-state")
      expect(callback?.searchParams.get("iss")).toBe(server.base)
      const code = callback!.searchParams.get("code")!

      const token = (await (await fetch(`${server.base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          client_id: registered.client_id,
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          resource: `${server.base}/mcp`
        }).toString()
      })).json()) as any
      expect(token.scope).toBe("projects:read analytics:read")
      const projects = (await (await fetch(`${server.base}/api/v1/projects`, {
        headers: { authorization: `Bearer ${token.access_token}` }
      })).json()) as any
      expect(projects.data.projects.map((p: any) => p.id)).toEqual([kept])

      await page.goto("/settings/api")
      await page.getByText("Browser agent (MCP sign-in)").first().waitFor()
      await check("consent-api-page")
      expect(consoleErrors).toEqual([])
    },
    90_000
  )

  // After the test above, whose log-in this page keeps: the owner is signed in to the dashboard.
  it(
    "the MCP SDK's own OAuth client: 401 → registration → consent approved in chromium → tools → refresh → " +
      "revoked on the API / MCP page → 401",
    async () => {
      const redirect = "http://127.0.0.1:53998/callback"
      const provider = new TestProvider("SDK e2e agent", redirect)
      const url = new URL("/mcp", server.base)
      const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
      await expect(new Client({ name: "agent", version: "0" }).connect(first)).rejects.toBeInstanceOf(
        UnauthorizedError
      )
      expect(provider.authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256")

      // The browser opens the SDK's authorization URL; the signed-in owner approves one website.
      let callback: URL | undefined
      await page.route(`${redirect}**`, (route) => {
        callback = new URL(route.request().url())
        return route.fulfill({ status: 200, contentType: "text/html", body: "<title>Signed in</title><p>Done</p>" })
      })
      await page.goto(provider.authorizationUrl!.toString())
      await page.getByRole("heading", { name: "Connect an MCP client" }).waitFor()
      await expect.poll(() => page.locator("form.panel").textContent()).toContain("SDK e2e agent")
      const websites = page.locator("input[name=\"website\"]")
      const kept = await websites.first().getAttribute("value")
      for (let i = 1; i < (await websites.count()); i++) await websites.nth(i).uncheck()
      await page.getByRole("button", { name: "Approve" }).click()
      await page.waitForURL(`${redirect}**`)
      expect(callback?.searchParams.get("state")).toBe(provider.sentState)
      await first.finishAuth(callback!.searchParams.get("code")!)
      expect(provider.saved?.access_token).toMatch(/^svc_/)

      const agent = new Client({ name: "agent", version: "0" })
      await agent.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
      expect((await agent.listTools()).tools.map((t) => t.name)).toContain("list_projects")
      const listed: any = await agent.callTool({ name: "list_projects", arguments: {} })
      expect(listed.structuredContent.projects.map((p: any) => p.id)).toEqual([kept])

      // Refresh: new secrets; the next call goes with them.
      const before = provider.saved!
      expect(await auth(provider, { serverUrl: url })).toBe("AUTHORIZED")
      expect(provider.saved!.access_token).not.toBe(before.access_token)
      expect(provider.saved!.refresh_token).not.toBe(before.refresh_token)
      const again: any = await agent.callTool({ name: "list_projects", arguments: {} })
      expect(again.structuredContent.projects).toHaveLength(1)

      // The owner revokes it on the API / MCP page, in the browser: the agent's next call is refused.
      await page.goto("/settings/api")
      await page.getByRole("button", { name: "Revoke SDK e2e agent (MCP sign-in)" }).click()
      await page.getByRole("button", { name: "Yes, revoke" }).click()
      // Revoked once the page's request has been answered: the confirmation goes, the row says so.
      await page.getByRole("group", { name: "Confirm revoking SDK e2e agent (MCP sign-in)" }).waitFor({
        state: "detached"
      })
      const row = page.locator("tr").filter({ hasText: "SDK e2e agent (MCP sign-in)" })
      await expect.poll(() => row.locator(".badge").textContent()).toBe("revoked")
      const status = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${provider.saved!.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(status.status).toBe(401)
      provider.authorizationUrl = undefined
      // The SDK tries its refresh token (ended with the token), then asks the owner to sign in again.
      await expect(agent.callTool({ name: "list_projects", arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError)
      expect(provider.authorizationUrl).toBeDefined()
      await agent.close()
      expect(consoleErrors).toEqual([])
    },
    90_000
  )
})
