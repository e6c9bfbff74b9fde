/**
 * `npm run bench:journey`: a new owner's first minutes, timed (docs/first-five-minutes.md). The seconds from
 * opening the sign-up page to the website's home showing a briefing that names the problem the data shows.
 *
 *   npm run bench:journey                       # 3 journeys on the churn-crisis account
 *   npm run bench:journey -- --runs 5 --account calm
 *
 * Starts the server as `npm start` does (a fresh embedded PostgreSQL in a temporary directory, the worker in
 * process), with its mail going to a local SMTP sink and Stripe to the local fake serving a generated account
 * (@sitehealth/fakes/StripeAccounts: `crisis` — 23 of 220 customers cancelled in the last three days and 8
 * renewals failed; `calm` — nobody cancelled). Each run is a new owner in a new browser context (Debian's
 * chromium, playwright-core): sign up → verify the mailed link → log in → add a website → paste the Stripe key →
 * "Connect Stripe" → back on the home page, no reload, until the headline names the churn (crisis) or says all is
 * well (calm). Prints each run and the median; exit code 1 when the median misses the bar (60 s).
 */
import { startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { CALM, CRISIS, generatedAccount } from "@sitehealth/fakes/StripeAccounts"
import { freePort } from "@sitehealth/server/test/support/Ports"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { chromium } from "playwright-core"
import { signUpToBriefing } from "../packages/web/test/support/Journey.ts"
import { buildWeb, CHROMIUM, CHROMIUM_ARGS, startSmtpSink } from "../packages/web/test/support/Server.ts"
import { startServer } from "./processes.ts"
import { machineInfo } from "./report.ts"

const BAR_SECONDS = 60
const REPO_ROOT = Path.resolve(import.meta.dirname, "..")
const STRIPE_KEY = "rk_test_51BenchJourneyKey0123456789"
const log = (m: string) => process.stderr.write(`bench:journey: ${m}\n`)

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const RUNS = Number(option("runs") ?? 3)
const ACCOUNT = option("account") ?? "crisis"
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error("--runs takes a positive integer")
if (ACCOUNT !== "crisis" && ACCOUNT !== "calm") throw new Error("--account is crisis or calm")
const HEADLINE = ACCOUNT === "crisis" ? /Customer churn at 10\.5/ : /^(All quiet|Good news): /

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const main = async () => {
  const machine = machineInfo()
  log(`building the web app; ${machine.cpus} × ${machine.cpuModel}, load ${machine.loadAverageAtStart.join(" ")}`)
  buildWeb()
  const smtp = await startSmtpSink()
  const shape = ACCOUNT === "crisis" ? CRISIS : CALM
  const stripe = await startFakeStripe(generatedAccount({ ...shape, now: Math.floor(Date.now() / 1000) }), {
    keys: [STRIPE_KEY]
  })
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-journey-"))
  Fs.chmodSync(dataDir, 0o755) // the embedded cluster may run as another user (root → postgres)
  const port = await freePort()
  const server = await startServer({
    name: "sitehealth",
    args: [Path.join(REPO_ROOT, "packages/server/bin/server.js")],
    cwd: REPO_ROOT,
    port,
    probePath: "/healthz",
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "DATABASE_URL")),
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      SITEHEALTH_DATA_DIR: dataDir,
      SITEHEALTH_EMBEDDED_PG_PORT: String(await freePort()),
      SMTP_URL: smtp.url,
      STRIPE_API_BASE: stripe.url
    }
  })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  const runs: Array<{ total: number; afterConnect: number; headline: string }> = []
  try {
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ baseURL: server.base, timezoneId: "UTC" })
      const page = await context.newPage()
      page.setDefaultTimeout(30_000)
      const times = await signUpToBriefing({
        page,
        waitForMail: smtp.waitFor,
        email: `journey-${Date.now()}-${i}@example.com`,
        password: "a long journey begins",
        website: { name: `Journey ${i + 1}`, domain: `journey${i + 1}.example.com` },
        stripeKey: STRIPE_KEY,
        headline: HEADLINE,
        timeoutMs: 120_000
      })
      runs.push(times)
      log(
        `run ${i + 1}: ${times.total.toFixed(1)} s from the sign-up page (${times.afterConnect.toFixed(1)} s from ` +
          `"Connect Stripe"): ${times.headline}`
      )
      await context.close()
    }
  } finally {
    await browser.close()
    await server.stop()
    await smtp.close()
    await stripe.stop()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
  const total = median(runs.map((r) => r.total))
  const afterConnect = median(runs.map((r) => r.afterConnect))
  process.stdout.write(
    [
      `bench:journey (${ACCOUNT} account, ${RUNS} run${
        RUNS === 1 ? "" : "s"
      }; ${machine.cpus} × ${machine.cpuModel}, ` +
      `load at start ${machine.loadAverageAtStart.join(" ")})`,
      `  sign-up page → briefing naming it: median ${total.toFixed(1)} s ` +
      `(min ${Math.min(...runs.map((r) => r.total)).toFixed(1)}, max ${
        Math.max(...runs.map((r) => r.total)).toFixed(1)
      }); ` +
      `bar < ${BAR_SECONDS} s: ${total < BAR_SECONDS ? "met" : "MISSED"}`,
      `  "Connect Stripe" → briefing: median ${afterConnect.toFixed(1)} s`,
      ""
    ].join("\n")
  )
  if (total >= BAR_SECONDS) process.exitCode = 1
}

await main()
