/**
 * Rows in bounded slices, for statements that take a list: one INSERT (or `= ANY(…)`) per slice keeps a
 * statement well under Postgres's 65 535 parameters and its JSON parameter a bounded size.
 */
import * as Arr from "effect/Array"

/** Rows per statement. */
export const CHUNK = 1000

/** Non-empty slices of at most `size` rows, in order (`sql.insert` takes a non-empty list). */
export const chunks = <A>(rows: ReadonlyArray<A>, size: number = CHUNK): Array<Arr.NonEmptyReadonlyArray<A>> => {
  const out: Array<Arr.NonEmptyReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += size) {
    const slice = rows.slice(i, i + size)
    if (Arr.isReadonlyArrayNonEmpty(slice)) out.push(slice)
  }
  return out
}
