/** Projects (websites) and what the service says about each: health, briefing, signals. */
import { Schema } from "effect"
import { DateOnly, Money, NextCursor, ProjectId, Timestamp } from "./Common.ts"

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

export const HealthSnapshot = Schema.Struct({
  score: Schema.NullOr(Schema.Int).annotate({ description: "0–100; null when there is no data yet" }),
  confidence: Schema.Number.annotate({ description: "0–1: how much data backs the score" }),
  status: HealthStatus,
  computedAt: Timestamp
}).annotate({ identifier: "HealthSnapshot" })
export type HealthSnapshot = typeof HealthSnapshot.Type

export const Project = Schema.Struct({
  id: ProjectId,
  name: Schema.String,
  domain: Schema.String,
  timezone: Schema.String.annotate({ description: "IANA time zone the project's days are counted in" }),
  currency: Schema.String.annotate({ description: "ISO 4217 reporting currency" }),
  createdAt: Timestamp,
  health: HealthSnapshot
}).annotate({ identifier: "Project" })
export type Project = typeof Project.Type

export const ProjectList = Schema.Struct({ projects: Schema.Array(Project), nextCursor: NextCursor })

export const Window = Schema.Struct({ from: DateOnly, to: DateOnly }).annotate({
  identifier: "Window",
  description: "Inclusive range of calendar days in the project's time zone"
})

export const HealthDimension = Schema.Struct({
  name: Dimension,
  score: Schema.NullOr(Schema.Int).annotate({ description: "0–100; null when the dimension has no data" }),
  weight: Schema.Number.annotate({ description: "Share of the overall score (weights of dimensions with data are renormalised to 1)" }),
  confidence: Schema.Number.annotate({ description: "0–1: share of days in both windows with data" }),
  status: HealthStatus,
  metric: Schema.String.annotate({ description: "The figure the dimension is scored on" }),
  current: Schema.NullOr(Schema.Number).annotate({ description: "The metric over the current window" }),
  previous: Schema.NullOr(Schema.Number).annotate({ description: "The metric over the previous window" }),
  change: Schema.NullOr(Schema.Number).annotate({ description: "(current − previous) / previous; null when previous is 0 or missing" }),
  summary: Schema.String
}).annotate({ identifier: "HealthDimension" })
export type HealthDimension = typeof HealthDimension.Type

export const Health = Schema.Struct({
  projectId: ProjectId,
  score: Schema.NullOr(Schema.Int),
  confidence: Schema.Number,
  status: HealthStatus,
  computedAt: Timestamp,
  window: Schema.Struct({ current: Window, previous: Window }),
  dimensions: Schema.Array(HealthDimension)
}).annotate({ identifier: "Health" })
export type Health = typeof Health.Type

export const Signal = Schema.Struct({
  id: Schema.String.annotate({ description: "Stable id of this signal for this day, `sig_…`" }),
  dimension: Dimension,
  severity: Severity,
  kind: Schema.String.annotate({ description: "Machine-readable kind, e.g. traffic_drop, revenue_growth, churn_spike" }),
  title: Schema.String,
  detail: Schema.String,
  metric: Schema.String,
  current: Schema.NullOr(Schema.Number),
  previous: Schema.NullOr(Schema.Number),
  change: Schema.NullOr(Schema.Number),
  window: Window,
  detectedOn: DateOnly
}).annotate({ identifier: "Signal" })
export type Signal = typeof Signal.Type

export const SignalList = Schema.Struct({ signals: Schema.Array(Signal), nextCursor: NextCursor })

export const Priority = Schema.Struct({
  rank: Schema.Int,
  dimension: Dimension,
  severity: Severity,
  title: Schema.String,
  action: Schema.String.annotate({ description: "What to do about it" }),
  signalId: Schema.String
}).annotate({ identifier: "Priority" })

export const Briefing = Schema.Struct({
  projectId: ProjectId,
  date: DateOnly.annotate({ description: "Today in the project's time zone" }),
  generatedAt: Timestamp,
  headline: Schema.String,
  health: HealthSnapshot,
  yesterday: Schema.Struct({
    date: DateOnly,
    visitors: Schema.Int,
    pageviews: Schema.Int,
    revenue: Money.annotate({ description: "Net revenue (gross − refunds) booked that day" }),
    newSubscriptions: Schema.Int,
    churnedSubscriptions: Schema.Int
  }),
  priorities: Schema.Array(Priority)
}).annotate({ identifier: "Briefing" })
export type Briefing = typeof Briefing.Type
