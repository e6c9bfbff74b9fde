/**
 * The morning briefing email, on both stores, to a local SMTP sink: at 08:00 in the owner's time zone across the
 * spring DST change, one email per account over all its websites (HTML and text, each website's page linked), the
 * List-Unsubscribe / One-Click headers, an unsubscribe link that works without logging in (and not for another
 * account), and once a day even with several workers running the same minute.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount, createProject } from "../../src/accounts/Provisioning.ts"
import { BriefingMailRepo } from "../../src/alerts/BriefingMailRepo.ts"
import { AuthRepo } from "../../src/dashboard/AuthRepo.ts"
import { Signing } from "../../src/dashboard/Links.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { Mailer } from "../../src/platform/Mailer.ts"
import { sendDueBriefings } from "../../src/worker/BriefingMail.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const SIGNING_KEY = Redacted.make("briefing-mail-test-signing-key-0123456789")
let counter = 0

const AppWithSink = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({
    smtpUrl: Redacted.make(sink.url),
    secretKey: SECRET_KEY,
    signingKey: SIGNING_KEY,
    publicUrl: "https://health.example.com"
  })
})).pipe(Layer.provideMerge(SmtpSink.layer))

/** A worker's round, with the app's settings (same SMTP sink, same signing key), for these accounts only. */
const round = (accountIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sink = yield* SmtpSink
    const config = {
      ...readConfig({}),
      smtpUrl: Redacted.make(sink.url),
      secretKey: SECRET_KEY,
      signingKey: SIGNING_KEY,
      publicUrl: "https://health.example.com"
    }
    return yield* h.run(
      sendDueBriefings({ accountIds }).pipe(
        Effect.provide(Layer.mergeAll(Mailer.layer, Signing.layer)),
        Effect.provide(AppConfig.layer(config)),
        Effect.scoped
      )
    )
  })

/** An owner in Paris with two websites. */
const owner = () =>
  Effect.gen(function*() {
    const email = `owner-${Date.now().toString(36)}-${counter++}@example.test`
    const account = yield* h.run(createAccount({ name: "Paris shop", trialDays: 14 }))
    const sites = []
    for (const [name, domain] of [["Shop", "shop.example"], ["Blog", "blog.example"]]) {
      sites.push(yield* h.run(createProject({ accountId: account.id, name, domain, timezone: "Europe/Paris" })))
    }
    yield* h.run(Effect.flatMap(AuthRepo, (auth) =>
      auth.createUser({
        id: `usr_${account.id.slice(4)}`,
        accountId: account.id,
        email,
        passwordHash: null,
        emailVerifiedAt: new Date(0),
        createdAt: new Date(0)
      })))
    return { accountId: account.id, email, sites }
  }).pipe(Effect.orDie)

const mailsTo = (email: string) => Effect.map(SmtpSink, (sink) => sink.messages.filter((m) => m.to.includes(email)))

/** Waits (real time) for the sink to have received `n` mails to `email`. */
const received = (email: string, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100 && (yield* mailsTo(email)).length < n; i++) yield* Effect.promise(() => sleep(50))
    return yield* mailsTo(email)
  })
/** The List-Unsubscribe header's URL (the header may be folded onto a second line). */
const unsubscribeLink = (raw: string) => /^List-Unsubscribe:\s*<([^>]+)>/m.exec(raw)![1]!
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

layer(AppWithSink)("Morning briefing email", (it) => {
  it.effect(
    "08:00 in the owner's time zone, across the spring DST change; once a day with three workers",
    () =>
      Effect.gen(function*() {
        const { accountId, email, sites } = yield* owner()
        // Saturday 28 March 2026, Paris on UTC+1: 08:00 local is 07:00 UTC.
        yield* TestClock.setTime(Date.parse("2026-03-28T06:59:00Z"))
        expect(yield* round([accountId])).toEqual([])
        yield* TestClock.setTime(Date.parse("2026-03-28T07:00:00Z"))
        expect(yield* round([accountId])).toEqual([accountId])
        expect(yield* received(email, 1)).toHaveLength(1)
        // Later that day: nothing more.
        yield* TestClock.setTime(Date.parse("2026-03-28T15:00:00Z"))
        expect(yield* round([accountId])).toEqual([])
        // Sunday 29 March, clocks went forward at 02:00: 08:00 local is now 06:00 UTC.
        yield* TestClock.setTime(Date.parse("2026-03-29T05:59:00Z"))
        expect(yield* round([accountId])).toEqual([])
        yield* TestClock.setTime(Date.parse("2026-03-29T06:00:00Z"))
        // Three workers in the same minute: one email.
        const sent = yield* Effect.all([round([accountId]), round([accountId]), round([accountId])], {
          concurrency: 3
        })
        expect(sent.flat()).toEqual([accountId])
        const mails = yield* received(email, 2)
        yield* Effect.promise(() => sleep(200))
        expect(yield* mailsTo(email)).toHaveLength(2)

        // One email over both websites, HTML and text, each website's page linked, the unsubscribe headers.
        const mail = mails[1]!
        expect(mail.raw).toMatch(/^Subject: Your morning briefing, 2026-03-29/m)
        expect(mail.raw).toMatch(/multipart\/alternative/)
        expect(mail.raw).toMatch(/text\/html/)
        expect(mail.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m)
        const unsubscribe = unsubscribeLink(mail.raw)
        expect(unsubscribe).toMatch(/^https:\/\/health\.example\.com\/app\/api\/alerts\/unsubscribe\?account=acc_/)
        // Both parts are quoted-printable: their soft line breaks joined, the links read whole.
        const body = mail.raw.replace(/=\r?\n/g, "")
        for (const site of sites) {
          expect(body.match(new RegExp(`https://health\\.example\\.com/websites/${site.id}`, "g"))?.length).toBe(2)
        }
        expect(body).toMatch(/Shop \(shop\.example\)/)
        expect(body).toMatch(/Blog \(blog\.example\)/)
        expect(body).toMatch(/<a href=3D"https:\/\/health\.example\.com\/app\/api\/alerts\/unsubscribe/)
      }),
    60_000
  )

  it.effect(
    "the unsubscribe link works without logging in, for its own account only; then no more email",
    () =>
      Effect.gen(function*() {
        const { accountId, email } = yield* owner()
        const other = yield* owner()
        yield* TestClock.setTime(Date.parse("2026-03-30T06:30:00Z"))
        expect(yield* round([accountId])).toEqual([accountId])
        const [mail] = yield* received(email, 1)
        const link = unsubscribeLink(mail!.raw)
        const path = link.replace("https://health.example.com", "")
        // Its token is not another account's; a changed token is refused.
        const forged = path.replace(accountId, other.accountId)
        expect((yield* h.raw("POST", forged, { token: null })).status).toBe(400)
        expect((yield* h.raw("POST", path.slice(0, -2), { token: null })).status).toBe(400)
        // GET shows a page with a button (a link scanner unsubscribes nobody); POST, as one-click clients send it, acts.
        const shown = yield* h.raw("GET", path, { token: null })
        expect([shown.status, shown.text]).toEqual([200, expect.stringContaining("<form method=\"post\"")])
        expect(yield* h.run(Effect.flatMap(BriefingMailRepo, (r) => r.emailOn(accountId)))).toBe(true)
        const done = yield* h.raw("POST", path, {
          token: null,
          headers: { "content-type": "application/x-www-form-urlencoded" },
          rawBody: "List-Unsubscribe=One-Click"
        })
        expect(done.status, done.text).toBe(200)
        expect(yield* h.run(Effect.flatMap(BriefingMailRepo, (r) => r.emailOn(accountId)))).toBe(false)
        expect(yield* h.run(Effect.flatMap(BriefingMailRepo, (r) => r.emailOn(other.accountId)))).toBe(true)
        yield* TestClock.setTime(Date.parse("2026-03-31T06:30:00Z"))
        expect(yield* round([accountId, other.accountId])).toEqual([other.accountId])
      }),
    60_000
  )
})
