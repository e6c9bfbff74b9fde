/**
 * The few Stripe REST calls the connector makes, over ProviderHttp: authenticated GETs and cursor paging
 * (`limit=100` + `starting_after=<last id>` until `has_more` is false). Pages are decoded (Decode.ts) and
 * handed to a callback one item at a time and dropped, so a sync holds compact rows, never the raw JSON of
 * a whole account.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ConnectionContext } from "../Connector.ts"
import { decodeEffect, decoder, malformed } from "../Decode.ts"
import type { ProviderError } from "../ProviderHttp.ts"

/**
 * Pinned so that object shapes never change under us when Stripe ships a new version or the account's
 * default version is upgraded in the dashboard. 2024-06-20 is the last version where subscriptions carry
 * `current_period_start` and a singular `discount`, and invoice lines carry `price`, `proration` and
 * `subscription` at the top level (2025-03-31 "basil" moved them under `parent` / `pricing` / items).
 */
export const STRIPE_VERSION = "2024-06-20"

/** Stripe's maximum page size. */
export const PAGE_SIZE = 100

const PROVIDER = "stripe"

export interface PageCounter {
  pages: number
}

/** A list page: its items are decoded one by one, so an error names the object. */
const ListPage = Schema.Struct({ data: Schema.Array(Schema.Unknown), has_more: Schema.Boolean })
const decodePage = decodeEffect(PROVIDER, ListPage)
const decodeId = Schema.decodeUnknownOption(Schema.Struct({ id: Schema.String }))

const headersOf = (ctx: ConnectionContext): Record<string, string> => ({
  authorization: `Bearer ${ctx.credentials.secret_key ?? ""}`,
  "stripe-version": STRIPE_VERSION
})

const urlOf = (ctx: ConnectionContext, path: string, params: ReadonlyArray<readonly [string, string]>) => {
  const query = new URLSearchParams(params.map(([k, v]): [string, string] => [k, v])).toString()
  return `${ctx.baseUrl}${path}${query === "" ? "" : `?${query}`}`
}

/** One page of a list endpoint. */
export const getPage = (ctx: ConnectionContext, path: string, params: ReadonlyArray<readonly [string, string]> = []) =>
  ctx.http.request({ method: "GET", url: urlOf(ctx, path, params), headers: headersOf(ctx) }).pipe(
    Effect.flatMap((response) => decodePage(response.json, `list ${path}`))
  )

/** One object (`GET /v1/subscriptions/{id}`…), decoded; an object that is gone (404) is null. */
export const getObject = <A>(
  ctx: ConnectionContext,
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  kind: ItemKind<A>,
  record: string
): Effect.Effect<A | null, ProviderError> =>
  ctx.http.request({ method: "GET", url: urlOf(ctx, path, params), headers: headersOf(ctx) }).pipe(
    Effect.flatMap((response) => decodeEffect(PROVIDER, kind.schema)(response.json, record)),
    Effect.catchIf((e) => e.kind === "not_found", () => Effect.succeed(null))
  )

/** How the items of one list are decoded and named in errors ("subscription sub_123"). */
export interface ItemKind<A> {
  readonly name: string
  readonly schema: Schema.Decoder<A>
}

/**
 * Every object of a list endpoint, page after page, each decoded and passed to `onItem` as it arrives.
 * A page without a `data` array or a `has_more` boolean, or an item that does not decode, fails the run as
 * malformed: stopping early would silently drop history.
 */
export const listAll = <A extends { readonly id: string }>(
  ctx: ConnectionContext,
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  counter: PageCounter,
  kind: ItemKind<A>,
  /** Returns a description of what is wrong with the item, or undefined when it was taken. */
  onItem: (item: A) => string | undefined,
  startingAfter: string | null = null
): Effect.Effect<number, ProviderError> =>
  eachPage(ctx, path, params, counter, kind, (items) => {
    for (const item of items) {
      const wrong = onItem(item)
      if (wrong !== undefined) return Effect.fail(malformed(PROVIDER, `${kind.name} ${item.id}`, wrong))
    }
    return Effect.void
  }, startingAfter)

/**
 * Every object of a list endpoint, handed over PAGE by page to an effectful `onPage` (which may write
 * before the next page is asked for), with the id of the page's last object — the `starting_after` a
 * resumed listing continues from. Decoding and its failures as in `listAll`.
 */
export const eachPage = <A, R>(
  ctx: ConnectionContext,
  path: string,
  params: ReadonlyArray<readonly [string, string]>,
  counter: PageCounter,
  kind: ItemKind<A>,
  onPage: (items: ReadonlyArray<A>, last: string | null, hasMore: boolean) => Effect.Effect<void, ProviderError, R>,
  startingAfter: string | null = null
): Effect.Effect<number, ProviderError, R> =>
  Effect.gen(function*() {
    const decode = decoder(PROVIDER, kind.schema)
    let after: string | null = startingAfter
    let count = 0
    for (;;) {
      const page = yield* getPage(ctx, path, [
        ...params,
        ["limit", String(PAGE_SIZE)],
        ...(after === null ? [] : [["starting_after", after] as const])
      ])
      counter.pages += 1
      const items: Array<A> = []
      let last: string | null = null
      for (const raw of page.data) {
        const id = decodeId(raw)
        const record = id._tag === "Some" ? `${kind.name} ${id.value.id}` : `${kind.name} #${count + 1}`
        if (id._tag === "None") return yield* Effect.fail(malformed(PROVIDER, record, "a list item without an id"))
        const item = decode(raw, record)
        if (Result.isFailure(item)) return yield* Effect.fail(item.failure)
        items.push(item.success)
        count += 1
        last = id.value.id
      }
      if (page.has_more && last === null) {
        return yield* Effect.fail(malformed(PROVIDER, `list ${path}`, "`has_more` is true on an empty page"))
      }
      yield* onPage(items, last ?? after, page.has_more)
      if (!page.has_more) return count
      after = last
    }
  })
