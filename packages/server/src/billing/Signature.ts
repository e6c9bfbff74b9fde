/**
 * Stripe's webhook signature (https://docs.stripe.com/webhooks#verify-manually): the `Stripe-Signature` header is
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`; each v1 is HMAC-SHA256, keyed with the endpoint's signing secret
 * (`whsec_…`, used whole), of `<t>.<raw body>`. Several v1 appear while a secret is being rolled: any one
 * matching is enough; other schemes (v0, the test-mode scheme) are ignored. A timestamp more than the tolerance
 * away from our clock is refused, so a captured delivery cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** Stripe's libraries' default. */
export const SIGNATURE_TOLERANCE_SECONDS = 300

export type SignatureProblem = "missing" | "malformed" | "mismatch" | "stale"

/** The hex HMAC Stripe puts in v1 for this timestamp and body. */
export const expectedSignature = (secret: string, timestamp: number, body: Uint8Array | string): string =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")

/** null when the header signs `body` with `secret` within the tolerance of `nowSeconds`; else the problem. */
export const verifySignature = (
  header: string | undefined,
  body: Uint8Array | string,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS
): SignatureProblem | null => {
  if (header === undefined || header.trim() === "") return "missing"
  let timestamp: number | null = null
  const v1: Array<string> = []
  for (const item of header.split(",")) {
    const at = item.indexOf("=")
    if (at <= 0) continue
    const key = item.slice(0, at).trim()
    const value = item.slice(at + 1).trim()
    if (key === "t" && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === "v1" && /^[0-9a-f]{64}$/i.test(value)) v1.push(value.toLowerCase())
  }
  if (timestamp === null || v1.length === 0) return "malformed"
  const expected = Buffer.from(expectedSignature(secret, timestamp, body), "hex")
  const matches = v1.some((candidate) => timingSafeEqual(Buffer.from(candidate, "hex"), expected))
  if (!matches) return "mismatch"
  return Math.abs(nowSeconds - timestamp) > toleranceSeconds ? "stale" : null
}
