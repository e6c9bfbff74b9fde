/**
 * Accounts and sessions of the dashboard: sign-up (which starts the 14-day trial), email verification,
 * log-in, password reset, the demo's one-time login link, and the session cookie.
 *
 * No answer says whether an email is registered: sign-up and reset answer the same sentence either way (what
 * differs goes by mail, sent off the request's path), and log-in verifies a password against a dummy scrypt
 * hash for an unknown email so both failures take as long and read the same.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { CurrentSessionView, SessionId } from "@sitehealth/domain/Dashboard"
import {
  type DashboardPrincipal,
  MAGIC_LINK_PATH,
  RESET_PASSWORD_PAGE,
  SESSION_COOKIE,
  VERIFY_EMAIL_PAGE
} from "@sitehealth/domain/DashboardApi"
import { BadRequest, Forbidden, Unauthorized } from "@sitehealth/domain/Errors"
import * as Crypto from "node:crypto"
import { createAccount } from "../accounts/Provisioning.ts"
import { AppConfig, type AppConfigShape } from "../Config.ts"
import { AuthRepo, newSessionId, newUserId, type SessionRecord, type UserRecord } from "./AuthRepo.ts"
import { type LinkPurpose, Signing } from "./Links.ts"
import { Mailer } from "./Mailer.ts"
import { dummyHash, hashPassword, verifyPassword } from "./Passwords.ts"
import { AuthThrottle, clientAddress } from "./Throttle.ts"

export const normalizeEmail = (email: string) => email.trim().toLowerCase()
export const sha256Hex = (s: string) => Crypto.createHash("sha256").update(s).digest("hex")

const SIGNED_UP =
  "Check your inbox: a message is on its way to this address. Follow its link to verify the address, then log in."
const RESET_REQUESTED = "If an account uses this address, a message with a password-reset link is on its way to it."

export const invalidLink = () =>
  new BadRequest({ message: "This link is invalid, has expired or was already used; ask for a new one", type: "invalid_link" })
export const sessionRequired = () =>
  new Unauthorized({ message: "Not logged in, or the session has expired; log in again", type: "session_required" })

/** The base of links in mail: PUBLIC_URL, else the origin this request reached. */
export const publicBase = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return config.publicUrl ?? `http://${request.headers.host ?? `${config.host}:${config.port}`}`
  })

// any: whatever the mail effect needs is already in the forking fiber's context.
const sendLater = (effect: Effect.Effect<void, never, any>) =>
  // Mail goes out off the request's path: its timing must not tell a registered address from another.
  Effect.asVoid(Effect.forkDetach(effect))

/** A link to a page of the web app that completes the action with the token (`/verify-email?token=…`). */
const link = (purpose: LinkPurpose, userId: string) =>
  Effect.gen(function*() {
    const signing = yield* Signing
    const config = yield* AppConfig
    const base = yield* publicBase(config)
    const now = yield* Clock.currentTimeMillis
    const token = signing.sign(purpose, userId, now)
    const page = purpose === "verify" ? VERIFY_EMAIL_PAGE : purpose === "reset" ? RESET_PASSWORD_PAGE : MAGIC_LINK_PATH
    return `${base}${page}?token=${encodeURIComponent(token)}`
  })

export const signUp = (input: { readonly email: string; readonly password: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const mailer = yield* Mailer
    const email = normalizeEmail(input.email)
    yield* (yield* AuthThrottle).attempt("signup", email)
    const passwordHash = yield* hashPassword(input.password)
    const existing = yield* repo.findUserByEmail(email)
    const now = new Date(yield* Clock.currentTimeMillis)
    const created = existing === null
      ? yield* Effect.flatMap(createAccount({ name: email }), (account) =>
        repo.createUser({
          id: newUserId(),
          accountId: account.id,
          email,
          passwordHash,
          emailVerifiedAt: null,
          createdAt: now
        }))
      : null
    if (created !== null) {
      const url = yield* link("verify", created.id)
      yield* sendLater(mailer.send({
        to: email,
        subject: "Verify your email address for sitehealth",
        text: `Welcome to sitehealth. Your 14-day trial has started.\n\nVerify this address to log in:\n${url}\n\nThe link works once, for 24 hours.`
      }))
    } else {
      const url = `${yield* publicBase(yield* AppConfig)}${RESET_PASSWORD_PAGE}`
      yield* sendLater(mailer.send({
        to: email,
        subject: "You already have a sitehealth account",
        text: `Someone (you?) tried to sign up to sitehealth with this address, which already has an account.\n\nLog in, or reset your password at:\n${url}`
      }))
    }
    return { message: SIGNED_UP }
  })

const sessionCookie = (config: AppConfigShape, value: string, maxAgeSeconds: number) =>
  [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${maxAgeSeconds}`,
    ...(config.publicUrl?.startsWith("https:") ? ["Secure"] : [])
  ].join("; ")

/** Sets (or, with null, clears) the session cookie on this request's response. */
export const setSessionCookie = (secret: string | null, maxAgeSeconds = 0) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const cookie = sessionCookie(config, secret ?? "", secret === null ? 0 : maxAgeSeconds)
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "set-cookie", cookie)))
  })

export const sessionView = (principal: DashboardPrincipal): CurrentSessionView => ({
  user: { accountId: principal.accountId, email: principal.email, emailVerified: principal.emailVerified },
  sessionId: principal.sessionId,
  csrfToken: principal.csrfToken,
  idleExpiresAt: principal.idleExpiresAt.toISOString(),
  absoluteExpiresAt: principal.absoluteExpiresAt.toISOString()
})

export const principalOf = (user: UserRecord, session: SessionRecord, csrfToken: string): DashboardPrincipal => ({
  sessionId: session.id as SessionId,
  accountId: user.accountId,
  email: user.email,
  emailVerified: user.emailVerifiedAt !== null,
  csrfToken,
  idleExpiresAt: session.idleExpiresAt,
  absoluteExpiresAt: session.absoluteExpiresAt
})

/**
 * A new session for the user — always a new random id (no fixation): 32 random bytes in the cookie, their
 * SHA-256 in the table — and the cookie set on the response.
 */
export const startSession = (user: UserRecord) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const config = yield* AppConfig
    const signing = yield* Signing
    const request = yield* HttpServerRequest.HttpServerRequest
    const now = yield* Clock.currentTimeMillis
    const secret = Crypto.randomBytes(32).toString("base64url")
    const absolute = now + config.sessionMaxDays * 86_400_000
    const session: SessionRecord = {
      id: newSessionId(),
      secretSha256: sha256Hex(secret),
      userId: user.id,
      createdAt: new Date(now),
      lastSeenAt: new Date(now),
      idleExpiresAt: new Date(Math.min(now + config.sessionIdleMinutes * 60_000, absolute)),
      absoluteExpiresAt: new Date(absolute),
      userAgent: request.headers["user-agent"]?.slice(0, 300) ?? null,
      address: yield* clientAddress
    }
    yield* repo.insertSession(session)
    yield* setSessionCookie(secret, config.sessionMaxDays * 86_400)
    return principalOf(user, session, signing.csrfToken(session.secretSha256))
  })

export const logIn = (input: { readonly email: string; readonly password: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const email = normalizeEmail(input.email)
    yield* (yield* AuthThrottle).attempt("login", email)
    const user = yield* repo.findUserByEmail(email)
    const stored = user?.passwordHash ?? (yield* dummyHash)
    const matches = yield* verifyPassword(input.password, stored)
    if (user === null || user.passwordHash === null || !matches) {
      return yield* new Unauthorized({ message: "Email or password is incorrect", type: "invalid_credentials" })
    }
    if (user.emailVerifiedAt === null) {
      return yield* new Forbidden({
        message: "Verify your email address first: follow the link in the message we sent when you signed up",
        type: "email_not_verified"
      })
    }
    return sessionView(yield* startSession(user))
  })

export const requestPasswordReset = (input: { readonly email: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const mailer = yield* Mailer
    const email = normalizeEmail(input.email)
    yield* (yield* AuthThrottle).attempt("reset", email)
    const user = yield* repo.findUserByEmail(email)
    if (user !== null) {
      const url = yield* link("reset", user.id)
      yield* sendLater(mailer.send({
        to: email,
        subject: "Reset your sitehealth password",
        text: `Set a new password here:\n${url}\n\nThe link works once, for one hour. If you did not ask for it, ignore this message.`
      }))
    }
    return { message: RESET_REQUESTED }
  })

/** Checks a link's signature, purpose and expiry, and uses it up; its user. */
export const consumeLink = (purpose: LinkPurpose, token: string) =>
  Effect.gen(function*() {
    const signing = yield* Signing
    const repo = yield* AuthRepo
    const now = yield* Clock.currentTimeMillis
    const signed = signing.verify(purpose, token, now)
    if (signed === null) return yield* invalidLink()
    const user = yield* repo.findUser(signed.userId)
    if (user === null) return yield* invalidLink()
    if (!(yield* repo.useLink(signed.id, new Date(now), signed.expiresAt))) return yield* invalidLink()
    return user
  })

export const resetPassword = (input: { readonly token: string; readonly password: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    yield* (yield* AuthThrottle).attempt("reset-confirm", null)
    const user = yield* consumeLink("reset", input.token)
    yield* repo.setPassword(user.id, yield* hashPassword(input.password))
    // The link came by mail: the address is the owner's.
    yield* repo.markVerified(user.id, new Date(yield* Clock.currentTimeMillis))
    yield* repo.deleteSessionsOf(user.id, null)
    return { message: "Your password has been changed and every session ended; log in with the new password." }
  })

export const verifyEmail = (input: { readonly token: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const user = yield* consumeLink("verify", input.token)
    const verified = (yield* repo.markVerified(user.id, new Date(yield* Clock.currentTimeMillis))) ?? user
    return { accountId: verified.accountId, email: verified.email, emailVerified: true }
  })

/** The demo's one-time login link (printed by `npm start`): GET, starts a session, redirects to `/`. */
export const magicLogin = (token: string) =>
  Effect.gen(function*() {
    const user = yield* consumeLink("magic", token)
    yield* startSession(user)
    return HttpServerResponse.empty({ status: 303, headers: { location: "/" } })
  })

/** A signed one-time login link for the account's dashboard user (created, verified, without a password, if absent). */
export const magicLinkFor = (accountId: string, email: string, base: string) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const signing = yield* Signing
    const now = yield* Clock.currentTimeMillis
    let user = yield* repo.findUserByAccount(accountId)
    if (user === null) {
      user = yield* repo.createUser({
        id: newUserId(),
        accountId: accountId as UserRecord["accountId"],
        email: normalizeEmail(email),
        passwordHash: null,
        emailVerifiedAt: new Date(now),
        createdAt: new Date(now)
      })
      if (user === null) return yield* Effect.die(new Error(`the email ${email} belongs to another account`))
    }
    return `${base}${MAGIC_LINK_PATH}?token=${encodeURIComponent(signing.sign("magic", user.id, now))}`
  })

/** The session a cookie names, refreshed (idle expiry), or null. */
export const findSession = (secret: string) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const config = yield* AppConfig
    const signing = yield* Signing
    const now = yield* Clock.currentTimeMillis
    if (secret === "" || secret.length > 100) return null
    const hash = sha256Hex(secret)
    const found = yield* repo.touchSession(hash, new Date(now), config.sessionIdleMinutes * 60_000)
    return found === null ? null : principalOf(found.user, found.session, signing.csrfToken(hash))
  })

