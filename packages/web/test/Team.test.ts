/**
 * The team in a real browser (chromium through playwright-core) against the real server with a local SMTP sink:
 * the owner invites a co-founder as a viewer → the mailed link opens the invitation page in another browser →
 * a password, and the viewer is in: every report readable, no control that would change anything (the reason
 * said instead) → the owner makes them an admin (their next page offers changes) → the owner removes them (their
 * session ends at once). axe in both themes on each page; screenshots at 375 px and desktop into test/artifacts/.
 * Skipped where chromium is missing.
 */
import AxeBuilder from "@axe-core/playwright"
import { createAccount } from "@sitehealth/server/accounts/Provisioning"
import { AuthRepo, newUserId } from "@sitehealth/server/dashboard/AuthRepo"
import { hashPassword } from "@sitehealth/server/dashboard/Passwords"
import { Effect } from "effect"
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
if (!hasChromium) console.warn(`[web] team browser test skipped: ${CHROMIUM} is missing`)

const OWNER = `owner-${Date.now()}@example.com`
const COFOUNDER = `cofounder-${Date.now()}@example.com`
const PASSWORD = "correct horse battery"
const MEMBER_PASSWORD = "a co-founder's own passphrase"

describe.skipIf(!hasChromium)("the team in chromium", () => {
  let browser: Browser
  let owner: Page
  let member: Page
  let server: Awaited<ReturnType<typeof startServer>>
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>
  const pageErrors: Array<string> = []

  beforeAll(async () => {
    buildWeb()
    ensureArtifacts()
    smtp = await startSmtpSink()
    // No provider is contacted here: nothing is connected.
    server = await startServer(smtp.url, { stripe: "http://127.0.0.1:9", plausible: "http://127.0.0.1:9" })
    const passwordHash = await Effect.runPromise(hashPassword(PASSWORD))
    await server.run(Effect.gen(function*() {
      const account = yield* createAccount({ name: "Acme Ltd" })
      yield* (yield* AuthRepo).createUser({
        id: newUserId(),
        accountId: account.id,
        email: OWNER,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      })
    }))
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    const open = async () => {
      const context = await browser.newContext({ baseURL: server.base, colorScheme: "light", locale: "en-US" })
      const page = await context.newPage()
      page.setDefaultTimeout(15_000)
      page.on("pageerror", (e) => pageErrors.push(String(e)))
      return page
    }
    owner = await open()
    member = await open()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await smtp?.close()
  })

  const check = async (page: Page, name: string) => {
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

  it("invite, accept, a viewer's view, promoted to admin, removed", async () => {
    // The owner logs in and adds a website.
    await owner.goto("/login")
    await owner.getByLabel("Email").fill(OWNER)
    await owner.getByLabel("Password").fill(PASSWORD)
    await owner.getByRole("button", { name: "Log in" }).click()
    // No website yet: log-in lands on the websites page.
    await owner.waitForURL(/\/websites$/)
    await owner.goto("/websites?add=1")
    await owner.getByLabel("Name", { exact: true }).fill("Acme Shop")
    await owner.getByLabel("Domain", { exact: true }).fill("shop.acme.example")
    await owner.getByRole("button", { name: "Add website" }).click()
    const href = await owner.getByRole("link", { name: "Acme Shop" }).getAttribute("href")
    const websiteId = decodeURIComponent(/\/websites\/([^/?]+)/.exec(href!)![1]!)

    // The team: the owner alone; an invitation sent.
    await owner.getByRole("link", { name: "Team" }).click()
    await owner.getByRole("heading", { name: "Team", level: 1 }).waitFor()
    await owner.locator(`[data-member="${OWNER}"]`).getByText("you").waitFor()
    await owner.getByLabel("Email").fill(COFOUNDER)
    await owner.getByLabel("Role", { exact: true }).selectOption("viewer")
    await owner.getByRole("button", { name: "Send invitation" }).click()
    await owner.getByText(`Invitation sent to ${COFOUNDER}`).waitFor()
    await owner.locator(`[data-invitation="${COFOUNDER}"]`).waitFor()
    await check(owner, "team-owner")

    // The mailed link, opened in the co-founder's own browser.
    const mail = await smtp.waitFor((m) => m.to === COFOUNDER)
    const link = linkIn(mail, "/accept-invite?token=")
    await member.goto(link)
    await member.getByRole("heading", { name: "Join Acme Ltd", level: 1 }).waitFor()
    await member.getByText(`${OWNER} invited`).waitFor()
    await check(member, "team-accept")
    await member.getByLabel("Choose a password").fill(MEMBER_PASSWORD)
    await member.getByRole("button", { name: "Join Acme Ltd" }).click()
    await member.waitForURL(/\/(overview|websites)$/)

    // A viewer reads everything and is offered no change.
    await member.goto("/websites")
    await member.getByRole("link", { name: "Acme Shop" }).waitFor()
    expect(await member.getByRole("button", { name: "Add a website" }).count()).toBe(0)
    await member.goto(`/websites/${websiteId}/settings`)
    await member.getByText("changing or deleting a website is for an admin or an owner").waitFor()
    expect(await member.getByRole("button", { name: "Delete website" }).count()).toBe(0)
    await member.goto(`/websites/${websiteId}/alerts`)
    await member.getByRole("heading", { name: "Alerts", level: 1 }).waitFor()
    await member.getByText("changing alerts is for an admin or an owner").waitFor()
    expect(await member.getByRole("button", { name: "Add destination" }).count()).toBe(0)
    await member.goto(`/websites/${websiteId}/analytics`)
    await member.getByText("marking a day is for an admin or an owner").waitFor()
    expect(await member.getByRole("button", { name: "Mark the day" }).count()).toBe(0)
    await member.goto("/team")
    await member.getByText("inviting and managing members is for an owner").waitFor()
    expect(await member.getByRole("button", { name: "Send invitation" }).count()).toBe(0)
    expect(await member.getByRole("button", { name: /Remove/ }).count()).toBe(0)
    await check(member, "team-viewer")

    // Promoted: the next page offers changes.
    await owner.reload()
    const row = owner.locator(`[data-member="${COFOUNDER}"]`)
    await row.getByLabel(`Role of ${COFOUNDER}`).selectOption("admin")
    await row.getByRole("button", { name: /Save role/ }).click()
    await row.getByRole("button", { name: /Save role/ }).waitFor({ state: "detached" })
    await member.goto("/websites")
    await member.getByRole("button", { name: "Add a website" }).waitFor()

    // Removed: the session ends at once.
    await row.getByRole("button", { name: /Remove/ }).click()
    await row.getByRole("button", { name: "Yes, remove" }).click()
    await row.waitFor({ state: "detached" })
    await member.goto("/websites")
    await member.waitForURL(/\/login\?next=/)

    // The owner deletes the account: typing their address, then logged out, and the address logs in no more.
    await owner.goto("/account")
    const remove = owner.getByRole("button", { name: "Delete the account" })
    await owner.getByLabel(/Type your email address/).fill(OWNER)
    await check(owner, "account-delete")
    await remove.click()
    await owner.waitForURL(/\/login$/)
    await owner.getByLabel("Email").fill(OWNER)
    await owner.getByLabel("Password").fill(PASSWORD)
    await owner.getByRole("button", { name: "Log in" }).click()
    await owner.getByText("Email or password is incorrect").waitFor()
    expect(pageErrors).toEqual([])
  }, 120_000)
})
