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
