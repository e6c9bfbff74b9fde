/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against the real server:
 * sign up → verify the email from the link mailed to a local SMTP sink → log in → add a website → connect
 * Stripe and Plausible (keys checked live against local fakes) and Search Console (through a local fake of
 * Google's OAuth authorize and token endpoints: authorization code with PKCE and state, then the property
 * picked from the account's list) → create a token → call /api/v1/projects with it → revoke it → the next call
 * is 401 → delete the website. Every page
 * is checked by axe (no serious or critical violation) and photographed into test/artifacts/, once at 375 px.
 * Skipped, saying so, where /usr/bin/chromium is missing (`apt-get install -y chromium`; .ci/run does it).
 */
import AxeBuilder from "@axe-core/playwright"
import { startFakeGsc } from "@sitehealth/fakes/FakeGsc"
import { startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { fromArray, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { totpAt } from "@sitehealth/server/dashboard/Totp"
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
  linkIn,
  startServer,
  startSmtpSink
} from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) {
  console.warn(`[web] browser tests skipped: ${CHROMIUM} is missing (install it with \`apt-get install -y chromium\`)`)
}

const email = `owner-${Date.now()}@example.com`
const password = "correct horse battery"
const domain = "shop.example.com"

describe.skipIf(!hasChromium)("the dashboard in chromium", () => {
  let browser: Browser
  let page: Page
  let server: Awaited<ReturnType<typeof startServer>>
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>
  const consoleErrors: Array<string> = []
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>
  let plausible: Awaited<ReturnType<typeof startFakePlausible>>
  let google: Awaited<ReturnType<typeof startFakeGsc>>
  const GOOGLE = {
    clientId: "1234-web.apps.googleusercontent.com",
    clientSecret: "GOCSPX-web-TOPSECRET",
    refreshToken: "1//refresh-web-TOPSECRET",
    siteUrl: `sc-domain:${domain}`
  }
  const STRIPE_KEY = "rk_test_51GoodRestrictedKeyAbCdEf0123456789"
  const PLAUSIBLE_KEY = "plausible-key-0123456789"

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    smtp = await startSmtpSink()
    stripe = await startFakeStripe(
      {
        customers: fromArray([]),
        subscriptions: fromArray([]),
        invoices: fromArray([]),
        charges: fromArray([]),
        refunds: fromArray([])
      },
      { keys: [STRIPE_KEY] }
    )
    plausible = await startFakePlausible({
      apiKey: PLAUSIBLE_KEY,
      siteId: domain,
      data: { days: {}, hours: {}, pages: [], sources: [], uniques: {} }
    })
    google = await startFakeGsc({
      ...GOOGLE,
      rows: [],
      totals: {},
      sites: [{ siteUrl: "https://blog.example.org/", permissionLevel: "siteFullUser" }, {
        siteUrl: GOOGLE.siteUrl,
        permissionLevel: "siteOwner"
      }]
    })
    server = await startServer(smtp.url, {
      stripe: stripe.url,
      plausible: plausible.url,
      google: {
        clientId: GOOGLE.clientId,
        clientSecret: GOOGLE.clientSecret,
        authUrl: google.authUrl,
        tokenUrl: google.tokenUrl,
        apiBase: google.url
      }
    })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light" })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text())
    })
    page.on("pageerror", (e) => consoleErrors.push(String(e)))
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await smtp?.close()
    await stripe?.stop()
    await plausible?.close()
    await google?.close()
  })

  /** axe on the page as it is: no serious or critical violation; then a full-page screenshot. */
  const check = async (name: string) => {
    await page.waitForLoadState("networkidle")
    const results = await new AxeBuilder({ page }).analyze()
    const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    expect(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      name
    ).toEqual([])
    await page.screenshot({ path: Path.join(ARTIFACTS, `${name}.png`), fullPage: true })
  }

  let secret = ""

  it("serves the app with a strict CSP, immutable assets, and the API's 404 to non-browsers", async () => {
    const index = await fetch(`${server.base}/websites`, { headers: { accept: "text/html" } })
    expect(index.status).toBe(200)
    expect(index.headers.get("cache-control")).toBe("no-cache")
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'")
    expect(index.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    const html = await index.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!
    const js = await fetch(`${server.base}${asset}`, { headers: { "accept-encoding": "gzip" } })
    expect(js.status).toBe(200)
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    const api = await fetch(`${server.base}/api/v1/nope`, { headers: { accept: "text/html" } })
    expect(api.status).toBe(404)
    expect(((await api.json()) as any).error.type).toBe("route_not_found")
  })

  it("sends a logged-out visitor to log in, and shows a failed log-in in words", async () => {
    await page.goto("/settings/api")
    await page.waitForURL(/\/login\?next=%2Fsettings%2Fapi/)
    await page.getByRole("heading", { name: "Log in" }).waitFor()
    expect(await page.getByLabel("Stay signed in for 14 days").isChecked()).toBe(false)
    await check("01-login")
    await page.getByLabel("Email").fill("nobody@example.com")
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Log in" }).click()
    await page.getByRole("alert").waitFor()
    expect(await page.getByRole("alert").textContent()).toMatch(/\w/)
    await check("02-login-failed")
  })

  it("signs up and verifies the email from the mailed link", async () => {
    await page.getByRole("link", { name: /Sign up/ }).click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await check("03-signup")
    await page.getByRole("button", { name: "Sign up" }).click()
    await page.getByRole("heading", { name: "Check your email" }).waitFor()
    const mail = await smtp.waitFor((m) => m.to === email)
    const link = linkIn(mail, "/verify-email?token=")
    await page.goto(link)
    await page.getByText(/is verified/).waitFor()
    await check("04-verified")
  })

  it("logs in and adds a website", async () => {
    await page.goto("/login")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Log in" }).click()
    await page.waitForURL(/\/websites$/)
    await page.getByText("No website yet").waitFor()
    await check("05-websites-empty")
    await page.getByRole("button", { name: "Add a website" }).click()
    expect(page.url()).toMatch(/\?add=1$/)
    await page.getByLabel("Name", { exact: true }).fill("Example Shop")
    await page.getByLabel("Domain", { exact: true }).fill(domain)
    await page.getByLabel("Reporting currency").selectOption("EUR")
    await check("06-website-add")
    await page.getByRole("button", { name: "Add website" }).click()
    await page.getByRole("link", { name: "Example Shop" }).waitFor()
    await check("07-websites")
  })

  it("connects Stripe and Plausible (checked live against local fakes); a wrong key is refused in words", async () => {
    await page.getByRole("link", { name: "Example Shop" }).click()
    // A website opens on its briefing; providers are connected on its Integrations tab.
    await page.getByRole("heading", { name: "Morning briefing" }).waitFor()
    await page.getByRole("navigation", { name: "Example Shop reports" }).getByRole("link", { name: "Integrations" })
      .click()
    await page.getByLabel("Stripe restricted key").fill("rk_test_51WrongKeyAbCdEf0123456789")
    await page.getByRole("button", { name: "Connect Stripe" }).click()
    await page.getByRole("alert").first().waitFor()
    await check("07a-stripe-refused")
    await page.getByLabel("Stripe restricted key").fill(STRIPE_KEY)
    await page.getByRole("button", { name: "Connect Stripe" }).click()
    await page.getByRole("button", { name: "Disconnect Stripe" }).waitFor()
    await page.getByLabel("Plausible API key").fill(PLAUSIBLE_KEY)
    await page.getByLabel("Plausible site id").fill(domain)
    await page.getByRole("button", { name: "Connect Plausible" }).click()
    await page.getByRole("button", { name: "Disconnect Plausible" }).waitFor()
    // Keys are never sent back to the page.
    expect(await page.content()).not.toContain(STRIPE_KEY)
    expect(await page.content()).not.toContain(PLAUSIBLE_KEY)
  })

  it("connects Search Console through Google's consent (PKCE and state), picking the property from the account's list", async () => {
    const websitePage = page.url()
    await page.getByRole("button", { name: "Connect with Google" }).click()
    // The browser went to (the fake) Google, which consented and sent it back to the app's callback page.
    await page.waitForURL(/\/oauth\/google\/callback\?/)
    const callback = page.url()
    const authorize = google.authorizeRequests.at(-1)!
    expect(authorize).toMatchObject({
      client_id: GOOGLE.clientId,
      response_type: "code",
      code_challenge_method: "S256",
      redirect_uri: `${server.base}/oauth/google/callback`
    })
    expect(authorize.state).toMatch(/^[\w-]{40,}$/)
    expect(authorize.code_challenge).toMatch(/^[\w-]{43}$/)
    await page.getByRole("group", { name: "Pick the property for this website" }).waitFor()
    await check("07b-google-properties")
    // The code was exchanged with the PKCE verifier (the fake checks it against the challenge).
    const exchange = google.tokenRequests.find((t) => t.grant_type === "authorization_code")!
    expect(exchange.code_verifier).toMatch(/^[\w-]{43,}$/)
    await page.getByRole("radio", { name: new RegExp(GOOGLE.siteUrl) }).check()
    await page.getByRole("button", { name: "Connect this property" }).click()
    await page.waitForURL(websitePage)
    await page.getByRole("button", { name: "Disconnect Google Search Console" }).waitFor()
    await page.getByText(GOOGLE.siteUrl).first().waitFor()
    await check("07c-connections")
    expect(await page.content()).not.toContain(GOOGLE.refreshToken)
    expect(await page.content()).not.toContain(GOOGLE.clientSecret)
    // Reconnecting (what a revoked grant's error asks for) is Google's consent again, for this website: a new
    // flow (new state), a new code exchanged, the property picked again replaces the stored credentials.
    const exchanges = google.tokenRequests.filter((t) => t.grant_type === "authorization_code").length
    await page.getByRole("button", { name: "Reconnect Google Search Console" }).click()
    await page.waitForURL(/\/oauth\/google\/callback\?/)
    expect(google.authorizeRequests.at(-1)!.state).not.toBe(authorize.state)
    await page.getByRole("radio", { name: new RegExp(GOOGLE.siteUrl) }).check()
    await page.getByRole("button", { name: "Connect this property" }).click()
    await page.waitForURL(websitePage)
    await page.getByRole("button", { name: "Disconnect Google Search Console" }).waitFor()
    expect(google.tokenRequests.filter((t) => t.grant_type === "authorization_code")).toHaveLength(exchanges + 1)
    // The same state cannot be used twice: the callback replayed is refused, in words.
    await page.goto(callback)
    await page.getByRole("alert").waitFor()
    expect(await page.getByRole("alert").textContent()).toMatch(/could not be used/)
    await check("07d-google-replayed")
  })

  it("creates a token that works on /api/v1, and revoking it stops it at once", async () => {
    await page.getByRole("link", { name: "API / MCP" }).click()
    await page.getByRole("heading", { name: "API / MCP settings" }).waitFor()
    await page.getByLabel("Name", { exact: true }).fill("Laptop CLI")
    await page.getByRole("button", { name: "Create token" }).click()
    secret = (await page.getByTestId("token-secret").textContent()) ?? ""
    expect(secret).toMatch(/^svc_/)
    // The set-up snippets now carry it; no secret anywhere in the URL.
    expect(await page.locator("pre").first().textContent()).toContain(secret)
    expect(page.url()).not.toContain(secret)
    await check("08-token-created")

    const projects = await fetch(`${server.base}/api/v1/projects`, { headers: { authorization: `Bearer ${secret}` } })
    expect(projects.status).toBe(200)
    expect(JSON.stringify(await projects.json())).toContain(domain)

    await page.getByRole("button", { name: "Revoke Laptop CLI" }).click()
    await check("09-token-revoke-confirm")
    await page.getByRole("button", { name: "Yes, revoke" }).click()
    await page.getByText("revoked", { exact: true }).waitFor()
    const after = await fetch(`${server.base}/api/v1/projects`, { headers: { authorization: `Bearer ${secret}` } })
    expect(after.status).toBe(401)
  })

  it("shows the account, the sessions, and is usable at 375 px", async () => {
    await page.getByRole("link", { name: "Account" }).click()
    await page.getByText(/days? left in your free trial/).waitFor()
    await check("10-account")
    await page.getByRole("link", { name: "Sessions" }).click()
    await page.getByText("this session").waitFor()
    await check("11-sessions")
    await page.emulateMedia({ colorScheme: "dark" })
    await check("11-sessions-dark")
    await page.emulateMedia({ colorScheme: "light" })
    await page.setViewportSize({ width: 375, height: 812 })
    await page.getByRole("link", { name: "API / MCP" }).click()
    await page.getByRole("heading", { name: "Tokens" }).waitFor()
    await check("12-api-375px")
    // Nothing wider than the screen but the code blocks, which scroll inside themselves.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375)
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it("turns on two-factor sign-in, then logs in with a code from the app as the second step", async () => {
    await page.getByRole("link", { name: "Account" }).click()
    const panel = page.getByRole("region", { name: "Two-factor sign-in" })
    await panel.getByLabel("Current password").fill(password)
    await panel.getByRole("button", { name: "Turn on" }).click()
    const key = (await page.getByTestId("totp-secret").textContent())!.replace(/\s+/g, "")
    expect(key).toMatch(/^[A-Z2-7]{32}$/)
    await page.getByRole("img", { name: "QR code for your authenticator app" }).waitFor()
    await page.screenshot({ path: "/tmp/account-2fa.png", fullPage: true })
    await panel.getByLabel(/6-digit code/).fill(totpAt(key, Date.now()))
    await panel.getByRole("button", { name: "Turn on" }).click()
    await page.getByText("Save these now").waitFor()
    expect(await page.getByRole("list", { name: "Recovery codes" }).getByRole("listitem").count()).toBe(10)
    await page.screenshot({ path: "/tmp/account-2fa-codes.png", fullPage: true })
    await page.getByRole("button", { name: "Done" }).click()
    await panel.getByText("10 recovery codes left").waitFor()

    await page.getByRole("button", { name: "Log out" }).click()
    await page.waitForURL(/\/login/)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByLabel("Stay signed in for 14 days").check()
    await page.getByRole("button", { name: "Log in" }).click()
    await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor()
    await check("10a-login-second-factor")
    // The enable step used this time step's code: the next one (accepted, ±1 step) has not been used.
    await page.getByLabel("6-digit code").fill(totpAt(key, Date.now() + 30_000))
    await page.getByRole("button", { name: "Log in" }).click()
    await page.waitForURL(/\/websites$/)
    // Stay signed in: a cookie that outlives the browser, for 14 days.
    const cookie = (await page.context().cookies()).find((c) => c.name === "sitehealth_session")!
    expect(cookie.expires * 1000).toBeGreaterThan(Date.now() + 13 * 86_400_000)
    await page.getByRole("link", { name: "Account" }).click()
    await page.getByText("10 recovery codes left").waitFor()
    await check("10b-account-two-factor")
  })

  it("deletes the website only once its domain is typed, and it is gone", async () => {
    await page.getByRole("link", { name: "Websites" }).click()
    await page.getByRole("link", { name: "Example Shop" }).click()
    await page.getByRole("navigation", { name: "Example Shop reports" }).getByRole("link", { name: "Settings" }).click()
    const del = page.getByRole("button", { name: "Delete website" })
    await del.waitFor()
    expect(await del.isDisabled()).toBe(true)
    await page.getByLabel(`Type ${domain} to confirm`).fill(domain)
    await check("13-website-delete")
    await del.click()
    await page.waitForURL(/\/websites$/)
    await page.getByText("No website yet").waitFor()
  })

  it("can be driven by keyboard: the skip link comes first and leads into the page", async () => {
    await page.reload()
    await page.getByText("No website yet").waitFor()
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content")
    await page.keyboard.press("Enter")
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Add a website")
    await page.keyboard.press("Enter")
    await page.getByLabel("Name", { exact: true }).waitFor()
    expect(page.url()).toMatch(/\?add=1$/)
  })

  // The browser logs each 4xx answer (the refused log-in, the refused key): expected; anything else is not.
  it("logged no script error and no CSP violation", () => {
    expect(consoleErrors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([])
  })
})
