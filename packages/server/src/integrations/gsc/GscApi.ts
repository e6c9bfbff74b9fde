/**
 * Search Console's Search Analytics API under an OAuth2 access token:
 * POST {base}/webmasters/v3/sites/{siteUrl}/searchAnalytics/query {startDate, endDate, dimensions, rowLimit, startRow}
 * paged with startRow until a page returns fewer than rowLimit rows, and GET {base}/webmasters/v3/sites/{siteUrl}
 * to check access. A 401 drops the cached access token, fetches a new one and retries once. Every answer is
 * decoded before use; a body of another shape is a `malformed` failure naming the row.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ConnectionContext } from "../Connector.ts"
import { decodeEffect, decodeRows, malformed, rowNamedBy } from "../Decode.ts"
import { ProviderError, type ProviderRequest, type ProviderResponse } from "../ProviderHttp.ts"
import { googleCredential, type TokenSource } from "./GoogleToken.ts"
import type { GscRow } from "./GscMap.ts"

/** The API's maximum rows per request. */
export const GSC_ROW_LIMIT = 25_000
/** A runaway guard: GSC serves at most 50,000 rows per day and type; no query of ours needs more pages. */
const MAX_PAGES = 10_000

export interface GscQuery {
  readonly startDate: string
  readonly endDate: string
  readonly dimensions: ReadonlyArray<"date" | "query" | "page">
}

const explain = (e: ProviderError): ProviderError => {
  switch (e.kind) {
    case "unauthorized":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message: `Search Console refused the access token even after a refresh (${e.message}): reconnect`
      })
    case "forbidden":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message:
          `Search Console refused access (${e.message}): the Google account behind the refresh token cannot read ` +
          `this property (site_url)`
      })
    case "not_found":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message: `Search Console has no such property (${e.message}): check site_url ("https://example.com/" or ` +
          `"sc-domain:example.com")`
      })
    default:
      return e
  }
}

const PROVIDER = "google-search-console"

/** Clicks, impressions and the mean position: finite, never negative. */
const Count = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
/** An answer with no rows at all has no `rows` key. */
const Answer = Schema.Struct({ rows: Schema.optional(Schema.Array(Schema.Unknown)) })
const Row = Schema.Struct({ keys: Schema.Array(Schema.String), clicks: Count, impressions: Count, position: Count })
const Site = Schema.Struct({ permissionLevel: Schema.optional(Schema.String) })
const decodeAnswer = decodeEffect(PROVIDER, Answer)
const decodeSite = decodeEffect(PROVIDER, Site)
const rowName = rowNamedBy("keys")

/**
 * The rows of one answer, each decoded and checked against the dimensions asked; an error names the row by its keys.
 */
export const parseRows = (json: unknown, dimensions: number): Effect.Effect<Array<GscRow>, ProviderError> =>
  Effect.flatMap(
    decodeAnswer(json, "searchAnalytics/query"),
    (answer) =>
      decodeRows(
        PROVIDER,
        Row,
        answer.rows ?? [],
        rowName,
        (row) =>
          row.keys.length !== dimensions ? `keys: expected ${dimensions} values, got ${row.keys.length}` : undefined
      )
  )

export interface GscClient {
  /** Every row of a query, page after page, each handed to `onRows` (so the caller can keep only the top). */
  readonly queryAll: (
    q: GscQuery,
    onRows: (rows: ReadonlyArray<GscRow>) => void
  ) => Effect.Effect<number, ProviderError>
  /** GET the property: proves the token and the account's access. */
  readonly site: () => Effect.Effect<{ readonly permissionLevel: string | null }, ProviderError>
  readonly requests: () => number
}

export const makeGscClient = (
  ctx: ConnectionContext,
  tokens: TokenSource,
  rowLimit = GSC_ROW_LIMIT
): Effect.Effect<GscClient, ProviderError> =>
  Effect.gen(function*() {
    const siteUrl = yield* googleCredential(ctx, "site_url")
    const sitePath = `${ctx.baseUrl}/webmasters/v3/sites/${encodeURIComponent(siteUrl)}`
    let requests = 0

    const call = (req: Omit<ProviderRequest, "headers">, token: string) => {
      requests++
      return ctx.http.request({ ...req, headers: { authorization: `Bearer ${token}` } }).pipe(Effect.mapError(explain))
    }
    const authed = (req: Omit<ProviderRequest, "headers">): Effect.Effect<ProviderResponse, ProviderError> =>
      Effect.gen(function*() {
        const first = yield* Effect.result(call(req, yield* tokens.get(ctx)))
        if (first._tag === "Success") return first.success
        if (first.failure.kind !== "unauthorized") return yield* Effect.fail(first.failure)
        // The access token expired or was revoked early: forget it and try once with a fresh one.
        yield* tokens.drop(ctx)
        return yield* call(req, yield* tokens.get(ctx))
      })

    const queryAll = (q: GscQuery, onRows: (rows: ReadonlyArray<GscRow>) => void) =>
      Effect.gen(function*() {
        let total = 0
        for (let page = 0; page < MAX_PAGES; page++) {
          const res = yield* authed({
            method: "POST",
            url: `${sitePath}/searchAnalytics/query`,
            json: {
              startDate: q.startDate,
              endDate: q.endDate,
              dimensions: q.dimensions,
              rowLimit,
              startRow: page * rowLimit
            }
          })
          const rows = yield* parseRows(res.json, q.dimensions.length)
          onRows(rows)
          total += rows.length
          if (rows.length < rowLimit) return total
        }
        return yield* Effect.fail(
          malformed(PROVIDER, "searchAnalytics/query", `more than ${MAX_PAGES} pages of ${rowLimit} rows`)
        )
      })

    const site = () =>
      authed({ method: "GET", url: sitePath }).pipe(
        Effect.flatMap((res) =>
          Effect.flatMap(decodeSite(res.json, "site"), ({ permissionLevel }) =>
            permissionLevel === "siteUnverifiedUser"
              ? Effect.fail(
                new ProviderError({
                  kind: "forbidden",
                  status: res.status,
                  message:
                    "The Google account is not a verified user of this Search Console property: verify it, or use an " +
                    "account that is"
                })
              )
              : Effect.succeed({ permissionLevel: permissionLevel ?? null }))
        )
      )

    return { queryAll, site, requests: () => requests }
  })
