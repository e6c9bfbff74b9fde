/**
 * Signed, expiring, single-use links (email verification, password reset, the demo's one-time login) and the
 * CSRF tokens, all under one HMAC-SHA-256 key (SITEHEALTH_SIGNING_KEY, else random per process).
 *
 * A link token is `<payload>.<mac>`, both base64url: the payload is JSON `{p: purpose, u: user id, e: expiry
 * (epoch ms), n: nonce, v?: the user's password version}`. Verification checks the spelling (each part is
 * the one canonical base64url text of its bytes: no padding, no whitespace, no other unused bits — Node's
 * decoder accepts all of those, and each spelling once counted as a new, unused link: docs/security.md), the MAC
 * (timingSafeEqual), the purpose and the expiry. Single use is the caller's `AuthRepo.useLink` on the link's
 * `id`, the SHA-256 of its purpose and nonce: what the MAC covers, not how the token happens to be spelled.
 * A reset link carries the password version it was made for: any password change ends every older one.
 */
import { INVITATION_DAYS } from "@sitehealth/domain/DashboardTeam"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Crypto from "node:crypto"
import { AppConfig } from "../platform/Config.ts"

/**
 * verify, reset, magic: mailed or printed links. challenge: the second step of a log-in with two-factor sign-in
 * (answered by log-in, never mailed). device: the cookie of a browser that has logged in to the account before
 * (Throttle.ts lets it in while the account is under attack). invite: a team invitation (its `u` is the
 * invitation's id, not a user's; the invitation's row makes it single use).
 */
export type LinkPurpose = "verify" | "reset" | "magic" | "challenge" | "device" | "invite"

export const LINK_LIFETIME_MS: Record<LinkPurpose, number> = {
  verify: 24 * 3_600_000,
  reset: 3_600_000,
  magic: 24 * 3_600_000,
  challenge: 5 * 60_000,
  device: 180 * 86_400_000,
  invite: INVITATION_DAYS * 86_400_000
}

export interface SignedLink {
  readonly userId: string
  readonly expiresAt: Date
  /** SHA-256 of the purpose and the nonce, hex: the single-use key, the same however the token is spelled. */
  readonly id: string
  /** The password version a reset link was made for (null for other links). */
  readonly version: number | null
}

/** base64url as Node writes it: the only spelling a token may have. */
const CANONICAL = /^[A-Za-z0-9_-]+$/
export const isCanonicalBase64Url = (text: string): boolean =>
  CANONICAL.test(text) && Buffer.from(text, "base64url").toString("base64url") === text

export interface SigningShape {
  readonly mac: (data: string) => Buffer
  readonly sign: (purpose: LinkPurpose, userId: string, now: number, version?: number) => string
  /**
   * The link's user and expiry; null when forged, malformed, not canonically spelled, of another purpose or expired.
   */
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
          "SITEHEALTH_SIGNING_KEY is not set: email links and CSRF tokens are signed with a random key that dies " +
            "with this process"
        )
      }
      const mac = (data: string) => Crypto.createHmac("sha256", key).update(data).digest()
      return Signing.of({
        mac,
        sign: (purpose, userId, now, version) => {
          const payload = Buffer.from(JSON.stringify({
            p: purpose,
            u: userId,
            e: now + LINK_LIFETIME_MS[purpose],
            n: Crypto.randomBytes(12).toString("base64url"),
            ...(version === undefined ? {} : { v: version })
          })).toString("base64url")
          return `${payload}.${mac(`link:${payload}`).toString("base64url")}`
        },
        verify: (purpose, token, now) => {
          const [payload, signature, ...rest] = token.split(".")
          if (!payload || !signature || rest.length > 0) return null
          if (!isCanonicalBase64Url(payload) || !isCanonicalBase64Url(signature)) return null
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
          const { e, n, p, u, v } = body as { p?: unknown; u?: unknown; e?: unknown; n?: unknown; v?: unknown }
          if (p !== purpose || typeof u !== "string" || typeof e !== "number" || e <= now) return null
          if (typeof n !== "string" || n.length < 16) return null
          return {
            userId: u,
            expiresAt: new Date(e),
            id: Crypto.createHash("sha256").update(`${purpose}:${n}`).digest("hex"),
            version: typeof v === "number" && Number.isSafeInteger(v) ? v : null
          }
        },
        csrfToken: (hash) => mac(`csrf:${hash}`).toString("base64url")
      })
    })
  )
}
