/** Prefixed, unguessable ids (`prj_…`, `tok_…`): 16 base62 characters ≈ 95 bits from the CSPRNG. */
import type { AccountId, AnnotationId, ExpenseId, ProjectId, TokenId } from "@sitehealth/domain/Common"
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

export type IdPrefix = "acc" | "prj" | "tok" | "exp" | "ann" | "syn"

/** The branded type each prefix mints (sync runs have no id type in the contract). */
export interface IdOf {
  readonly acc: AccountId
  readonly prj: ProjectId
  readonly tok: TokenId
  readonly exp: ExpenseId
  readonly ann: AnnotationId
  readonly syn: string
}

// The one place a fresh string becomes a branded id: it has the shape the brand documents by construction.
export const newId = <P extends IdPrefix>(prefix: P): IdOf[P] => `${prefix}_${randomBase62(16)}` as IdOf[P]

const ID_SHAPE = /^[a-z]{3}_[0-9A-Za-z]{1,64}$/

/**
 * Whether a string could be one of our ids. Repositories answer "not found" for anything else without
 * asking the database, so ids with NUL bytes or other junk never reach a query as a 500.
 */
export const looksLikeId = (s: string): boolean => ID_SHAPE.test(s)

/**
 * A caller-supplied string as the branded id of its kind when it has that kind's shape (it may still name
 * nothing); null otherwise. For boundaries that are not the HTTP contract: the operator CLI, the seed.
 */
export const idOf = <P extends IdPrefix>(prefix: P, s: string): IdOf[P] | null =>
  looksLikeId(s) && s.startsWith(`${prefix}_`) ? (s as IdOf[P]) : null
