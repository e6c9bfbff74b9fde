/**
 * The report pages in a real browser (Debian's chromium driven by playwright-core) over the demo account of
 * a real server with its sync worker running (support/ReportsServer.ts): the overview, each website's briefing,
 * signals, expenses and profit, integrations, and the analytics / revenue / SEO pages. Each shows real
 * figures, and the figures shown are the API's: every one compared with /api/v1's answer for the same website
 * and period, called with the demo's token. Signal filters go to the URL; an expense added and deleted
 * round-trips; "sync now" shows its progress, then the new last-sync time; a failed panel offers a retry.
 * axe on every page in both themes (no serious or critical violation); a screenshot of each into
 * test/artifacts/. One browser, sequential.
 * Skipped, saying so, where /usr/bin/chromium is missing.
 */
import AxeBuilder from "@axe-core/playwright"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DemoServer, startDemoServer } from "./support/ReportsServer.ts"
import { ARTIFACTS, buildWeb, CHROMIUM, CHROMIUM_ARGS, ensureArtifacts } from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) {
  console.warn(
    `[web] report browser tests skipped: ${CHROMIUM} is missing (install it with \`apt-get install -y chromium\`)`
  )
}

describe.skipIf(!hasChromium)("the report pages in chromium, over the demo account", () => {
  let browser: Browser
  let page: Page
  let server: DemoServer
  const consoleErrors: Array<string> = []
  const failedRequests: Array<string> = []
  /** The demo websites by name. */
  const ids: Record<string, string> = {}

  /** /api/v1 with the demo's token: the `data` of a 200 answer. */
  const v1 = async (path: string): Promise<any> => {
    const r = await fetch(`${server.base}/api/v1${path}`, { headers: { authorization: `Bearer ${server.token}` } })
    expect(r.status, path).toBe(200)
    return ((await r.json()) as any).data
  }

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    server = await startDemoServer()
    for (const p of (await v1("/projects")).projects) ids[p.name] = p.id
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", locale: "en-US" })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text())
    })
    page.on("pageerror", (e) => consoleErrors.push(String(e)))
    page.on("response", (r) => {
      if (r.status() >= 400) failedRequests.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`)
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Waits for the page's primary data (`main[aria-busy="false"]`, the bench's convention). */
  const loaded = () => page.locator("main[aria-busy=\"false\"]").waitFor()

  /** axe in the light and the dark theme: no serious or critical violation; a screenshot of each. */
  const check = async (name: string) => {
    await page.waitForLoadState("networkidle")
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(
        bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
        `${name} ${scheme}`
      ).toEqual([])
      await page.screenshot({
        path: Path.join(ARTIFACTS, `reports-${name}${scheme === "dark" ? "-dark" : ""}.png`),
        fullPage: true
      })
    }
    await page.emulateMedia({ colorScheme: "light" })
  }

  /** An amount in minor units as the page writes it (the browser's own Intl, as the page uses). */
  const money = (minor: number, currency: string) =>
    page.evaluate(([m, c]) => {
      const digits = new Intl.NumberFormat("en", { style: "currency", currency: c as string }).resolvedOptions()
        .maximumFractionDigits ?? 2
      return new Intl.NumberFormat(undefined, { style: "currency", currency: c as string }).format(
        (m as number) / 10 ** digits
      )
    }, [minor, currency] as const)
  const when = (iso: string) =>
    page.evaluate(
      (d) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" }).format(new Date(d)),
      iso
    )

  it("logs in with the demo's one-time link and lands on the overview, sorted by what needs attention first", async () => {
    await page.goto(server.loginLink)
    await page.waitForURL(/\/overview$/)
    await page.getByRole("heading", { name: "Overview" }).waitFor()
    await loaded()
    const { projects } = await v1("/projects")
    expect(projects).toHaveLength(3)
    // The documented order, from the API's own answers.
    const facts = await Promise.all(projects.map(async (p: any) => ({
      p,
      top: (await v1(`/projects/${p.id}/briefing`)).priorities[0] ?? null,
      failing: (await v1(`/projects/${p.id}/integrations`)).integrations.filter((i: any) => i.status === "error").length
    })))
    const sev = (s: string | undefined) =>
      ({ critical: 0, warning: 1, info: 2 } as Record<string, number>)[s ?? ""] ?? 3
    facts.sort((a, b) =>
      sev(a.top?.severity) - sev(b.top?.severity) || b.failing - a.failing ||
      (a.p.health.score ?? 101) - (b.p.health.score ?? 101) ||
      (a.p.trend.scoreChange7d ?? 0) - (b.p.trend.scoreChange7d ?? 0) || a.p.name.localeCompare(b.p.name)
    )
    const rows = page.locator("table.overview tbody tr")
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-website")))).toEqual(
      facts.map((f) => f.p.id)
    )
    for (const f of facts) {
      const row = page.locator(`tr[data-website="${f.p.id}"]`)
      expect(await row.getByTestId("score").textContent()).toBe(String(f.p.health.score))
      const change = f.p.trend.scoreChange7d
      expect(await row.getByTestId("change7d").textContent()).toBe(
        `${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change)}`
      )
      if (f.top !== null) expect(await row.getByRole("cell").nth(2).textContent()).toContain(f.top.title)
      if (f.failing > 0) {
        expect(await row.getByRole("link", { name: /failing/ }).textContent()).toContain(`${f.failing} failing`)
      }
    }
    // Calm Notes' Search Console fails (the demo's planted fault: its grant was revoked after the first sync): badged,
    // by the provider's name.
    await page.locator(`tr[data-website="${ids["Calm Notes"]}"]`).getByRole("link", {
      name: "1 failing: Google Search Console",
      exact: true
    }).waitFor()
    await check("01-overview")
  })

  it("the morning briefing: priorities in order with their evidence, health with its confidence and dimensions, as the API says", async () => {
    for (const [name, id] of Object.entries(ids)) {
      await page.goto(`/websites/${id}`)
      await page.getByRole("heading", { name: "Morning briefing" }).waitFor()
      await loaded()
      const briefing = await v1(`/projects/${id}/briefing`)
      const health = await v1(`/projects/${id}/health`)
      expect(await page.getByTestId("headline").textContent()).toContain(briefing.headline)
      const titles = await page.locator("li.priority h3").allTextContents()
      expect(titles.map((t) => t.replace(/^(critical|warning|info)\s*/, ""))).toEqual(
        briefing.priorities.map((p: any) => p.title)
      )
      expect(briefing.priorities.length, name).toBeGreaterThan(0)
      // Each priority's evidence is its signal's figures.
      const signals = (await v1(`/projects/${id}/signals?active=true&limit=100`)).signals as Array<any>
      await page.locator("li.priority dl.evidence").first().waitFor()
      for (const [i, p] of briefing.priorities.entries()) {
        const s = signals.find((x) => x.id === p.signalId)
        if (s === undefined || s.actual === null) continue
        const actual = await page.locator("li.priority").nth(i).getByTestId("actual").textContent()
        expect(actual!.replace(/[^\d]/g, "").length, `${name} ${p.title}`).toBeGreaterThan(0)
      }
      expect(await page.getByTestId("health-score").textContent()).toBe(String(health.score))
      expect(await page.getByTestId("confidence").textContent()).toBe(`${Math.round(health.confidence * 1000) / 10} %`)
      for (const d of health.dimensions) {
        expect(await page.locator(`tr[data-dimension="${d.name}"]`).getByTestId("dimension-score").textContent())
          .toContain(String(d.score ?? "—"))
      }
      const visitors = await page.locator("tr[data-figure=\"visitors\"]").getByTestId("value").textContent()
      expect(visitors).toBe(
        await page.evaluate(
          (n) => new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 }).format(n),
          briefing.yesterday.visitors.value
        )
      )
      expect(await page.locator("tr[data-figure=\"mrr\"]").getByTestId("value").textContent())
        .toBe(await money(briefing.yesterday.mrr.value, briefing.yesterday.currency))
      if (name === "Bolt Recipes") await check("02-briefing")
    }
  })

  it("signals: the filters go to the URL and the list is the API's for them", async () => {
    const id = ids["Bolt Recipes"]!
    await page.goto(`/websites/${id}/signals`)
    await page.getByRole("heading", { name: "Signals" }).waitFor()
    await loaded()
    const all = (await v1(`/projects/${id}/signals?active=true&limit=100`)).signals as Array<any>
    expect(await page.locator("li.signal").count()).toBe(all.length)
    await page.getByLabel("Dimension").selectOption("traffic")
    await page.waitForURL(/[?&]dimension=traffic/)
    await loaded()
    const traffic = (await v1(`/projects/${id}/signals?active=true&dimension=traffic&limit=100`)).signals as Array<any>
    expect(traffic.length).toBeGreaterThan(0)
    await expect.poll(() => page.locator("li.signal").count()).toBe(traffic.length)
    expect(await page.locator("li.signal h2").allTextContents()).toEqual(traffic.map((s) => `${s.severity} ${s.title}`))
    // Expected against actual, and when it started.
    const first = page.locator("li.signal").first()
    if (traffic[0].expected !== null) expect(await first.getByTestId("expected").textContent()).toMatch(/\d/)
    expect(await first.textContent()).toContain(`started ${await when(traffic[0].detectedAt)}`)
    await page.getByLabel("Severity").selectOption("critical")
    await page.waitForURL(/severity=critical/)
    await page.getByLabel("State").selectOption("all")
    await page.waitForURL(/state=all/)
    const critical = (await v1(`/projects/${id}/signals?dimension=traffic&severity=critical&limit=100`))
      .signals as Array<any>
    await expect.poll(() => page.locator("li.signal").count()).toBe(critical.length)
    // A reload keeps the filters.
    await page.reload()
    await loaded()
    expect(await page.getByLabel("Dimension").inputValue()).toBe("traffic")
    expect(await page.getByLabel("Severity").inputValue()).toBe("critical")
    await page.goto(`/websites/${id}/signals`)
    await loaded()
    await check("03-signals")
  })

  it("expenses and profit: the profit is the API's; an expense added then deleted round-trips", async () => {
    const id = ids["Calm Notes"]!
    await page.goto(`/websites/${id}/expenses`)
    await page.getByRole("heading", { name: "Expenses and profit" }).waitFor()
    await loaded()
    const profitRow = page.locator("tr[data-period=\"30d\"]")
    const revenue = await v1(`/projects/${id}/revenue?period=30d`)
    const p = revenue.profitability
    await profitRow.getByTestId("profit").waitFor()
    expect(await profitRow.getByTestId("revenue").textContent()).toBe(
      await money(p.revenueNet.amount, p.revenueNet.currency)
    )
    expect(await profitRow.getByTestId("expenses").textContent()).toContain(
      await money(p.expenses.amount, p.expenses.currency)
    )
    expect(await profitRow.getByTestId("profit").textContent()).toBe(await money(p.profit.amount, p.profit.currency))
    const before = (await v1(`/projects/${id}/expenses?limit=100`)).expenses as Array<any>
    expect(await page.locator("tr[data-expense]").count()).toBe(before.length)
    await check("04-expenses")

    // Acme reports in EUR: an expense in USD is converted with the stored rates, and counts in the profit.
    const acme = ids["Acme Analytics"]!
    await page.goto(`/websites/${acme}/expenses`)
    await loaded()
    const acmeBefore = (await v1(`/projects/${acme}/revenue?period=30d`)).profitability
    await profitRow.getByTestId("profit").waitFor()
    expect(await profitRow.getByTestId("profit").textContent()).toBe(
      await money(acmeBefore.profit.amount, acmeBefore.profit.currency)
    )
    await page.getByRole("button", { name: "Add an expense" }).click()
    await page.waitForURL(/\?add=1/)
    await page.getByLabel("Description").fill("Browser test monitoring")
    await page.getByLabel("Amount").fill("123.45")
    await page.getByLabel("Currency", { exact: true }).fill("USD")
    await page.getByLabel("Category").selectOption("software")
    await page.getByLabel("Recurrence").selectOption("one_off")
    await check("05-expense-add")
    await page.getByRole("button", { name: "Add expense" }).click()
    await page.getByRole("status").filter({ hasText: "Added “Browser test monitoring”" }).waitFor()
    const row = page.locator("tr[data-expense]").filter({ hasText: "Browser test monitoring" })
    await row.waitFor()
    const added = ((await v1(`/projects/${acme}/expenses?limit=100`)).expenses as Array<any>).find((e) =>
      e.description === "Browser test monitoring"
    )
    expect(added).toMatchObject({ amount: 12_345, currency: "USD", category: "software", recurrence: "one_off" })
    expect(await row.getAttribute("data-expense")).toBe(added.id)
    expect(await row.textContent()).toContain(await money(12_345, "USD"))
    // The profit follows: the API's again, now with the expense in it.
    const after = (await v1(`/projects/${acme}/revenue?period=30d`)).profitability
    expect(after.expenses.amount).toBeGreaterThan(acmeBefore.expenses.amount)
    await expect.poll(() => profitRow.getByTestId("profit").textContent()).toBe(
      await money(after.profit.amount, after.profit.currency)
    )

    await row.getByRole("button", { name: "Delete Browser test monitoring" }).click()
    await row.getByRole("button", { name: "Yes, delete" }).click()
    await row.waitFor({ state: "detached" })
    expect(((await v1(`/projects/${acme}/expenses?limit=100`)).expenses as Array<any>).map((e) => e.id)).not.toContain(
      added.id
    )
    await expect.poll(() => profitRow.getByTestId("profit").textContent()).toBe(
      await money(acmeBefore.profit.amount, acmeBefore.profit.currency)
    )
  })

  it(
    "integrations: status, last sync and last error in words; sync now shows its progress, then the new last-sync time",
    async () => {
      const calm = ids["Calm Notes"]!
      await page.goto(`/websites/${calm}/integrations`)
      await page.getByRole("heading", { name: "Integrations", exact: true }).waitFor()
      await loaded()
      const calmList = (await v1(`/projects/${calm}/integrations`)).integrations as Array<any>
      const gsc = calmList.find((i) => i.provider === "google-search-console")
      expect(gsc.status).toBe("error")
      const card = page.locator("li[data-provider=\"google-search-console\"]")
      expect(await card.getByRole("alert").textContent()).toContain(gsc.lastError)
      // The error asks to reconnect; this server has no Google OAuth client, so the connection says why it cannot.
      expect(await page.getByTestId("reconnect-unavailable").textContent()).toContain("GOOGLE_CLIENT_ID")
      expect(await card.getByTestId("last-sync").textContent()).toBe(await when(gsc.lastSuccessAt))
      await check("06-integrations")

      const acme = ids["Acme Analytics"]!
      await page.goto(`/websites/${acme}/integrations`)
      await loaded()
      // The demo's Plausible is a real connection (to the demo's local Plausible): synced like any.
      const demo = page.locator("li[data-provider=\"plausible\"]")
      const lastBefore = await demo.getByTestId("last-sync").textContent()
      await demo.getByRole("button", { name: "Sync Plausible now" }).click()
      // Live progress: queued (or already running) …
      await demo.getByTestId("progress").filter({ hasText: /Sync queued at|Syncing since/ }).waitFor()
      expect(await demo.getByRole("button", { name: "Syncing…" }).isDisabled()).toBe(true)
      await page.screenshot({ path: Path.join(ARTIFACTS, "reports-07-sync-progress.png"), fullPage: true })
      // … then finished, with the new last-sync time (the worker polls every 5 s).
      await demo.getByTestId("progress").filter({ hasText: /Sync finished at/ }).waitFor({ timeout: 30_000 })
      const run = ((await v1(`/projects/${acme}/integrations`)).integrations as Array<any>).find((i) =>
        i.provider === "plausible"
      )
      expect(run.lastRun.status).toBe("succeeded")
      expect(run.lastRun.requestedAt > new Date(Date.now() - 60_000).toISOString()).toBe(true)
      expect(await demo.getByTestId("last-sync").textContent()).toBe(await when(run.lastSuccessAt))
      expect(await demo.getByTestId("last-sync").textContent()).not.toBe(lastBefore)
      await page.screenshot({ path: Path.join(ARTIFACTS, "reports-08-sync-done.png"), fullPage: true })
    },
    60_000
  )

  // Analytics, revenue and SEO (the chart pages) are ReportCharts.test's: the API's figures, the period in the URL.

  it("a failed panel says what failed and offers a retry; the rest of the page still shows", async () => {
    const id = ids["Acme Analytics"]!
    // The health endpoint answers 503 (as the server does when its database is down), the briefing as usual.
    await page.route(`**/app/api/websites/${id}/health`, (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({
          status: "error",
          error: { code: 503, message: "The database is unavailable; try again shortly.", type: "unavailable" }
        })
      }))
    await page.goto(`/websites/${id}`)
    await loaded()
    const health = page.getByRole("region", { name: "Health" })
    await health.getByText("Could not load the health score.").waitFor()
    expect(await health.getByRole("alert").textContent()).toContain("The database is unavailable")
    // The briefing's panels did not wait for it.
    expect(await page.locator("li.priority").count()).toBeGreaterThan(0)
    await page.screenshot({ path: Path.join(ARTIFACTS, "reports-13-failed-panel.png"), fullPage: true })
    await page.unroute(`**/app/api/websites/${id}/health`)
    await health.getByRole("button", { name: "Try again" }).click()
    await page.getByTestId("health-score").waitFor()
    expect(await page.getByTestId("health-score").textContent()).toBe(
      String((await v1(`/projects/${id}/health`)).score)
    )
    // The 503s above were ours.
    failedRequests.splice(0)
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/status of 503/.test(e)))
  })

  it("is usable at 375 px and by keyboard", async () => {
    await page.setViewportSize({ width: 375, height: 812 })
    for (const path of ["/overview", `/websites/${ids["Bolt Recipes"]}`, `/websites/${ids["Bolt Recipes"]}/expenses`]) {
      await page.goto(path)
      await loaded()
      expect(await page.evaluate("document.documentElement.scrollWidth"), path).toBeLessThanOrEqual(375)
    }
    await page.screenshot({ path: Path.join(ARTIFACTS, "reports-12-expenses-375px.png"), fullPage: true })
    await page.goto("/overview")
    await loaded()
    await page.screenshot({ path: Path.join(ARTIFACTS, "reports-12-overview-375px.png"), fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })
    // Keyboard: from the website's first report link to its tabs, Enter follows one.
    await page.goto(`/websites/${ids["Acme Analytics"]}`)
    await loaded()
    await page.getByRole("link", { name: "Signals", exact: true }).focus()
    await page.keyboard.press("Enter")
    await page.waitForURL(/\/signals$/)
    await page.getByRole("heading", { name: "Signals" }).waitFor()
    // Focus goes to the new page's heading.
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("H1")
  })

  // Every request of the pages answered below 400. (The browser's own /favicon.ico request — the app has no
  // icon — is not a page request and is logged as "Failed to load resource": left out.)
  it("logged no script error and no CSP violation; no request failed", () => {
    expect(failedRequests).toEqual([])
    expect(consoleErrors.filter((e) => !/^Failed to load resource: .* 404/.test(e))).toEqual([])
  })
})
