/**
 * Accounts an owner can trust (docs/security.md): each rule as an attacker would try it, over /app/api, on
 * both stores.
 *
 * - single use that cannot be dodged: every re-spelling of a used link is refused, for each link kind;
 * - a password change (reset or account page) ends every older reset link, every other session, and is mailed;
 * - throttling without lockout: strangers failing from other addresses never keep the owner out; a pair's
 *   delays grow; an account under attack lets only a browser that logged in to it before try; Retry-After;
 * - passwords: 12 characters, common ones refused, change with the current one;
 * - two-factor sign-in with a fixed clock: TOTP, replay refused, recovery codes single use, throttled, mailed;
 * - transport: HSTS and `__Host-` with an https PUBLIC_URL, ASVS level 2 lifetimes, "Stay signed in".
 *
 * Requests name their client address with TEST_ADDRESS_HEADER (TestApp.ts): an in-process request has none.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { magicLinkFor } from "../../src/dashboard/Auth.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { Signing } from "../../src/dashboard/Links.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { FREE_FAILURES_PER_PAIR, MAX_FAILURES_PER_ACCOUNT } from "../../src/dashboard/Throttle.ts"
import { totpAt } from "../../src/dashboard/Totp.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { type CallResult, h, makeTestApp, TEST_ADDRESS_HEADER, TestApp } from "../support/TestApp.ts"

const ORIGIN = "http://localhost"
const PASSWORD = "correct horse battery"
const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))

const AppWithSink = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({ smtpUrl: Redacted.make(sink.url), secretKey: SECRET_KEY })
})).pipe(Layer.provideMerge(SmtpSink.layer))

let counter = 0
const uniqueEmail = (tag: string) => `${tag}-${Date.now().toString(36)}-${counter++}@example.test`
/** A fresh client address for each test, so one test's failures never throttle another's. */
const newAddress = () => `198.51.100.${(counter++ % 250) + 1}`

const cookieOf = (r: CallResult, name = "sitehealth_session"): string | null => {
  const match = new RegExp(`(?:^|[,;]\\s*)${name}=([^;,]*)`).exec(r.headers.get("set-cookie") ?? "")
  return match && match[1] !== "" ? match[1] : null
}

interface Client {
  readonly address: string
  /** The device cookie this browser holds (after a log-in). */
  device: string | null
}
const newClient = (): Client => ({ address: newAddress(), device: null })

const post = (client: Client, path: string, body: unknown, extra: Record<string, string> = {}) =>
  h.raw("POST", `/app/api${path}`, {
    token: null,
    headers: {
      origin: ORIGIN,
      [TEST_ADDRESS_HEADER]: client.address,
      ...(client.device === null ? {} : { cookie: `sitehealth_device=${client.device}` }),
      ...extra
    },
    body
  })

interface Session {
  readonly cookie: string
  readonly csrf: string
  readonly client: Client
}

/** Log-in's raw answer; remembers the device cookie the browser would keep. */
const tryLogIn = (client: Client, email: string, password = PASSWORD, extra: Record<string, unknown> = {}) =>
  Effect.tap(post(client, "/auth/login", { email, password, ...extra }), (r) =>
    Effect.sync(() => {
      const device = cookieOf(r, "sitehealth_device")
      if (device !== null) client.device = device
    }))

const sessionOf = (client: Client, r: CallResult): Session => {
  expect(r.status, r.text).toBe(200)
  return { cookie: cookieOf(r)!, csrf: r.json.data.csrfToken, client }
}

const logIn = (email: string, password = PASSWORD, client = newClient()) =>
  Effect.map(tryLogIn(client, email, password), (r) => sessionOf(client, r))

const call = (session: Session, method: string, path: string, body?: unknown) =>
  h.raw(method, `/app/api${path}`, {
    token: null,
    headers: {
      origin: ORIGIN,
      [TEST_ADDRESS_HEADER]: session.client.address,
      cookie: `sitehealth_session=${session.cookie}`,
      ...(method === "GET" ? {} : { "x-csrf-token": session.csrf })
    },
    ...(body === undefined ? {} : { body })
  })

const verifiedUser = (email = uniqueEmail("owner")) =>
  Effect.gen(function*() {
    const passwordHash = yield* hashPassword(PASSWORD)
    const user = yield* h.run(Effect.gen(function*() {
      const account = yield* createAccount({ name: email })
      return (yield* (yield* AuthRepo).createUser({
        id: newUserId(),
        accountId: account.id,
        email,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      }))!
    }))
    return { email, user }
  })

const tokenIn = (text: string, page: string) =>
  decodeURIComponent(new RegExp(`${page}\\?token=([^\\s]+)`).exec(text)![1])

/** The mail of a reset link just asked for (the n-th such mail to this address, 0-based). */
const resetLink = (email: string, nth = 0) =>
  Effect.gen(function*() {
    const sink = yield* SmtpSink
    expect((yield* post(newClient(), "/auth/password-reset", { email })).status).toBe(202)
    yield* sink.waitFor(email, /reset-password\?token=/)
    for (let i = 0; i < 100; i++) {
      const mails = sink.messages.filter((m) => m.to.includes(email) && /reset-password\?token=/.test(m.text))
      if (mails.length > nth) return tokenIn(mails[nth].text, "reset-password")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
    throw new Error(`no reset mail #${nth} to ${email}`)
  })

/**
 * Every other spelling of a token that Node's base64url decoder reads as the same bytes, or that a client might send.
 */
const respellings = (token: string): Array<string> => {
  const [payload, signature] = token.split(".")
  const flipUnusedBits = (part: string) => {
    // A 32-byte MAC is 43 characters: the last carries 4 bits of data and 2 unused ones.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    const last = alphabet.indexOf(part.at(-1)!)
    return `${part.slice(0, -1)}${alphabet[last ^ 1]}`
  }
  return [
    `${token}=`,
    `${token}==`,
    `${payload}=.${signature}`,
    ` ${token}`,
    `${token} `,
    `${token}\n`,
    `${payload}.${signature.slice(0, 10)} ${signature.slice(10)}`,
    `${payload}.${flipUnusedBits(signature)}`,
    `${payload}.${signature.replace(/-/g, "+").replace(/_/g, "/")}`,
    encodeURIComponent(`${token}=`),
    `${payload}.${signature.slice(0, -1)}%${signature.charCodeAt(signature.length - 1).toString(16).toUpperCase()}`
  ].filter((t) => t !== token)
}

const expectInvalidLink = (r: CallResult, what: string) => {
  expect(r.status, `${what}: ${r.text}`).toBe(400)
  expect(r.json.error.type, what).toBe("invalid_link")
}

const expect429 = (r: CallResult) => {
  expect(r.status, r.text).toBe(429)
  expect(r.json.error.type).toBe("too_many_attempts")
  const retryAfter = Number(r.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  return retryAfter
}

layer(AppWithSink, { timeout: 120_000 })("Dashboard security", (it) => {
  describe("single use that cannot be dodged", () => {
    it.effect("a used reset link is refused however it is re-spelled, and a fresh one only in its own spelling", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const token = yield* resetLink(email)
        // Before use: only the canonical spelling works (each re-spelling would be a second use of one link).
        for (const spelling of respellings(token)) {
          expectInvalidLink(
            yield* post(newClient(), "/auth/password-reset/confirm", {
              token: spelling,
              password: "attacker password one"
            }),
            JSON.stringify(spelling)
          )
        }
        expect(
          (yield* post(newClient(), "/auth/password-reset/confirm", { token, password: "the owner's new password" }))
            .status
        ).toBe(200)
        for (const spelling of [token, ...respellings(token)]) {
          expectInvalidLink(
            yield* post(newClient(), "/auth/password-reset/confirm", {
              token: spelling,
              password: "attacker password two"
            }),
            JSON.stringify(spelling)
          )
        }
        yield* logIn(email, "the owner's new password")
        expect((yield* tryLogIn(newClient(), email, "attacker password two")).status).toBe(401)
      }))

    it.effect("a used verification link is refused however it is re-spelled", () =>
      Effect.gen(function*() {
        const sink = yield* SmtpSink
        const email = uniqueEmail("verify")
        expect((yield* post(newClient(), "/auth/signup", { email, password: PASSWORD })).status).toBe(202)
        const token = tokenIn((yield* sink.waitFor(email, /verify-email\?token=/)).text, "verify-email")
        expect((yield* post(newClient(), "/auth/verify-email", { token })).status).toBe(200)
        for (const spelling of [token, ...respellings(token)]) {
          expectInvalidLink(
            yield* post(newClient(), "/auth/verify-email", { token: spelling }),
            JSON.stringify(spelling)
          )
        }
      }))

    it.effect("the demo's one-time link starts one session, whatever spelling or percent-encoding follows", () =>
      Effect.gen(function*() {
        const account = yield* h.run(createAccount({ name: "Demo account" }))
        const link = yield* h.run(
          magicLinkFor(account.id, uniqueEmail("demo"), "http://localhost").pipe(
            Effect.provide(Signing.layer),
            Effect.provide(AppConfig.layer(readConfig({})))
          )
        )
        const token = new URL(link).searchParams.get("token")!
        const open = (t: string, raw = false) =>
          h.raw("GET", `/app/api/auth/magic?token=${raw ? t : encodeURIComponent(t)}`, { token: null })
        expect((yield* open(token)).status).toBe(303)
        const again = [token, ...respellings(token)].map((t) => open(t))
        // Percent-encoding the letters of the token itself decodes to the very same token: used.
        again.push(open(token.replace(/[A-Za-z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`), true))
        for (const r of yield* Effect.all(again)) {
          expect(r.status, r.text).toBe(400)
          expect(r.headers.get("set-cookie")).toBeNull()
        }
      }))

    it.effect("links of one kind never work as another", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const reset = yield* resetLink(email)
        expectInvalidLink(yield* post(newClient(), "/auth/verify-email", { token: reset }), "reset as verify")
        expect((yield* h.raw("GET", `/app/api/auth/magic?token=${encodeURIComponent(reset)}`, { token: null })).status)
          .toBe(400)
        // The link still works as what it is.
        expect(
          (yield* post(newClient(), "/auth/password-reset/confirm", {
            token: reset,
            password: "the owner's new password"
          })).status
        ).toBe(200)
      }))
  })

  describe("a password change ends what came before it", () => {
    it.effect("using one reset link ends every other outstanding one, and every session; the owner is told by mail", () =>
      Effect.gen(function*() {
        const sink = yield* SmtpSink
        const { email } = yield* verifiedUser()
        const session = yield* logIn(email)
        const first = yield* resetLink(email, 0)
        const second = yield* resetLink(email, 1)
        expect(
          (yield* post(newClient(), "/auth/password-reset/confirm", {
            token: first,
            password: "the owner's new password"
          })).status
        ).toBe(200)
        expectInvalidLink(
          yield* post(newClient(), "/auth/password-reset/confirm", { token: second, password: "attacker password" }),
          "second link"
        )
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(401)
        const mail = yield* sink.waitFor(email, /password of your sitehealth account was reset/)
        expect(mail.text).toMatch(/If this was not you, reset your password now at:\s+http:\/\/\S+\/reset-password\s/)
      }))

    it.effect("a weak password leaves the reset link working for a better one", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const token = yield* resetLink(email)
        const weak = yield* post(newClient(), "/auth/password-reset/confirm", { token, password: "password1234" })
        expect(weak.status).toBe(400)
        expect(weak.json.error.type).toBe("weak_password")
        expect(
          (yield* post(newClient(), "/auth/password-reset/confirm", { token, password: "the owner's new password" }))
            .status
        ).toBe(200)
      }))

    it.effect("change password from the account page: needs the current one, ends the other sessions and reset links, mails the owner", () =>
      Effect.gen(function*() {
        const sink = yield* SmtpSink
        const { email } = yield* verifiedUser()
        const here = yield* logIn(email)
        const elsewhere = yield* logIn(email)
        const outstanding = yield* resetLink(email)
        const wrong = yield* call(here, "POST", "/security/password", {
          currentPassword: "not my password",
          newPassword: "a brand new passphrase"
        })
        expect(wrong.status).toBe(400)
        expect(wrong.json.error.type).toBe("wrong_password")
        const weak = yield* call(here, "POST", "/security/password", {
          currentPassword: PASSWORD,
          newPassword: "123456789012"
        })
        expect(weak.json.error.type).toBe("weak_password")
        expect(weak.json.error.issues[0].path).toBe("body.newPassword")
        const done = yield* call(here, "POST", "/security/password", {
          currentPassword: PASSWORD,
          newPassword: "a brand new passphrase"
        })
        expect(done.status, done.text).toBe(200)
        expect(done.json.data.sessionsEnded).toBe(1)
        expect((yield* call(here, "GET", "/auth/session")).status).toBe(200)
        expect((yield* call(elsewhere, "GET", "/auth/session")).status).toBe(401)
        expectInvalidLink(
          yield* post(newClient(), "/auth/password-reset/confirm", {
            token: outstanding,
            password: "attacker password"
          }),
          "older link"
        )
        expect((yield* tryLogIn(newClient(), email, PASSWORD)).status).toBe(401)
        yield* logIn(email, "a brand new passphrase")
        yield* sink.waitFor(email, /changed from the account page[\s\S]*If this was not you/)
      }))
  })

  describe("passwords", () => {
    it.effect("at least 12 characters, and common or breached passwords are refused with a clear message", () =>
      Effect.gen(function*() {
        const short = yield* post(newClient(), "/auth/signup", { email: uniqueEmail("short"), password: "elevenchars" })
        expect(short.status).toBe(400)
        expect(short.json.error.issues[0].path).toEqual(expect.stringContaining("password"))
        for (const password of ["password1234", "123456789012", "qwertyuiop12"]) {
          const r = yield* post(newClient(), "/auth/signup", { email: uniqueEmail("weak"), password })
          expect(r.status, password).toBe(400)
          expect(r.json.error.type).toBe("weak_password")
          expect(r.json.error.message, password).toMatch(/common|straight run|repeats/i)
        }
        expect((yield* post(newClient(), "/auth/signup", { email: uniqueEmail("fine"), password: PASSWORD })).status)
          .toBe(202)
      }))
  })

  describe("throttling without lockout", () => {
    it.effect("strangers failing from other addresses never keep the owner out", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        // Ten strangers, five wrong passwords each within a minute: 50 failures in all.
        for (let stranger = 0; stranger < 10; stranger++) {
          const client = newClient()
          for (let i = 0; i < 5; i++) {
            expect((yield* tryLogIn(client, email, `guess ${stranger}-${i} wrong`)).status).toBe(401)
          }
        }
        // The owner, from an address that has not been failing, with no device cookie: in at once.
        yield* logIn(email)
      }), 120_000) // 51 scrypt checks: 13 s beside another suite, and it passed 30 s on two cores at load 8

    it.effect("one address failing for an account waits longer after each failure; Retry-After says how long", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const attacker = newClient()
        for (let i = 0; i < FREE_FAILURES_PER_PAIR; i++) {
          expect((yield* tryLogIn(attacker, email, "wrong password!")).status).toBe(401)
        }
        const waits: Array<number> = []
        for (let i = 0; i < 3; i++) {
          // Refused before the password is checked, even the right one.
          const wait = expect429(yield* tryLogIn(attacker, email, PASSWORD))
          waits.push(wait)
          yield* TestClock.adjust(`${wait} seconds`)
          expect((yield* tryLogIn(attacker, email, "wrong password!")).status).toBe(401)
        }
        expect(waits).toEqual([30, 60, 120])
        // Meanwhile the owner elsewhere gets in, and so, once its wait is over, does the right password from there.
        yield* logIn(email)
        yield* TestClock.adjust("240 seconds")
        expect((yield* tryLogIn(attacker, email, PASSWORD)).status).toBe(200)
      }))

    it.effect(
      `past ${MAX_FAILURES_PER_ACCOUNT} failures an hour, only a browser that logged in before may try`,
      () =>
        Effect.gen(function*() {
          const { email } = yield* verifiedUser()
          const owner = newClient()
          yield* logIn(email, PASSWORD, owner)
          expect(owner.device).not.toBeNull()
          // A botnet: 25 addresses × 4 wrong passwords = the account's hourly budget.
          for (let bot = 0; bot < MAX_FAILURES_PER_ACCOUNT / 4; bot++) {
            const client = newClient()
            for (let i = 0; i < 4; i++) expect((yield* tryLogIn(client, email, `botnet guess ${i}`)).status).toBe(401)
          }
          // A fresh address is refused without a password check: the budget is spent.
          const fresh = yield* tryLogIn(newClient(), email, PASSWORD)
          const wait = expect429(fresh)
          expect(wait).toBeGreaterThan(3000)
          expect(fresh.json.error.message).toMatch(/browser that has logged in/)
          // The owner's browser (its device cookie), even from a new address, gets in.
          const travelling: Client = { address: newAddress(), device: owner.device }
          yield* logIn(email, PASSWORD, travelling)
          // Another account's device cookie does not count.
          const other = yield* verifiedUser()
          const otherBrowser = newClient()
          yield* logIn(other.email, PASSWORD, otherBrowser)
          expect429(yield* tryLogIn({ address: newAddress(), device: otherBrowser.device }, email, PASSWORD))
          // An hour later the budget is back.
          yield* TestClock.adjust("61 minutes")
          yield* logIn(email)
        }),
      120_000
    ) // 100+ password checks (scrypt, by design costly): slow on 2 cores when another suite runs beside

    it.effect("every 429 of /app/api carries Retry-After (sign-up's own limit too)", () =>
      Effect.gen(function*() {
        const client = newClient()
        const email = uniqueEmail("flood")
        let last: CallResult | null = null
        for (let i = 0; i < 6; i++) last = yield* post(client, "/auth/signup", { email, password: PASSWORD })
        expect429(last!)
      }))
  })

  describe("two-factor sign-in", () => {
    /** Turns 2FA on for a logged-in owner; the secret and the recovery codes. */
    const turnOn = (session: Session) =>
      Effect.gen(function*() {
        const setup = yield* call(session, "POST", "/security/two-factor/setup", { password: PASSWORD })
        expect(setup.status, setup.text).toBe(200)
        const { otpauthUri, qrSvg, secret } = setup.json.data
        expect(otpauthUri).toContain(`secret=${secret}`)
        expect(qrSvg).toContain("<svg")
        const code = totpAt(secret, yield* h.now)
        const enabled = yield* call(session, "POST", "/security/two-factor/enable", { code })
        expect(enabled.status, enabled.text).toBe(200)
        const codes: Array<string> = enabled.json.data.recoveryCodes
        expect(new Set(codes).size).toBe(10)
        return { secret: secret as string, codes }
      })

    it.effect("TOTP with a fixed clock: log-in asks for a code, a code works once, recovery codes work once, mails say so", () =>
      Effect.gen(function*() {
        const sink = yield* SmtpSink
        const { email } = yield* verifiedUser()
        const session = yield* logIn(email)
        const { codes, secret } = yield* turnOn(session)
        yield* sink.waitFor(email, /Two-factor sign-in was turned on/)
        const status = (yield* call(session, "GET", "/security/two-factor")).json.data
        expect(status).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })

        yield* TestClock.adjust("1 minute")
        const client = newClient()
        const first = yield* tryLogIn(client, email)
        expect(first.status, first.text).toBe(200)
        expect(first.json.data).toMatchObject({ secondFactorRequired: true })
        expect(cookieOf(first)).toBeNull()
        const challenge: string = first.json.data.challenge
        const code = totpAt(secret, yield* h.now)
        const wrong = yield* post(client, "/auth/login/second-factor", {
          challenge,
          code: code === "000000" ? "111111" : "000000"
        })
        expect(wrong.status).toBe(401)
        expect(wrong.json.error.type).toBe("invalid_code")
        const ok = yield* post(client, "/auth/login/second-factor", { challenge, code })
        expect(ok.status, ok.text).toBe(200)
        expect(cookieOf(ok)).not.toBeNull()
        // The challenge and the code were used up: replaying either fails.
        const nextCode = totpAt(secret, (yield* h.now) + 30_000)
        expectInvalidLink(
          yield* post(client, "/auth/login/second-factor", { challenge, code: nextCode }),
          "used challenge"
        )
        const again = (yield* tryLogIn(newClient(), email)).json.data.challenge
        expect((yield* post(newClient(), "/auth/login/second-factor", { challenge: again, code })).json.error.type)
          .toBe("invalid_code")

        // A recovery code, typed loosely, works once.
        const recovery = codes[0].toUpperCase().replace("-", " ")
        expect((yield* post(newClient(), "/auth/login/second-factor", { challenge: again, code: recovery })).status)
          .toBe(200)
        yield* sink.waitFor(email, /recovery codes was just used[\s\S]*9 of them are left/)
        const third = (yield* tryLogIn(newClient(), email)).json.data.challenge
        expect((yield* post(newClient(), "/auth/login/second-factor", { challenge: third, code: codes[0] })).status)
          .toBe(401)
        expect((yield* call(session, "GET", "/security/two-factor")).json.data.recoveryCodesLeft).toBe(9)

        // A challenge lives five minutes.
        yield* TestClock.adjust("6 minutes")
        expectInvalidLink(
          yield* post(newClient(), "/auth/login/second-factor", {
            challenge: third,
            code: totpAt(secret, yield* h.now)
          }),
          "expired challenge"
        )

        // Off, with the password and a code: log-in answers a session again, and the owner is told.
        const off = yield* call(session, "POST", "/security/two-factor/disable", {
          password: PASSWORD,
          code: totpAt(secret, yield* h.now)
        })
        expect(off.status, off.text).toBe(200)
        expect(off.json.data.enabled).toBe(false)
        yield* sink.waitFor(email, /Two-factor sign-in was turned off/)
        yield* logIn(email)
      }))

    it.effect("the second step is throttled as log-in is, and a password change ends an outstanding challenge", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const session = yield* logIn(email)
        const { secret } = yield* turnOn(session)
        yield* TestClock.adjust("1 minute")
        const attacker = newClient()
        const challenge = (yield* tryLogIn(attacker, email)).json.data.challenge
        const good = totpAt(secret, yield* h.now)
        const bad = good === "123456" ? "654321" : "123456"
        for (let i = 0; i < FREE_FAILURES_PER_PAIR; i++) {
          expect((yield* post(attacker, "/auth/login/second-factor", { challenge, code: bad })).status).toBe(401)
        }
        expect429(yield* post(attacker, "/auth/login/second-factor", { challenge, code: good }))

        const pending = (yield* tryLogIn(newClient(), email)).json.data.challenge
        yield* TestClock.adjust("1 minute")
        const changed = yield* call(session, "POST", "/security/password", {
          currentPassword: PASSWORD,
          newPassword: "a brand new passphrase"
        })
        expect(changed.status, changed.text).toBe(200)
        expectInvalidLink(
          yield* post(newClient(), "/auth/login/second-factor", {
            challenge: pending,
            code: totpAt(secret, yield* h.now)
          }),
          "challenge after a password change"
        )
      }))

    it.effect("setup needs the password; enabling needs a right code; new recovery codes replace the old ones", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const session = yield* logIn(email)
        const noPassword = yield* call(session, "POST", "/security/two-factor/setup", { password: "not my password" })
        expect(noPassword.json.error.type).toBe("wrong_password")
        const setup = (yield* call(session, "POST", "/security/two-factor/setup", { password: PASSWORD })).json.data
        const wrong = yield* call(session, "POST", "/security/two-factor/enable", {
          code: totpAt(setup.secret, (yield* h.now) + 120_000)
        })
        expect(wrong.json.error.type).toBe("invalid_code")
        expect((yield* call(session, "GET", "/security/two-factor")).json.data.enabled).toBe(false)
        const { codes, secret } = yield* turnOn(session)
        expect((yield* call(session, "POST", "/security/two-factor/setup", { password: PASSWORD })).status).toBe(409)
        yield* TestClock.adjust("1 minute")
        const fresh = yield* call(session, "POST", "/security/two-factor/recovery-codes", {
          password: PASSWORD,
          code: totpAt(secret, yield* h.now)
        })
        expect(fresh.status, fresh.text).toBe(200)
        const challenge = (yield* tryLogIn(newClient(), email)).json.data.challenge
        expect((yield* post(newClient(), "/auth/login/second-factor", { challenge, code: codes[1] })).status).toBe(401)
        expect(
          (yield* post(newClient(), "/auth/login/second-factor", { challenge, code: fresh.json.data.recoveryCodes[1] }))
            .status
        ).toBe(200)
      }))

    it.effect("the secret is stored encrypted, the recovery codes as hashes", () =>
      Effect.gen(function*() {
        const { email, user } = yield* verifiedUser()
        const session = yield* logIn(email)
        const { codes, secret } = yield* turnOn(session)
        const stored = yield* h.run(Effect.flatMap(AuthRepo, (repo) => repo.twoFactorOf(user.id)))
        expect(stored?.secret).not.toBeNull()
        expect(Buffer.from(stored!.secret!).toString("latin1")).not.toContain(secret)
        expect(JSON.stringify(stored)).not.toContain(codes[0])
      }))
  })

  describe("transport and sessions", () => {
    it.effect("default lifetimes: 30 minutes idle and 12 hours at most, in a cookie that ends with the browser", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const client = newClient()
        const r = yield* tryLogIn(client, email)
        const session = sessionOf(client, r)
        expect(r.headers.get("set-cookie")).toMatch(/sitehealth_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax(,|$)/)
        expect(r.json.data.staySignedIn).toBe(false)
        yield* TestClock.adjust("29 minutes")
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(200)
        yield* TestClock.adjust("31 minutes")
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(401)

        const busy = yield* logIn(email)
        for (let i = 0; i < 24; i++) {
          yield* TestClock.adjust("29 minutes")
          expect((yield* call(busy, "GET", "/auth/session")).status, `after ${(i + 1) * 29} minutes`).toBe(
            i < 24 && (i + 1) * 29 < 720 ? 200 : 401
          )
        }
        yield* TestClock.adjust("29 minutes")
        expect((yield* call(busy, "GET", "/auth/session")).status).toBe(401)
      }))

    it.effect("\"Stay signed in\": 14 days, idle or not, in a persistent cookie", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        const client = newClient()
        const r = yield* tryLogIn(client, email, PASSWORD, { staySignedIn: true })
        const session = sessionOf(client, r)
        expect(r.headers.get("set-cookie")).toMatch(
          /sitehealth_session=[^;]+; Max-Age=1209600; Path=\/; HttpOnly; SameSite=Lax/
        )
        expect(r.json.data.staySignedIn).toBe(true)
        yield* TestClock.adjust("13 days")
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(200)
        yield* TestClock.adjust("1 day")
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(401)
      }))

    it.effect("with an https PUBLIC_URL: HSTS on every answer, a __Host- cookie, and the plain cookie refused", () =>
      Effect.gen(function*() {
        const app = yield* makeTestApp({ publicUrl: "https://health.example.com", secretKey: SECRET_KEY })
        const email = uniqueEmail("https")
        const passwordHash = yield* hashPassword(PASSWORD)
        yield* app.run(Effect.gen(function*() {
          const account = yield* createAccount({ name: email })
          yield* (yield* AuthRepo).createUser({
            id: newUserId(),
            accountId: account.id,
            email,
            passwordHash,
            emailVerifiedAt: new Date(),
            createdAt: new Date()
          })
        }))
        const r = yield* app.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: { origin: "https://health.example.com" },
          body: { email, password: PASSWORD }
        })
        expect(r.status, r.text).toBe(200)
        expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains")
        const setCookie = r.headers.get("set-cookie")!
        expect(setCookie).toMatch(/^__Host-sitehealth_session=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax/)
        expect(setCookie).toMatch(
          /__Host-sitehealth_device=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Strict/
        )
        expect(setCookie).not.toMatch(/Domain=/)
        const secret = /__Host-sitehealth_session=([^;]+)/.exec(setCookie)![1]
        expect(
          (yield* app.raw("GET", "/app/api/auth/session", {
            token: null,
            headers: { cookie: `__Host-sitehealth_session=${secret}` }
          })).status
        ).toBe(200)
        expect(
          (yield* app.raw("GET", "/app/api/auth/session", {
            token: null,
            headers: { cookie: `sitehealth_session=${secret}` }
          })).status
        ).toBe(401)
        expect((yield* app.raw("GET", "/healthz", { token: null })).headers.get("strict-transport-security")).toMatch(
          /max-age=/
        )
        // Over plain http, none of it.
        expect((yield* h.raw("GET", "/healthz", { token: null })).headers.get("strict-transport-security")).toBeNull()
      }))
  })
})
