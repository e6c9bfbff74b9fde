/**
 * Signed, expiring, single-use links (email verification, password reset, the demo's one-time login) and the
 * CSRF tokens, all under one HMAC-SHA-256 key (SITEHEALTH_SIGNING_KEY, else random per process).
 *
 * A link token is `<payload>.<mac>`, both base64url: the payload is JSON `{p: purpose, u: user id, e: expiry
 * (epoch ms), n: nonce}`. Verification checks the MAC (timingSafeEqual), the purpose and the expiry; single
 * use is the caller's `AuthRepo.useLink` on the SHA-256 of the token.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Crypto from "node:crypto"
import { AppConfig } from "../Config.ts"

export type LinkPurpose = "verify" | "reset" | "magic"

export const LINK_LIFETIME_MS: Record<LinkPurpose, number> = {
  verify: 24 * 3_600_000,
  reset: 3_600_000,
  magic: 24 * 3_600_000
}

export interface SignedLink {
  readonly userId: string
  readonly expiresAt: Date
  /** SHA-256 of the whole token, hex: the single-use key. */
  readonly id: string
}

export interface SigningShape {
  readonly mac: (data: string) => Buffer
  readonly sign: (purpose: LinkPurpose, userId: string, now: number) => string
  /** The link's user and expiry; null when forged, malformed, of another purpose or expired. */
  readonly verify: (purpose: LinkPurpose, token: string, now: number) => SignedLink | null
  /** The CSRF token of a session: an HMAC of its secret's hash, so it needs no storage and dies with it. */
  readonly csrfToken: (sessionSecretSha256: string) => string
}

/** Without SITEHEALTH_SIGNING_KEY: one random key for the whole process (the start-up login link included). */
const processKey = Crypto.randomBytes(32)
let warnedAboutProcessKey = false

export class Signing extends Context.Service<Signing, SigningShape>()("sitehealth/dashboard/Signing") {
  static readonly layer = Layer.effect(
    Signing,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const key = config.signingKey === null ? processKey : Buffer.from(Redacted.value(config.signingKey))
      if (config.signingKey === null && !warnedAboutProcessKey) {
        warnedAboutProcessKey = true
        yield* Effect.logWarning(
          "SITEHEALTH_SIGNING_KEY is not set: email links and CSRF tokens are signed with a random key that dies with this process"
        )
      }
      const mac = (data: string) => Crypto.createHmac("sha256", key).update(data).digest()
      return Signing.of({
        mac,
        sign: (purpose, userId, now) => {
          const payload = Buffer.from(
            JSON.stringify({ p: purpose, u: userId, e: now + LINK_LIFETIME_MS[purpose], n: Crypto.randomBytes(12).toString("base64url") })
          ).toString("base64url")
          return `${payload}.${mac(`link:${payload}`).toString("base64url")}`
        },
        verify: (purpose, token, now) => {
          const [payload, signature, ...rest] = token.split(".")
          if (!payload || !signature || rest.length > 0) return null
          const expected = mac(`link:${payload}`)
          const actual = Buffer.from(signature, "base64url")
          if (actual.length !== expected.length || !Crypto.timingSafeEqual(actual, expected)) return null
          let body: unknown
          try {
            body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
          } catch {
            return null
          }
          if (typeof body !== "object" || body === null) return null
          const { e, p, u } = body as { p?: unknown; u?: unknown; e?: unknown }
          if (p !== purpose || typeof u !== "string" || typeof e !== "number" || e <= now) return null
          return { userId: u, expiresAt: new Date(e), id: Crypto.createHash("sha256").update(token).digest("hex") }
        },
        csrfToken: (hash) => mac(`csrf:${hash}`).toString("base64url")
      })
    })
  )
}
