/**
 * The dashboard API (/app/api): the journey from sign-up to a deleted website, and its security — CSRF,
 * session fixation, cookie flags, throttling, no user enumeration. The authorization matrix (logged out,
 * another account, expired session, CSRF, the wall between session cookies and bearer tokens) is
 * DashboardAuthorizationMatrix.test.ts, generated from the contract.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { magicLinkFor } from "../../src/dashboard/Auth.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { Signing } from "../../src/dashboard/Links.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { FREE_FAILURES_PER_PAIR } from "../../src/dashboard/Throttle.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { h, makeTestApp, TestApp } from "../support/TestApp.ts"

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"

const AppWithSink = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({ smtpUrl: Redacted.make(sink.url) })
})).pipe(Layer.provideMerge(SmtpSink.layer))

let counter = 0
const uniqueEmail = (tag: string) => `${tag}-${Date.now().toString(36)}-${counter++}@example.test`

/** Moves the test clock to the next minute: a fresh per-address throttle window (all requests share one address). */
const nextWindow = TestClock.adjust("1 minute")

const cookieOf = (setCookie: string | null): string | null => {
  const match = /sitehealth_session=([^;]*)/.exec(setCookie ?? "")
  return match && match[1] !== "" ? match[1] : null
}

interface Session {
  readonly cookie: string
  readonly csrf: string
  readonly setCookie: string
  /** Headers of a state-changing request of this session. */
  readonly headers: Record<string, string>
  /** Headers of a read. */
  readonly read: Record<string, string>
}

const logIn = (email: string, password = PASSWORD) =>
  Effect.gen(function*() {
    yield* nextWindow
    const r = yield* h.raw("POST", "/app/api/auth/login", { token: null, headers: ORIGIN, body: { email, password } })
    expect(r.status, r.text).toBe(200)
    const setCookie = r.headers.get("set-cookie") ?? ""
    const cookie = cookieOf(setCookie)!
    const csrf: string = r.json.data.csrfToken
    return {
      cookie,
      csrf,
      setCookie,
      headers: { ...ORIGIN, cookie: `sitehealth_session=${cookie}`, "x-csrf-token": csrf },
      read: { cookie: `sitehealth_session=${cookie}` }
    } satisfies Session
  })

/** A verified dashboard user with a fresh account (made directly, without the mail round trip). */
const verifiedUser = (email = uniqueEmail("user")) =>
  Effect.gen(function*() {
    const passwordHash = yield* hashPassword(PASSWORD)
    const user = yield* h.run(Effect.gen(function*() {
      const account = yield* createAccount({ name: email })
      const repo = yield* AuthRepo
      return (yield* repo.createUser({
        id: newUserId(),
        accountId: account.id,
        email,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      }))!
    }))
    return { email, user, session: yield* logIn(email) }
  })

const call = (session: Session, method: string, path: string, body?: unknown) =>
  h.raw(method, `/app/api${path}`, {
    token: null,
    headers: method === "GET" ? session.read : session.headers,
    ...(body === undefined ? {} : { body })
  })

const newWebsite = (session: Session, domain = `shop-${counter++}.example.com`) =>
  Effect.map(
    call(session, "POST", "/websites", { name: "Shop", domain, timezone: "Europe/Paris", currency: "EUR" }),
    (r) => {
      expect(r.status, r.text).toBe(201)
      return r.json.data as { id: string; domain: string }
    }
  )

layer(AppWithSink, { timeout: 60_000 })("Dashboard API", (it) => {
  it.effect("journey: sign up → verify by mail → log in → website → token → /api/v1 → revoke → 401 → delete website", () =>
    Effect.gen(function*() {
      const sink = yield* SmtpSink
      const email = uniqueEmail("journey")
      yield* nextWindow
      const signUp = yield* h.raw("POST", "/app/api/auth/signup", {
        token: null,
        headers: ORIGIN,
        body: { email, password: PASSWORD }
      })
      expect(signUp.status, signUp.text).toBe(202)

      // Not verified yet: the right password is refused with 403 email_not_verified.
      yield* nextWindow
      const early = yield* h.raw("POST", "/app/api/auth/login", {
        token: null,
        headers: ORIGIN,
        body: { email, password: PASSWORD }
      })
      expect(early.status).toBe(403)
      expect(early.json.error.type).toBe("email_not_verified")

      const mail = yield* sink.waitFor(email, /verify-email\?token=/)
      const token = decodeURIComponent(/verify-email\?token=([^\s]+)/.exec(mail.text)![1])
      const verified = yield* h.raw("POST", "/app/api/auth/verify-email", {
        token: null,
        headers: ORIGIN,
        body: { token }
      })
      expect(verified.status, verified.text).toBe(200)
      expect(verified.json.data).toMatchObject({ email, emailVerified: true })
      // Single use.
      const again = yield* h.raw("POST", "/app/api/auth/verify-email", {
        token: null,
        headers: ORIGIN,
        body: { token }
      })
      expect(again.status).toBe(400)
      expect(again.json.error.type).toBe("invalid_link")

      const session = yield* logIn(email)
      const me = yield* call(session, "GET", "/auth/session")
      expect(me.json.data.user).toMatchObject({ email, emailVerified: true })
      const account = yield* call(session, "GET", "/account")
      expect(account.json.data).toMatchObject({ entitlement: "trial", trialDaysLeft: 14 })

      const site = yield* newWebsite(session, "journey.example.com")
      const listed = yield* call(session, "GET", "/websites")
      expect(listed.json.data.websites.map((w: any) => w.id)).toEqual([site.id])
      const renamed = yield* call(session, "PATCH", `/websites/${site.id}`, { name: "Renamed" })
      expect(renamed.status).toBe(200)
      expect(renamed.json.data.name).toBe("Renamed")

      const created = yield* call(session, "POST", "/tokens", {
        name: "reporting",
        websites: [site.id],
        permissions: ["projects:read"]
      })
      expect(created.status, created.text).toBe(201)
      const secret: string = created.json.data.secret
      expect(secret).toMatch(/^svc_/)
      expect(created.json.data.token).toMatchObject({
        name: "reporting",
        websites: [site.id],
        permissions: ["projects:read"],
        status: "active"
      })
      const tokens = yield* call(session, "GET", "/tokens")
      expect(tokens.text).not.toContain(secret)
      expect(tokens.json.data.tokens[0]).toMatchObject({ id: created.json.data.token.id, lastUsedAt: null })

      const projects = yield* h.raw("GET", "/api/v1/projects", { token: secret })
      expect(projects.status).toBe(200)
      expect(projects.json.data.projects.map((p: any) => p.id)).toEqual([site.id])

      const revoked = yield* call(session, "DELETE", `/tokens/${created.json.data.token.id}`)
      expect(revoked.status, revoked.text).toBe(200)
      expect(revoked.json.data.token.status).toBe("revoked")
      expect((yield* h.raw("GET", "/api/v1/projects", { token: secret })).status).toBe(401)
      expect((yield* call(session, "DELETE", `/tokens/${created.json.data.token.id}`)).status).toBe(409)

      const wrong = yield* call(session, "DELETE", `/websites/${site.id}`, { confirmDomain: "other.example.com" })
      expect(wrong.status).toBe(400)
      expect(wrong.json.error.type).toBe("confirmation_mismatch")
      const deleted = yield* call(session, "DELETE", `/websites/${site.id}`, { confirmDomain: "journey.example.com" })
      expect(deleted.status, deleted.text).toBe(200)
      expect(deleted.json.data).toMatchObject({ deleted: true, id: site.id, tokensNarrowed: 1 })
      expect((yield* call(session, "GET", "/websites")).json.data.websites).toEqual([])
    }))

  it.effect("deleting a website takes it out of every token's scope; a token scoped to it alone reaches nothing", () =>
    Effect.gen(function*() {
      const { session } = yield* verifiedUser()
      const a = yield* newWebsite(session)
      const b = yield* newWebsite(session)
      const onlyA =
        (yield* call(session, "POST", "/tokens", { name: "a", websites: [a.id], permissions: ["projects:read"] })).json
          .data
      const both = (yield* call(session, "POST", "/tokens", {
        name: "ab",
        websites: [a.id, b.id],
        permissions: ["projects:read"]
      })).json.data
      expect(
        (yield* call(session, "DELETE", `/websites/${a.id}`, { confirmDomain: a.domain })).json.data.tokensNarrowed
      ).toBe(2)
      const listed = (yield* call(session, "GET", "/tokens")).json.data.tokens
      expect(listed.find((t: any) => t.id === onlyA.token.id).websites).toEqual([])
      expect(listed.find((t: any) => t.id === both.token.id).websites).toEqual([b.id])
      const viaOnlyA = yield* h.raw("GET", "/api/v1/projects", { token: onlyA.secret })
      expect(viaOnlyA.json.data.projects).toEqual([])
      expect((yield* h.raw("GET", `/api/v1/projects/${a.id}/health`, { token: onlyA.secret })).status).toBe(404)
      expect((yield* h.raw("GET", "/api/v1/projects", { token: both.secret })).json.data.projects.map((p: any) => p.id))
        .toEqual([b.id])
    }))

  describe("CSRF", () => {
    it.effect("a state-changing request without the CSRF token, with a wrong one, or from another origin is refused", () =>
      Effect.gen(function*() {
        const { session } = yield* verifiedUser()
        const body = { name: "Shop", domain: "csrf.example.com", timezone: "UTC", currency: "USD" }
        const noToken = yield* h.raw("POST", "/app/api/websites", {
          token: null,
          headers: { ...ORIGIN, cookie: session.read.cookie },
          body
        })
        expect(noToken.status).toBe(403)
        expect(noToken.json.error.type).toBe("csrf_token")
        const wrongToken = yield* h.raw("POST", "/app/api/websites", {
          token: null,
          headers: { ...session.headers, "x-csrf-token": "x".repeat(43) },
          body
        })
        expect(wrongToken.status).toBe(403)
        const crossSite = yield* h.raw("POST", "/app/api/websites", {
          token: null,
          headers: { ...session.headers, origin: "https://evil.example" },
          body
        })
        expect(crossSite.status).toBe(403)
        expect(crossSite.json.error.type).toBe("csrf_origin")
        const noOrigin = yield* h.raw("POST", "/app/api/websites", {
          token: null,
          headers: { cookie: session.read.cookie, "x-csrf-token": session.csrf },
          body
        })
        expect(noOrigin.status).toBe(403)
        // Log-in CSRF too: a cross-site login form is refused before any password check.
        const crossLogin = yield* h.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: { origin: "https://evil.example" },
          body: { email: "a@b.cd", password: "x" }
        })
        expect(crossLogin.status).toBe(403)
        expect((yield* call(session, "GET", "/websites")).json.data.websites).toEqual([])
      }))
  })

  describe("sessions", () => {
    it.effect("a new session id at every log-in, even when the request carries one (no fixation)", () =>
      Effect.gen(function*() {
        const { email, session } = yield* verifiedUser()
        yield* nextWindow
        const r = yield* h.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: { ...ORIGIN, cookie: session.read.cookie },
          body: { email, password: PASSWORD }
        })
        const second = cookieOf(r.headers.get("set-cookie"))
        expect(second).not.toBeNull()
        expect(second).not.toBe(session.cookie)
        expect(r.json.data.sessionId).not.toBe((yield* call(session, "GET", "/auth/session")).json.data.sessionId)
      }))

    it.effect("cookie flags: HttpOnly, SameSite=Lax, Path=/, no Secure over http; a browser-session cookie unless the owner stays signed in", () =>
      Effect.gen(function*() {
        const { session } = yield* verifiedUser()
        expect(session.setCookie).toMatch(/HttpOnly/)
        expect(session.setCookie).toMatch(/SameSite=Lax/)
        expect(session.setCookie).toMatch(/Path=\//)
        expect(session.setCookie).toMatch(/^sitehealth_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax,/)
        expect(session.setCookie).not.toMatch(/Secure/)
        expect(session.cookie.length).toBeGreaterThanOrEqual(43)
      }))

    it.effect("Secure when PUBLIC_URL is https", () =>
      Effect.gen(function*() {
        const app = yield* makeTestApp({ publicUrl: "https://health.example.com" })
        const email = uniqueEmail("secure")
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
        expect(r.headers.get("set-cookie")).toMatch(/; Secure/)
      }))

    it.effect("the session store keeps only the SHA-256 of the cookie", () =>
      Effect.gen(function*() {
        const { session, user } = yield* verifiedUser()
        const live = yield* h.run(Effect.gen(function*() {
          const repo = yield* AuthRepo
          return yield* repo.listSessions(user.id, new Date(yield* h.now))
        }))
        expect(live.length).toBe(1)
        expect(JSON.stringify(live)).not.toContain(session.cookie)
      }))

    it.effect("idle and absolute expiry end a session: 401", () =>
      Effect.gen(function*() {
        const { session } = yield* verifiedUser()
        yield* TestClock.adjust("29 minutes")
        expect((yield* call(session, "GET", "/auth/session")).status).toBe(200)
        yield* TestClock.adjust("31 minutes")
        const idle = yield* call(session, "GET", "/auth/session")
        expect(idle.status).toBe(401)
        expect(idle.json.error.type).toBe("session_required")

        const { session: busy } = yield* verifiedUser()
        // 25 × 29 min ≈ 12.1 hours: every request within the idle limit, the 12-hour absolute limit passes anyway.
        for (let i = 0; i < 24; i++) {
          yield* TestClock.adjust("29 minutes")
          expect((yield* call(busy, "GET", "/auth/session")).status).toBe(200)
        }
        yield* TestClock.adjust("29 minutes")
        expect((yield* call(busy, "GET", "/auth/session")).status).toBe(401)
      }))

    it.effect("list, revoke one, log out the others, log out", () =>
      Effect.gen(function*() {
        const { email, session: first } = yield* verifiedUser()
        const second = yield* logIn(email)
        const third = yield* logIn(email)
        const listed = (yield* call(first, "GET", "/auth/sessions")).json.data.sessions
        expect(listed.length).toBe(3)
        expect(listed.filter((s: any) => s.current).length).toBe(1)
        const secondId = (yield* call(second, "GET", "/auth/session")).json.data.sessionId
        expect((yield* call(first, "DELETE", `/auth/sessions/${secondId}`)).status).toBe(200)
        expect((yield* call(second, "GET", "/auth/session")).status).toBe(401)
        expect((yield* call(first, "POST", "/auth/sessions/revoke-others")).json.data.revoked).toBe(1)
        expect((yield* call(third, "GET", "/auth/session")).status).toBe(401)
        const out = yield* call(first, "POST", "/auth/logout")
        expect(out.status).toBe(200)
        expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/)
        expect((yield* call(first, "GET", "/auth/session")).status).toBe(401)
      }))
  })

  describe("throttling and enumeration", () => {
    it.effect(`log-in: after ${FREE_FAILURES_PER_PAIR} failures for an account from one address, that address waits — even with the right password`, () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        yield* nextWindow
        for (let i = 0; i < FREE_FAILURES_PER_PAIR; i++) {
          const r = yield* h.raw("POST", "/app/api/auth/login", {
            token: null,
            headers: ORIGIN,
            body: { email, password: "wrong password" }
          })
          expect(r.status).toBe(401)
        }
        const blocked = yield* h.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: ORIGIN,
          body: { email, password: PASSWORD }
        })
        expect(blocked.status).toBe(429)
        expect(blocked.json.error.type).toBe("too_many_attempts")
        expect(blocked.headers.get("retry-after")).toBe("30")
        // The wait passes: the right password works again.
        yield* logIn(email)
      }))

    it.effect("log-in: an unknown email and a wrong password get the same answer", () =>
      Effect.gen(function*() {
        const { email } = yield* verifiedUser()
        yield* nextWindow
        const wrong = yield* h.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: ORIGIN,
          body: { email, password: "wrong password" }
        })
        const unknown = yield* h.raw("POST", "/app/api/auth/login", {
          token: null,
          headers: ORIGIN,
          body: { email: uniqueEmail("nobody"), password: "wrong password" }
        })
        expect(wrong.status).toBe(401)
        expect(unknown.status).toBe(401)
        expect(unknown.json).toEqual(wrong.json)
      }))

    it.effect("sign-up and password reset answer the same for a registered and an unregistered email", () =>
      Effect.gen(function*() {
        const sink = yield* SmtpSink
        const { email } = yield* verifiedUser()
        yield* nextWindow
        const taken = yield* h.raw("POST", "/app/api/auth/signup", {
          token: null,
          headers: ORIGIN,
          body: { email, password: PASSWORD }
        })
        const free = yield* h.raw("POST", "/app/api/auth/signup", {
          token: null,
          headers: ORIGIN,
          body: { email: uniqueEmail("free"), password: PASSWORD }
        })
        expect([taken.status, free.status]).toEqual([202, 202])
        expect(taken.json).toEqual(free.json)
        const resetKnown = yield* h.raw("POST", "/app/api/auth/password-reset", {
          token: null,
          headers: ORIGIN,
          body: { email }
        })
        const resetUnknown = yield* h.raw("POST", "/app/api/auth/password-reset", {
          token: null,
          headers: ORIGIN,
          body: { email: uniqueEmail("none") }
        })
        expect([resetKnown.status, resetUnknown.status]).toEqual([202, 202])
        expect(resetKnown.json).toEqual(resetUnknown.json)
        // What differs goes to the address's owner only.
        yield* sink.waitFor(email, /already has an account/)
      }))
  })

  it.effect("password reset by mailed link: new password works, old sessions end, the link works once", () =>
    Effect.gen(function*() {
      const sink = yield* SmtpSink
      const { email, session } = yield* verifiedUser()
      yield* nextWindow
      expect(
        (yield* h.raw("POST", "/app/api/auth/password-reset", { token: null, headers: ORIGIN, body: { email } })).status
      ).toBe(202)
      const mail = yield* sink.waitFor(email, /reset-password\?token=/)
      const token = decodeURIComponent(/reset-password\?token=([^\s]+)/.exec(mail.text)![1])
      const weak = yield* h.raw("POST", "/app/api/auth/password-reset/confirm", {
        token: null,
        headers: ORIGIN,
        body: { token, password: "short" }
      })
      expect(weak.status).toBe(400)
      const done = yield* h.raw("POST", "/app/api/auth/password-reset/confirm", {
        token: null,
        headers: ORIGIN,
        body: { token, password: "a brand new password" }
      })
      expect(done.status, done.text).toBe(200)
      expect((yield* call(session, "GET", "/auth/session")).status).toBe(401)
      yield* logIn(email, "a brand new password")
      const reused = yield* h.raw("POST", "/app/api/auth/password-reset/confirm", {
        token,
        headers: ORIGIN,
        body: { token, password: "yet another password" }
      })
      expect(reused.status).toBe(400)
      const forged = yield* h.raw("POST", "/app/api/auth/password-reset/confirm", {
        token: null,
        headers: ORIGIN,
        body: { token: `${token.split(".")[0]}.AAAA`, password: "yet another password" }
      })
      expect(forged.json.error.type).toBe("invalid_link")
    }))

  it.effect("the demo's one-time login link: 303 to / with a session cookie, once", () =>
    Effect.gen(function*() {
      const account = yield* h.run(createAccount({ name: "Demo account" }))
      const link = yield* h.run(
        magicLinkFor(account.id, uniqueEmail("demo"), "http://localhost").pipe(
          Effect.provide(Signing.layer),
          Effect.provide(AppConfig.layer(readConfig({})))
        )
      )
      const path = link.replace("http://localhost", "")
      const r = yield* h.raw("GET", path, { token: null })
      expect(r.status).toBe(303)
      expect(r.headers.get("location")).toBe("/")
      const cookie = cookieOf(r.headers.get("set-cookie"))
      expect(cookie).not.toBeNull()
      const me = yield* h.raw("GET", "/app/api/account", {
        token: null,
        headers: { cookie: `sitehealth_session=${cookie}` }
      })
      expect(me.status).toBe(200)
      expect(me.json.data.accountId).toBe(account.id)
      expect((yield* h.raw("GET", path, { token: null })).status).toBe(400)
    }))

  it.effect("account: trial days left; when the entitlement has ended the dashboard says so and /api/v1 answers 402", () =>
    Effect.gen(function*() {
      const { session, user } = yield* verifiedUser()
      const site = yield* newWebsite(session)
      const token =
        (yield* call(session, "POST", "/tokens", { name: "t", websites: null, permissions: ["projects:read"] })).json
          .data.secret
      yield* h.endTrial(user.accountId)
      const account = yield* call(session, "GET", "/account")
      expect(account.json.data).toMatchObject({ entitlement: "ended", trialDaysLeft: 0 })
      expect(account.json.data.message).toMatch(/ended/)
      const api = yield* h.raw("GET", `/api/v1/projects/${site.id}/health`, { token })
      expect(api.status).toBe(402)
      expect(api.json.error.code).toBe("trial_expired")
      yield* h.setSubscription(user.accountId, "active", null)
      expect((yield* call(session, "GET", "/account")).json.data.entitlement).toBe("subscribed")
    }))

  // The authorization matrix (logged out, expired, another account, CSRF, the cookie/bearer wall) is generated
  // from the contract in DashboardAuthorizationMatrix.test.ts.

  it.effect("the dashboard API documents itself at /app/api/openapi.json, apart from /api/v1's", () =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", "/app/api/openapi.json", { token: null })
      expect(r.status).toBe(200)
      const paths = Object.keys(r.json.paths)
      expect(paths).toContain("/app/api/websites/{id}")
      expect(paths).toContain("/app/api/auth/login")
      expect(paths.every((p) => p.startsWith("/app/api/"))).toBe(true)
      const v1 = yield* h.raw("GET", "/api/v1/openapi.json", { token: null })
      expect(Object.keys(v1.json.paths).some((p) => p.startsWith("/app/api"))).toBe(false)
    }))

  it.effect("bad input gets a 400 envelope, never a 500", () =>
    Effect.gen(function*() {
      const { session } = yield* verifiedUser()
      const cases: Array<[string, string, unknown]> = [
        ["POST", "/websites", { name: "x", domain: "https://x.example/path", timezone: "UTC", currency: "USD" }],
        ["POST", "/websites", { name: "x", domain: "x.example", timezone: "Mars/Olympus", currency: "USD" }],
        ["POST", "/websites", { name: "x", domain: "x.example", timezone: "UTC", currency: "usd" }],
        ["POST", "/websites", { name: "x", domain: "x.example", timezone: "UTC", currency: "USD", extra: 1 }],
        ["POST", "/tokens", { name: "t", websites: null, permissions: [] }],
        ["POST", "/tokens", {
          name: "t",
          websites: null,
          permissions: ["projects:read"],
          expiresAt: "2000-01-01T00:00:00Z"
        }]
      ]
      for (const [method, path, body] of cases) {
        const r = yield* call(session, method, path, body)
        expect(r.status, `${path} ${JSON.stringify(body)}: ${r.text}`).toBe(400)
        expect(r.json.status).toBe("error")
      }
      yield* nextWindow
      const weak = yield* h.raw("POST", "/app/api/auth/signup", {
        token: null,
        headers: ORIGIN,
        body: { email: "not-an-email", password: "short" }
      })
      expect(weak.status).toBe(400)
      expect(weak.json.error.issues.length).toBe(2)
    }))
})
