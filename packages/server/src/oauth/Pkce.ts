/** PKCE (RFC 7636), S256 only: the challenge is base64url(SHA-256(verifier)), no padding. */
import * as Crypto from "node:crypto"

/** 43–128 unreserved characters (RFC 7636 §4.1). */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
/** A SHA-256 in base64url without padding: 43 characters. */
export const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

export const challengeOf = (verifier: string): string =>
  Crypto.createHash("sha256").update(verifier).digest("base64url")

export const verifierMatches = (verifier: string, challenge: string): boolean => {
  if (!VERIFIER.test(verifier) || !CHALLENGE.test(challenge)) return false
  const a = Buffer.from(challengeOf(verifier))
  const b = Buffer.from(challenge)
  return a.length === b.length && Crypto.timingSafeEqual(a, b)
}
