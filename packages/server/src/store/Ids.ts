/** Prefixed, unguessable ids (`prj_…`, `tok_…`): 16 base62 characters ≈ 95 bits from the CSPRNG. */
import * as Crypto from "node:crypto"

export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

export const randomBase62 = (length: number): string => {
  let out = ""
  // Rejection sampling keeps every character uniformly likely (248 = 4 × 62).
  while (out.length < length) {
    for (const byte of Crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

export type IdPrefix = "acc" | "prj" | "tok" | "exp" | "syn"

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(16)}`

const ID_SHAPE = /^[a-z]{3}_[0-9A-Za-z]{1,64}$/

/**
 * Whether a string could be one of our ids. Repositories answer "not found" for anything else without
 * asking the database, so ids with NUL bytes or other junk never reach a query as a 500.
 */
export const looksLikeId = (s: string): boolean => ID_SHAPE.test(s)
