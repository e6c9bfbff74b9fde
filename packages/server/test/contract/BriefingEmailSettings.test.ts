/**
 * The morning email's settings from the dashboard (/app/api/alerts/email), on both stores, to a local SMTP sink:
 * the hour and time zone the owner chooses are the ones the worker honours (at 07:00 New York across the US spring
 * DST change, while the website is in Paris); off means no email; a bad zone or hour is a 400; "Send today's
 * briefing now" sends once a day, and the worker then does not send it again.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount, createProject } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { Signing } from "../../src/dashboard/Links.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { Mailer } from "../../src/platform/Mailer.ts"
import { sendDueBriefings } from "../../src/worker/BriefingMail.ts"
import { expectError } from "../support/Expect.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const SIGNING_KEY = Redacted.make("briefing-settings-test-signing-key-0123456789")
const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
const PATH = "/app/api/alerts/email"
let counter = 0

const AppWithSink = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({ smtpUrl: Redacted.make(sink.url), secretKey: SECRET_KEY, signingKey: SIGNING_KEY })
})).pipe(Layer.provideMerge(SmtpSink.layer))

/** A worker's round for these accounts only, with the app's SMTP sink and signing key. */
const round = (accountIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sink = yield* SmtpSink
    const config = {
      ...readConfig({}),
      smtpUrl: Redacted.make(sink.url),
      secretKey: SECRET_KEY,
      signingKey: SIGNING_KEY
    }
    return yield* h.run(
      sendDueBriefings({ accountIds }).pipe(
        Effect.provide(Layer.mergeAll(Mailer.layer, Signing.layer)),
        Effect.provide(AppConfig.layer(config)),
        Effect.scoped
      )
    )
  })

/** An owner with a website in Paris, logged in to the dashboard: its read and write headers. */
const owner = (withWebsite = true) =>
  Effect.gen(function*() {
    const email = `settings-${Date.now().toString(36)}-${counter++}@example.test`
    const account = yield* h.run(createAccount({ name: "Settings shop", trialDays: 14 }))
    if (withWebsite) {
      yield* h.run(
        createProject({ accountId: account.id, name: "Shop", domain: "shop.example", timezone: "Europe/Paris" })
      )
    }
    const passwordHash = yield* hashPassword(PASSWORD)
    yield* h.run(Effect.flatMap(AuthRepo, (auth) =>
      auth.createUser({
        id: newUserId(),
        accountId: account.id,
        email,
        passwordHash,
        emailVerifiedAt: new Date(0),
        createdAt: new Date(0)
      })))
    yield* TestClock.adjust("1 minute")
    const login = yield* h.raw("POST", "/app/api/auth/login", {
      token: null,
      headers: ORIGIN,
      body: { email, password: PASSWORD, staySignedIn: true }
    })
    expect(login.status, login.text).toBe(200)
    const cookie = `sitehealth_session=${/sitehealth_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")![1]}`
    const write = { ...ORIGIN, cookie, "x-csrf-token": login.json.data.csrfToken as string }
    return { accountId: account.id, email, read: { cookie }, write }
  }).pipe(Effect.orDie)

const mailsTo = (email: string) => Effect.map(SmtpSink, (sink) => sink.messages.filter((m) => m.to.includes(email)))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const received = (email: string, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100 && (yield* mailsTo(email)).length < n; i++) yield* Effect.promise(() => sleep(50))
    return yield* mailsTo(email)
  })

layer(AppWithSink)("Morning email settings", (it) => {
  it.effect("the chosen hour and zone: 07:00 New York across the US spring DST change", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-06T12:00:00Z"))
      const o = yield* owner()
      const before = yield* h.raw("GET", PATH, { token: null, headers: o.read })
      expect(before.status, before.text).toBe(200)
      expect(before.json.data).toEqual({
        enabled: true,
        hour: 8,
        timezone: null,
        effectiveTimezone: "Europe/Paris",
        lastSent: null
      })
      const patched = yield* h.raw("PATCH", PATH, {
        token: null,
        headers: o.write,
        body: { hour: 7, timezone: "america/new_york" }
      })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.json.data).toMatchObject({ hour: 7, timezone: "America/New_York" })

      // Saturday 7 March, New York on UTC−5: 07:00 local is 12:00 UTC (Paris's 08:00, 07:00 UTC, does nothing).
      yield* TestClock.setTime(Date.parse("2026-03-07T07:00:00Z"))
      expect(yield* round([o.accountId])).toEqual([])
      yield* TestClock.setTime(Date.parse("2026-03-07T11:59:00Z"))
      expect(yield* round([o.accountId])).toEqual([])
      yield* TestClock.setTime(Date.parse("2026-03-07T12:00:00Z"))
      expect(yield* round([o.accountId])).toEqual([o.accountId])
      expect(yield* received(o.email, 1)).toHaveLength(1)
      // Sunday 8 March, clocks went forward: 07:00 local is 11:00 UTC.
      yield* TestClock.setTime(Date.parse("2026-03-08T10:59:00Z"))
      expect(yield* round([o.accountId])).toEqual([])
      yield* TestClock.setTime(Date.parse("2026-03-08T11:00:00Z"))
      expect(yield* round([o.accountId])).toEqual([o.accountId])
      const mails = yield* received(o.email, 2)
      expect(mails[1]!.raw).toMatch(/^Subject: Your morning briefing, 2026-03-08/m)
      const after = yield* h.raw("GET", PATH, { token: null, headers: o.read })
      expect(after.json.data.lastSent).toEqual({ localDate: "2026-03-08", at: "2026-03-08T11:00:00.000Z" })

      // Back to the website's zone.
      const reset = yield* h.raw("PATCH", PATH, { token: null, headers: o.write, body: { timezone: null } })
      expect(reset.json.data).toMatchObject({ hour: 7, timezone: null, effectiveTimezone: "Europe/Paris" })
    }))

  it.effect("off means no email; a bad zone or hour is a 400 and changes nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-05-04T05:00:00Z"))
      const o = yield* owner()
      const off = yield* h.raw("PATCH", PATH, { token: null, headers: o.write, body: { enabled: false } })
      expect(off.json.data).toMatchObject({ enabled: false, hour: 8 })
      yield* TestClock.setTime(Date.parse("2026-05-04T06:00:00Z")) // 08:00 in Paris (summer time)
      expect(yield* round([o.accountId])).toEqual([])

      const badZone = yield* h.raw("PATCH", PATH, {
        token: null,
        headers: o.write,
        body: { enabled: true, timezone: "Mars/Olympus" }
      })
      expectError(badZone, 400, "invalid_timezone")
      const badHour = yield* h.raw("PATCH", PATH, { token: null, headers: o.write, body: { hour: 24 } })
      expect(badHour.status).toBe(400)
      expect((yield* h.raw("GET", PATH, { token: null, headers: o.read })).json.data).toMatchObject({
        enabled: false,
        hour: 8,
        timezone: null
      })

      const on = yield* h.raw("PATCH", PATH, { token: null, headers: o.write, body: { enabled: true } })
      expect(on.json.data.enabled).toBe(true)
      expect(yield* round([o.accountId])).toEqual([o.accountId])
    }))

  it.effect("Send today's briefing now: once a day, and the worker does not send it again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-06-10T04:00:00Z")) // 06:00 in Paris
      const o = yield* owner()
      const first = yield* h.raw("POST", `${PATH}/send`, { token: null, headers: o.write })
      expect(first.status, first.text).toBe(200)
      expect(first.json.data).toMatchObject({ sent: true, localDate: "2026-06-10" })
      expect(yield* received(o.email, 1)).toHaveLength(1)
      const again = yield* h.raw("POST", `${PATH}/send`, { token: null, headers: o.write })
      expect(again.json.data).toMatchObject({ sent: false, localDate: "2026-06-10" })
      yield* TestClock.setTime(Date.parse("2026-06-10T06:00:00Z")) // 08:00 in Paris
      expect(yield* round([o.accountId])).toEqual([])
      yield* Effect.promise(() => sleep(200))
      expect(yield* mailsTo(o.email)).toHaveLength(1)

      // Without the session, or without the CSRF token: refused.
      const anonymous = yield* h.raw("POST", `${PATH}/send`, { token: null, headers: ORIGIN })
      expectError(anonymous, 401, "session_required")
      const forged = yield* h.raw("POST", `${PATH}/send`, {
        token: null,
        headers: { ...ORIGIN, cookie: o.read.cookie }
      })
      expectError(forged, 403, "csrf_token")

      // An account without a website has nothing to brief.
      const empty = yield* owner(false)
      expectError(yield* h.raw("POST", `${PATH}/send`, { token: null, headers: empty.write }), 409, "no_websites")
    }))
})
