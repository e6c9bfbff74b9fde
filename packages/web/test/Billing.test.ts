/**
 * Subscribing in a real browser (chromium) against the real server and the local fake Stripe billing
 * (packages/fakes FakeStripeBilling.ts), whose Checkout and portal pages send their signed webhooks to the
 * server's /billing/webhook over HTTP: a trial account whose trial has ended gets 402 → Subscribe → (fake)
 * Checkout → signed webhooks → active on the account page, the API answers 200 → Manage billing → cancel →
 * ended → 402. The account page is checked by axe and photographed into test/artifacts/.
 */
import AxeBuilder from "@axe-core/playwright"
import { type FakeStripeBilling, startFakeStripeBilling } from "@sitehealth/fakes/FakeStripeBilling"
import { AccountsRepo } from "@sitehealth/server/accounts/AccountsRepo"
import { createAccount, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { AuthRepo, newUserId } from "@sitehealth/server/dashboard/AuthRepo"
import { hashPassword } from "@sitehealth/server/dashboard/Passwords"
import { Effect, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  ARTIFACTS,
  buildWeb,
  CHROMIUM,
  CHROMIUM_ARGS,
  ensureArtifacts,
  startServer,
  startSmtpSink
} from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
const email = `payer-${Date.now()}@example.com`
const password = "correct horse battery"

describe.skipIf(!hasChromium)("subscribing in chromium", () => {
  let browser: Browser
  let page: Page
  let server: Awaited<ReturnType<typeof startServer>>
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>
  let fake: FakeStripeBilling
  let token = ""
  const consoleErrors: Array<string> = []

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    smtp = await startSmtpSink()
    fake = await startFakeStripeBilling()
    server = await startServer(smtp.url, { stripe: fake.url, plausible: fake.url }, {
      billing: {
        secretKey: Redacted.make(fake.secretKey),
        webhookSecret: Redacted.make(fake.webhookSecret),
        priceId: fake.prices.monthly,
        priceIdYearly: fake.prices.yearly,
        apiBase: fake.url
      }
    })
    fake.webhookUrl = `${server.base}/billing/webhook`
    // A verified owner whose 14-day trial ended yesterday, with an API token.
    const passwordHash = await Effect.runPromise(hashPassword(password))
    token = await server.run(Effect.gen(function*() {
      const account = yield* createAccount({ name: email })
      yield* (yield* AuthRepo).createUser({
        id: newUserId(),
        accountId: account.id,
        email,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      })
      yield* (yield* AccountsRepo).setTrial(account.id, new Date(Date.now() - 86_400_000))
      return (yield* mintToken({ accountId: account.id, name: "ci" })).secret
    }))
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    page = await (await browser.newContext({ baseURL: server.base, colorScheme: "light" })).newPage()
    page.setDefaultTimeout(10_000)
    page.on("pageerror", (e) => consoleErrors.push(String(e)))
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await smtp?.close()
    await fake?.stop()
  })

  const api = () =>
    fetch(`${server.base}/api/v1/projects`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status)

  const check = async (name: string) => {
    await page.waitForLoadState("networkidle")
    const results = await new AxeBuilder({ page }).analyze()
    const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    expect(bad.map((v) => `${v.id}: ${v.help}`), name).toEqual([])
    await page.screenshot({ path: Path.join(ARTIFACTS, `${name}.png`), fullPage: true })
  }

  it("402 → Subscribe → Checkout → webhooks → active and 200 → Manage billing → cancel → ended and 402", async () => {
    expect(await api()).toBe(402)
    await page.goto("/login")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Log in" }).click()
    await page.waitForURL((url) => url.pathname !== "/login")
    await page.goto("/account")
    await expect.poll(() => page.getByTestId("billing-state").textContent()).toBe("Ended")
    await check("billing-ended")

    await page.getByRole("button", { name: "Subscribe yearly" }).click()
    await page.waitForURL((url) => url.href.startsWith(`${fake.url}/checkout/`))
    await page.getByRole("button", { name: "Pay and subscribe" }).click()
    // The fake sent its signed events to /billing/webhook before sending the browser back.
    await page.waitForURL((url) => url.pathname === "/account" && url.search === "?checkout=success")
    await expect.poll(() => page.getByTestId("billing-state").textContent()).toBe("Active")
    await expect.poll(() => page.locator("dd", { hasText: "Yearly" }).count()).toBe(1)
    expect(await page.locator("dt", { hasText: "Renews on" }).count()).toBe(1)
    expect(await api()).toBe(200)
    await check("billing-active")

    await page.getByRole("button", { name: "Manage billing" }).click()
    await page.waitForURL((url) => url.href.startsWith(`${fake.url}/portal/`))
    await page.getByRole("button", { name: "Cancel now" }).click()
    await page.waitForURL((url) => url.pathname === "/account")
    await expect.poll(() => page.getByTestId("billing-state").textContent()).toBe("Ended")
    expect(await api()).toBe(402)
    expect(await page.getByRole("button", { name: "Subscribe monthly" }).count()).toBe(1)
    expect(consoleErrors).toEqual([])
  }, 60_000)
})
