/** Projects (websites) and what the service says about each: health, briefing, signals. */
import * as Schema from "effect/Schema"
import { LikelyCause } from "./Annotations.ts"
import { DateOnly, Integer, Money, NextCursor, ProjectId, Timestamp } from "./Common.ts"

export const DIMENSIONS = ["traffic", "revenue", "retention", "seo", "profitability"] as const
export const Dimension = Schema.Literals(DIMENSIONS).annotate({ identifier: "Dimension" })
export type Dimension = typeof Dimension.Type

export const SEVERITIES = ["info", "warning", "critical"] as const
export const Severity = Schema.Literals(SEVERITIES).annotate({ identifier: "Severity" })
export type Severity = typeof Severity.Type

export const HealthStatus = Schema.Literals(["healthy", "watch", "at_risk", "critical", "no_data"]).annotate({
  identifier: "HealthStatus",
  description: "healthy ≥ 75, watch 55–74, at_risk 35–54, critical < 35; no_data when no dimension has data"
})
export type HealthStatus = typeof HealthStatus.Type

export const HealthSnapshot = Schema.Struct({
  score: Schema.NullOr(Integer).annotate({ description: "0–100; null when there is no data yet" }),
  confidence: Schema.Finite.annotate({ description: "0–1: how much data backs the score" }),
  status: HealthStatus,
  computedAt: Timestamp
}).annotate({ identifier: "HealthSnapshot" })
export type HealthSnapshot = typeof HealthSnapshot.Type

export const TrendPoint = Schema.Struct({
  date: DateOnly.annotate({ description: "Local day of the stored snapshot" }),
  score: Schema.NullOr(Integer)
}).annotate({ identifier: "TrendPoint" })

export const HealthTrend = Schema.Struct({
  scoreChange7d: Schema.NullOr(Integer).annotate({
    description:
      "Score now − score of the snapshot 7 days earlier (or the nearest earlier one); null when there is none"
  }),
  scoreChange30d: Schema.NullOr(Integer),
  points: Schema.Array(TrendPoint).annotate({
    description: "One stored snapshot per local day, last 30 days, oldest first"
  })
}).annotate({ identifier: "HealthTrend" })
export type HealthTrend = typeof HealthTrend.Type

export const Project = Schema.Struct({
  id: ProjectId,
  name: Schema.String,
  domain: Schema.String,
  timezone: Schema.String.annotate({ description: "IANA time zone the project's days are counted in" }),
  currency: Schema.String.annotate({ description: "ISO 4217 reporting currency" }),
  createdAt: Timestamp,
  health: HealthSnapshot,
  trend: HealthTrend
}).annotate({ identifier: "Project" })
export type Project = typeof Project.Type

export const ProjectList = Schema.Struct({ projects: Schema.Array(Project), nextCursor: NextCursor })

export const Window = Schema.Struct({ from: DateOnly, to: DateOnly }).annotate({
  identifier: "Window",
  description: "Inclusive range of calendar days in the project's time zone"
})

export const HealthDimension = Schema.Struct({
  name: Dimension,
  score: Schema.NullOr(Integer).annotate({ description: "0–100; null when the dimension has no data" }),
  weight: Schema.Finite.annotate({
    description:
      "Share of the overall score: configured weights renormalised over the dimensions that have a score; 0 without one"
  }),
  configuredWeight: Schema.Finite,
  status: HealthStatus,
  reason: Schema.String.annotate({ description: "One line saying why the dimension scored what it did" }),
  metric: Schema.String.annotate({ description: "The figure the dimension is scored on" }),
  figures: Schema.Record(Schema.String, Schema.NullOr(Schema.Finite)).annotate({
    description: "The figures the score was computed from (see docs/metrics.md, Health)"
  }),
  lastDataOn: Schema.NullOr(DateOnly).annotate({ description: "Last local day with a stored row for this dimension" }),
  stale: Schema.Boolean.annotate({ description: "The last row is older than the dimension's allowed lag" })
}).annotate({ identifier: "HealthDimension" })
export type HealthDimension = typeof HealthDimension.Type

export const Confidence = Schema.Struct({
  value: Schema.Finite.annotate({ description: "coverage × freshness × history, 0–1, 2 decimals" }),
  coverage: Schema.Finite.annotate({ description: "Configured weight of the dimensions with data ÷ total weight" }),
  freshness: Schema.Finite.annotate({
    description: "Weight-averaged over scored dimensions: 1 when fresh, 0.5 when stale"
  }),
  history: Schema.Finite.annotate({
    description: "Weight-averaged over scored dimensions: days since the first row ÷ 60, capped at 1"
  })
}).annotate({ identifier: "Confidence" })

export const Health = Schema.Struct({
  projectId: ProjectId,
  date: DateOnly.annotate({ description: "Today in the project's time zone; windows end the day before" }),
  score: Schema.NullOr(Integer),
  confidence: Schema.Finite,
  confidenceFactors: Confidence,
  status: HealthStatus,
  computedAt: Timestamp,
  window: Schema.Struct({ current: Window, previous: Window }),
  dimensions: Schema.Array(HealthDimension)
}).annotate({ identifier: "Health" })
export type Health = typeof Health.Type

export const Expected = Schema.Struct({
  value: Schema.Finite,
  low: Schema.NullOr(Schema.Finite),
  high: Schema.NullOr(Schema.Finite)
}).annotate({ identifier: "Expected", description: "The usual value and the normal range around it" })
export type Expected = typeof Expected.Type

export const Signal = Schema.Struct({
  id: Schema.String.annotate({ description: "Stable id of this occurrence of the condition, `sig_…`" }),
  dimension: Dimension,
  severity: Severity,
  kind: Schema.String.annotate({ description: "Machine-readable kind, e.g. anomaly_drop, mrr_decline, ranking_drop" }),
  subject: Schema.NullOr(Schema.String).annotate({
    description: "What the signal is about: a series, a query, a provider"
  }),
  title: Schema.String,
  detail: Schema.String,
  metric: Schema.String,
  day: Schema.NullOr(DateOnly).annotate({ description: "The complete local day the figures are about" }),
  actual: Schema.NullOr(Schema.Finite),
  expected: Schema.NullOr(Expected),
  change: Schema.NullOr(Schema.Finite).annotate({
    description: "(actual − expected) / |expected|; null when expected is 0 or missing"
  }),
  moneyAtStake: Schema.NullOr(Money).annotate({
    description: "Estimated revenue at risk, per kind as defined in docs/metrics.md (Signals)"
  }),
  detectedAt: Timestamp,
  lastSeenAt: Timestamp,
  active: Schema.Boolean,
  resolvedAt: Schema.NullOr(Timestamp),
  likelyCause: Schema.optionalKey(LikelyCause.annotate({
    description: "The owner's annotation on the signal's day or up to 3 days before; absent when there is none"
  }))
}).annotate({ identifier: "Signal" })
export type Signal = typeof Signal.Type

export const SignalList = Schema.Struct({ signals: Schema.Array(Signal), nextCursor: NextCursor })

export const Priority = Schema.Struct({
  rank: Integer,
  dimension: Dimension,
  severity: Severity,
  title: Schema.String,
  action: Schema.String.annotate({ description: "What to do about it" }),
  moneyAtStake: Schema.NullOr(Money),
  signalId: Schema.String,
  likelyCause: Schema.optionalKey(LikelyCause.annotate({
    description: "The owner's annotation on its signal's day or up to 3 days before; absent when there is none"
  }))
}).annotate({ identifier: "Priority" })
export type Priority = typeof Priority.Type

/**
 * Where a figure's data stands: `connected` (its provider has synced at least once, or its data is there),
 * `syncing` (connected, the first sync not finished yet), `not_connected` (no provider of that kind). A figure
 * whose source is not `connected` is not data: its `state` says so, and it is shown as such, never as 0.
 */
export const DATA_STATES = ["connected", "syncing", "not_connected"] as const
export const DataState = Schema.Literals(DATA_STATES).annotate({ identifier: "DataState" })
export type DataState = typeof DataState.Type

/** Each kind of data's state: analytics (Plausible), payments (Stripe), search (Search Console). */
export const DataSources = Schema.Struct({
  analytics: DataState,
  payments: DataState,
  search: DataState
}).annotate({ identifier: "DataSources" })
export type DataSources = typeof DataSources.Type

export const KeyFigure = Schema.Struct({
  value: Schema.Finite.annotate({
    description: "The figure; 0 when its source is not connected or still syncing (state says so: no data is not zero)"
  }),
  state: DataState.annotate({
    description:
      "Whether the figure is data: connected; syncing (its provider's first sync has not finished); not_connected. " +
      "Only a connected figure's value is a figure; show the others as what they are"
  }),
  usual: Schema.NullOr(Schema.Finite).annotate({ description: "Median of the same weekday over the previous 4 weeks" }),
  change: Schema.NullOr(Schema.Finite).annotate({
    description: "(value − usual) / |usual|; null when usual is 0 or missing"
  })
}).annotate({ identifier: "KeyFigure" })
export type KeyFigure = typeof KeyFigure.Type

export const Briefing = Schema.Struct({
  projectId: ProjectId,
  date: DateOnly.annotate({ description: "Today in the project's time zone" }),
  generatedAt: Timestamp.annotate({ description: "When the day's first edition (the morning's) was written" }),
  updatedAt: Schema.NullOr(Timestamp).annotate({
    description:
      "When the briefing was last recomposed during the day (a first sync landed, a new critical signal); null " +
      "while it is the edition first written"
  }),
  headline: Schema.String,
  health: HealthSnapshot.annotateKey({ description: "The health snapshot the briefing was composed from" }),
  sources: DataSources.annotateKey({
    description: "Where each kind of data stood when the briefing was composed (each figure's state is its kind's)"
  }),
  yesterday: Schema.Struct({
    date: DateOnly,
    currency: Schema.String,
    visitors: KeyFigure,
    pageviews: KeyFigure,
    netRevenue: KeyFigure.annotateKey({ description: "Gross charges − refunds that day, minor units" }),
    newCustomers: KeyFigure,
    churnedCustomers: KeyFigure,
    mrr: KeyFigure.annotateKey({ description: "MRR at the end of the day, minor units" })
  }),
  whatChanged: Schema.Array(Signal).annotate({ description: "Active signals first seen in the last day" }),
  priorities: Schema.Array(Priority)
}).annotate({ identifier: "Briefing" })
export type Briefing = typeof Briefing.Type
