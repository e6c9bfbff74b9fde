/** Read-only reports: analytics by period, revenue, churn, SEO. */
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

export const RevenueWindow = Schema.Struct({
  window: Window,
  gross: Money,
  refunds: Money,
  net: Money,
  newSubscriptions: Schema.Int,
  churnedSubscriptions: Schema.Int
}).annotate({ identifier: "RevenueWindow" })

export const Revenue = Schema.Struct({
  projectId: ProjectId,
  currency: Schema.String,
  asOf: Schema.NullOr(DateOnly).annotate({ description: "Last day with payment data; null when none" }),
  mrr: Money.annotate({ description: "Monthly recurring revenue at asOf (yearly plans count 1/12)" }),
  arr: Money.annotate({ description: "12 × MRR" }),
  activeSubscriptions: Schema.Int,
  arpu: Schema.NullOr(Money).annotate({ description: "MRR / active subscriptions; null with none" }),
  last30Days: RevenueWindow,
  previous30Days: RevenueWindow,
  change: Schema.Struct({ net: Rate, mrr: Rate })
}).annotate({ identifier: "Revenue" })
export type Revenue = typeof Revenue.Type

export const Churn = Schema.Struct({
  projectId: ProjectId,
  window: Window,
  subscriptionsAtStart: Schema.Int,
  newSubscriptions: Schema.Int,
  churnedSubscriptions: Schema.Int,
  subscriptionsAtEnd: Schema.Int,
  customerChurnRate: Rate.annotate({ description: "Churned subscriptions / subscriptions at start of the window" }),
  mrrAtStart: Money,
  churnedMrr: Money,
  revenueChurnRate: Rate.annotate({ description: "Churned MRR / MRR at start of the window" }),
  previous: Schema.Struct({ window: Window, customerChurnRate: Rate, revenueChurnRate: Rate })
}).annotate({ identifier: "Churn" })
export type Churn = typeof Churn.Type

export const SeoTotals = Schema.Struct({
  clicks: Schema.Int,
  impressions: Schema.Int,
  ctr: Rate.annotate({ description: "clicks / impressions" }),
  averagePosition: Schema.NullOr(Schema.Number).annotate({ description: "Impression-weighted average position (1 = top)" })
}).annotate({ identifier: "SeoTotals" })

export const Seo = Schema.Struct({
  projectId: ProjectId,
  window: Window.annotate({ description: "The last 28 days (as Search Console reports)" }),
  totals: SeoTotals,
  previous: Schema.Struct({ window: Window, totals: SeoTotals }),
  change: Schema.Struct({ clicks: Rate, impressions: Rate })
}).annotate({ identifier: "Seo" })
export type Seo = typeof Seo.Type
