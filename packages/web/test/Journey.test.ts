/**
 * A new owner's first minutes in chromium (docs/first-five-minutes.md), against the real server with its
 * worker's syncs running in process and Stripe served by the local fake with a generated account
 * (@sitehealth/fakes/StripeAccounts): sign up → verify → log in → add a website → connect Stripe → the website's
 * home, without a reload, goes from "importing" to a briefing that names the churn crisis with its money at stake,
 * while its Yesterday table agrees with the Revenue report and says "Not connected" for traffic rather than 0. Then
 * a calm account: the briefing says all is well and its Yesterday table agrees. axe on each state; screenshots in
 * test/artifacts/journey-*.png. The seconds each journey took are printed (the bench, `npm run bench:journey`,
 * times it properly).
 */
import AxeBuilder from "@axe-core/playwright"
import { startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { type FakeStripe, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { CALM, CRISIS, generatedAccount } from "@sitehealth/fakes/StripeAccounts"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signUpToBriefing } from "./support/Journey.ts"
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
const STRIPE_KEY = "rk_test_51JourneyRestrictedKey0123456789"
const password = "a long journey begins"

describe.skipIf(!hasChromium)("a new owner's first minutes, in chromium", () => {
  let browser: Browser
  let server: Awaited<ReturnType<typeof startServer>>
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>
  let stripe: FakeStripe
  let plausible: Awaited<ReturnType<typeof startFakePlausible>>

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    smtp = await startSmtpSink()
    stripe = await startFakeStripe(generatedAccount({ ...CRISIS, now: Math.floor(Date.now() / 1000) }), {
      keys: [STRIPE_KEY],
      maxPageSize: 100
    })
    plausible = await startFakePlausible({
      apiKey: "unused-0123456789",
      siteId: "unused.example",
      data: { days: {}, hours: {}, pages: [], sources: [], uniques: {} }
    })
    server = await startServer(smtp.url, { stripe: stripe.url, plausible: plausible.url }, { worker: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await smtp?.close()
    await stripe?.stop()
    await plausible?.close()
  })

  const newPage = async () => {
    // UTC: the website's time zone defaults to the browser's, and the generated account's days are UTC days.
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", timezoneId: "UTC" })
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    const errors: Array<string> = []
    page.on("pageerror", (e) => errors.push(String(e)))
    return { page, errors }
  }
  const check = (page: Page, prefix: string) => async (step: string) => {
    await page.waitForLoadState("networkidle")
    const results = await new AxeBuilder({ page }).analyze()
    const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    expect(bad.map((v) => `${v.id}: ${v.help}`), step).toEqual([])
    await page.screenshot({ path: Path.join(ARTIFACTS, `journey-${prefix}-${step}.png`), fullPage: true })
  }
  /** The Yesterday table's cell of a figure, as shown. */
  const yesterday = (page: Page, figure: string) =>
    page.locator(`tr[data-figure="${figure}"] [data-testid="value"]`).textContent()
  /** The website's MRR as the Revenue report has it, formatted as the page formats money. */
  const reportedMrr = (page: Page) =>
    page.evaluate(async (id) => {
      const r = await fetch(`/app/api/websites/${id}/revenue`)
      const mrr = ((await r.json()) as any).data.mrr
      return new Intl.NumberFormat(undefined, { style: "currency", currency: mrr.currency }).format(mrr.amount / 100)
    }, /\/websites\/([^/?]+)/.exec(new URL(page.url()).pathname)![1]!)

  it(
    "signs up, connects Stripe, and the home page names the churn with its money at stake, without a reload",
    async () => {
      const { page, errors } = await newPage()
      const times = await signUpToBriefing({
        page,
        waitForMail: smtp.waitFor,
        email: `crisis-${Date.now()}@example.com`,
        password,
        website: { name: "Crisis Shop", domain: "crisis.example.com" },
        stripeKey: STRIPE_KEY,
        headline: /Customer churn at 10\.5/,
        after: async (step) => {
          if (step === "home-empty") {
            // Before any data: the page does not say all is well; it says what to connect.
            const priorities = page.locator("section[aria-labelledby=priorities-heading]")
            expect(await priorities.textContent()).toContain("Nothing to rank yet")
            expect(await page.getByTestId("headline").textContent()).toMatch(/^No data yet: connect Stripe/)
          }
          await check(page, "crisis")(step)
        }
      })
      console.info(
        `journey (churn crisis): ${times.total.toFixed(1)} s from sign-up, ${times.afterConnect.toFixed(1)} s`
          + ` from "Connect Stripe": ${times.headline}`
      )
      expect(times.total).toBeLessThan(60)
      // The first priority is the churn, with the money at stake.
      const first = page.locator("li.priority").first()
      expect(await first.textContent()).toMatch(/Customer churn at 10\.5.*At stake: \$[\d,]+\.\d\d/s)
      // Its evidence too: the signal list is read again for the recomposed briefing.
      await first.getByTestId("actual").waitFor()
      // The Yesterday table agrees with the Revenue report; traffic is not connected, not 0.
      expect(await yesterday(page, "mrr")).toBe(await reportedMrr(page))
      expect(Number(await yesterday(page, "churnedCustomers"))).toBeGreaterThan(0)
      expect(await yesterday(page, "visitors")).toMatch(/^Not connected · Connect Plausible$/)
      // The setting-up panel is gone once the briefing is composed from the data.
      expect(await page.getByTestId("first-sync").count()).toBe(0)
      await check(page, "crisis")("home-briefed")
      // The reports follow the same rule: Analytics says Plausible is not connected, instead of zeros.
      await page.getByRole("navigation", { name: "Crisis Shop reports" }).getByRole("link", { name: "Analytics" })
        .click()
      await page.getByTestId("source-state").filter({ hasText: "Plausible is not connected" }).waitFor()
      expect(await page.locator(`[data-panel="traffic"]`).count()).toBe(0)
      await check(page, "crisis")("analytics-not-connected")
      expect(errors).toEqual([])
    },
    120_000
  )

  it("a calm account: the briefing says all is well, and the Yesterday table agrees", async () => {
    stripe.data = generatedAccount({ ...CALM, now: Math.floor(Date.now() / 1000) })
    const { page, errors } = await newPage()
    const times = await signUpToBriefing({
      page,
      waitForMail: smtp.waitFor,
      email: `calm-${Date.now()}@example.com`,
      password,
      website: { name: "Calm Shop", domain: "calm.example.com" },
      stripeKey: STRIPE_KEY,
      headline: /^(All quiet|Good news): .*health \d+\/100/
    })
    console.info(`journey (calm): ${times.total.toFixed(1)} s from sign-up: ${times.headline}`)
    expect(await yesterday(page, "mrr")).toBe(await reportedMrr(page))
    expect(await yesterday(page, "churnedCustomers")).toBe("0")
    expect(await page.locator("li.priority").count()).toBe(0)
    await check(page, "calm")("home-briefed")
    expect(errors).toEqual([])
  }, 120_000)
})
