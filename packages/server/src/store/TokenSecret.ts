/**
 * Token secrets, GitHub style: `svc_` + 30 random base62 characters + a 6-character base62 CRC32 of them.
 * The checksum lets the server reject a mistyped or made-up token without a database lookup. Only the
 * SHA-256 of a secret is ever stored.
 */
import * as Crypto from "node:crypto"
import * as Zlib from "node:zlib"
import { BASE62, randomBase62 } from "./Ids.ts"

export const SECRET_PREFIX = "svc_"
const RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
export const SECRET_LENGTH = SECRET_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH
const SHAPE = new RegExp(`^${SECRET_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

const base62Fixed = (n: number, width: number): string => {
  let out = ""
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

const checksumOf = (random: string): string => base62Fixed(Zlib.crc32(random), CHECKSUM_LENGTH)

export const generateSecret = (): string => {
  const random = randomBase62(RANDOM_LENGTH)
  return `${SECRET_PREFIX}${random}${checksumOf(random)}`
}

/** True when the string has the shape of a secret and its checksum matches. No I/O. */
export const isWellFormedSecret = (secret: string): boolean => {
  if (secret.length !== SECRET_LENGTH || !SHAPE.test(secret)) return false
  const random = secret.slice(SECRET_PREFIX.length, SECRET_PREFIX.length + RANDOM_LENGTH)
  return constantTimeEqual(checksumOf(random), secret.slice(SECRET_PREFIX.length + RANDOM_LENGTH))
}

/**
 * Equality of two strings in time that does not depend on where they first differ (only on their
 * lengths, which are public: fixed-size checksums, digests and keys). Use it wherever JS compares a
 * secret, a checksum or a digest of one, so response timing cannot be used to guess it byte by byte.
 */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "utf8")
  const y = Buffer.from(b, "utf8")
  return x.length === y.length && Crypto.timingSafeEqual(x, y)
}

/**
 * The stored form of a secret. Finding a token by this digest is an indexed equality lookup in the
 * database, which is not constant-time — and needs not be: its timing can at most reveal how much of a
 * stored SHA-256 digest a guess's digest shares, and that gives nothing towards a secret (finding an input
 * with a chosen digest prefix is a preimage search; the secret itself has 178 random bits). The checksum
 * above is no secret either (anyone can compute it from the random part); it is compared with
 * constantTimeEqual anyway, so that no comparison on the token path is left for a reviewer to reason about.
 */
export const hashSecret = (secret: string): string => Crypto.createHash("sha256").update(secret).digest("hex")

/** What the metadata shows to recognise a token: `svc_…` and the last 4 characters. */
export const displayPrefix = (last4: string): string => `${SECRET_PREFIX}…${last4}`
