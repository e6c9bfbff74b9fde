/**
 * The few Stripe REST calls the connector makes, over ProviderHttp: authenticated GETs and cursor paging
 * (`limit=100` + `starting_after=<last id>` until `has_more` is false). Pages are handed to a callback one
 * at a time and dropped, so a sync holds compact rows, never the raw JSON of a whole account.
 */
import { Effect } from "effect"
import type { ConnectionContext } from "../Connector.ts"
import { ProviderError } from "../ProviderHttp.ts"

/**
 * Pinned so that object shapes never change under us when Stripe ships a new version or the account's
 * default version is upgraded in the dashboard. 2024-06-20 is the last version where subscriptions carry
 * `current_period_start` and a singular `discount`, and invoice lines carry `price`, `proration` and
 * `subscription` at the top level (2025-03-31 "basil" moved them under `parent` / `pricing` / items).
 */
export const STRIPE_VERSION = "2024-06-20"

/** Stripe's maximum page size. */
export const PAGE_SIZE = 100

export type StripeObject = Readonly<Record<string, unknown>>

export interface PageCounter {
  pages: number
}

const malformed = (path: string, what: string) =>
  new ProviderError({ kind: "malformed", status: 200, message: `Stripe ${path}: ${what}` })

const headersOf = (ctx: ConnectionContext): Record<string, string> => ({
  authorization: `Bearer ${ctx.credentials.secret_key ?? ""}`,
  "stripe-version": STRIPE_VERSION
})

const urlOf = (ctx: ConnectionContext, path: string, params: ReadonlyArray<readonly [string, string]>) => {
  const query = new URLSearchParams(params as Array<[string, string]>).toString()
  return `${ctx.baseUrl}${path}${query === "" ? "" : `?${query}`}`
}

/** One GET; the body must be a JSON object. */
export const getObject = (ctx: ConnectionContext, path: string, params: ReadonlyArray<readonly [string, string]> = []) =>
  ctx.http.request({ method: "GET", url: urlOf(ctx, path, params), headers: headersOf(ctx) }).pipe(
    Effect.flatMap((response) =>
      response.json !== null && typeof response.json === "object" && !Array.isArray(response.json)
        ? Effect.succeed(response.json as StripeObject)
        : Effect.fail(malformed(path, "the body is not a JSON object"))
    )
  )

/**
 * Every object of a list endpoint, page after page, each passed to `onItem` as it arrives. A page without
 * a `data` array or a `has_more` boolean, or an item without an id, fails the run as malformed: stopping
 * early would silently drop history.
 */
export const listAll = (
  ctx: ConnectionContext,
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  counter: PageCounter,
  /** Returns a description of what is wrong with the item, or undefined when it was taken. */
  onItem: (item: StripeObject) => string | undefined,
  startingAfter: string | null = null
): Effect.Effect<number, ProviderError> =>
  Effect.gen(function*() {
    let after: string | null = startingAfter
    let items = 0
    for (;;) {
      const page = yield* getObject(ctx, path, [
        ...params,
        ["limit", String(PAGE_SIZE)],
        ...(after === null ? [] : [["starting_after", after] as const])
      ])
      counter.pages += 1
      const data = page.data
      if (!Array.isArray(data) || typeof page.has_more !== "boolean") {
        return yield* Effect.fail(malformed(path, "a list page without `data` and `has_more`"))
      }
      for (const item of data) {
        if (item === null || typeof item !== "object" || typeof (item as StripeObject).id !== "string") {
          return yield* Effect.fail(malformed(path, "a list item without an id"))
        }
        const wrong = onItem(item as StripeObject)
        if (wrong !== undefined) return yield* Effect.fail(malformed(path, `${(item as StripeObject).id}: ${wrong}`))
        items += 1
      }
      if (!page.has_more) return items
      if (data.length === 0) return yield* Effect.fail(malformed(path, "`has_more` is true on an empty page"))
      after = (data[data.length - 1] as StripeObject).id as string
    }
  })

// ---------------------------------------------------------------------------------------------------
// Field readers: Stripe's JSON is trusted for shape only after these checks.
// ---------------------------------------------------------------------------------------------------

export const str = (o: StripeObject, key: string): string | null => (typeof o[key] === "string" ? (o[key] as string) : null)

export const int = (o: StripeObject, key: string): number | null => {
  const v = o[key]
  return typeof v === "number" && Number.isFinite(v) ? Math.round(v) : null
}

export const obj = (o: StripeObject, key: string): StripeObject | null => {
  const v = o[key]
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as StripeObject) : null
}

/** An expandable field: the id whether it came as a string or as an expanded object. */
export const idOf = (o: StripeObject, key: string): string | null => {
  const v = o[key]
  if (typeof v === "string") return v
  return v !== null && typeof v === "object" && typeof (v as StripeObject).id === "string" ? ((v as StripeObject).id as string) : null
}

/** Unix seconds → ISO instant. */
export const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString()
