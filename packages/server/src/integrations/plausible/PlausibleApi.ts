/**
 * The one Plausible call: POST {base}/api/v2/query with a bearer key. Breakdowns are paged with
 * `pagination: {limit, offset}` until a page comes back shorter than `limit`. Every answer is decoded
 * before use: a 200 whose body is not `{results: [{dimensions, metrics}]}` with the asked lengths is a
 * `malformed` failure naming the row (nothing is written). Error messages never carry the key or the site id.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ConnectionContext } from "../Connector.ts"
import { decodeEffect, decodeRows, malformed, rowNamedBy } from "../Decode.ts"
import { ProviderError } from "../ProviderHttp.ts"
import type { PlausibleRow } from "./PlausibleMap.ts"

/** Plausible's own default and maximum page size. */
export const PLAUSIBLE_PAGE_LIMIT = 10_000
/** A runaway guard: no breakdown of ours has more pages than this. */
const MAX_PAGES = 1_000

export interface PlausibleQuery {
  readonly metrics: ReadonlyArray<string>
  readonly dateRange: readonly [string, string]
  readonly dimensions?: ReadonlyArray<string>
}

export const credential = (ctx: ConnectionContext, key: string): Effect.Effect<string, ProviderError> => {
  const v = ctx.credentials[key]
  return typeof v === "string" && v.length > 0
    ? Effect.succeed(v)
    : Effect.fail(
      new ProviderError({
        kind: "invalid_request",
        status: null,
        message: `The Plausible credentials have no "${key}"`
      })
    )
}

/** Turns the client's generic failures into what an operator can act on. */
const explain = (e: ProviderError): ProviderError => {
  switch (e.kind) {
    case "unauthorized":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message:
          `Plausible refused the API key (${e.message}): the key is wrong or was revoked; create a Stats API key and ` +
          `reconnect`
      })
    case "forbidden":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message: `Plausible refused access (${e.message}): the key cannot read this site's stats`
      })
    case "not_found":
      return new ProviderError({
        kind: e.kind,
        status: e.status,
        message: `Plausible does not know this site (${e.message}): check site_id (the site's domain as in Plausible)`
      })
    default:
      return e
  }
}

const PROVIDER = "plausible"

/** A metric value: Plausible's counts, rates and means are finite and never negative (null: not computed). */
const Metric = Schema.NullOr(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
const Answer = Schema.Struct({ results: Schema.Array(Schema.Unknown) })
const Row = Schema.Struct({ dimensions: Schema.Array(Schema.String), metrics: Schema.Array(Metric) })
const decodeAnswer = decodeEffect(PROVIDER, Answer)
const rowName = rowNamedBy("dimensions")

/**
 * The rows of one answer, each decoded and checked against the query's shape. An error names the row by
 * its dimension values (its date, page or source).
 */
export const parseResults = (
  json: unknown,
  dimensions: number,
  metrics: number
): Effect.Effect<Array<PlausibleRow>, ProviderError> =>
  Effect.flatMap(
    decodeAnswer(json, "/api/v2/query"),
    (answer) =>
      decodeRows(PROVIDER, Row, answer.results, rowName, (row) =>
        row.dimensions.length !== dimensions
          ? `dimensions: expected ${dimensions} values, got ${row.dimensions.length}`
          : row.metrics.length !== metrics
          ? `metrics: expected ${metrics} values, got ${row.metrics.length}`
          : undefined)
  )

export interface PlausibleClient {
  /** One query; with `paged`, every page of it. */
  readonly query: (q: PlausibleQuery, paged?: boolean) => Effect.Effect<Array<PlausibleRow>, ProviderError>
  /** How many HTTP answers the client has used (pages included), for the run's counts. */
  readonly requests: () => number
  /**
   * The site's time zone as Plausible has it (Sites API, GET /api/v1/sites/{site_id}: `timezone`), in which
   * Plausible labels its days and hours. null when the key may not read the Sites API (a Stats API key
   * answers 401/403/404 there) or the answer names no zone this runtime knows: then the caller falls back.
   */
  readonly siteTimezone: Effect.Effect<string | null, ProviderError>
}

const SiteAnswer = Schema.Struct({ timezone: Schema.String })
const decodeSite = Schema.decodeUnknownOption(SiteAnswer)

/** Whether Intl knows the zone (an IANA name): the only zones the connector can map labels with. */
const knownZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-GB", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

export const makePlausibleClient = (
  ctx: ConnectionContext,
  pageLimit = PLAUSIBLE_PAGE_LIMIT
): Effect.Effect<PlausibleClient, ProviderError> =>
  Effect.gen(function*() {
    const apiKey = yield* credential(ctx, "api_key")
    const siteId = yield* credential(ctx, "site_id")
    let requests = 0
    const once = (q: PlausibleQuery, pagination: { limit: number; offset: number } | null) =>
      ctx.http.request({
        method: "POST",
        url: `${ctx.baseUrl}/api/v2/query`,
        headers: { authorization: `Bearer ${apiKey}` },
        json: {
          site_id: siteId,
          metrics: q.metrics,
          date_range: q.dateRange,
          ...(q.dimensions === undefined ? {} : { dimensions: q.dimensions }),
          ...(pagination === null ? {} : { pagination })
        }
      }).pipe(
        Effect.mapError(explain),
        Effect.tap(() => Effect.sync(() => void requests++)),
        Effect.flatMap((res) => parseResults(res.json, q.dimensions?.length ?? 0, q.metrics.length))
      )
    const query = (q: PlausibleQuery, paged = false) =>
      Effect.gen(function*() {
        if (!paged) return yield* once(q, null)
        const all: Array<PlausibleRow> = []
        for (let page = 0; page < MAX_PAGES; page++) {
          const rows = yield* once(q, { limit: pageLimit, offset: page * pageLimit })
          all.push(...rows)
          if (rows.length < pageLimit) return all
        }
        return yield* Effect.fail(
          malformed(PROVIDER, "/api/v2/query", `more than ${MAX_PAGES} pages of ${pageLimit} rows`)
        )
      })
    const siteTimezone = ctx.http.request({
      method: "GET",
      url: `${ctx.baseUrl}/api/v1/sites/${encodeURIComponent(siteId)}`,
      headers: { authorization: `Bearer ${apiKey}` }
    }).pipe(
      Effect.tap(() => Effect.sync(() => void requests++)),
      Effect.map((res) => {
        const site = Option.getOrNull(decodeSite(res.json))
        return site !== null && knownZone(site.timezone) ? site.timezone : null
      }),
      // Not a Sites API key (or the site is not visible to it): the stats still work, the zone is unknown.
      Effect.catchIf((e) => e.kind === "unauthorized" || e.kind === "forbidden" || e.kind === "not_found", () =>
        Effect.succeed(null))
    )
    return {
      query,
      requests: () =>
        requests,
      siteTimezone
    }
  })
