/**
 * What owners take away from the report pages, in a real browser over the demo account (support/Demo.ts): the
 * revenue page's forecast panel shows the API's forecast and profit run-rate, and each "Download CSV" link of the
 * page downloads a file that opens as a table — header row, one row per item of the API's answer, amounts in
 * minor units beside their currency — equal to /api/v1's CSV; the expenses list's download holds every expense
 * the dashboard's list holds, page after page.
 * axe (light and dark) on the revenue page with the new panel and links; a screenshot of each. And the days an
 * owner marks: a day marked on the analytics page shows on its chart and on the revenue chart, axe on the page
 * with the mark (light, dark, 375 px), and a deleted mark leaves every chart.
 * Skipped, saying so, where /usr/bin/chromium is missing.
 */
import AxeBuilder from "@axe-core/playwright"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDemoServer } from "./support/Demo.ts"
import { ARTIFACTS, buildWeb, CHROMIUM, CHROMIUM_ARGS, ensureArtifacts } from "./support/Server.ts"

const hasChromium = Fs.existsSync(CHROMIUM)
if (!hasChromium) console.warn(`[web] export tests skipped: ${CHROMIUM} is missing`)

/** RFC 4180 text as rows of cells (quoted cells with doubled quotes, commas and line breaks inside). */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let cell = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        cell += "\""
        i++
      } else if (c === "\"") quoted = false
      else cell += c
    } else if (c === "\"") quoted = true
    else if (c === ",") {
      row.push(cell)
      cell = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ""
      i++
    } else cell += c
  }
  return rows
}

describe.skipIf(!hasChromium)("exports and forecasts in chromium, over the demo account", () => {
  let browser: Browser
  let page: Page
  let server: Awaited<ReturnType<typeof startDemoServer>>
  let website = ""

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    server = await startDemoServer()
    website = server.projectIds[0]!
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", acceptDownloads: true })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    await page.goto(server.link)
    await page.waitForURL(/\/(websites|overview)$/)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** /api/v1's CSV of `path` with the test's token. */
  const v1Csv = async (path: string) => {
    const r = await fetch(`${server.base}/api/v1${path}`, { headers: { authorization: `Bearer ${server.secret}` } })
    expect(r.status, path).toBe(200)
    return r.text()
  }

  /** Clicks the download link and reads the file the browser saved. */
  const download = async (selector: string) => {
    const [file] = await Promise.all([page.waitForEvent("download"), page.locator(selector).click()])
    const saved = Path.join(ARTIFACTS, `export-${file.suggestedFilename()}`)
    await file.saveAs(saved)
    return { name: file.suggestedFilename(), text: Fs.readFileSync(saved, "utf8") }
  }

  it("the revenue page: the forecast panel is the API's, and each CSV download opens as the API's table", async () => {
    await page.goto(`/websites/${website}/revenue?period=3m`)
    await page.locator("main[aria-busy=\"false\"]").waitFor()
    const revenue = await server.api(`/projects/${website}/revenue?period=3m`)
    // The forecast: one row per horizon with the API's expected MRR, or the reason there is none.
    if (revenue.forecast === null) {
      await page.locator("[data-forecast=\"none\"]").waitFor()
    } else {
      const shown = await page.locator("table[data-table=\"forecast\"] tbody tr").evaluateAll((trs) =>
        trs.map((tr) => [Number(tr.getAttribute("data-forecast")), Number(tr.getAttribute("data-value"))])
      )
      expect(shown).toEqual(revenue.forecast.points.map((p: any) => [p.months, p.mrr.amount]))
    }
    const perMonth = await page.locator("[data-figure=\"profitRunRate.perMonth\"]").getAttribute("data-value")
    expect(JSON.parse(perMonth!)).toEqual(revenue.profitRunRate.perMonth)

    const mrr = await download("a[data-csv=\"revenue-mrr\"]")
    expect(mrr.name).toBe("revenue-3m-mrr.csv")
    const table = parseCsv(mrr.text)
    expect(table[0]).toEqual(["month", "mrr", "currency"])
    expect(table.slice(1)).toEqual(
      revenue.mrrSeries.map((p: any) => [p.month, String(p.mrr.amount), p.mrr.currency])
    )
    expect(mrr.text).toBe(await v1Csv(`/projects/${website}/revenue?period=3m&format=csv&table=mrr`))

    const churned = await download("a[data-csv=\"churn-churned\"]")
    const churn = await server.api(`/projects/${website}/churn?period=3m`)
    expect(parseCsv(churned.text)).toHaveLength(1 + churn.churned.length)
    expect(churned.text).toBe(await v1Csv(`/projects/${website}/churn?period=3m&format=csv`))

    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme })
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), colorScheme).toEqual([])
      await page.screenshot({ path: Path.join(ARTIFACTS, `exports-revenue-${colorScheme}.png`), fullPage: true })
    }
    await page.emulateMedia({ colorScheme: "light" })
  })

  it("a day marked on the analytics page shows on the charts (analytics, revenue) and goes when deleted", async () => {
    const note = `Spring campaign ${Date.now().toString(36)}`
    await page.goto(`/websites/${website}/analytics?period=30d`)
    await page.locator("main[aria-busy=\"false\"]").waitFor()
    const form = page.getByRole("form", { name: "Mark a day" })
    // The day of one of the website's active signals, so that the signal names the mark as its likely cause.
    const signals = (await server.api(`/projects/${website}/signals?active=true`)).signals as Array<any>
    const today = await form.getByLabel("Day").inputValue()
    const monthAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 25 * 86_400_000).toISOString().slice(0, 10)
    const signal = signals.find((x) => x.day !== null && x.day >= monthAgo && x.day <= today)
    const day: string = signal?.day ?? today
    await form.getByLabel("Day").fill(day)
    await form.getByLabel("What happened").fill(note)
    await form.getByLabel("Kind").selectOption("campaign")
    await form.getByRole("button", { name: "Mark the day" }).click()
    await page.getByRole("status").filter({ hasText: `Marked ${day}` }).waitFor()
    // The chart draws it, and lists it under itself: the day and the note.
    const marked = page.locator(`.chart-annotations li[data-annotation="${day}"]`).filter({ hasText: note })
    await marked.waitFor()
    const stored = await (await page.request.get(`/app/api/websites/${website}/annotations`)).json()
    expect(stored.data.annotations).toContainEqual(expect.objectContaining({ date: day, note, category: "campaign" }))
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme })
      const results = await new AxeBuilder({ page }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), colorScheme).toEqual([])
      await page.screenshot({ path: Path.join(ARTIFACTS, `annotations-analytics-${colorScheme}.png`), fullPage: true })
    }
    await page.emulateMedia({ colorScheme: "light" })
    await page.setViewportSize({ width: 375, height: 800 })
    await page.screenshot({ path: Path.join(ARTIFACTS, "annotations-analytics-375.png"), fullPage: true })
    await page.setViewportSize({ width: 1280, height: 800 })

    if (signal !== undefined) {
      await page.goto(`/websites/${website}/signals`)
      await page.locator(`[data-signal="${signal.id}"] .likely-cause`).filter({ hasText: note }).waitFor()
      await page.screenshot({ path: Path.join(ARTIFACTS, "annotations-signals.png"), fullPage: true })
    }

    // The revenue chart's months: the mark is on its month.
    await page.goto(`/websites/${website}/revenue?period=3m`)
    await page.locator(`.chart-annotations li[data-annotation="${day}"]`).filter({ hasText: note }).waitFor()

    await page.goto(`/websites/${website}/analytics?period=30d`)
    await page.getByRole("button", { name: `Delete the mark of ${day}: ${note}` }).click()
    await page.locator(`.chart-annotations li`).filter({ hasText: note }).waitFor({ state: "detached" })
    const after = await (await page.request.get(`/app/api/websites/${website}/annotations`)).json()
    expect(after.data.annotations.map((a: any) => a.note)).not.toContain(note)
  })

  it("the expenses page: the download holds every expense", async () => {
    await page.goto(`/websites/${website}/expenses`)
    await page.locator("a[data-csv=\"expenses\"]").waitFor()
    const file = await download("a[data-csv=\"expenses\"]")
    const rows = parseCsv(file.text)
    expect(rows[0]).toEqual([
      "id",
      "incurred_on",
      "amount",
      "currency",
      "category",
      "description",
      "vendor",
      "recurrence",
      "created_at"
    ])
    let count = 0
    let cursor: string | null = null
    do {
      // The dashboard's own list, page by page, behind the same session (the test's token has no expenses:read).
      const list: any = (await (await page.request.get(
        `/app/api/websites/${website}/expenses?limit=100${cursor === null ? "" : `&cursor=${cursor}`}`
      )).json()).data
      count += list.expenses.length
      cursor = list.nextCursor
    } while (cursor !== null)
    expect(rows).toHaveLength(1 + count)
    expect(count).toBeGreaterThan(0)
  })
})
