/**
 * Google Search Console (SEO) over the Search Analytics API. A run exchanges the stored refresh token
 * for an access token, then asks for the days [from, today − 2] (Search Console lags 2–3 days; asking
 * for days it has not finished just returns nothing for them):
 *   ["date"] (the property's daily totals, anonymised queries included), ["date","query"], ["date","page"],
 * each paged with rowLimit/startRow; query and page rows are trimmed to the store's per-day top while
 * they stream in. Everything goes into ONE SearchRepo.write (one transaction that bumps data_version).
 * dataThrough is simply the last day that came back. A full run goes back 16 months (what GSC keeps);
 * an incremental run starts three days before the last day stored, because GSC revises recent days.
 * Docs: docs/integrations-gsc.md.
 */
import { SEARCH_REVISED_DAYS } from "@sitehealth/domain/Seo"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { addDays, addMonths, todayIn, zonedInstant } from "../../metrics/Dates.ts"
import { SearchRepo } from "../../search/SearchRepo.ts"
import type { Connector, SyncContext } from "../Connector.ts"
import { makeTokenSource, type TokenSource } from "./GoogleToken.ts"
import { GSC_ROW_LIMIT, makeGscClient } from "./GscApi.ts"
import { type GscRow, keyedOf, lastDay, makeTopPerDay, pageRows, queryRows, totalRows } from "./GscMap.ts"

export interface GscOptions {
  /** Rows per request (the API's maximum, 25,000, unless a test wants many pages). */
  readonly rowLimit?: number
  /** Calendar months a full run goes back (Search Console keeps 16). */
  readonly historyMonths?: number
  /** The newest day asked for is today − lagDays. */
  readonly lagDays?: number
  /** Days before the last stored day an incremental run starts again (GSC revises recent days). */
  readonly reviseDays?: number
  /** Access tokens, cached per credentials; one per connector unless a caller shares one. */
  readonly tokens?: TokenSource
}

/** What a run hands to the next incremental one: the last day Search Console had data for. */
export interface GscState {
  readonly dataThrough: string | null
}

/** A state whose dataThrough is not a day (null: nothing fetched yet) starts over as a first run. */
const StoredState = Schema.Struct({ dataThrough: Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/)) })
const decodeState = Schema.decodeUnknownOption(StoredState)

export const readGscState = (state: unknown): { readonly dataThrough: string } | null =>
  Option.getOrNull(decodeState(state))

/** Search Console's days are Pacific Time dates. */
export const GSC_TIMEZONE = "America/Los_Angeles"

/**
 * How many days to add to a Search Console (Pacific) date to get the website's day (docs/metrics.md: days
 * are the project's): the project-local date of 11:30 Pacific on today's Pacific date, minus that date —
 * −1, 0 or +1. A Pacific day is stored under the local day that holds the most of it (a day of Search
 * Console has no hours to re-cut at another midnight). One shift per run, so two Pacific days never land on
 * one local day. 0 for the Americas, Europe and Africa (every zone up to UTC+4, +5 while the Pacific is on
 * summer time); +1 east of that (most of Asia, Oceania).
 */
export const pacificDayShift = (timezone: string, now: Date): number => {
  const pacificToday = todayIn(GSC_TIMEZONE, now)
  const reference = new Date(zonedInstant(pacificToday, 11 * 60 + 30, GSC_TIMEZONE))
  return Math.round((Date.parse(todayIn(timezone, reference)) - Date.parse(pacificToday)) / 86_400_000)
}

/** The days a run asks for: Search Console's own (Pacific) dates. */
export const gscRange = (
  ctx: Pick<SyncContext, "timezone" | "now" | "mode" | "state">,
  o: Required<Omit<GscOptions, "tokens">>
): { readonly from: string; readonly to: string } => {
  const today = todayIn(GSC_TIMEZONE, ctx.now)
  const to = addDays(today, -o.lagDays)
  const fullFrom = addMonths(today, -o.historyMonths)
  const last = ctx.mode === "incremental" ? readGscState(ctx.state) : null
  let from = last === null ? fullFrom : addDays(last.dataThrough, -o.reviseDays)
  if (from > to) from = addDays(to, -o.reviseDays)
  if (from < fullFrom) from = fullFrom
  return { from, to }
}

export const makeGscConnector = (options: GscOptions = {}): Connector<SearchRepo> => {
  const o = {
    rowLimit: options.rowLimit ?? GSC_ROW_LIMIT,
    historyMonths: options.historyMonths ?? 16,
    lagDays: options.lagDays ?? 2,
    // The days the SEO report marks provisional are the ones asked again (domain/Seo.ts).
    reviseDays: options.reviseDays ?? SEARCH_REVISED_DAYS
  }
  const tokens = options.tokens ?? makeTokenSource()
  return {
    provider: "google-search-console",
    kind: "search",
    defaultBaseUrl: "https://www.googleapis.com",
    baseUrlEnv: "GSC_API_BASE",
    credentialFields: ["client_id", "client_secret", "refresh_token", "site_url"],

    // The token exchange proves the OAuth client and refresh token; GET of the property proves access.
    validate: (ctx) =>
      Effect.gen(function*() {
        const client = yield* makeGscClient(ctx, tokens, o.rowLimit)
        yield* client.site()
      }),

    sync: (ctx) =>
      Effect.gen(function*() {
        const client = yield* makeGscClient(ctx, tokens, o.rowLimit)
        const { from, to } = gscRange(ctx, o)

        // Everything is fetched before anything is written: a failure leaves the stored data as it was.
        const totalsRaw: Array<GscRow> = []
        yield* client.queryAll({ startDate: from, endDate: to, dimensions: ["date"] }, (rows) =>
          void totalsRaw.push(...rows))
        const queries = makeTopPerDay()
        const fetchedQueries = yield* client.queryAll(
          { startDate: from, endDate: to, dimensions: ["date", "query"] },
          (rows) =>
            rows.forEach((r) => queries.add(keyedOf(r)))
        )
        const pages = makeTopPerDay()
        const fetchedPages = yield* client.queryAll(
          { startDate: from, endDate: to, dimensions: ["date", "page"] },
          (rows) => rows.forEach((r) => pages.add(keyedOf(r)))
        )

        const write = {
          totals: totalRows(totalsRaw),
          queries: queryRows(queries.rows()),
          pages: pageRows(pages.rows())
        }
        // Pacific dates → the website's days; the cursor stays in Search Console's own dates.
        const shift = pacificDayShift(ctx.timezone, ctx.now)
        const local = <R extends { readonly day: string }>(rows: ReadonlyArray<R>): Array<R> =>
          shift === 0 ? [...rows] : rows.map((r) => ({ ...r, day: addDays(r.day, shift) }))
        const repo = yield* SearchRepo
        yield* repo.write(ctx.projectId, {
          totals: local(write.totals),
          queries: local(write.queries),
          pages: local(write.pages)
        })
        const previous = readGscState(ctx.state)?.dataThrough ?? null
        const fetchedThrough = lastDay(write.totals)
        const state: GscState = {
          dataThrough: fetchedThrough === null
            ? previous
            : previous !== null && previous > fetchedThrough
            ? previous
            : fetchedThrough
        }
        return {
          counts: {
            days: write.totals.length,
            queries: write.queries.length,
            pages: write.pages.length,
            queryRowsFetched: fetchedQueries,
            pageRowsFetched: fetchedPages,
            requests: client.requests()
          },
          state
        }
      })
  }
}

export const gscConnector: Connector<SearchRepo> = makeGscConnector()
