/**
 * The pure crypto of two-factor sign-in for the dashboard: TOTP secrets, codes and their check, the
 * otpauth:// URI and its QR code, and the single-use recovery codes. No I/O but node:crypto and the QR library.
 *
 * A secret is 20 random bytes (160 bits, RFC 4226's recommendation), shown and stored as RFC 4648 base32
 * without padding, the spelling authenticator apps take. A code is RFC 6238 TOTP over RFC 4226 HOTP
 * (HMAC-SHA-1, 6 digits, 30-second steps from T0 = 0). `verifyTotp` accepts the current step or one either
 * side (clock drift), compares in constant time and returns the step it matched: the caller stores it, and any
 * code of that step or an earlier one is refused from then on (a code is used once: no replay).
 *
 * Recovery codes are 10 characters of an unambiguous alphabet, shown as `xxxxx-xxxxx`; only their hash is kept.
 */
import * as Crypto from "node:crypto"

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** RFC 4648 base32, upper case, without padding. */
export const base32Encode = (bytes: Uint8Array): string => {
  let out = ""
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff
    bits += 8
    while (bits >= 5) {
      bits -= 5
      out += BASE32[(buffer >>> bits) & 31]
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31]
  return out
}

/**
 * The bytes of base32 text; spaces and case are ignored, as is trailing `=` padding. null on any other
 * character, or a length no byte string encodes to (1, 3 or 6 characters past a multiple of 8).
 */
export const base32Decode = (text: string): Buffer | null => {
  const clean = text.replace(/\s+/g, "").toUpperCase().replace(/=+$/, "")
  if ([1, 3, 6].includes(clean.length % 8)) return null
  const out: Array<number> = []
  let buffer = 0
  let bits = 0
  for (const char of clean) {
    const value = BASE32.indexOf(char)
    if (value < 0) return null
    buffer = ((buffer << 5) | value) & 0xffff
    bits += 5
    if (bits >= 8) {
      bits -= 8
      out.push((buffer >>> bits) & 0xff)
    }
  }
  return Buffer.from(out)
}

/** A new secret: 20 random bytes as unpadded base32 (32 characters). */
export const newTotpSecret = (): string => base32Encode(Crypto.randomBytes(20))

/** RFC 4226 HOTP: HMAC-SHA-1 of the 8-byte big-endian counter, dynamic truncation, zero-padded to `digits`. */
export const hotp = (secret: Buffer, counter: number, digits = 6): string => {
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new RangeError(`HOTP counter must be a non-negative integer: ${counter}`)
  }
  if (!Number.isInteger(digits) || digits < 1 || digits > 10) {
    throw new RangeError(`HOTP digits must be 1 to 10: ${digits}`)
  }
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = Crypto.createHmac("sha1", secret).update(message).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return (binary % 10 ** digits).toString().padStart(digits, "0")
}

export const TOTP_DIGITS = 6
export const TOTP_STEP_SECONDS = 30

/** The RFC 6238 time step of an instant (T0 = 0). */
export const totpStep = (timeMs: number, stepSeconds = TOTP_STEP_SECONDS): number =>
  Math.floor(timeMs / 1000 / stepSeconds)

/** RFC 6238 TOTP of a base32 secret at an instant. Throws on a secret that is not base32. */
export const totpAt = (
  secretBase32: string,
  timeMs: number,
  options?: { readonly digits?: number; readonly stepSeconds?: number }
): string => {
  const secret = base32Decode(secretBase32)
  if (secret === null) throw new TypeError("TOTP secret is not base32")
  return hotp(secret, totpStep(timeMs, options?.stepSeconds ?? TOTP_STEP_SECONDS), options?.digits ?? TOTP_DIGITS)
}

/**
 * The time step a 6-digit code (spaces inside ignored) matches: the current one or one either side. null when
 * the code is malformed, matches none of them, or matches only steps <= `lastUsedStep` (replay). Every
 * candidate is computed and compared with timingSafeEqual, whatever matched first.
 */
export const verifyTotp = (
  secretBase32: string,
  code: string,
  nowMs: number,
  lastUsedStep: number | null
): number | null => {
  const digits = code.replace(/\s+/g, "")
  if (!/^[0-9]{6}$/.test(digits)) return null
  const secret = base32Decode(secretBase32)
  if (secret === null || secret.length === 0) return null
  const given = Buffer.from(digits)
  const now = totpStep(nowMs)
  let matched: number | null = null
  for (const step of [now - 1, now, now + 1]) {
    if (step < 0) continue
    const same = Crypto.timingSafeEqual(Buffer.from(hotp(secret, step, TOTP_DIGITS)), given)
    if (same && (lastUsedStep === null || step > lastUsedStep)) matched = step
  }
  return matched
}

/**
 * The Google Authenticator key URI:
 * `otpauth://totp/<issuer>:<account>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`,
 * label parts and parameter values percent-encoded (encodeURIComponent: a space is %20, never `+`).
 */
export const otpauthUri = (
  options: { readonly secret: string; readonly accountName: string; readonly issuer?: string }
): string => {
  const issuer = options.issuer ?? "sitehealth"
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(options.accountName)}`
  const params = [
    ["secret", options.secret],
    ["issuer", issuer],
    ["algorithm", "SHA1"],
    ["digits", String(TOTP_DIGITS)],
    ["period", String(TOTP_STEP_SECONDS)]
  ].map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join("&")
  return `otpauth://totp/${label}?${params}`
}

/** The QR code of `text` as an SVG document. qrcode is loaded on first use, not at server start-up. */
export const qrSvg = async (text: string): Promise<string> => {
  // A CommonJS package: under `default` both in Node and in the server's bundle; its named exports as a fallback.
  const module = await import("qrcode")
  const QRCode = module.default ?? module
  return QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 2 })
}

export const RECOVERY_CODE_COUNT = 10
/** Lower-case letters and digits without 0/o, 1/i/l: nothing to misread when typed off paper. */
export const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
const RECOVERY_LENGTH = 10

/** Ten fresh recovery codes, `xxxxx-xxxxx`, each character drawn uniformly with crypto.randomInt. */
export const newRecoveryCodes = (): Array<string> => {
  const codes = new Set<string>()
  while (codes.size < RECOVERY_CODE_COUNT) {
    let code = ""
    for (let i = 0; i < RECOVERY_LENGTH; i++) code += RECOVERY_ALPHABET[Crypto.randomInt(RECOVERY_ALPHABET.length)]
    codes.add(`${code.slice(0, 5)}-${code.slice(5)}`)
  }
  return [...codes]
}

/** A typed recovery code as its 10 alphabet characters (case, spaces and dashes ignored); null otherwise. */
export const normalizeRecoveryCode = (input: string): string | null => {
  const code = input.toLowerCase().replace(/[\s-]+/g, "")
  if (code.length !== RECOVERY_LENGTH) return null
  for (const char of code) if (!RECOVERY_ALPHABET.includes(char)) return null
  return code
}

/**
 * What is stored of a recovery code: SHA-256 hex of `recovery:` + the normalized code. A fast hash suffices:
 * each code is random with ~49 bits of entropy (31^10) and single use, not a human-chosen password that an
 * offline dictionary attack could guess, so a slow password hash would buy little.
 */
export const recoveryCodeHash = (normalized: string): string =>
  Crypto.createHash("sha256").update(`recovery:${normalized}`).digest("hex")
