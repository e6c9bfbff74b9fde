/**
 * The Alerts page in a real browser (chromium through playwright-core) over the demo account of a real server
 * without SMTP_URL (the email goes to the log): a website's webhook destination with its delivery log (a test
 * event sent to it), a rule edited and saved (read back from /api/v1), an email destination added for the
 * logged-in member, "Send today's briefing now" confirmed.
 * axe in both themes; screenshots at 375 px and desktop into test/artifacts/. Skipped where chromium is missing.
 */
import AxeBuilder from "@axe-core/playwright"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DemoServer, startDemoServer } from "./support/ReportsServer.ts"
import { ARTIFACTS, buildWeb, CHROMIUM, CHROMIUM_ARGS, ensureArtifacts } from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) console.warn(`[web] alerts browser test skipped: ${CHROMIUM} is missing`)

describe.skipIf(!hasChromium)("the Alerts page in chromium", () => {
  let browser: Browser
  let page: Page
  let server: DemoServer
  const pageErrors: Array<string> = []

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    server = await startDemoServer()
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", locale: "en-US" })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    page.on("pageerror", (e) => pageErrors.push(String(e)))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server.base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: r.status, json: (await r.json()) as any }
  }

  const check = async (name: string) => {
    await page.waitForLoadState("networkidle")
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(bad.map((v) => `${v.id}: ${v.help}`), `${name} ${scheme}`).toEqual([])
    }
    await page.emulateMedia({ colorScheme: "light" })
    for (const [suffix, width] of [["", 1280], ["-375", 375]] as const) {
      await page.setViewportSize({ width, height: 900 })
      await page.screenshot({ path: Path.join(ARTIFACTS, `${name}${suffix}.png`), fullPage: true })
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  }

  it("destinations with the delivery log, a rule edited, today's briefing sent now", async () => {
    const websiteId = server.websiteIds[0]!
    const created = await api("POST", `/projects/${websiteId}/webhooks`, {
      url: "https://hooks.example.com/sitehealth",
      events: ["signal.opened", "revenue.movement"],
      description: "Ops receiver",
      confirm: true
    })
    expect(created.status).toBe(201)
    const webhookId: string = created.json.data.webhook.id
    // A test event: sent at once (hooks.example.com does not answer here), so the log has a row.
    expect((await api("POST", `/projects/${websiteId}/webhooks/${webhookId}/test`)).status).toBeLessThan(500)

    await page.goto(server.loginLink)
    await page.waitForURL(/\/overview$/)
    await page.goto(`/websites/${websiteId}/alerts`)
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor()
    const destination = page.locator(`[data-webhook="${webhookId}"]`)
    await destination.getByRole("heading", { name: "Webhook: Ops receiver" }).waitFor()
    const log = destination.locator("table", { has: page.locator("caption", { hasText: "Delivery log" }) })
    // The test event's row (the demo's sync may have written events of the kinds it takes too).
    await log.locator("tbody tr", { hasText: "webhook.test" }).first().waitFor()

    // Edit the rules: €75 at stake, critical signals only, a weekly recap.
    await destination.getByLabel(/Minimum money at stake/).fill("75")
    await destination.getByLabel("Minimum severity").selectOption("critical")
    await destination.getByLabel("Cadence").selectOption("weekly")
    await destination.getByRole("button", { name: "Save rules" }).click()
    await destination.getByText("Rules saved.").waitFor()
    const read = await api("GET", `/projects/${websiteId}/webhooks/${webhookId}`)
    expect(read.json.data).toMatchObject({ minMoneyAtStake: 7500, minSeverity: "critical", cadence: "weekly" })

    // An email destination for the demo login itself: its address is offered, €50 by default.
    const add = page.locator("section", { has: page.getByRole("heading", { name: "Add a destination" }) })
    await add.getByLabel("Kind").selectOption("email")
    expect(await add.getByLabel("Address").inputValue()).toBe("demo@sitehealth.local")
    await add.getByRole("button", { name: "Add destination" }).click()
    await add.getByText("will be mailed to demo@sitehealth.local").waitFor()
    await page.getByRole("heading", { name: "Email: demo@sitehealth.local" }).waitFor()
    const listed = await api("GET", `/projects/${websiteId}/webhooks`)
    expect(listed.json.data.webhooks.find((w: any) => w.format === "email")).toMatchObject({
      url: "mailto:demo@sitehealth.local",
      minMoneyAtStake: 5000
    })

    await page.getByRole("button", { name: "Send today's briefing now" }).click()
    await page.getByText(/Today's briefing \(\d{4}-\d{2}-\d{2}\) was sent/).waitFor()
    await check("alerts")
    expect(pageErrors).toEqual([])
  }, 90_000)
})
