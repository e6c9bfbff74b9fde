/**
 * The report pages (Analytics, Revenue and churn, Search) in a real browser (Debian's chromium driven by
 * playwright-core) against the real server holding the demo account, logged in by the demo's one-time link:
 * each page shows real figures, equal to what /api/v1 answers for the same website and period (a token minted
 * for the test); a period switch updates the URL, the figures and the chart; the chart's table lists the
 * API's points; axe finds no serious or critical violation in either colour scheme; every page is
 * photographed into test/artifacts/ (light, dark, 375 px). One browser, one page, in order.
 * Skipped, saying so, where /usr/bin/chromium is missing (`apt-get install -y chromium`).
 */
import AxeBuilder from "@axe-core/playwright"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDemoServer } from "./support/Demo.ts"
import { ARTIFACTS, buildWeb, CHROMIUM, CHROMIUM_ARGS, ensureArtifacts } from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) {
  console.warn(
    `[web] report page tests skipped: ${CHROMIUM} is missing (install it with \`apt-get install -y chromium\`)`
  )
}

describe.skipIf(!hasChromium)("the report pages in chromium, over the demo account", () => {
  let browser: Browser
  let page: Page
  let server: Awaited<ReturnType<typeof startDemoServer>>
  let website = ""
  const consoleErrors: Array<string> = []

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    server = await startDemoServer()
    website = server.projectIds[0]!
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({
      baseURL: server.base,
      colorScheme: "light",
      viewport: { width: 1100, height: 900 }
    })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text())
    })
    page.on("pageerror", (e) => consoleErrors.push(String(e)))
    await page.goto(server.link)
    await page.waitForURL(/\/(websites|overview)$/)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** The page's primary data is in and every chart on it drawn. */
  const ready = async () => {
    await page.locator("main[aria-busy=\"false\"]").waitFor()
    const charts = page.locator("figure.chart")
    for (let i = 0; i < (await charts.count()); i++) {
      await charts.nth(i).and(page.locator("[data-drawn=\"true\"]")).waitFor()
    }
  }

  /** axe in both colour schemes (no serious or critical violation), a screenshot of each, and one at 375 px. */
  const check = async (name: string) => {
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme })
      await ready()
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(
        bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
        `${name} ${colorScheme}`
      ).toEqual([])
      await page.screenshot({ path: Path.join(ARTIFACTS, `reports-${name}-${colorScheme}.png`), fullPage: true })
    }
    await page.emulateMedia({ colorScheme: "light" })
    await page.setViewportSize({ width: 375, height: 800 })
    await ready()
    // Nothing wider than the screen: the page does not scroll sideways — once the charts have followed the new
    // width (their ResizeObserver redraws them a frame or more after the resize; under load, later).
    await expect.poll(async () => Number(await page.evaluate("document.documentElement.scrollWidth")), {
      message: `${name} at 375 px`,
      timeout: 5_000
    })
      .toBeLessThanOrEqual(375)
    await page.screenshot({ path: Path.join(ARTIFACTS, `reports-${name}-375.png`), fullPage: true })
    await page.screenshot({ path: Path.join(ARTIFACTS, `reports-${name}-375-top.png`) })
    // (A report whose provider is not connected draws no chart: "seo-not-connected".)
    if (await page.locator("figure.chart").count() > 0) {
      await page.locator("figure.chart").first().screenshot({
        path: Path.join(ARTIFACTS, `reports-${name}-375-chart.png`)
      })
    }
    await page.setViewportSize({ width: 1100, height: 900 })
  }

  /** Every `[data-figure]` on the page with its raw value (what the page got from the API). */
  const figures = async (): Promise<Record<string, unknown>> =>
    Object.fromEntries(
      await page.locator("[data-figure]").evaluateAll((els) =>
        els.map((e) => [e.getAttribute("data-figure"), JSON.parse(e.getAttribute("data-value")!)])
      )
    )

  /** The chart's table: each row's label and the current value. */
  const chartRows = (title: string) =>
    page.locator(`table[data-points="${title}"] tbody tr`).evaluateAll((rows) =>
      rows.map((r) => [r.querySelector("th")!.textContent, r.querySelector("td")!.getAttribute("data-value")])
    )

  /** The labels of the chart's points marked as not final ("so far", "provisional"). */
  const partialRows = (title: string) =>
    page.locator(`table[data-points="${title}"] tbody tr[data-partial]`).evaluateAll((rows) =>
      rows.map((r) => r.querySelector("th")!.textContent)
    )

  /** A top table's rows: the first cell's text and the change shown (null where the page shows "—"). */
  const topRows = (name: string) =>
    page.locator(`table[data-table="${name}"] tbody tr`).evaluateAll((rows) =>
      rows.map((r) => {
        const change = r.querySelector("[data-change]")
        return [r.querySelector("td")!.textContent, change === null ? null : Number(change.getAttribute("data-change"))]
      })
    )

  it("Analytics: the API's totals and series, and a period switch updates the URL, the figures and the chart", async () => {
    await page.goto(`/websites/${website}/analytics?period=30d`)
    await ready()
    const api30 = await server.api(`/projects/${website}/analytics?period=30d`)
    const shown = await figures()
    for (const key of ["visitors", "pageviews", "sessions", "bounceRate", "avgSessionSeconds", "pagesPerSession"]) {
      expect(shown[key], key).toEqual(api30.totals[key])
    }
    expect(api30.totals.pageviews).toBeGreaterThan(0) // real demo traffic, not an empty state
    expect(await page.locator("[data-figure=\"pageviews\"] .figure").textContent()).toBe(
      api30.totals.pageviews.toLocaleString("en-US")
    )
    expect(await chartRows("Visitors")).toEqual(api30.series.map((p: any) => [p.label, String(p.visitors)]))
    expect(api30.previous.series).toHaveLength(api30.series.length)
    // Today is not over: its point, the last, is drawn dashed and marked "so far" (legend, table), not as a drop.
    const localToday = new Intl.DateTimeFormat("en-CA", { timeZone: api30.range.timezone }).format(new Date())
    expect(api30.series.at(-1).label).toBe(localToday)
    expect(await partialRows("Visitors")).toEqual([localToday])
    expect(await page.locator(".chart-legend [data-partial]").textContent()).toContain(`${localToday} (so far):`)
    expect(await page.locator("[data-partial-note]").textContent()).toBe("dashed: today so far, not over yet")
    expect(await page.locator("table[data-table=\"topPages\"] tbody tr").count()).toBe(api30.topPages.length)
    expect(await page.locator("table[data-table=\"topPages\"] tbody tr").first().locator("td").nth(1).textContent())
      .toBe(api30.topPages[0].pageviews.toLocaleString("en-US"))
    // The tops' change columns and the countries table show the API's rows and changes as they are.
    expect(await topRows("topPages")).toEqual(api30.topPages.map((p: any) => [p.path, p.pageviewsChange]))
    // Every path reads whole, on one line, here at 1,100 px as at 1,280 (it once wrapped a character a line).
    expect(
      await page.locator("table[data-table=\"topPages\"] td.path code").evaluateAll((els) =>
        els.map((e) => e.getClientRects().length)
      )
    ).toEqual(api30.topPages.map(() => 1))
    expect(await topRows("topSources")).toEqual(api30.topSources.map((s: any) => [s.source, s.visitorsChange]))
    expect(api30.topPages.some((p: any) => p.pageviewsChange !== null)).toBe(true) // the demo has a previous period
    const names = new Intl.DisplayNames(["en-US"], { type: "region" })
    expect(api30.topCountries.length).toBeGreaterThan(0)
    expect(await topRows("topCountries")).toEqual(
      api30.topCountries.map((c: any) => [`${names.of(c.country)} (${c.country})`, c.visitorsChange])
    )
    expect(await page.locator("table[data-table=\"topCountries\"] tbody tr").first().locator("td").nth(1).textContent())
      .toBe(api30.topCountries[0].visitors.toLocaleString("en-US"))
    await check("analytics-30d")

    await page.getByRole("link", { name: "7 days" }).click()
    await page.waitForURL(/[?&]period=7d/)
    await ready()
    const api7 = await server.api(`/projects/${website}/analytics?period=7d`)
    expect((await figures()).pageviews).toEqual(api7.totals.pageviews)
    expect(await chartRows("Visitors")).toEqual(api7.series.map((p: any) => [p.label, String(p.visitors)]))
    expect(api7.series).toHaveLength(7)

    await page.getByRole("link", { name: "Today" }).click()
    await page.waitForURL(/[?&]period=today/)
    await ready()
    const today = await server.api(`/projects/${website}/analytics?period=today`)
    expect(await page.locator("table[data-points=\"Visitors\"] tbody tr").count()).toBe(today.series.length)

    // The metric is in the URL too, and the chart follows it.
    await page.getByRole("link", { name: "12 months" }).click()
    await page.waitForURL(/[?&]period=12m/)
    await page.getByRole("button", { name: "Page views" }).click()
    await page.waitForURL(/[?&]metric=pageviews/)
    await ready()
    const api12 = await server.api(`/projects/${website}/analytics?period=12m`)
    expect(await chartRows("Page views")).toEqual(api12.series.map((p: any) => [p.label, String(p.pageviews)]))
    await check("analytics-12m")
  })

  it("Revenue and churn: MRR, ARR, ARPU, customers, movements and churn are the API's", async () => {
    await page.goto(`/websites/${website}/revenue?period=30d`)
    await ready()
    const revenue = await server.api(`/projects/${website}/revenue?period=30d`)
    const churn = await server.api(`/projects/${website}/churn?period=30d`)
    const shown = await figures()
    for (const key of ["mrr", "arr", "customers", "arpu", "ltv", "monthlyChurnRate", "nrr", "quickRatio"]) {
      expect(shown[key], key).toEqual(revenue[key])
    }
    for (const key of ["customerChurnRate", "grossMrrChurnRate", "netMrrChurnRate", "churnedCustomers", "churnedMrr"]) {
      expect(shown[key], key).toEqual(churn[key])
    }
    expect(revenue.mrr.amount).toBeGreaterThan(0)
    const movements = await page.locator("[data-movement]").evaluateAll((rows) =>
      Object.fromEntries(rows.map((r) => [r.getAttribute("data-movement"), Number(r.getAttribute("data-value"))]))
    )
    for (const key of ["start", "new", "expansion", "contraction", "churned", "reactivation", "netNew", "end"]) {
      expect(movements[key], key).toBe(revenue.movements[key].amount)
    }
    expect(await page.locator("table[data-table=\"churned\"] tbody tr").count()).toBe(churn.churned.length)
    // People, not ids: each churned customer and recent failed payment by its name, else email, else id.
    const customers = (table: string) =>
      page.locator(`table[data-table="${table}"] tbody [data-customer]`).allTextContents()
    expect(await customers("churned")).toEqual(churn.churned.map((c: any) => c.name ?? c.email ?? c.customerId))
    // A guest checkout with neither shows "Guest checkout", no customer.
    const recent = revenue.failedPayments.recent.filter((f: any) =>
      f.customerId !== null || (f.name ?? f.email) !== null
    )
    expect(await customers("failedPayments")).toEqual(recent.map((f: any) => f.name ?? f.email ?? f.customerId))
    expect(await page.locator("[data-currency]").getAttribute("data-currency")).toBe(revenue.currency)
    expect(await page.locator("[data-currency]").textContent()).toContain(`in ${revenue.currency}`)
    const digits = revenue.currency === "JPY" ? 0 : 2
    expect(await chartRows(`MRR (${revenue.currency})`)).toEqual(
      revenue.mrrSeries.map((p: any) => [p.month, String(p.mrr.amount / 10 ** digits)])
    )
    // This month has not closed: its point is MRR as of today, marked "so far".
    expect(await partialRows(`MRR (${revenue.currency})`)).toEqual([revenue.asOf.slice(0, 7)])
    await check("revenue-30d")

    await page.getByRole("link", { name: "3 months" }).click()
    await page.waitForURL(/[?&]period=3m/)
    await ready()
    const revenue3m = await server.api(`/projects/${website}/revenue?period=3m`)
    const churn3m = await server.api(`/projects/${website}/churn?period=3m`)
    await expect.poll(async () => Number(await page.locator("[data-movement=\"new\"]").getAttribute("data-value")))
      .toBe(revenue3m.movements.new.amount)
    await expect.poll(() => page.locator("table[data-table=\"churned\"] tbody tr").count()).toBe(churn3m.churned.length)
  })

  it("Search: totals, the daily series with the previous window, top queries and the data lag are the API's", async () => {
    await page.goto(`/websites/${website}/seo?period=30d`)
    await ready()
    const seo = await server.api(`/projects/${website}/seo?period=30d`)
    const shown = await figures()
    for (const key of ["clicks", "impressions", "ctr", "averagePosition"]) {
      expect(shown[key], key).toEqual(seo.totals[key])
    }
    expect(seo.totals.clicks).toBeGreaterThan(0)
    expect(await chartRows("Clicks")).toEqual(seo.series.map((p: any) => [p.day, String(p.clicks)]))
    expect(seo.series).toHaveLength(30)
    expect(seo.previous.series).toHaveLength(30)
    expect(await page.locator("[data-lag]").textContent()).toContain(`data through ${seo.dataThrough}`)
    // The last days with data, which Google still revises, are marked provisional: dataThrough − 3 … dataThrough.
    const revised = new Date(Date.parse(`${seo.dataThrough}T00:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10)
    expect(seo.provisionalFrom).toBe(revised)
    expect(await partialRows("Clicks")).toEqual(seo.series.map((p: any) => p.day).filter((d: string) => d >= revised))
    expect(await partialRows("Clicks")).toHaveLength(4)
    expect(await page.locator("[data-provisional-from]").textContent()).toContain(`Days from ${revised} on`)
    expect(await page.locator(".chart-legend [data-partial]").textContent()).toContain(
      `${seo.dataThrough} (provisional)`
    )
    expect(await page.locator("table[data-table=\"topQueries\"] tbody tr").count()).toBe(seo.topQueries.length)
    expect(await page.locator("table[data-table=\"topQueries\"] tbody tr td.key").first().textContent()).toBe(
      seo.topQueries[0].query
    )
    await check("seo-30d")

    await page.getByRole("button", { name: "Average position" }).click()
    await page.waitForURL(/[?&]metric=averagePosition/)
    await page.getByRole("link", { name: "7 days" }).click()
    await page.waitForURL(/[?&]period=7d&metric=averagePosition|[?&]metric=averagePosition&period=7d/)
    await ready()
    const seo7 = await server.api(`/projects/${website}/seo?period=7d`)
    expect((await figures()).clicks).toEqual(seo7.totals.clicks)
    expect(await chartRows("Average position")).toEqual(
      seo7.series.map((p: any) => [p.day, p.averagePosition === null ? "" : String(p.averagePosition)])
    )
    await check("seo-7d-position")
  })

  it("the keyboard reads the chart point by point", async () => {
    await page.goto(`/websites/${website}/analytics?period=7d`)
    await ready()
    const api = await server.api(`/projects/${website}/analytics?period=7d`)
    await page.locator(".chart-plot").focus()
    await page.keyboard.press("Home")
    await expect.poll(() => page.locator(".chart-legend [data-series=\"current\"]").textContent()).toBe(
      api.series[0].visitors.toLocaleString("en-US")
    )
    await page.keyboard.press("ArrowRight")
    await expect.poll(() => page.locator(".chart-legend").textContent()).toContain(api.series[1].label)
  })

  it("a website without data: each report says its provider is not connected, with the link, instead of zeros", async () => {
    // A new website of the demo account, added through the dashboard API as the Websites page does.
    const created = await page.evaluate(`(async () => {
      const session = await (await fetch("/app/api/auth/session")).json()
      const response = await fetch("/app/api/websites", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": session.data.csrfToken },
        body: JSON.stringify({ name: "Empty site", domain: "empty.example", timezone: "UTC", currency: "USD" })
      })
      return (await response.json()).data.id
    })()`) as string
    for (
      const [report, provider] of [
        ["analytics", "Plausible"],
        ["revenue", "Stripe"],
        ["seo", "Google Search Console"]
      ] as const
    ) {
      await page.goto(`/websites/${created}/${report}`)
      // The page's verdict first: counting charts before it could catch one of the page's loading frames.
      const state = page.getByTestId("source-state")
      await state.waitFor()
      await ready()
      expect(await state.getAttribute("data-state"), report).toBe("not_connected")
      expect(await state.textContent(), report).toContain(`${provider} is not connected`)
      expect(await state.getByRole("link", { name: `Connect ${provider}` }).count(), report).toBe(1)
      // No chart of zeros, no figure.
      expect(await page.locator("figure.chart").count(), report).toBe(0)
    }
    await check("seo-not-connected")
  })

  it("a website of no one's says so, with a way back, not a blank page", async () => {
    // (A panel that fails to load, with its retry, is Reports.test's.)
    await page.goto(`/websites/prj_doesnotexist/analytics`)
    await page.getByRole("heading", { name: "Website not found" }).waitFor()
    expect(await page.getByRole("link", { name: "All websites" }).count()).toBe(1)
  })

  it("logged no error in the browser console", () => {
    // The unknown website's 404 is the one expected failure.
    expect(consoleErrors.filter((e) => !/404/.test(e))).toEqual([])
  })
})
