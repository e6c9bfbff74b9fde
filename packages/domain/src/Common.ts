/** Schemas shared by every group: ids, periods, money, pagination. */
import * as Schema from "effect/Schema"

/**
 * Ids are branded so one kind cannot be passed where another is expected. The pattern is documented for
 * OpenAPI readers but not enforced on decode: a malformed id in a path or payload is a resource that does
 * not exist (404 / unknown project), never a 400, and every id we emit matches it (store/Ids.ts).
 */
const documentedPattern = (source: string) =>
  Schema.makeFilter<string>(() => true, { toJsonSchema: () => ({ pattern: source }) })
const idShaped = (prefix: string) => Schema.String.check(documentedPattern(`^${prefix}_[0-9A-Za-z]{1,64}$`))

export const ProjectId = idShaped("prj").annotate({ examples: ["prj_3kTMd9qXyVbN2LwP"] }).pipe(
  Schema.brand("ProjectId")
)
  .annotate({ description: "Project id, `prj_…`" })
export type ProjectId = typeof ProjectId.Type
export const TokenId = idShaped("tok").pipe(Schema.brand("TokenId")).annotate({ description: "Token id, `tok_…`" })
export type TokenId = typeof TokenId.Type
export const ExpenseId = idShaped("exp").pipe(Schema.brand("ExpenseId")).annotate({
  description: "Expense id, `exp_…`"
})
export type ExpenseId = typeof ExpenseId.Type
export const AnnotationId = idShaped("ann").pipe(Schema.brand("AnnotationId")).annotate({
  description: "Annotation id, `ann_…`"
})
export type AnnotationId = typeof AnnotationId.Type
export const AccountId = idShaped("acc").pipe(Schema.brand("AccountId")).annotate({
  description: "Account id, `acc_…`"
})
export type AccountId = typeof AccountId.Type
export const WebhookId = idShaped("whk").annotate({ description: "Webhook endpoint id, `whk_…`" })
export const DeliveryId = idShaped("whd").annotate({ description: "Webhook delivery id, `whd_…`" })

export const PERIODS = ["today", "yesterday", "7d", "30d", "3m", "12m", "all"] as const
export type Period = (typeof PERIODS)[number]
export const Period = Schema.Literals(PERIODS).annotate({
  description:
    "Reporting period. today/yesterday are calendar days in the project's time zone; Nd the last N days including " +
    "today; 3m/12m the last 3/12 calendar months to date; all since the first stored day. Default 30d."
})

/*
 * Numbers in the contract are `Schema.Finite` or `Integer`, never `Schema.Number`: its JSON codec spells
 * non-finite values as strings, so the OpenAPI document (and every client generated from it) would type each
 * number as `number | "Infinity" | "-Infinity" | "NaN"`. No field of this API is ever non-finite.
 */

/**
 * A safe integer, documented as `type: integer`. `Schema.Int` documents the ±2^53 safe-integer bounds on every
 * field, which only restate what a JSON number can carry exactly; the check is still `isInt` (same decoding,
 * same JSON codec, same generated values).
 */
export const Integer = Schema.Number.check(Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) }))

// Patterns carry the `u` flag: Effect exports a RegExp to JSON Schema only when it has one (without it the
// `pattern` is left out of the OpenAPI document). The matched language is the same for these ASCII patterns.
export const Currency = Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/u)).annotate({
  description: "ISO 4217 currency code, upper case"
})

/** Money is always integer minor units (cents) plus the currency. */
export const Money = Schema.Struct({
  amount: Integer.annotate({ description: "Integer amount in minor units (e.g. cents)" }),
  currency: Currency
}).annotate({ identifier: "Money" })
export type Money = typeof Money.Type

export const Rate = Schema.NullOr(Schema.Finite).annotate({
  description: "A ratio (0.05 = 5%); null when its denominator is 0"
})

export const Timestamp = Schema.String.annotate({ description: "ISO 8601 instant, UTC", format: "date-time" })
export const DateOnly = Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u)).annotate({
  description: "Calendar date YYYY-MM-DD",
  format: "date"
})

/**
 * The text of a query parameter. A query value is always a string on the wire, but OpenAPI describes a query
 * parameter by the value it spells (`type: integer` means `?limit=20`). Behind `Schema.String` the document
 * would say "string", so this string is a declaration (whose JSON Schema is empty) and each check on it states
 * what the text must spell; the checks alone decide what is accepted. It is already in query (StringTree)
 * form, so the endpoint adds no codec of its own.
 */
const QueryText = Schema.declare((u: unknown): u is string => typeof u === "string", {
  expected: "string",
  toCodecStringTree: () => undefined
})

// Plain decimal digits only: "0x10", "1e1" and " 5" are not page sizes.
const LimitFromString = QueryText.check(
  Schema.isPattern(/^[0-9]{1,3}$/, { toJsonSchema: () => ({ type: "integer", minimum: 1, maximum: 100 }) })
).annotate({ description: "Page size, 1–100 (default 50)" }).pipe(
  Schema.decodeTo(Schema.NumberFromString),
  Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))
)

/** Query fields of every list endpoint. */
export const PageQuery = {
  limit: Schema.optionalKey(LimitFromString),
  cursor: Schema.optionalKey(Schema.String.annotate({ description: "Opaque cursor from a previous page's nextCursor" }))
}
export const DEFAULT_PAGE_SIZE = 50

export const NextCursor = Schema.NullOr(Schema.String).annotate({
  description: "Pass as ?cursor= to get the next page; null on the last page"
})

/**
 * Free text a user stores: no NUL characters and no lone UTF-16 surrogates (PostgreSQL cannot store
 * either, and they are never meaningful), trimmed, within a length.
 */
export const Text = (maxLength: number) =>
  Schema.String.check(
    Schema.isTrimmed(),
    Schema.isMinLength(1),
    Schema.isMaxLength(maxLength),
    Schema.makeFilter((s: string) => !s.includes("\u0000") || "must not contain NUL characters"),
    Schema.makeFilter((s: string) => s.isWellFormed() || "must be well-formed Unicode (no lone surrogates)")
  )
