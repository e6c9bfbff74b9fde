/**
 * How every repository meets its database. Rows are decoded with a row schema at the boundary (only the
 * columns the repository reads), so nothing untyped travels further in.
 *
 * Failures of the database itself, and rows that do not have the shape their table promises, are DEFECTS
 * rather than typed failures: no caller can act on them. What happens to them is decided in one place each:
 * an HTTP request answers a transient SqlError (connection refused, server restarting) 503 with Retry-After
 * and any other defect a logged 500 (http/RequestErrors.ts); the worker logs and retries on its next tick.
 * A repository's typed failures are kept for what a caller can act on (not found, conflicts).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import * as SqlError from "effect/sql/SqlError"

/** A stored row that does not match its table's shape (a hand edit, a half-applied migration): a defect. */
export class CorruptRow extends Data.TaggedError("CorruptRow")<{
  readonly table: string
  readonly reason: string
}> {
  override get message(): string {
    return `corrupt row in ${this.table}: ${this.reason}`
  }
}

/**
 * Column shapes as @effect/sql-pg delivers them: bigint (int8) as a JS bigint, date as "YYYY-MM-DD" text,
 * timestamptz as a Date, json/jsonb parsed, text[] as an array, bytea as a Uint8Array.
 */
export const Int8 = Schema.Union([
  Schema.Finite,
  // Amounts in minor units and counters stay far below 2^53; Number() is exact there.
  Schema.BigInt.pipe(Schema.decodeTo(Schema.Finite, SchemaTransformation.transform({ decode: Number, encode: BigInt })))
])
/** numeric arrives as its decimal text (exact); a double precision column as a number. */
export const Numeric = Schema.Union([Schema.Finite, Schema.FiniteFromString])
export const Instant = Schema.Date
export const Day = Schema.String
export const Bytes = Schema.Uint8Array

/** A json column holding an array: parsed by @effect/sql-pg, text under other driver settings. */
export const JsonArray = Schema.Union([Schema.Array(Schema.Unknown), Schema.String])

/**
 * The elements of a JsonArray column as the positional tuples the query's json_build_array builds. For bulk
 * reads only (months of daily rows per report): the tuple type is written next to that SELECT and checked by
 * review rather than decoded element by element, which would cost more than the query. The column itself is
 * decoded (JsonArray) so a missing or non-array column is still a CorruptRow.
 */
export const tuplesOf = <T extends ReadonlyArray<unknown>>(value: ReadonlyArray<unknown> | string): ReadonlyArray<T> =>
  (typeof value === "string" ? JSON.parse(value) : value) as ReadonlyArray<T>

/**
 * The database's failures (SqlError) become defects; a repository's own typed failures, and those of a
 * caller's work run inside its transaction, pass through. The SqlError itself is the defect, so
 * RequestErrors can still tell a database outage (503) from a bug (500).
 */
export const dieOnSqlError = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  Effect.catchIf(self, SqlError.isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>

/**
 * Decodes the rows of one query with a row schema; a row that does not match is a CorruptRow defect naming
 * the table and the column. Synchronous decoding: no fiber per row on list endpoints.
 */
export const rowsOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S) => {
  const decode = Schema.decodeUnknownResult(Schema.Array(row))
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<S["Type"]>> => {
    const result = decode(rows)
    return Result.isSuccess(result)
      ? Effect.succeed(result.success)
      : Effect.die(new CorruptRow({ table, reason: result.failure.message }))
  }
}

/** As rowsOf, for a query that returns at most one row: the row, or null. */
export const firstOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S) => {
  const decode = Schema.decodeUnknownResult(row)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<S["Type"] | null> => {
    if (rows.length === 0) return Effect.succeed(null)
    const result = decode(rows[0])
    return Result.isSuccess(result)
      ? Effect.succeed(result.success)
      : Effect.die(new CorruptRow({ table, reason: result.failure.message }))
  }
}

/** As rowsOf, for INSERT/UPDATE … RETURNING that must yield its row: none is a defect too. */
export const singleOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S) => {
  const decode = firstOf(table, row)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<S["Type"]> =>
    Effect.flatMap(
      decode(rows),
      (r) =>
        r === null ? Effect.die(new CorruptRow({ table, reason: "the statement returned no row" })) : Effect.succeed(r)
    )
}

/**
 * For bulk reads (tens of thousands of rows: a report's query rows, a project's whole payment history),
 * where decoding every row would cost more than the query. The driver types every row of a column alike
 * (by its OID), so decoding the FIRST row checks the column types and a drifted schema still surfaces as a
 * CorruptRow; the rest are read as the same shape. The row schema must therefore not transform (its Type is
 * its Encoded up to brands: convert bigint and numeric text with Number() where the row is read) and its
 * nullable columns must say so in the type.
 */
export const bulkRowsOf = <S extends Schema.ConstraintDecoder<unknown>>(table: string, row: S) => {
  const decode = Schema.decodeUnknownResult(row)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<S["Type"]>> => {
    if (rows.length === 0) return Effect.succeed([])
    const result = decode(rows[0])
    return Result.isSuccess(result)
      ? Effect.succeed(rows as ReadonlyArray<S["Type"]>)
      : Effect.die(new CorruptRow({ table, reason: result.failure.message }))
  }
}

/** A bigint (int8) or numeric column, or a sum of one, before Number(): the driver's bigint or decimal text. */
export const Wide = Schema.Union([Schema.Number, Schema.BigInt, Schema.String])
