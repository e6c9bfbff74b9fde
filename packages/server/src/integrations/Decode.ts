/**
 * Provider payloads are decoded by schemas that name only the fields a connector uses (unknown fields are
 * ignored). A payload that does not match fails the run as a `malformed` ProviderError whose message says
 * which provider, which record and which field, and what came instead:
 *   `stripe: subscription sub_123: items.data[0].price.unit_amount: expected number | null, got "abc"`
 * The run then writes nothing (connectors fetch everything before their one write), so the stored data
 * stays as it was. Values are quoted at most 40 characters long: enough to recognise, not a record's dump.
 */
import { Effect, Result, Schema, SchemaIssue } from "effect"
import { ProviderError } from "./ProviderHttp.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** `items.data[0].price` */
export const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((text, key) =>
    typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`, "")

const at = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = input
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}

const shown = (value: unknown): string => {
  if (value === undefined) return "nothing"
  if (Array.isArray(value)) return "an array"
  if (value !== null && typeof value === "object") return "an object"
  const text = JSON.stringify(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1)

/** The first thing wrong with `input`: `path: expected X, got Y` (`path: missing` for an absent field). */
export const describeIssue = (issue: SchemaIssue.Issue, input: unknown): string => {
  const first = formatter(issue).issues[0]
  if (first === undefined) return "does not match"
  const path = (first.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p))
  const where = path.length === 0 ? "" : `${pathText(path)}: `
  if (first.message === "Missing key") return `${where}missing`
  // JSON has no undefined: an optional field's "| undefined" would only add noise.
  const expected = lowerFirst(first.message).replace(/ \| undefined\b|\bundefined \| /g, "")
  return `${where}${expected}, got ${shown(at(input, path))}`
}

export const malformed = (provider: string, record: string | null, why: string) =>
  new ProviderError({ kind: "malformed", status: 200, message: `${provider}: ${record === null ? "" : `${record}: `}${why}` })

/**
 * A decoder of one kind of record: `decode(input, record)` is the value, or the malformed ProviderError
 * naming `provider` and `record` (a Stripe object, a Plausible date, a Search Console row key…).
 */
export const decoder = <S extends Schema.Decoder<unknown>>(provider: string, schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input: unknown, record: string | null): Result.Result<S["Type"], ProviderError> => {
    const result = decode(input)
    return Result.isSuccess(result) ? Result.succeed(result.success) : Result.fail(malformed(provider, record, describeIssue(result.failure.issue, input)))
  }
}

/** `decoder` as an Effect, for a whole answer. */
export const decodeEffect = <S extends Schema.Decoder<unknown>>(provider: string, schema: S) => {
  const decode = decoder(provider, schema)
  return (input: unknown, record: string | null): Effect.Effect<S["Type"], ProviderError> => Effect.fromResult(decode(input, record))
}
