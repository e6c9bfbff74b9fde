/**
 * Provider payloads are decoded by schemas that name only the fields a connector uses (unknown fields are
 * ignored). A payload that does not match fails the run as a `malformed` ProviderError whose message says
 * which provider, which record and which field, and what came instead:
 *   `stripe: subscription sub_123: items.data[0].price.unit_amount: expected number | null, got "abc"`
 * The run then fails before its final write (a streaming connector before its rollup), so what the reports
 * read stays as it was. Values are quoted at most 40 characters long: enough to recognise, not a record's dump.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { ProviderError } from "./ProviderHttp.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** `items.data[0].price` */
const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) => typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`,
    ""
  )

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
  new ProviderError({
    kind: "malformed",
    status: 200,
    message: `${provider}: ${record === null ? "" : `${record}: `}${why}`
  })

/**
 * A decoder of one kind of record: `decode(input, record)` is the value, or the malformed ProviderError
 * naming `provider` and `record` (a Stripe object, a Plausible date, a Search Console row key…).
 */
export const decoder = <S extends Schema.Decoder<unknown>>(provider: string, schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input: unknown, record: string | null): Result.Result<S["Type"], ProviderError> => {
    const result = decode(input)
    return Result.isSuccess(result)
      ? Result.succeed(result.success)
      : Result.fail(malformed(provider, record, describeIssue(result.failure.issue, input)))
  }
}

/** `decoder` as an Effect, for a whole answer. */
export const decodeEffect = <S extends Schema.Decoder<unknown>>(provider: string, schema: S) => {
  const decode = decoder(provider, schema)
  return (input: unknown, record: string | null): Effect.Effect<S["Type"], ProviderError> =>
    Effect.fromResult(decode(input, record))
}

/**
 * Every row of an answer decoded one by one, so an error names the row: `recordOf` names it from what
 * can be read of it (its date, its keys), or by position. `check` says what is wrong beyond types.
 */
export const decodeRows = <S extends Schema.Decoder<unknown>>(
  provider: string,
  schema: S,
  rows: ReadonlyArray<unknown>,
  recordOf: (raw: unknown) => string | null,
  check: (row: S["Type"]) => string | undefined
): Effect.Effect<Array<S["Type"]>, ProviderError> => {
  const decode = decoder(provider, schema)
  const out: Array<S["Type"]> = []
  for (const [i, raw] of rows.entries()) {
    const record = recordOf(raw) ?? `row #${i + 1}`
    const row = decode(raw, record)
    if (Result.isFailure(row)) return Effect.fail(row.failure)
    const wrong = check(row.success)
    if (wrong !== undefined) return Effect.fail(malformed(provider, record, wrong))
    out.push(row.success)
  }
  return Effect.succeed(out)
}

/** Names a row by a string-array field (Plausible's `dimensions`, Search Console's `keys`) when it reads as one. */
export const rowNamedBy = (field: string) => {
  const read = Schema.decodeUnknownOption(Schema.Record(Schema.Literal(field), Schema.Array(Schema.String)))
  return (raw: unknown): string | null => {
    const values = Option.getOrNull(read(raw))?.[field] ?? []
    return values.length === 0 ? null : `row ${values.join(" ")}`
  }
}
