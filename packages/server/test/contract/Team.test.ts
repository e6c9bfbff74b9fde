/**
 * The team (docs/dashboard.md#team): an owner invites by email, the invitee joins from the mailed link with the
 * invited role and is logged in; the link is signed, works once, for 7 days, and dies when withdrawn or replaced;
 * an owner changes roles and removes members (their sessions end at once); the account always keeps an owner.
 * Which role may call what is DashboardRoleMatrix.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { BillingRepo } from "../../src/accounts/BillingRepo.ts"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { expectError } from "../support/Expect.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { h, TestApp } from "../support/TestApp.ts"

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
const NEW_PASSWORD = "a member's own passphrase"

const AppWithSink = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({ smtpUrl: Redacted.make(sink.url) })
})).pipe(Layer.provideMerge(SmtpSink.layer))

let counter = 0
const uniqueEmail = (tag: string) => `${tag}-${Date.now().toString(36)}-${counter++}@example.test`

const cookieOf = (setCookie: string | null) => /sitehealth_session=([^;]+)/.exec(setCookie ?? "")?.[1] ?? null
const sessionHeaders = (cookie: string, csrf: string) => ({
  ...ORIGIN,
  cookie: `sitehealth_session=${cookie}`,
  "x-csrf-token": csrf
})

const logIn = (email: string, password = PASSWORD) =>
  Effect.gen(function*() {
    yield* TestClock.adjust("1 minute")
    const r = yield* h.raw("POST", "/app/api/auth/login", { token: null, headers: ORIGIN, body: { email, password } })
    expect(r.status, r.text).toBe(200)
    return sessionHeaders(cookieOf(r.headers.get("set-cookie"))!, r.json.data.csrfToken)
  })

/** The owner of a new account, logged in. */
const owner = Effect.gen(function*() {
  const email = uniqueEmail("owner")
  const passwordHash = yield* hashPassword(PASSWORD)
  yield* h.run(Effect.gen(function*() {
    const account = yield* createAccount({ name: "Acme Ltd" })
    yield* (yield* AuthRepo).createUser({
      id: newUserId(),
      accountId: account.id,
      email,
      passwordHash,
      emailVerifiedAt: new Date(),
      createdAt: new Date()
    })
  }))
  return { email, headers: yield* logIn(email) }
})

const invite = (headers: Record<string, string>, email: string, role: string) =>
  h.raw("POST", "/app/api/team/invitations", { token: null, headers, body: { email, role } })

/** The token of the last invitation link mailed to `email`. */
const mailedToken = (email: string, nth = 1) =>
  Effect.gen(function*() {
    const sink = yield* SmtpSink
    yield* sink.waitFor(email, /accept-invite\?token=/)
    const mails = sink.messages.filter((m) => m.to.includes(email) && /accept-invite\?token=/.test(m.text))
    expect(mails.length).toBeGreaterThanOrEqual(nth)
    return decodeURIComponent(/accept-invite\?token=(\S+)/.exec(mails[nth - 1]!.text)![1]!)
  })

const accept = (token: string, password = NEW_PASSWORD) =>
  h.raw("POST", "/app/api/team/invitation/accept", { token: null, headers: ORIGIN, body: { token, password } })

const teamOf = (headers: Record<string, string>) => h.raw("GET", "/app/api/team", { token: null, headers })

layer(AppWithSink, { timeout: 60_000 })("Team: members, roles and invitations", (it) => {
  it.effect("an owner invites by email; the invitee previews, joins with a password, is logged in with that role", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const email = uniqueEmail("cofounder")
      const sent = yield* invite(o.headers, email.toUpperCase(), "admin")
      expect(sent.status, sent.text).toBe(201)
      expect(sent.json.data).toMatchObject({ email, role: "admin", invitedBy: o.email })
      const token = yield* mailedToken(email)
      const mail = (yield* SmtpSink).messages.find((m) => m.to.includes(email))!
      expect(mail.text).toContain(`${o.email} invited you to join Acme Ltd on sitehealth as an admin`)
      expect(mail.text).toContain("7 days")

      const listed = yield* teamOf(o.headers)
      expect(listed.json.data.invitations).toEqual([expect.objectContaining({ email, role: "admin" })])

      const preview = yield* h.raw("POST", "/app/api/team/invitation/preview", {
        token: null,
        headers: ORIGIN,
        body: { token }
      })
      expect(preview.status, preview.text).toBe(200)
      expect(preview.json.data).toMatchObject({ email, role: "admin", accountName: "Acme Ltd", invitedBy: o.email })

      const joined = yield* accept(token)
      expect(joined.status, joined.text).toBe(200)
      expect(joined.json.data).toMatchObject({ role: "admin", user: { email, emailVerified: true } })
      const member = sessionHeaders(cookieOf(joined.headers.get("set-cookie"))!, joined.json.data.csrfToken)
      // Logged in, in the owner's account: the same websites.
      const site = yield* h.raw("POST", "/app/api/websites", {
        token: null,
        headers: o.headers,
        body: { name: "Shared", domain: `shared-${counter++}.example.com`, timezone: "UTC", currency: "EUR" }
      })
      expect(site.status, site.text).toBe(201)
      const sites = yield* h.raw("GET", "/app/api/websites", { token: null, headers: member })
      expect(sites.json.data.websites.map((w: any) => w.id)).toEqual([site.json.data.id])
      // And with their own password afterwards.
      yield* logIn(email, NEW_PASSWORD)

      const team = yield* teamOf(member)
      expect(team.json.data.members.map((m: any) => [m.email, m.role, m.you]).sort()).toEqual([
        [email, "admin", true],
        [o.email, "owner", false]
      ].sort())
      expect(team.json.data.invitations).toEqual([])
    }))

  it.effect("the link works once, is refused when forged, withdrawn, replaced or 7 days old", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const once = uniqueEmail("once")
      expect((yield* invite(o.headers, once, "viewer")).status).toBe(201)
      const token = yield* mailedToken(once)
      expect((yield* accept(token)).status).toBe(200)
      expectError(yield* accept(token), 400, "invalid_link")
      const [payload, mac] = token.split(".")
      expectError(yield* accept(`${payload}.${mac!.slice(0, -2)}AA`), 400, "invalid_link")

      const withdrawn = uniqueEmail("withdrawn")
      const sent = yield* invite(o.headers, withdrawn, "viewer")
      const revoke = yield* h.raw("DELETE", `/app/api/team/invitations/${sent.json.data.id}`, {
        token: null,
        headers: o.headers
      })
      expect(revoke.status, revoke.text).toBe(200)
      expectError(yield* accept(yield* mailedToken(withdrawn)), 400, "invalid_link")
      expectError(
        yield* h.raw("DELETE", `/app/api/team/invitations/${sent.json.data.id}`, { token: null, headers: o.headers }),
        404,
        "invitation_not_found"
      )

      // Invited again: the first link dies, the second works.
      const twice = uniqueEmail("twice")
      yield* invite(o.headers, twice, "viewer")
      const first = yield* mailedToken(twice, 1)
      yield* TestClock.adjust("1 minute")
      yield* invite(o.headers, twice, "admin")
      yield* (yield* SmtpSink).waitFor(twice, /as an admin/)
      const second = yield* mailedToken(twice, 2)
      expectError(yield* accept(first), 400, "invalid_link")
      const joined = yield* accept(second)
      expect(joined.json.data.role).toBe("admin")

      const late = uniqueEmail("late")
      yield* invite(o.headers, late, "viewer")
      const lateToken = yield* mailedToken(late)
      yield* TestClock.adjust("7 days")
      expectError(yield* accept(lateToken), 400, "invalid_link")
      // An expired invitation is no longer listed (the owner's session has expired too: a new one).
      expect((yield* teamOf(yield* logIn(o.email))).json.data.invitations).toEqual([])
    }))

  it.effect("refusals: a weak password, a member invited twice, an address with a login elsewhere", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const email = uniqueEmail("weak")
      yield* invite(o.headers, email, "viewer")
      const token = yield* mailedToken(email)
      expectError(yield* accept(token, "password"), 400)
      expectError(yield* accept(token, email), 400, "weak_password")
      // A refused password leaves the link working.
      expect((yield* accept(token)).status).toBe(200)
      expectError(yield* invite(o.headers, email, "admin"), 409, "already_member")
      expectError(yield* invite(o.headers, o.email, "admin"), 409, "already_member")

      const other = yield* owner
      yield* invite(o.headers, other.email, "viewer")
      expectError(yield* accept(yield* mailedToken(other.email)), 409, "email_taken")
      expectError(yield* invite(o.headers, "not an address", "viewer"), 400)
      expectError(yield* invite(o.headers, uniqueEmail("x"), "superuser"), 400)
    }))

  it.effect("an owner changes roles and removes members; a removed member's sessions end at once", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const email = uniqueEmail("member")
      yield* invite(o.headers, email, "viewer")
      const joined = yield* accept(yield* mailedToken(email))
      const member = sessionHeaders(cookieOf(joined.headers.get("set-cookie"))!, joined.json.data.csrfToken)
      const second = yield* logIn(email, NEW_PASSWORD)
      const id: string = (yield* teamOf(o.headers)).json.data.members.find((m: any) => m.email === email).id

      const promoted = yield* h.raw("PATCH", `/app/api/team/members/${id}`, {
        token: null,
        headers: o.headers,
        body: { role: "admin" }
      })
      expect(promoted.status, promoted.text).toBe(200)
      expect(promoted.json.data).toMatchObject({ email, role: "admin", you: false })
      expect((yield* h.raw("GET", "/app/api/auth/session", { token: null, headers: member })).json.data.role)
        .toBe("admin")

      const removed = yield* h.raw("DELETE", `/app/api/team/members/${id}`, { token: null, headers: o.headers })
      expect(removed.status, removed.text).toBe(200)
      expect(removed.json.data).toEqual({ removed: true, sessionsEnded: 2 })
      for (const headers of [member, second]) {
        expectError(yield* h.raw("GET", "/app/api/websites", { token: null, headers }), 401, "session_required")
      }
      yield* TestClock.adjust("1 minute")
      const again = yield* h.raw("POST", "/app/api/auth/login", {
        token: null,
        headers: ORIGIN,
        body: { email, password: NEW_PASSWORD }
      })
      expectError(again, 401, "invalid_credentials")
      expectError(
        yield* h.raw("DELETE", `/app/api/team/members/${id}`, { token: null, headers: o.headers }),
        404,
        "member_not_found"
      )
    }))

  it.effect("the account keeps an owner: the last one cannot step down or be removed; with two, one can", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const me: string = (yield* teamOf(o.headers)).json.data.members[0].id
      expectError(
        yield* h.raw("PATCH", `/app/api/team/members/${me}`, {
          token: null,
          headers: o.headers,
          body: { role: "admin" }
        }),
        409,
        "last_owner"
      )
      expectError(
        yield* h.raw("DELETE", `/app/api/team/members/${me}`, { token: null, headers: o.headers }),
        409,
        "last_owner"
      )
      const email = uniqueEmail("coowner")
      yield* invite(o.headers, email, "owner")
      const joined = yield* accept(yield* mailedToken(email))
      const co = sessionHeaders(cookieOf(joined.headers.get("set-cookie"))!, joined.json.data.csrfToken)
      const step = yield* h.raw("PATCH", `/app/api/team/members/${me}`, {
        token: null,
        headers: o.headers,
        body: { role: "viewer" }
      })
      expect(step.status, step.text).toBe(200)
      // Now a viewer: members are the owner's business.
      expectError(yield* invite(o.headers, uniqueEmail("y"), "viewer"), 403, "role_forbidden")
      const coId: string = (yield* teamOf(co)).json.data.members.find((m: any) => m.email === email).id
      expectError(
        yield* h.raw("DELETE", `/app/api/team/members/${coId}`, { token: null, headers: co }),
        409,
        "last_owner"
      )
    }))

  it.effect("two owners demoting each other at once: one wins, the account keeps an owner", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const email = uniqueEmail("rival")
      yield* invite(o.headers, email, "owner")
      const joined = yield* accept(yield* mailedToken(email))
      const rival = sessionHeaders(cookieOf(joined.headers.get("set-cookie"))!, joined.json.data.csrfToken)
      const members = (yield* teamOf(o.headers)).json.data.members as Array<any>
      const idOf = (e: string) => members.find((m) => m.email === e).id
      const [a, b] = yield* Effect.all([
        h.raw("PATCH", `/app/api/team/members/${idOf(email)}`, {
          token: null,
          headers: o.headers,
          body: { role: "viewer" }
        }),
        h.raw("PATCH", `/app/api/team/members/${idOf(o.email)}`, {
          token: null,
          headers: rival,
          body: { role: "viewer" }
        })
      ], { concurrency: 2 })
      const statuses = [a.status, b.status]
      expect(statuses.filter((s) => s === 200).length, `${a.text}\n${b.text}`).toBeGreaterThanOrEqual(1)
      const after = yield* h.run(Effect.gen(function*() {
        const repo = yield* AuthRepo
        const user = yield* repo.findUserByEmail(o.email)
        return yield* repo.listMembers(user!.accountId)
      }))
      expect(after.filter((m) => m.role === "owner").length).toBe(1)
    }))

  it.effect("an owner deletes the account: websites, tokens, every login and session go; not while renewing", () =>
    Effect.gen(function*() {
      const o = yield* owner
      const email = uniqueEmail("leaving")
      yield* invite(o.headers, email, "admin")
      const joined = yield* accept(yield* mailedToken(email))
      const member = sessionHeaders(cookieOf(joined.headers.get("set-cookie"))!, joined.json.data.csrfToken)
      const site = yield* h.raw("POST", "/app/api/websites", {
        token: null,
        headers: o.headers,
        body: { name: "Gone", domain: `gone-${counter++}.example.com`, timezone: "UTC", currency: "EUR" }
      })
      const token = yield* h.raw("POST", "/app/api/tokens", {
        token: null,
        headers: o.headers,
        body: { name: "cli", websites: null, permissions: ["projects:read"] }
      })
      expect(token.status, token.text).toBe(201)
      const secret: string = token.json.data.secret
      expect((yield* h.raw("GET", "/api/v1/projects", { token: secret })).status).toBe(200)
      const remove = (headers: Record<string, string>, confirmEmail: string) =>
        h.raw("DELETE", "/app/api/account", { token: null, headers, body: { confirmEmail } })

      // An admin may not; the owner must type their own address.
      expectError(yield* remove(member, email), 403, "role_forbidden")
      expectError(yield* remove(o.headers, email), 400, "confirmation_mismatch")

      // A subscription that renews holds deletion back; one canceled at its period's end does not.
      const accountId: string = (yield* h.raw("GET", "/app/api/auth/session", { token: null, headers: o.headers }))
        .json.data.user.accountId
      const at = new Date(yield* h.now)
      const until = new Date(at.getTime() + 30 * 86_400_000)
      const subscription = (status: "active" | "canceled") =>
        h.run(Effect.gen(function*() {
          const billing = yield* BillingRepo
          yield* billing.attachCustomer(accountId, "cus_team", at)
          yield* billing.apply(accountId, {
            billing: {
              subscriptionId: "sub_team",
              stripeStatus: "active",
              priceId: null,
              currentPeriodEnd: until,
              cancelAtPeriodEnd: status === "canceled",
              pastDueSince: null
            },
            entitlement: { status, until }
          }, at)
        }))
      yield* subscription("active")
      expectError(yield* remove(o.headers, o.email.toUpperCase()), 409, "subscription_active")
      yield* subscription("canceled")

      const deleted = yield* remove(o.headers, o.email.toUpperCase())
      expect(deleted.status, deleted.text).toBe(200)
      expect(deleted.json.data).toEqual({ deleted: true, websites: 1, members: 2 })
      yield* (yield* SmtpSink).waitFor(o.email, /deleted the sitehealth account/)
      for (const headers of [o.headers, member]) {
        expectError(yield* h.raw("GET", "/app/api/websites", { token: null, headers }), 401, "session_required")
      }
      expectError(yield* h.raw("GET", "/api/v1/projects", { token: secret }), 401)
      expectError(yield* h.raw("GET", `/api/v1/projects/${site.json.data.id}/health`, { token: secret }), 401)
      yield* TestClock.adjust("1 minute")
      const again = yield* h.raw("POST", "/app/api/auth/login", {
        token: null,
        headers: ORIGIN,
        body: { email: o.email, password: PASSWORD }
      })
      expectError(again, 401, "invalid_credentials")
      const gone = yield* h.run(Effect.gen(function*() {
        return yield* (yield* AccountsRepo).find(accountId)
      }))
      expect(gone).toBeNull()
    }))
})
