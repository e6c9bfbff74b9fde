/** The analytics report: traffic by period. */
import { Schema } from "effect"
import { DateOnly, Money, Period, ProjectId, Rate } from "./Common.ts"
import { Window } from "./Projects.ts"

export const TrafficTotals = Schema.Struct({
  visitors: Schema.Int.annotate({ description: "Sum of daily unique visitors" }),
  pageviews: Schema.Int,
  sessions: Schema.Int,
  bounceRate: Rate.annotate({ description: "Single-page sessions / sessions" }),
  pagesPerSession: Schema.NullOr(Schema.Number).annotate({ description: "pageviews / sessions" }),
  avgSessionSeconds: Schema.NullOr(Schema.Number).annotate({ description: "Total session seconds / sessions" })
}).annotate({ identifier: "TrafficTotals" })
export type TrafficTotals = typeof TrafficTotals.Type

export const Analytics = Schema.Struct({
  projectId: ProjectId,
  period: Period,
  window: Window,
  timezone: Schema.String,
  totals: TrafficTotals,
  previous: Schema.NullOr(Schema.Struct({ window: Window, totals: TrafficTotals })).annotate({
    description: "The same-length window just before; null for period=all"
  }),
  change: Schema.Struct({
    visitors: Rate,
    pageviews: Rate,
    sessions: Rate
  }).annotate({ description: "(current − previous) / previous" }),
  series: Schema.Array(
    Schema.Struct({ date: DateOnly, visitors: Schema.Int, pageviews: Schema.Int, sessions: Schema.Int })
  ).annotate({ description: "One point per day of the window (days without data count 0)" })
}).annotate({ identifier: "Analytics" })
export type Analytics = typeof Analytics.Type

