/**
 * Plausible (traffic) over the Stats API v2. A run asks, for the local days [from, today]:
 *   daily totals (["time:day"]), hourly totals (["time:hour"], the last `hourlyDays` days only — hours
 *   serve the today/yesterday reports), top pages (["time:day","event:page"], paged), top sources
 * (["time:day","visit:source"], paged), top countries (["time:day","visit:country"], paged) and one aggregate query per
 * calendar month (range uniques);
 * then writes everything in ONE TrafficRepo.write (one transaction that bumps data_version).
 * A full run goes back `historyMonths` calendar months; an incremental run starts two days before the
 * last day the previous run fetched, because Plausible's recent days still change (late events).
 * Docs: docs/integrations-plausible.md.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { addDays, addMonths, startOfMonth, todayIn } from "../../metrics/Dates.ts"
import { TrafficRepo } from "../../traffic/TrafficRepo.ts"
import type { Connector, SyncContext } from "../Connector.ts"
import { makePlausibleClient, PLAUSIBLE_PAGE_LIMIT } from "./PlausibleApi.ts"
import {
  COUNTRY_METRICS,
  countryRows,
  dayRows,
  hourRows,
  monthSpans,
  PAGE_METRICS,
  pageRows,
  SOURCE_METRICS,
  sourceRows,
  TRAFFIC_METRICS,
  uniquesRow
} from "./PlausibleMap.ts"

export interface PlausibleOptions {
  /** Rows per page of a breakdown (Plausible's maximum, 10,000, unless a test wants many pages). */
  readonly pageLimit?: number
  /** How many calendar months before the current one a full run fetches (24: the 12m report and its previous). */
  readonly historyMonths?: number
  /** How many local days (today included) of hourly rows a run fetches. */
  readonly hourlyDays?: number
  /** Days before the last fetched day an incremental run starts again (late events). */
  readonly lateDays?: number
}

/** What a run hands to the next incremental one: the last local day it fetched. */
export interface PlausibleState {
  readonly lastDay: string
  /** The site's zone as the last run read it (null: the key could not read it; the project's was used). */
  readonly siteTimezone?: string | null
}

const PlausibleState = Schema.Struct({
  lastDay: Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/)),
  siteTimezone: Schema.optionalKey(Schema.NullOr(Schema.String))
})
const decodeState = Schema.decodeUnknownOption(PlausibleState)

export const readPlausibleState = (state: unknown): PlausibleState | null => Option.getOrNull(decodeState(state))

/** The local days a run covers: [from, today] and, inside it, the days with hourly rows. */
export const plausibleRange = (
  ctx: Pick<SyncContext, "timezone" | "now" | "mode" | "state">,
  options: Required<PlausibleOptions>
): { readonly from: string; readonly today: string; readonly hoursFrom: string } => {
  const today = todayIn(ctx.timezone, ctx.now)
  const last = ctx.mode === "incremental" ? readPlausibleState(ctx.state) : null
  const fullFrom = startOfMonth(addMonths(today, -options.historyMonths))
  let from = last === null ? fullFrom : addDays(last.lastDay, -options.lateDays)
  if (from > today) from = addDays(today, -options.lateDays) // a state from a clock ahead of ours
  if (from < fullFrom) from = fullFrom
  const recent = addDays(today, -(options.hourlyDays - 1))
  return { from, today, hoursFrom: recent > from ? recent : from }
}

export const makePlausibleConnector = (options: PlausibleOptions = {}): Connector<TrafficRepo> => {
  const o: Required<PlausibleOptions> = {
    pageLimit: options.pageLimit ?? PLAUSIBLE_PAGE_LIMIT,
    historyMonths: options.historyMonths ?? 24,
    hourlyDays: options.hourlyDays ?? 35,
    lateDays: options.lateDays ?? 2
  }
  return {
    provider: "plausible",
    kind: "analytics",
    defaultBaseUrl: "https://plausible.io",
    baseUrlEnv: "PLAUSIBLE_API_BASE",
    credentialFields: ["api_key", "site_id"],

    // The smallest real question: yesterday's visitors (UTC is close enough to prove the key and site).
    validate: (ctx) =>
      Effect.gen(function*() {
        const client = yield* makePlausibleClient(ctx, o.pageLimit)
        const yesterday = addDays(todayIn("UTC", new Date(yield* Clock.currentTimeMillis)), -1)
        yield* client.query({ metrics: ["visitors"], dateRange: [yesterday, yesterday] })
      }),

    sync: (ctx) =>
      Effect.gen(function*() {
        const client = yield* makePlausibleClient(ctx, o.pageLimit)
        // Plausible labels days and hours in the SITE's time zone: read it (Sites API); a key that may not
        // read it leaves the project's zone, as before (docs/integrations-plausible.md).
        // The lookup is not worth a failed sync: a provider fault there (the queries will meet it too, and
        // fail the run as they should) leaves the zone the last run read, else the project's.
        const read = yield* client.siteTimezone.pipe(
          Effect.catch((e) =>
            Effect.as(Effect.logWarning(`plausible: the site's time zone could not be read (${e.message})`), undefined)
          )
        )
        const siteTimezone = read === undefined ? readPlausibleState(ctx.state)?.siteTimezone ?? null : read
        const timezone = siteTimezone ?? ctx.timezone
        if (siteTimezone !== null && siteTimezone !== ctx.timezone) {
          yield* Effect.logWarning(
            `plausible: the site's time zone is ${siteTimezone}, the project's ${ctx.timezone}: hours are placed ` +
              `exactly; days, pages and sources are the site's days`
          )
        }
        const { from, today, hoursFrom } = plausibleRange({ ...ctx, timezone }, o)
        const range = [from, today] as const

        // Everything is fetched before anything is written: a failure leaves the stored data as it was.
        const days = yield* client.query({ metrics: TRAFFIC_METRICS, dateRange: range, dimensions: ["time:day"] }, true)
        const hours = yield* client.query({
          metrics: TRAFFIC_METRICS,
          dateRange: [hoursFrom, today],
          dimensions: ["time:hour"]
        }, true)
        const pages = yield* client.query({
          metrics: PAGE_METRICS,
          dateRange: range,
          dimensions: ["time:day", "event:page"]
        }, true)
        const sources = yield* client.query({
          metrics: SOURCE_METRICS,
          dateRange: range,
          dimensions: ["time:day", "visit:source"]
        }, true)
        const countries = yield* client.query(
          { metrics: COUNTRY_METRICS, dateRange: range, dimensions: ["time:day", "visit:country"] },
          true
        )
        const uniques = []
        for (const span of monthSpans(from, today)) {
          const rows = yield* client.query({ metrics: ["visitors"], dateRange: [span.from, span.to] })
          uniques.push(uniquesRow(span, rows))
        }

        const write = {
          days: dayRows(days, from, today),
          hours: hourRows(hours, hoursFrom, today, timezone, ctx.now.getTime()),
          pages: pageRows(pages),
          sources: sourceRows(sources),
          countries: countryRows(countries),
          uniques
        }
        const repo = yield* TrafficRepo
        yield* repo.write(ctx.projectId, write)
        const state: PlausibleState = { lastDay: today, siteTimezone }
        return {
          counts: {
            days: write.days.length,
            hours: write.hours.length,
            pages: write.pages.length,
            sources: write.sources.length,
            countries: write.countries.length,
            uniques: write.uniques.length,
            requests: client.requests()
          },
          state
        }
      })
  }
}

export const plausibleConnector: Connector<TrafficRepo> = makePlausibleConnector()
