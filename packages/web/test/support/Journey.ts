/**
 * A new owner's first minutes in the browser, step by step (docs/first-five-minutes.md): sign up → verify the
 * mailed link → log in → add a website → connect Stripe → back on the website's home, wait (no reload) until
 * the briefing's headline says what the data shows. Shared by the browser test (Journey.test.ts) and
 * `npm run bench:journey`, which times it.
 */
import type { Page } from "playwright-core"
import { linkIn, type Mail } from "./Server.ts"

export interface JourneyInput {
  readonly page: Page
  readonly waitForMail: (predicate: (mail: Mail) => boolean, timeoutMs?: number) => Promise<Mail>
  readonly email: string
  readonly password: string
  readonly website: { readonly name: string; readonly domain: string }
  readonly stripeKey: string
  /** What the headline must come to say. */
  readonly headline: RegExp
  /** How long to wait for it, from "Connect Stripe" (ms). */
  readonly timeoutMs?: number
  /** Called after each step, with its name (screenshots, axe). */
  readonly after?: (step: string) => Promise<void>
}

export interface JourneyTimes {
  /** Seconds from opening the sign-up page to the website's home showing the headline. */
  readonly total: number
  /** Seconds from clicking "Connect Stripe" to the headline. */
  readonly afterConnect: number
  /** The headline as shown. */
  readonly headline: string
}

export const signUpToBriefing = async (input: JourneyInput): Promise<JourneyTimes> => {
  const { page } = input
  const after = input.after ?? (async () => {})
  const started = Date.now()
  await page.goto("/signup")
  await page.getByLabel("Email").fill(input.email)
  await page.getByLabel("Password").fill(input.password)
  await page.getByRole("button", { name: "Sign up" }).click()
  await page.getByRole("heading", { name: "Check your email" }).waitFor()
  const mail = await input.waitForMail((m) => m.to === input.email)
  await page.goto(linkIn(mail, "/verify-email?token="))
  await page.getByText(/is verified/).waitFor()

  await page.goto("/login")
  await page.getByLabel("Email").fill(input.email)
  await page.getByLabel("Password").fill(input.password)
  await page.getByRole("button", { name: "Log in" }).click()
  await page.waitForURL(/\/websites$/)
  await page.getByRole("button", { name: "Add a website" }).click()
  await page.getByLabel("Name", { exact: true }).fill(input.website.name)
  await page.getByLabel("Domain", { exact: true }).fill(input.website.domain)
  await page.getByLabel("Reporting currency").selectOption("USD")
  await page.getByRole("button", { name: "Add website" }).click()
  await page.getByRole("link", { name: input.website.name }).click()
  await page.getByRole("heading", { name: "Morning briefing" }).waitFor()
  await page.getByTestId("headline").waitFor()
  await after("home-empty")

  const reports = page.getByRole("navigation", { name: `${input.website.name} reports` })
  await reports.getByRole("link", { name: "Integrations" }).click()
  await page.getByLabel("Stripe restricted key").fill(input.stripeKey)
  const connecting = Date.now()
  await page.getByRole("button", { name: "Connect Stripe" }).click()
  await page.getByRole("button", { name: "Disconnect Stripe" }).waitFor()
  await reports.getByRole("link", { name: "Briefing" }).click()
  await page.getByRole("heading", { name: "Morning briefing" }).waitFor()
  await after("home-importing")
  // No reload from here: the page follows the first sync by itself.
  await page.getByTestId("headline").filter({ hasText: input.headline }).waitFor({
    timeout: input.timeoutMs ?? 60_000
  }).catch(async (e) => {
    const shown = await page.getByTestId("headline").textContent().catch(() => null)
    const setup = await page.getByTestId("first-sync").textContent().catch(() => null)
    throw new Error(`the headline never matched ${input.headline}: it says "${shown}"; setting up: ${setup}\n${e}`)
  })
  const done = Date.now()
  return {
    total: (done - started) / 1000,
    afterConnect: (done - connecting) / 1000,
    headline: (await page.getByTestId("headline").textContent()) ?? ""
  }
}
