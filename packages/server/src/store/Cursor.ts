/** Opaque list cursors: base64url of the last item's (createdAt, id). */
import { badRequest } from "@sitehealth/domain/Errors"
import type { BadRequest } from "@sitehealth/domain/Errors"
import * as Effect from "effect/Effect"
import { looksLikeId } from "./Ids.ts"
import type { Page, PageRequest } from "./Records.ts"

export const encodeCursor = (item: { readonly createdAt: Date; readonly id: string }): string =>
  Buffer.from(JSON.stringify([item.createdAt.getTime(), item.id])).toString("base64url")

/**
 * The instants a cursor may name: 1970 to the end of year 9999, which holds every row's creation time. A
 * forged cursor beyond ±8.64e15 ms decoded to an Invalid Date, which the Postgres driver cannot encode: a
 * 500 instead of this 400 (found by the fuzz suite). The tighter range also keeps out instants before
 * Postgres' own (4713 BC).
 */
const MAX_CURSOR_MS = Date.UTC(10_000, 0, 1) - 1

/** What a cursor names, or null when it is not one this API returned. */
export const parseCursor = (cursor: string): NonNullable<PageRequest["after"]> | null => {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) && parsed.length === 2 && Number.isSafeInteger(parsed[0]) && parsed[0] >= 0 &&
      parsed[0] <= MAX_CURSOR_MS && typeof parsed[1] === "string" && looksLikeId(parsed[1])
    ) {
      return { createdAt: new Date(parsed[0]), id: parsed[1] }
    }
  } catch {
    // fall through
  }
  return null
}

export const decodeCursor = (cursor: string | undefined): Effect.Effect<PageRequest["after"], BadRequest> => {
  if (cursor === undefined) return Effect.succeed(null)
  const after = parseCursor(cursor)
  return after !== null
    ? Effect.succeed(after)
    : Effect.fail(badRequest("cursor is not a cursor this API returned", "invalid_cursor"))
}

/** Fetch limit + 1 rows, return limit of them and a cursor when there was one more. */
export const toPage = <A extends { readonly createdAt: Date; readonly id: string }>(
  rows: ReadonlyArray<A>,
  limit: number
): Page<A> => {
  const items = rows.slice(0, limit)
  return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]) : null }
}

/** The memory stores' equivalent of `ORDER BY created_at, id` with a keyset cursor. */
export const pageInMemory = <A extends { readonly createdAt: Date; readonly id: string }>(
  all: Iterable<A>,
  page: PageRequest,
  direction: "asc" | "desc"
): Page<A> => {
  const sign = direction === "asc" ? 1 : -1
  const cmp = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
    sign * (a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const sorted = [...all].sort(cmp)
  const after = page.after
  const rest = after === null ? sorted : sorted.filter((x) => cmp(x, after) > 0)
  return toPage(rest.slice(0, page.limit + 1), page.limit)
}
