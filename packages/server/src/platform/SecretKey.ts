/**
 * The encryption key's text format, apart from the cipher (Crypto.ts): platform/Config.ts checks SITEHEALTH_SECRET_KEY
 * and SITEHEALTH_SECRET_KEY_OLD with it at start-up, and the cipher depends on AppConfig, so this cannot live
 * there without an import cycle.
 */
import * as Schema from "effect/Schema"

export const KEY_BYTES = 32

/** The key cannot be had (missing, malformed, unreadable file). */
export class SecretKeyError extends Schema.TaggedError<SecretKeyError>()("SecretKeyError", {
  message: Schema.String
}) {}

/** A 32-byte key from its text: 64 hex digits, or base64 / base64url of 32 bytes. `name` is what errors call it. */
export const parseSecretKey = (text: string, name = "SITEHEALTH_SECRET_KEY"): Uint8Array => {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return new Uint8Array(Buffer.from(t, "hex"))
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) {
    const bytes = Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    if (bytes.length === KEY_BYTES) return new Uint8Array(bytes)
  }
  throw new SecretKeyError({
    message: `${name} must be ${KEY_BYTES} bytes as base64 (44 characters) or hex (64 digits); ` +
      `generate one with: openssl rand -base64 ${KEY_BYTES}`
  })
}
