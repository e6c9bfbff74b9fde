/**
 * Two-factor sign-in (TOTP, RFC 6238: Totp.ts) for the dashboard's users: the secret is kept encrypted like
 * integration credentials (AES-256-GCM under SITEHEALTH_SECRET_KEY: integrations/Crypto.ts), a code works once
 * (the last used time step is kept), and ten recovery codes are kept as hashes, each usable once. Setting it up
 * takes the current password and a first code from the app; turning it off or making new recovery codes takes
 * the password and a code. Every wrong password or code counts as a failure in Throttle.ts, and every change is
 * mailed to the owner.
 */
import type { TwoFactorStatus } from "@sitehealth/domain/DashboardSecurity"
import { BadRequest, Conflict, Unavailable } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { type CredentialsCipherShape, makeCipher, oldSecretKey, resolveSecretKey } from "../integrations/Crypto.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import { AuthRepo, type UserRecord } from "./AuthRepo.ts"
import { dummyHash, verifyPassword } from "./Passwords.ts"
import { AuthThrottle } from "./Throttle.ts"
import {
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  otpauthUri,
  qrSvg,
  recoveryCodeHash,
  verifyTotp
} from "./Totp.ts"

/** A setup not confirmed by a first code within this long is forgotten. */
export const SETUP_LIFETIME_MS = 15 * 60_000

const ciphers = new WeakMap<AppConfigShape, CredentialsCipherShape>()

/** The credentials cipher, built on first use (a server whose owners never turn 2FA on reads no key). */
const cipher = Effect.gen(function*() {
  const config = yield* AppConfig
  const known = ciphers.get(config)
  if (known !== undefined) return known
  try {
    const made = makeCipher(resolveSecretKey(config), oldSecretKey(config))
    ciphers.set(config, made)
    return made
  } catch (e) {
    yield* Effect.logError("two-factor sign-in: no secret key", (e as Error).message)
    return yield* new Unavailable({
      message:
        "This server cannot keep two-factor secrets: its SITEHEALTH_SECRET_KEY is missing or invalid (the operator's " +
        "log says which).",
      type: "secret_key_unavailable"
    })
  }
})

const seal = (secret: string) => Effect.map(cipher, (c) => c.encrypt({ totp: secret }))
const unseal = (stored: Uint8Array) =>
  Effect.gen(function*() {
    const c = yield* cipher
    return yield* c.decrypt(stored).pipe(
      Effect.map((credentials) => credentials.totp ?? ""),
      Effect.catch((error) =>
        Effect.andThen(
          Effect.logError("two-factor sign-in: a stored secret cannot be decrypted", error.message),
          Effect.fail(
            new Unavailable({
              message: "Two-factor sign-in cannot be checked right now; the operator's log says why.",
              type: "secret_key_unavailable"
            })
          )
        )
      )
    )
  })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const mail = (user: UserRecord, subject: string, text: string) =>
  Effect.flatMap(Mailer, (mailer) => Effect.asVoid(Effect.forkDetach(mailer.send({ to: user.email, subject, text }))))

/**
 * Whether `code` is a current code of the user's app (not used before) or an unused recovery code; uses it up.
 * False when two-factor sign-in is off.
 */
export const checkSecondFactor = (user: UserRecord, code: string) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const state = yield* repo.twoFactorOf(user.id)
    if (state === null || state.secret === null) return false
    const at = yield* now
    if (/^[\d\s]+$/.test(code.trim())) {
      const step = verifyTotp(yield* unseal(state.secret), code, at.getTime(), state.lastStep)
      return step !== null && (yield* repo.useTotpStep(user.id, step))
    }
    const normalized = normalizeRecoveryCode(code)
    if (normalized === null || !(yield* repo.useRecoveryCode(user.id, recoveryCodeHash(normalized), at))) return false
    const left = yield* repo.recoveryCodesLeft(user.id)
    yield* mail(
      user,
      "A sitehealth recovery code was used",
      `One of your recovery codes was just used to sign in to sitehealth; ${left} of them are left.\n\n` +
        "If this was not you, change your password from the account page and make new recovery codes there."
    )
    return true
  })

const wrongPassword = (field: string) =>
  new BadRequest({
    message: "The password is not right",
    type: "wrong_password",
    issues: [{ path: field, message: "is not the account's current password" }]
  })
const invalidCode = () =>
  new BadRequest({
    message: "This code is not right, was already used or has expired; type the current one from the app",
    type: "invalid_code",
    issues: [{ path: "body.code", message: "is not a current code or an unused recovery code" }]
  })

/** The current password again, before a change to the account's security; throttled as log-in is. */
export const confirmPassword = (user: UserRecord, password: string, field = "body.password") =>
  Effect.gen(function*() {
    const throttle = yield* AuthThrottle
    yield* throttle.guard("password", user.email, true)
    if (!(yield* verifyPassword(password, user.passwordHash ?? (yield* dummyHash))) || user.passwordHash === null) {
      yield* throttle.failed("password", user.email)
      return yield* wrongPassword(field)
    }
    yield* throttle.succeeded("password", user.email)
  })

/** A code of the app or a recovery code, before a change to two-factor sign-in; throttled as the second step is. */
const confirmCode = (user: UserRecord, code: string) =>
  Effect.gen(function*() {
    const throttle = yield* AuthThrottle
    yield* throttle.guard("second-factor", user.email, true)
    if (!(yield* checkSecondFactor(user, code))) {
      yield* throttle.failed("second-factor", user.email)
      return yield* invalidCode()
    }
    yield* throttle.succeeded("second-factor", user.email)
  })

export const twoFactorStatus = (user: UserRecord) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const state = yield* repo.twoFactorOf(user.id)
    const enabledAt = state?.enabledAt ?? null
    const status: typeof TwoFactorStatus.Type = {
      enabled: enabledAt !== null,
      enabledAt: enabledAt?.toISOString() ?? null,
      recoveryCodesLeft: enabledAt === null ? 0 : yield* repo.recoveryCodesLeft(user.id)
    }
    return status
  })

const alreadyOn = () =>
  new Conflict({
    message: "Two-factor sign-in is already on; turn it off first to set up another app",
    type: "two_factor_enabled"
  })
const alreadyOff = () => new Conflict({ message: "Two-factor sign-in is off", type: "two_factor_disabled" })

export const setUpTwoFactor = (user: UserRecord, password: string) =>
  Effect.gen(function*() {
    yield* confirmPassword(user, password)
    if (user.twoFactorEnabledAt !== null) return yield* alreadyOn()
    const secret = newTotpSecret()
    yield* (yield* AuthRepo).setTwoFactorPending(user.id, yield* seal(secret), yield* now)
    const uri = otpauthUri({ secret, accountName: user.email })
    return { secret, otpauthUri: uri, qrSvg: yield* Effect.promise(() => qrSvg(uri)) }
  })

const hashesOf = (codes: ReadonlyArray<string>) => codes.map((code) => recoveryCodeHash(normalizeRecoveryCode(code)!))

export const enableTwoFactor = (user: UserRecord, code: string) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const throttle = yield* AuthThrottle
    if (user.twoFactorEnabledAt !== null) return yield* alreadyOn()
    const state = yield* repo.twoFactorOf(user.id)
    const at = yield* now
    if (
      state?.pending == null || state.pendingAt === null || at.getTime() - state.pendingAt.getTime() > SETUP_LIFETIME_MS
    ) {
      return yield* new BadRequest({
        message: "Start the setup again: scan the new QR code, then type its first code",
        type: "no_setup"
      })
    }
    yield* throttle.guard("second-factor", user.email, true)
    const step = verifyTotp(yield* unseal(state.pending), code, at.getTime(), null)
    if (step === null) {
      yield* throttle.failed("second-factor", user.email)
      return yield* invalidCode()
    }
    const codes = newRecoveryCodes()
    if (!(yield* repo.enableTwoFactor(user.id, state.pending, at, step, hashesOf(codes)))) return yield* alreadyOn()
    yield* mail(
      user,
      "Two-factor sign-in is on for your sitehealth account",
      "Two-factor sign-in was turned on for your sitehealth account: from now on, logging in asks for a code from " +
        "your authenticator app after the password.\n\nIf this was not you, reset your password now and write to us."
    )
    return { recoveryCodes: codes }
  })

export const disableTwoFactor = (user: UserRecord, password: string, code: string) =>
  Effect.gen(function*() {
    yield* confirmPassword(user, password)
    if (user.twoFactorEnabledAt === null) return yield* alreadyOff()
    yield* confirmCode(user, code)
    yield* (yield* AuthRepo).disableTwoFactor(user.id)
    yield* mail(
      user,
      "Two-factor sign-in is off for your sitehealth account",
      "Two-factor sign-in was turned off for your sitehealth account: logging in now asks for the password only.\n\n" +
        "If this was not you, reset your password now, then turn two-factor sign-in on again from the account page."
    )
    return yield* twoFactorStatus({ ...user, twoFactorEnabledAt: null })
  })

export const regenerateRecoveryCodes = (user: UserRecord, password: string, code: string) =>
  Effect.gen(function*() {
    yield* confirmPassword(user, password)
    if (user.twoFactorEnabledAt === null) return yield* alreadyOff()
    yield* confirmCode(user, code)
    const codes = newRecoveryCodes()
    yield* (yield* AuthRepo).replaceRecoveryCodes(user.id, hashesOf(codes))
    yield* mail(
      user,
      "New sitehealth recovery codes",
      "Ten new recovery codes were made for your sitehealth account; the old ones no longer work.\n\n" +
        "If this was not you, change your password from the account page now."
    )
    return { recoveryCodes: codes }
  })
