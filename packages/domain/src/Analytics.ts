/** The analytics report: traffic for a period in the project's time zone. Formulas: docs/metrics.md, "Analytics". */
import * as Schema from "effect/Schema"
import { DateOnly, Integer, Period, ProjectId, Rate, Timestamp } from "./Common.ts"

export const VisitorsMethod = Schema.Literals(["range_uniques", "sum_of_daily_uniques", "sum_of_hourly_uniques"])
  .annotate({
    description:
      "How `visitors` was obtained: range_uniques = the provider's unique visitors for exactly this range; " +
      "sum_of_daily_uniques = the sum of each local day's uniques (a visitor seen on two days counts twice); " +
      "sum_of_hourly_uniques = the sum of each hour's uniques (today's partial-day comparison)"
  })
export type VisitorsMethod = typeof VisitorsMethod.Type

export const Granularity = Schema.Literals(["hour", "day", "month"]).annotate({
  description: "Bucket of the series: hour for today/yesterday, day for 7d/30d/3m, month for 12m/all"
})

export const AnalyticsRange = Schema.Struct({
  start: Timestamp.annotate({ description: "First instant of the range (local midnight of `from`), ISO 8601 UTC" }),
  end: Timestamp.annotate({
    description:
      "End of the range, EXCLUSIVE: local midnight after `to`; for today, the request time; for the previous period " +
      "of today, yesterday at the same local wall-clock time"
  }),
  timezone: Schema.String.annotate({ description: "The project's IANA time zone every day boundary is taken in" }),
  from: DateOnly.annotate({ description: "First local calendar day of the range" }),
  to: DateOnly.annotate({ description: "Last local calendar day of the range (inclusive)" })
}).annotate({ identifier: "AnalyticsRange" })

export const TrafficTotals = Schema.Struct({
  visitors: Integer.annotate({ description: "Unique visitors, obtained as `visitorsMethod` says" }),
  visitorsMethod: VisitorsMethod,
  pageviews: Integer.annotate({ description: "Page views in the range" }),
  sessions: Integer.annotate({ description: "Sessions that started in the range" }),
  bounceRate: Rate.annotate({ description: "Bounced (single-page) sessions / sessions; null when sessions = 0" }),
  avgSessionSeconds: Schema.NullOr(Schema.Finite).annotate({
    description: "Total session seconds / sessions, 1 decimal; null when sessions = 0"
  }),
  pagesPerSession: Schema.NullOr(Schema.Finite).annotate({
    description: "pageviews / sessions, 4 decimals; null when sessions = 0"
  })
}).annotate({ identifier: "TrafficTotals" })
export type TrafficTotals = typeof TrafficTotals.Type

export const AnalyticsPoint = Schema.Struct({
  label: Schema.String.annotate({
    description:
      "Local bucket label: hour \"2026-03-29T03:00+02:00\" (local time and UTC offset), day \"2026-03-29\", month " +
      "\"2026-03\""
  }),
  start: Timestamp.annotate({ description: "First instant of the bucket" }),
  from: DateOnly.annotate({ description: "First local day the bucket covers" }),
  to: DateOnly.annotate({ description: "Last local day the bucket covers (a month bucket is clipped to the range)" }),
  visitors: Integer.annotate({ description: "Unique visitors of the bucket, obtained as `visitorsMethod` says" }),
  visitorsMethod: VisitorsMethod,
  pageviews: Integer.annotate({ description: "Page views in the bucket" }),
  sessions: Integer.annotate({ description: "Sessions that started in the bucket" })
}).annotate({ identifier: "AnalyticsPoint" })

const Change = Rate.annotate({
  description: "(current − previous) / |previous|; null when previous is 0 or there is no previous"
})

const Previous = (what: string) =>
  Schema.NullOr(Integer).annotate({
    description:
      `${what} in the previous period (same days as \`previous\`; today: yesterday's figure × the share of ` +
      `yesterday's hourly ${what.toLowerCase()} before the cutoff); 0 when absent then; null for period=all (and ` +
      `for today without hourly figures yesterday)`
  })
const TopChange = (what: string) =>
  Rate.annotate({ description: `(${what} − previous) / previous; null when the previous is 0 or null` })

export const TopPage = Schema.Struct({
  path: Schema.String.annotate({ description: "Page path" }),
  visitors: Integer.annotate({ description: "Sum over the range's days of the page's daily unique visitors" }),
  pageviews: Integer.annotate({ description: "Page views of the page in the range" }),
  share: Rate.annotate({ description: "pageviews / totals.pageviews" }),
  previousPageviews: Previous("Page views"),
  pageviewsChange: TopChange("pageviews")
}).annotate({ identifier: "TopPage" })

export const TopSource = Schema.Struct({
  source: Schema.String.annotate({ description: "Referrer source; \"direct\" when there was none" }),
  visitors: Integer.annotate({ description: "Sum over the range's days of the source's daily unique visitors" }),
  sessions: Integer.annotate({ description: "Sessions with a page view from the source, summed over the days" }),
  share: Rate.annotate({ description: "visitors / totals.visitors" }),
  previousVisitors: Previous("Visitors"),
  visitorsChange: TopChange("visitors")
}).annotate({ identifier: "TopSource" })

export const TopCountry = Schema.Struct({
  country: Schema.String.annotate({ description: "ISO 3166-1 alpha-2 country code, upper case (\"DE\")" }),
  visitors: Integer.annotate({ description: "Sum over the range's days of the country's daily unique visitors" }),
  share: Rate.annotate({ description: "visitors / totals.visitors" }),
  previousVisitors: Previous("Visitors"),
  visitorsChange: TopChange("visitors")
}).annotate({ identifier: "TopCountry" })

export const Analytics = Schema.Struct({
  projectId: ProjectId,
  period: Period,
  granularity: Granularity,
  range: AnalyticsRange,
  totals: TrafficTotals,
  previous: Schema.NullOr(Schema.Struct({
    range: AnalyticsRange,
    totals: TrafficTotals,
    series: Schema.Array(AnalyticsPoint).annotate({
      description:
        "The previous period's points, same granularity and bucket rules as `series`, to overlay bucket by bucket; " +
        "for today: yesterday's hours up to the same local hour, each hour whole (only `totals` prorates the last " +
        "one)"
    })
  })).annotate({
    description:
      "The previous period of equal length just before `range` (today: yesterday up to the same local time; " +
      "yesterday: the day before); null for period=all"
  }),
  change: Schema.Struct({
    visitors: Change,
    pageviews: Change,
    sessions: Change,
    bounceRate: Change,
    avgSessionSeconds: Change,
    pagesPerSession: Change
  }).annotate({ description: "Relative change of each total against `previous` (0.25 = +25%)" }),
  series: Schema.Array(AnalyticsPoint).annotate({
    description:
      "One point per bucket of the range, zero-filled; hours are the UTC hours starting inside the local day (23 or " +
      "25 on DST days)"
  }),
  topPages: Schema.Array(TopPage).annotate({ description: "Up to 10 pages of the range by page views" }),
  topSources: Schema.Array(TopSource).annotate({ description: "Up to 10 sources of the range by visitors" }),
  topCountries: Schema.Array(TopCountry).annotate({
    description: "Up to 10 countries of the range by visitors; from the analytics provider (Plausible), empty for " +
      "self-collected events, which carry no country"
  })
}).annotate({ identifier: "Analytics" })
export type Analytics = typeof Analytics.Type
