/**
 * Accounts and sessions of the dashboard: sign-up (which starts the 14-day trial), email verification,
 * log-in, password reset, the demo's one-time login link, and the session cookie.
 *
 * No answer says whether an email is registered: sign-up and reset answer the same sentence either way (what
 * differs goes by mail, sent off the request's path), and log-in verifies a password against a dummy scrypt
 * hash for an unknown email so both failures take as long and read the same.
 *
 * Every password change (reset by link, or from the account page with the current password) bumps the user's
 * password version, which ends every outstanding reset link, ends the other sessions, and is mailed to the
 * owner. With two-factor sign-in on (TwoFactor.ts), log-in answers a challenge instead of a session.
 */
import type { CurrentSessionView, SessionId } from "@sitehealth/domain/Dashboard"
import type { LogInResult, SecondFactorRequired } from "@sitehealth/domain/Dashboard"
import {
  type DashboardPrincipal,
  MAGIC_LINK_PATH,
  RESET_PASSWORD_PAGE,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
  VERIFY_EMAIL_PAGE
} from "@sitehealth/domain/DashboardApi"
import { BadRequest, Forbidden, Unauthorized } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Crypto from "node:crypto"
import { createAccount } from "../accounts/Provisioning.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import { AuthRepo, newSessionId, newUserId, type SessionRecord, type UserRecord } from "./AuthRepo.ts"
import { LINK_LIFETIME_MS, type LinkPurpose, type SignedLink, Signing } from "./Links.ts"
import { weakPasswordReason } from "./PasswordPolicy.ts"
import { dummyHash, hashPassword, verifyPassword } from "./Passwords.ts"
import { AuthThrottle, clientAddress } from "./Throttle.ts"
import { checkSecondFactor } from "./TwoFactor.ts"

export const normalizeEmail = (email: string) => email.trim().toLowerCase()
export const sha256Hex = (s: string) => Crypto.createHash("sha256").update(s).digest("hex")

const SIGNED_UP =
  "Check your inbox: a message is on its way to this address. Follow its link to verify the address, then log in."
const RESET_REQUESTED = "If an account uses this address, a message with a password-reset link is on its way to it."

export const invalidLink = () =>
  new BadRequest({
    message: "This link is invalid, has expired or was already used; ask for a new one",
    type: "invalid_link"
  })
export const sessionRequired = () =>
  new Unauthorized({ message: "Not logged in, or the session has expired; log in again", type: "session_required" })

/** The base of links in mail: PUBLIC_URL, else the origin this request reached. */
export const publicBase = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return config.publicUrl ?? `http://${request.headers.host ?? `${config.host}:${config.port}`}`
  })

export const sendLater = <R>(effect: Effect.Effect<void, never, R>) =>
  // Mail goes out off the request's path: its timing must not tell a registered address from another.
  Effect.asVoid(Effect.forkDetach(effect))

/** A link to a page of the web app that completes the action with the token (`/verify-email?token=…`). */
const link = (purpose: LinkPurpose, userId: string, version?: number) =>
  Effect.gen(function*() {
    const signing = yield* Signing
    const config = yield* AppConfig
    const base = yield* publicBase(config)
    const now = yield* Clock.currentTimeMillis
    const token = signing.sign(purpose, userId, now, version)
    const page = purpose === "verify" ? VERIFY_EMAIL_PAGE : purpose === "reset" ? RESET_PASSWORD_PAGE : MAGIC_LINK_PATH
    return `${base}${page}?token=${encodeURIComponent(token)}`
  })

/** 400 `weak_password` naming the field, when the password is common, breached or made of the address. */
export const refuseWeakPassword = (password: string, email: string, field: string) =>
  Effect.gen(function*() {
    const reason = yield* weakPasswordReason(password, { email })
    if (reason === null) return
    return yield* new BadRequest({
      message: `Invalid request: ${field}: ${reason}`,
      type: "weak_password",
      issues: [{ path: field, message: reason }]
    })
  })

export const signUp = (input: { readonly email: string; readonly password: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const mailer = yield* Mailer
    const email = normalizeEmail(input.email)
    yield* (yield* AuthThrottle).attempt("signup", email)
    yield* refuseWeakPassword(input.password, email, "body.password")
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
        text:
          `Welcome to sitehealth. Your 14-day trial has started.\n\nVerify this address to log in:\n${url}\n\nThe ` +
          `link works once, for 24 hours.`
      }))
    } else {
      const url = `${yield* publicBase(yield* AppConfig)}${RESET_PASSWORD_PAGE}`
      yield* sendLater(mailer.send({
        to: email,
        subject: "You already have a sitehealth account",
        text:
          `Someone (you?) tried to sign up to sitehealth with this address, which already has an account.\n\nLog in, ` +
          `or reset your password at:\n${url}`
      }))
    }
    return { message: SIGNED_UP }
  })

export const isHttps = (config: AppConfigShape) => config.publicUrl?.startsWith("https:") === true

/** The session cookie's name: `__Host-` prefixed when PUBLIC_URL is https (then always Secure, Path=/, no Domain). */
export const sessionCookieName = (config: AppConfigShape) => (isHttps(config) ? SECURE_SESSION_COOKIE : SESSION_COOKIE)
/** The cookie of a browser that has logged in (Throttle.ts): signed, long-lived, not a session. */
export const DEVICE_COOKIE = "sitehealth_device"
export const deviceCookieName = (
  config: AppConfigShape
) => (isHttps(config) ? `__Host-${DEVICE_COOKIE}` : DEVICE_COOKIE)

/**
 * Sets a cookie on this request's response; `maxAgeSeconds` null: a browser-session cookie (ends when the browser
 * closes).
 */
const setCookie = (name: string, value: string, maxAgeSeconds: number | null, sameSite: "lax" | "strict" = "lax") =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setCookieUnsafe(response, name, value, {
        path: "/",
        httpOnly: true,
        sameSite,
        secure: isHttps(config),
        ...(maxAgeSeconds === null ? {} : { maxAge: Duration.seconds(maxAgeSeconds) })
      }))
    )
  })

/**
 * Sets (or, with null, clears) the session cookie on this request's response; `maxAgeSeconds` null: until the browser
 * closes.
 */
export const setSessionCookie = (secret: string | null, maxAgeSeconds: number | null = null) =>
  Effect.flatMap(
    AppConfig,
    (config) => setCookie(sessionCookieName(config), secret ?? "", secret === null ? 0 : maxAgeSeconds)
  )

/** Marks this browser as one that logged in to the user's account: signed, 180 days, sent to this site only. */
const setDeviceCookie = (user: UserRecord) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const signing = yield* Signing
    const token = signing.sign("device", user.id, yield* Clock.currentTimeMillis)
    yield* setCookie(deviceCookieName(config), token, LINK_LIFETIME_MS.device / 1000, "strict")
  })

/** Whether this request comes from a browser that has logged in to this user's account before (its device cookie). */
export const isKnownDevice = (user: UserRecord | null) =>
  Effect.gen(function*() {
    if (user === null) return false
    const config = yield* AppConfig
    const signing = yield* Signing
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = request.cookies[deviceCookieName(config)]
    if (token === undefined || token.length > 2000) return false
    return signing.verify("device", token, yield* Clock.currentTimeMillis)?.userId === user.id
  })

export const sessionView = (principal: DashboardPrincipal): CurrentSessionView => ({
  user: { accountId: principal.accountId, email: principal.email, emailVerified: principal.emailVerified },
  sessionId: principal.sessionId,
  csrfToken: principal.csrfToken,
  idleExpiresAt: principal.idleExpiresAt.toISOString(),
  absoluteExpiresAt: principal.absoluteExpiresAt.toISOString(),
  staySignedIn: principal.staySignedIn,
  role: principal.role
})

export const principalOf = (user: UserRecord, session: SessionRecord, csrfToken: string): DashboardPrincipal => ({
  sessionId: session.id as SessionId,
  userId: user.id,
  accountId: user.accountId,
  email: user.email,
  emailVerified: user.emailVerifiedAt !== null,
  csrfToken,
  idleExpiresAt: session.idleExpiresAt,
  absoluteExpiresAt: session.absoluteExpiresAt,
  staySignedIn: session.persistent,
  role: user.role
})

/**
 * A new session for the user — always a new random id (no fixation): 32 random bytes in the cookie, their
 * SHA-256 in the table — and the cookie set on the response, with the device cookie. Lifetimes: 30 minutes
 * idle and 12 hours at most in a cookie that ends with the browser; with "Stay signed in", 14 days in a
 * persistent cookie (platform/Config.ts names the settings).
 */
export const startSession = (user: UserRecord, staySignedIn = false) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const config = yield* AppConfig
    const signing = yield* Signing
    const request = yield* HttpServerRequest.HttpServerRequest
    const now = yield* Clock.currentTimeMillis
    const secret = Crypto.randomBytes(32).toString("base64url")
    const rememberSeconds = config.sessionRememberDays * 86_400
    const idleSeconds = staySignedIn ? rememberSeconds : config.sessionIdleMinutes * 60
    const absolute = now + (staySignedIn ? rememberSeconds * 1000 : config.sessionMaxHours * 3_600_000)
    const session: SessionRecord = {
      id: newSessionId(),
      secretSha256: sha256Hex(secret),
      userId: user.id,
      createdAt: new Date(now),
      lastSeenAt: new Date(now),
      idleExpiresAt: new Date(Math.min(now + idleSeconds * 1000, absolute)),
      absoluteExpiresAt: new Date(absolute),
      userAgent: request.headers["user-agent"]?.slice(0, 300) ?? null,
      address: yield* clientAddress,
      idleSeconds,
      persistent: staySignedIn
    }
    yield* repo.insertSession(session)
    yield* setSessionCookie(secret, staySignedIn ? rememberSeconds : null)
    yield* setDeviceCookie(user)
    return principalOf(user, session, signing.csrfToken(session.secretSha256))
  })

const invalidCredentials = () =>
  new Unauthorized({ message: "Email or password is incorrect", type: "invalid_credentials" })

export const logIn = (input: { readonly email: string; readonly password: string; readonly staySignedIn?: boolean }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const throttle = yield* AuthThrottle
    const email = normalizeEmail(input.email)
    const user = yield* repo.findUserByEmail(email)
    yield* throttle.guard("login", email, yield* isKnownDevice(user))
    const stored = user?.passwordHash ?? (yield* dummyHash)
    const matches = yield* verifyPassword(input.password, stored)
    if (user === null || user.passwordHash === null || !matches) {
      yield* throttle.failed("login", email)
      return yield* invalidCredentials()
    }
    yield* throttle.succeeded("login", email)
    if (user.emailVerifiedAt === null) {
      return yield* new Forbidden({
        message: "Verify your email address first: follow the link in the message we sent when you signed up",
        type: "email_not_verified"
      })
    }
    if (user.twoFactorEnabledAt !== null) {
      const now = yield* Clock.currentTimeMillis
      const challenge: SecondFactorRequired = {
        secondFactorRequired: true,
        challenge: (yield* Signing).sign("challenge", user.id, now, user.passwordVersion),
        expiresAt: new Date(now + LINK_LIFETIME_MS.challenge).toISOString()
      }
      return challenge satisfies LogInResult
    }
    return sessionView(yield* startSession(user, input.staySignedIn === true)) satisfies LogInResult
  })

const challengeExpired = () =>
  new BadRequest({ message: "This sign-in has expired or was already completed; log in again", type: "invalid_link" })

/** Log-in's second step: the challenge log-in answered, and a code from the app or a recovery code. */
export const logInSecondFactor = (
  input: { readonly challenge: string; readonly code: string; readonly staySignedIn?: boolean }
) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const signing = yield* Signing
    const throttle = yield* AuthThrottle
    const now = yield* Clock.currentTimeMillis
    const signed = signing.verify("challenge", input.challenge, now)
    const user = signed === null ? null : yield* repo.findUser(signed.userId)
    if (
      signed === null || user === null || signed.version !== user.passwordVersion || user.twoFactorEnabledAt === null
    ) {
      return yield* challengeExpired()
    }
    yield* throttle.guard("second-factor", user.email, yield* isKnownDevice(user))
    if (!(yield* checkSecondFactor(user, input.code))) {
      yield* throttle.failed("second-factor", user.email)
      return yield* new Unauthorized({
        message:
          "This code is not right, was already used or has expired; type the current one from the app, or a recovery " +
          "code",
        type: "invalid_code"
      })
    }
    if (!(yield* repo.useLink(signed.id, new Date(now), signed.expiresAt))) return yield* challengeExpired()
    yield* throttle.succeeded("second-factor", user.email)
    return sessionView(yield* startSession(user, input.staySignedIn === true))
  })

/** "If this was not you…": the mail after every password change and reset (ASVS 2.2.3). */
export const mailPasswordChanged = (user: UserRecord, how: "changed" | "reset") =>
  Effect.gen(function*() {
    const mailer = yield* Mailer
    const base = yield* publicBase(yield* AppConfig)
    const at = new Date(yield* Clock.currentTimeMillis).toISOString().replace("T", " ").slice(0, 16)
    const address = yield* clientAddress
    const way = how === "reset" ? "reset with a link sent to this address" : "changed from the account page"
    yield* sendLater(mailer.send({
      to: user.email,
      subject: "Your sitehealth password was changed",
      text: `The password of your sitehealth account was ${way} on ${at} UTC (from ${address}). ` +
        `Every other session has been logged out.\n\nIf this was not you, reset your password now ` +
        `at:\n${base}${RESET_PASSWORD_PAGE}\n\n` +
        "and then turn on two-factor sign-in on the account page."
    }))
  })

export const requestPasswordReset = (input: { readonly email: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const mailer = yield* Mailer
    const email = normalizeEmail(input.email)
    yield* (yield* AuthThrottle).attempt("reset", email)
    const user = yield* repo.findUserByEmail(email)
    if (user !== null) {
      const url = yield* link("reset", user.id, user.passwordVersion)
      yield* sendLater(mailer.send({
        to: email,
        subject: "Reset your sitehealth password",
        text:
          `Set a new password here:\n${url}\n\nThe link works once, for one hour. If you did not ask for it, ignore ` +
          `this message.`
      }))
    }
    return { message: RESET_REQUESTED }
  })

/** A link's user when its signature, spelling, purpose and expiry hold (and `valid` agrees); not used up yet. */
const checkLink = (
  purpose: LinkPurpose,
  token: string,
  valid: (user: UserRecord, signed: SignedLink) => boolean = () => true
) =>
  Effect.gen(function*() {
    const signing = yield* Signing
    const repo = yield* AuthRepo
    const signed = signing.verify(purpose, token, yield* Clock.currentTimeMillis)
    if (signed === null) return yield* invalidLink()
    const user = yield* repo.findUser(signed.userId)
    if (user === null || !valid(user, signed)) return yield* invalidLink()
    return { user, signed }
  })

/** Uses a checked link up (single use, keyed on its nonce: docs/security.md); invalid_link when it already was. */
const useUp = (signed: SignedLink) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (!(yield* (yield* AuthRepo).useLink(signed.id, new Date(now), signed.expiresAt))) return yield* invalidLink()
  })

/** Checks a link's signature, purpose and expiry, and uses it up; its user. */
export const consumeLink = (purpose: LinkPurpose, token: string) =>
  Effect.gen(function*() {
    const { signed, user } = yield* checkLink(purpose, token)
    yield* useUp(signed)
    return user
  })

export const resetPassword = (input: { readonly token: string; readonly password: string }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    yield* (yield* AuthThrottle).attempt("reset-confirm", null)
    // Made for the current password: a change since (another reset, the account page) ended this link.
    const { signed, user } = yield* checkLink("reset", input.token, (u, link) => link.version === u.passwordVersion)
    // Before the link is used up: a refused password leaves the link working for a better one.
    yield* refuseWeakPassword(input.password, user.email, "body.password")
    yield* useUp(signed)
    yield* repo.setPassword(user.id, yield* hashPassword(input.password))
    // The link came by mail: the address is the owner's.
    yield* repo.markVerified(user.id, new Date(yield* Clock.currentTimeMillis))
    yield* repo.deleteSessionsOf(user.id, null)
    yield* mailPasswordChanged(user, "reset")
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
    const signing = yield* Signing
    const now = yield* Clock.currentTimeMillis
    if (secret === "" || secret.length > 100) return null
    const hash = sha256Hex(secret)
    const found = yield* repo.touchSession(hash, new Date(now))
    return found === null ? null : principalOf(found.user, found.session, signing.csrfToken(hash))
  })
