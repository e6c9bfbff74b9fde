/**
 * `npm run bench:web`: the dashboard's speed bars in a real browser (docs/benchmarks.md, "Dashboard").
 *
 *   npm run bench:web                    # every route of ROUTES, 7 navigations each, cold and warm
 *   npm run bench:web -- --runs 5 --only websites,account
 *
 * Builds packages/web, starts the server as `npm start` does (embedded PostgreSQL with the demo account, in
 * .bench/web-data; the worker off), logs in with the demo's one-time link, and for each route of ROUTES
 * navigates to it in Debian's chromium (playwright-core) and measures:
 *
 * - **usable**: ms from navigation start to the first moment the page's `<main aria-busy="false">` is in the
 *   document (the app sets `aria-busy="true"` while anything in `<main>` is loading: see
 *   packages/web/src/ui.tsx, BusyMain). Recorded in the page by a MutationObserver, against
 *   `performance.now()` (whose origin is the navigation's start).
 * - **charts drawn**: the same, until every `[data-drawn]` element says `data-drawn="true"` (routes with
 *   charts; "–" where the page has none).
 * - **JS / CSS bytes**, gzipped as the server sends them (each resource's encodedBodySize): **initial** =
 *   what finished loading by the time the page was usable, **total** = everything once the network is idle.
 * - **slowest API call**: of the `/app/api` requests done by the time the page was usable, the slowest one's
 *   duration (request start → response end: the server's share, queueing in the browser included).
 * - **in-app** (report pages): the page loaded is IN_APP_FROM (no report page shown yet; the app fetches the
 *   website pages' code in idle time once that page has its data, as it does for a user); once it is usable and
 * the network idle, the bench navigates in-app to the route, as the app's links do, and measures from that moment until
 * `main`
 *   has been busy and is not any more (**data**) and until the charts are drawn. The report pages' bars
 *   (data ≤ 300 ms, charts ≤ 500 ms "after navigation") are judged on this; the full-load figures of every
 *   route are held to issue 16's usable ≤ 1 s.
 *
 * Each route is measured `--runs` times **cold** (a new browser context: empty cache, the session cookie
 * added) and **warm** (one context, the same page navigated to again: assets from the HTTP cache); the
 * medians are reported. The bars, per route (cold medians; bytes the largest seen): issue 16's initial JS
 * ≤ 150,000 B gzipped (the first screen — log in, websites, overview — and the dashboard's own pages) and
 * usable ≤ 1,000 ms after a full load (every page); issue 17's, for the report pages navigated to in-app:
 * data ≤ 300 ms, charts drawn ≤ 500 ms, and for every page total JS ≤ 250,000 B gzipped, chart code included.
 * Exit code 1 when a bar is missed.
 *
 * Timing is on loopback on a machine that may be shared: the load average at start is printed with the
 * figures.
 */
import { freePort } from "@sitehealth/server/test/support/Ports"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Browser, type BrowserContext, chromium, type Cookie } from "playwright-core"
import { startServer } from "./processes.ts"
import { machineInfo } from "./report.ts"

/**
 * The routes measured. Add a page with one line: `path` may use `:website` (the demo's first website id).
 * `loggedOut`: measured without the session cookie. `report`: a report page (issue 17): also navigated to
 * in-app, its data within BAR_REPORT_DATA_MS; no initial-JS bar of its own unless `firstScreen`.
 * `firstScreen`: a page a visitor lands on (log in, websites, the overview `/` leads to): held to the
 * initial-JS bar (every page that is not a report page is too). `charts`: the page must draw `[data-drawn]`
 * charts, within BAR_DRAWN_MS. Every page: total JS ≤ BAR_TOTAL_JS.
 */
interface Route {
  readonly name: string
  readonly path: string
  readonly loggedOut?: boolean
  readonly report?: boolean
  readonly firstScreen?: boolean
  readonly charts?: boolean
}
const ROUTES: ReadonlyArray<Route> = [
  { name: "log in", path: "/login", loggedOut: true, firstScreen: true },
  { name: "overview", path: "/overview", report: true, firstScreen: true },
  { name: "websites", path: "/websites", firstScreen: true },
  { name: "briefing", path: "/websites/:website", report: true },
  { name: "signals", path: "/websites/:website/signals", report: true },
  { name: "analytics", path: "/websites/:website/analytics", report: true, charts: true },
  { name: "revenue", path: "/websites/:website/revenue", report: true, charts: true },
  { name: "seo", path: "/websites/:website/seo", report: true, charts: true },
  { name: "expenses", path: "/websites/:website/expenses", report: true },
  { name: "integrations", path: "/websites/:website/integrations", report: true },
  { name: "website settings", path: "/websites/:website/settings" },
  { name: "api", path: "/settings/api" },
  { name: "account", path: "/account" },
  { name: "sessions", path: "/sessions" }
]

/** Issue 16: initial JS (first screen and dashboard pages) gzipped; a dashboard page usable after navigation. */
const BAR_INITIAL_JS = 150_000
const BAR_USABLE_MS = 1_000
/** Issue 17: a report page's data, its charts drawn, and the JS of any page with its chart code. */
const BAR_REPORT_DATA_MS = 300
const BAR_DRAWN_MS = 500
const BAR_TOTAL_JS = 250_000

const REPO_ROOT = Path.resolve(import.meta.dirname, "..")
const DATA_DIR = Path.join(REPO_ROOT, ".bench", "web-data")
const RESULTS_DIR = Path.join(REPO_ROOT, "bench", "results")
const CHROMIUM = "/usr/bin/chromium"
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]
const log = (m: string) => process.stderr.write(`bench:web: ${m}\n`)

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const RUNS = Number(option("runs") ?? 7)
const ONLY = option("only")?.split(",")
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error("--runs takes a positive integer")

/**
 * Runs in every page before its scripts: records when main turns not-busy and when the charts are drawn,
 * from `start` (0: the navigation's start). For an in-app navigation the bench sets `start` to the moment it
 * navigates and `needBusy`: the new page counts as usable only once main has been busy and is no longer.
 */
const PROBE = `(() => {
  const b = (window.__bench = { usable: null, drawn: null, start: 0, needBusy: false })
  const check = () => {
    if (b.needBusy) {
      if (!document.querySelector('main[aria-busy="true"]')) return
      b.needBusy = false
    }
    if (b.usable === null && document.querySelector('main[aria-busy="false"]')) b.usable = performance.now() - b.start
    if (b.usable !== null && b.drawn === null) {
      const charts = document.querySelectorAll("[data-drawn]")
      if (charts.length > 0 && [...charts].every((c) => c.getAttribute("data-drawn") === "true")) b.drawn = performance.now() - b.start
    }
  }
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-busy", "data-drawn"] })
})()`

/** The page a report page is navigated to in-app from: no report page shown yet (the first one seen). */
const IN_APP_FROM = "/websites"

interface InAppSample {
  readonly usableMs: number
  readonly drawnMs: number | null
  readonly apiMs: number | null
}

/**
 * Loads `from` in a new page of `context`, waits until it is usable and the network idle, then navigates
 * in-app to `path` as the app's links do (History API + popstate: the app's router) and measures from that
 * moment: the page's chunk, its data and its charts, with the shell already running.
 */
const navigateInApp = async (
  context: BrowserContext,
  from: string,
  path: string,
  charts: boolean
): Promise<InAppSample> => {
  const page = await context.newPage()
  try {
    await page.goto(from, { waitUntil: "commit" })
    await page.waitForFunction(() => (globalThis as any).__bench?.usable !== null, undefined, { timeout: 30_000 })
    await page.waitForLoadState("networkidle")
    await page.evaluate((to) => {
      const b = (globalThis as any).__bench
      Object.assign(b, { usable: null, drawn: null, start: performance.now(), needBusy: true })
      const w = globalThis as any
      w.history.pushState(null, "", to)
      w.dispatchEvent(new w.PopStateEvent("popstate"))
    }, path)
    await page.waitForFunction(() => (globalThis as any).__bench.usable !== null, undefined, { timeout: 30_000 })
    if (charts) {
      await page.waitForFunction(() => (globalThis as any).__bench.drawn !== null, undefined, { timeout: 30_000 })
    }
    const landed = new URL(page.url()).pathname
    if (landed !== path) throw new Error(`in-app navigation to ${path} ended on ${page.url()}`)
    return await page.evaluate(() => {
      const b = (globalThis as any).__bench as { usable: number; drawn: number | null; start: number }
      const api = (performance.getEntriesByType("resource") as Array<any>)
        .filter((e) =>
          e.startTime >= b.start && new URL(e.name).pathname.startsWith("/app/api/") &&
          e.responseEnd <= b.start + b.usable
        )
      return {
        usableMs: b.usable,
        drawnMs: b.drawn,
        apiMs: api.length === 0 ? null : Math.max(...api.map((e) => e.responseEnd - e.startTime))
      }
    })
  } finally {
    await page.close()
  }
}

interface Sample {
  readonly usableMs: number
  readonly drawnMs: number | null
  readonly initialJs: number
  readonly initialCss: number
  readonly totalJs: number
  readonly totalCss: number
  readonly requests: number
  /** The slowest `/app/api` request of the page (request start → response end): the server's share. */
  readonly apiMs: number | null
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** One navigation in `context` to `url`; the page must end on `expectPath` and be usable within 30 s. */
const navigate = async (context: BrowserContext, url: string, expectPath: string, charts: boolean): Promise<Sample> => {
  const page = await context.newPage()
  try {
    await page.goto(url, { waitUntil: "commit" })
    await page.waitForFunction(() => (globalThis as any).__bench?.usable !== null, undefined, { timeout: 30_000 })
    const hasCharts = charts || (await page.locator("[data-drawn]").count()) > 0
    if (hasCharts) {
      await page.waitForFunction(() => (globalThis as any).__bench.drawn !== null, undefined, { timeout: 30_000 })
    }
    await page.waitForLoadState("networkidle")
    const landed = new URL(page.url()).pathname
    if (landed !== expectPath) {
      throw new Error(`${url} ended on ${page.url()}, not ${expectPath} (logged out? no such page?)`)
    }
    const m = await page.evaluate(() => {
      const b = (globalThis as any).__bench as { usable: number; drawn: number | null }
      const sum = (ext: RegExp, until: number) =>
        (performance.getEntriesByType("resource") as Array<any>).filter((e) =>
          ext.test(new URL(e.name).pathname) && e.responseEnd <= until
        )
          .reduce((s: number, e) => s + (e.encodedBodySize as number), 0)
      return {
        usableMs: b.usable,
        drawnMs: b.drawn,
        initialJs: sum(/\.js$/, b.usable),
        initialCss: sum(/\.css$/, b.usable),
        totalJs: sum(/\.js$/, Infinity),
        totalCss: sum(/\.css$/, Infinity),
        requests: performance.getEntriesByType("resource").length + 1,
        ...(() => {
          const api = (performance.getEntriesByType("resource") as Array<any>).filter((e) =>
            new URL(e.name).pathname.startsWith("/app/api/") && e.responseEnd <= b.usable
          )
          return api.length === 0
            ? { apiMs: null }
            : { apiMs: Math.max(...api.map((e) => e.responseEnd - e.startTime)) }
        })()
      }
    })
    return m
  } finally {
    await page.close()
  }
}

const main = async () => {
  if (!Fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  log("building packages/web")
  const build = spawnSync(process.execPath, [
    Path.join(REPO_ROOT, "node_modules/vite/bin/vite.js"),
    "build",
    "--logLevel",
    "warn"
  ], {
    cwd: Path.join(REPO_ROOT, "packages/web"),
    encoding: "utf8",
    env: { ...process.env, NODE_ENV: "production" }
  })
  if (build.status !== 0) throw new Error(`vite build failed:\n${build.stdout}\n${build.stderr}`)

  const port = await freePort()
  log(
    `starting the server on :${port} (embedded PostgreSQL and the demo account in ${
      Path.relative(REPO_ROOT, DATA_DIR)
    }; the first run seeds it)`
  )
  const server = await startServer({
    name: "sitehealth",
    args: [Path.join(REPO_ROOT, "packages/server/bin/server.js")],
    cwd: REPO_ROOT,
    port,
    probePath: "/healthz",
    env: {
      // Always the embedded database with the demo account, whatever the shell has set.
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "DATABASE_URL")),
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      SITEHEALTH_DATA_DIR: DATA_DIR,
      SITEHEALTH_EMBEDDED_PG_PORT: String(await freePort()),
      SITEHEALTH_WORKER: "off"
    }
  })
  let browser: Browser | undefined
  try {
    // The link is printed before the server listens.
    const link = /(http:\/\/\S+\/app\/api\/auth\/magic\?token=\S+)/.exec(server.output())?.[1]
    if (link === undefined) {
      throw new Error(`no demo login link in the server's output:\n${server.output().slice(-2000)}`)
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const login = await browser.newContext()
    const landing = await login.newPage()
    await landing.goto(link)
    await landing.waitForURL(/\/(overview|websites)$/)
    const cookies: Array<Cookie> = await login.cookies()
    if (!cookies.some((c) => c.name === "sitehealth_session")) throw new Error("the demo link set no session cookie")
    const websites = await landing.evaluate(async () =>
      ((await (await fetch("/app/api/websites")).json()) as any).data.websites as Array<{ id: string; name: string }>
    )
    if (websites.length === 0) throw new Error("the demo account has no website")
    await login.close()

    const routes = ROUTES.filter((r) => ONLY === undefined || ONLY.includes(r.name))
    const rows: Array<{
      route: Route
      path: string
      cold: Array<Sample>
      warm: Array<Sample>
      inAppCold: Array<InAppSample>
      inAppWarm: Array<InAppSample>
    }> = []
    for (const route of routes) {
      const path = route.path.replace(":website", websites[0]!.id)
      const url = `${server.base}${path}`
      const newContext = async () => {
        const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } })
        await context.addInitScript(PROBE)
        if (route.loggedOut !== true) await context.addCookies(cookies)
        return context
      }
      const cold: Array<Sample> = []
      for (let i = 0; i < RUNS; i++) {
        const context = await newContext()
        cold.push(await navigate(context, url, path, route.charts === true))
        await context.close()
      }
      const warmContext = await newContext()
      await navigate(warmContext, url, path, route.charts === true)
      const warm: Array<Sample> = []
      for (let i = 0; i < RUNS; i++) warm.push(await navigate(warmContext, url, path, route.charts === true))
      // The report pages also in-app, from a page without report code, cold (new context) and warm.
      const inAppCold: Array<InAppSample> = []
      const inAppWarm: Array<InAppSample> = []
      if (route.report === true) {
        const from = `${server.base}${IN_APP_FROM}`
        for (let i = 0; i < RUNS; i++) {
          const context = await newContext()
          inAppCold.push(await navigateInApp(context, from, path, route.charts === true))
          await context.close()
        }
        for (let i = 0; i < RUNS; i++) {
          inAppWarm.push(await navigateInApp(warmContext, from, path, route.charts === true))
        }
      }
      await warmContext.close()
      rows.push({ route, path: route.path, cold, warm, inAppCold, inAppWarm })
      log(
        `${route.name}: usable ${median(cold.map((s) => s.usableMs)).toFixed(0)} ms cold, ${
          median(warm.map((s) => s.usableMs)).toFixed(0)
        } ms warm` +
          (inAppCold.length === 0
            ? ""
            : `; in-app data ${median(inAppCold.map((s) => s.usableMs)).toFixed(0)} ms cold, ${
              median(inAppWarm.map((s) => s.usableMs)).toFixed(0)
            } ms warm`)
      )
    }

    const machine = machineInfo()
    const ms = (
      xs: ReadonlyArray<number | null>
    ) => (xs.some((x) => x === null) ? "–" : `${median(xs as Array<number>).toFixed(0)}`)
    const b = (x: number) => x.toLocaleString("en-US")
    const misses: Array<string> = []
    const lines = [
      `Dashboard in chromium, ${RUNS} navigations per route and mode; times are medians, ` +
      `bytes the largest seen (bench/web.ts, ${new Date().toISOString()})`,
      `Machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load average ${
        machine.loadAverageAtStart.join(" ")
      } at start`,
      "",
      "| route | path | full load: usable, cold / warm (ms) | full load: charts drawn, cold / warm (ms) | in-app: " +
      "data, cold / warm (ms) | in-app: charts drawn, cold / warm (ms) | slowest API call: full load / in-app, " +
      "cold (ms) | initial JS gz (B) | total JS gz (B) | CSS gz, initial / total (B) | bars |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    ]
    const pair = (
      a: ReadonlyArray<number | null>,
      z: ReadonlyArray<number | null>
    ) => (a.length === 0 ? "–" : `${ms(a)} / ${ms(z)}`)
    for (const { route, path, cold, warm, inAppCold, inAppWarm } of rows) {
      const usableCold = median(cold.map((s) => s.usableMs))
      const initialJs = Math.max(...cold.map((s) => s.initialJs))
      const totalJs = Math.max(...cold.map((s) => s.totalJs))
      const initialBar = route.report !== true || route.firstScreen === true
      const missed: Array<string> = []
      if (initialBar && initialJs > BAR_INITIAL_JS) missed.push(`initial JS ${b(initialJs)} B > ${b(BAR_INITIAL_JS)} B`)
      if (totalJs > BAR_TOTAL_JS) missed.push(`total JS ${b(totalJs)} B > ${b(BAR_TOTAL_JS)} B`)
      if (usableCold > BAR_USABLE_MS) {
        missed.push(`usable after ${usableCold.toFixed(0)} ms > ${b(BAR_USABLE_MS)} ms (full load)`)
      }
      if (route.report === true) {
        const data = median(inAppCold.map((s) => s.usableMs))
        if (data > BAR_REPORT_DATA_MS) {
          missed.push(`data after ${data.toFixed(0)} ms > ${BAR_REPORT_DATA_MS} ms (in-app)`)
        }
        if (route.charts === true) {
          const drawn = inAppCold.some((s) => s.drawnMs === null) ? null : median(inAppCold.map((s) => s.drawnMs!))
          if (drawn === null || drawn > BAR_DRAWN_MS) {
            missed.push(
              `charts drawn after ${drawn === null ? "never" : drawn.toFixed(0)} ms > ${BAR_DRAWN_MS} ms (in-app)`
            )
          }
        }
      }
      misses.push(...missed.map((m) => `${route.name}: ${m}`))
      const bars = [
        `usable ≤ ${b(BAR_USABLE_MS)} ms`,
        ...(route.report === true ? [`data ≤ ${BAR_REPORT_DATA_MS} ms`] : []),
        ...(route.charts === true ? [`drawn ≤ ${BAR_DRAWN_MS} ms`] : []),
        ...(initialBar ? [`initial ≤ ${BAR_INITIAL_JS / 1000} KB`] : []),
        `total ≤ ${BAR_TOTAL_JS / 1000} KB`
      ].join(", ")
      lines.push(
        `| ${route.name} | \`${path}\` | ${pair(cold.map((s) => s.usableMs), warm.map((s) => s.usableMs))} | ` +
          `${
            cold.some((s) => s.drawnMs !== null) ? pair(cold.map((s) => s.drawnMs), warm.map((s) => s.drawnMs)) : "–"
          } | ` +
          `${pair(inAppCold.map((s) => s.usableMs), inAppWarm.map((s) => s.usableMs))} | ` +
          `${route.charts === true ? pair(inAppCold.map((s) => s.drawnMs), inAppWarm.map((s) => s.drawnMs)) : "–"} | ` +
          `${ms(cold.map((s) => s.apiMs))} / ${inAppCold.length === 0 ? "–" : ms(inAppCold.map((s) => s.apiMs))} | ` +
          `${b(initialJs)} | ${b(totalJs)} | ${b(Math.max(...cold.map((s) => s.initialCss)))} / ${
            b(Math.max(...cold.map((s) => s.totalCss)))
          } | ` +
          `${missed.length === 0 ? `met (${bars})` : `**missed**: ${missed.join("; ")}`} |`
      )
    }
    lines.push(
      "",
      `Bars (cold medians, largest bytes): usable ≤ ${
        b(BAR_USABLE_MS)
      } ms after a full load on every page; on the report pages, navigated to in-app from ${IN_APP_FROM}, ` +
        `data ≤ ${BAR_REPORT_DATA_MS} ms and charts drawn ≤ ${BAR_DRAWN_MS} ms; ` +
        `initial JS ≤ ${b(BAR_INITIAL_JS)} B on the first screen and the dashboard's own pages; total JS ≤ ${
          b(BAR_TOTAL_JS)
        } B on every page — ` +
        `${misses.length === 0 ? "all met" : `NOT met: ${misses.join("; ")}`}.`
    )
    const report = lines.join("\n")
    process.stdout.write(`${report}\n`)
    Fs.mkdirSync(RESULTS_DIR, { recursive: true })
    const file = Path.join(RESULTS_DIR, `web-${new Date().toISOString().replace(/[:.]/g, "-")}.md`)
    Fs.writeFileSync(file, `${report}\n`)
    log(`written to ${Path.relative(REPO_ROOT, file)}`)
    if (misses.length > 0) process.exitCode = 1
  } finally {
    await browser?.close()
    await server.stop()
  }
}

await main()
