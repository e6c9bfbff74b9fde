/**
 * The events sitehealth sends to a website's webhook endpoints (Standard Webhooks: docs/alerts.md), each kind with
 * the schema of its payload. The OpenAPI document lists them under `webhooks` (Api.ts), one operation per kind;
 * the server encodes each event it writes to the outbox with these schemas, so what a receiver gets is what is
 * documented.
 */
import * as Schema from "effect/Schema"
import { DateOnly, Integer, Money, ProjectId, Timestamp, TokenId } from "./Common.ts"
import { Provider } from "./Integrations.ts"
import { Severity, Signal } from "./Projects.ts"

export const EVENT_KINDS = [
  "signal.opened",
  "signal.resolved",
  "briefing.ready",
  "health.changed",
  "integration.failed",
  "integration.recovered",
  "revenue.movement",
  "payment.failed",
  "token.revoked",
  "entitlement.ending",
  "webhook.test",
  "recap.ready",
  "traffic.anomaly"
] as const
export type EventKind = (typeof EVENT_KINDS)[number]
export const EventKind = Schema.Literals(EVENT_KINDS).annotate({ identifier: "EventKind" })

export const EVENT_DESCRIPTIONS: Record<EventKind, string> = {
  "signal.opened": "A signal was detected on the website (a drop, a spike, a churn rise, a lost ranking)",
  "signal.resolved": "A signal's condition no longer holds",
  "briefing.ready": "The morning briefing of the website's local day is written",
  "health.changed": "The website's health score moved by at least 5 points since the last score",
  "integration.failed": "A sync of one of the website's providers failed after being healthy",
  "integration.recovered": "A provider that had failed synced again",
  "revenue.movement": "A customer's MRR changed: new, expansion, contraction, churn or reactivation",
  "payment.failed": "A customer's payment failed",
  "token.revoked": "An access token reaching the website was revoked",
  "entitlement.ending": "The account's trial or subscription ends in 3 days",
  "webhook.test": "A test event, sent on request (POST …/webhooks/{webhookId}/test)",
  "recap.ready":
    "A destination's daily, weekly or monthly recap (its cadence): the period's largest gains and losses among " +
    "the events its rules take; sent to that destination alone",
  "traffic.anomaly":
    "An hour's visitors (or pageviews) left the website's own expected range for that hour of day and weekday: " +
    "a spike or a drop, with its likely cause and the money at stake"
}

/** The health score moves by at least this many points for a `health.changed` event. */
export const HEALTH_CHANGE_THRESHOLD = 5

const SignalEventData = Schema.Struct({
  projectId: ProjectId,
  signal: Signal
})

export const BriefingReadyData = Schema.Struct({
  projectId: ProjectId,
  day: DateOnly.annotate({ description: "The website's local day the briefing is about" }),
  score: Schema.NullOr(Integer),
  priorities: Schema.Array(Schema.Struct({
    rank: Integer,
    severity: Severity,
    title: Schema.String,
    moneyAtStake: Schema.NullOr(Money)
  })).annotate({ description: "The briefing's priorities, ranked by money at stake" })
}).annotate({ identifier: "BriefingReadyData" })

export const HealthChangedData = Schema.Struct({
  projectId: ProjectId,
  score: Integer,
  previousScore: Integer,
  change: Integer.annotate({ description: "score − previousScore; at least 5 points either way" }),
  computedAt: Timestamp
}).annotate({ identifier: "HealthChangedData" })

export const IntegrationEventData = Schema.Struct({
  projectId: ProjectId,
  provider: Provider,
  error: Schema.NullOr(Schema.String).annotate({ description: "Why the sync failed (null when recovered)" }),
  at: Timestamp
}).annotate({ identifier: "IntegrationEventData" })

export const MOVEMENT_KINDS = ["new", "expansion", "contraction", "churn", "reactivation"] as const
export const RevenueMovementData = Schema.Struct({
  projectId: ProjectId,
  customer: Schema.String.annotate({ description: "The provider's customer id" }),
  kind: Schema.Literals(MOVEMENT_KINDS),
  mrrChange: Money,
  day: DateOnly
}).annotate({ identifier: "RevenueMovementData" })

export const PaymentFailedData = Schema.Struct({
  projectId: ProjectId,
  customer: Schema.String,
  amount: Money,
  at: Timestamp
}).annotate({ identifier: "PaymentFailedData" })

export const TokenRevokedData = Schema.Struct({
  projectId: ProjectId,
  tokenId: TokenId,
  name: Schema.String,
  prefix: Schema.String.annotate({ description: "`svc_…` plus the secret's last 4 characters" }),
  revokedAt: Timestamp
}).annotate({ identifier: "TokenRevokedData" })

export const EntitlementEndingData = Schema.Struct({
  projectId: ProjectId,
  what: Schema.Literals(["trial", "subscription"]),
  endsAt: Timestamp
}).annotate({ identifier: "EntitlementEndingData" })

export const WebhookTestData = Schema.Struct({
  projectId: ProjectId,
  webhookId: Schema.String,
  message: Schema.String
}).annotate({ identifier: "WebhookTestData" })

export const CADENCES = ["live", "daily", "weekly", "monthly"] as const
export const Cadence = Schema.Literals(CADENCES).annotate({
  identifier: "Cadence",
  description: "live, or one recap.ready a day, week or month instead"
})
export type Cadence = typeof Cadence.Type

export const RecapItem = Schema.Struct({
  type: EventKind.annotate({ description: "The kind of the event(s) it sums up" }),
  title: Schema.String,
  amount: Schema.NullOr(Money).annotate({
    description: "The money it moved or puts at stake (MRR movements summed by customer); null when none"
  }),
  at: Timestamp.annotate({ description: "When (the last of its events)" })
}).annotate({ identifier: "RecapItem" })

export const RecapReadyData = Schema.Struct({
  projectId: ProjectId,
  cadence: Schema.Literals(["daily", "weekly", "monthly"]),
  from: DateOnly.annotate({ description: "The period's first local day" }),
  to: DateOnly.annotate({ description: "The period's last local day (inclusive)" }),
  gains: Schema.Array(RecapItem).annotate({ description: "The largest gains first (at most 10)" }),
  losses: Schema.Array(RecapItem).annotate({ description: "The largest losses first (at most 10)" }),
  eventCount: Integer.annotate({ description: "The events of the period its rules take" })
}).annotate({ identifier: "RecapReadyData" })

export const TrafficAnomalyCause = Schema.Struct({
  kind: Schema.Literals(["source", "page", "ranking"]),
  name: Schema.String.annotate({ description: "The referrer source, the page's path, or the search query" }),
  change: Schema.Finite.annotate({
    description: "source/page: its share of the day's visitors minus its usual share (−0.25 = 25 points less); " +
      "ranking: the places lost (average position now minus before)"
  })
}).annotate({ identifier: "TrafficAnomalyCause" })

export const TrafficAnomalyData = Schema.Struct({
  projectId: ProjectId,
  hour: Timestamp.annotate({ description: "The UTC start of the hour checked" }),
  localHour: Schema.String.annotate({ description: "The hour's start on the website's clock, e.g. 2026-03-02 14:00" }),
  direction: Schema.Literals(["spike", "drop"]),
  metric: Schema.Literals(["visitors", "pageviews"]),
  severity: Severity,
  expected: Schema.Finite.annotate({ description: "The usual value: the median of the same local hour and weekday" }),
  actual: Integer,
  range: Schema.Struct({ low: Schema.Finite, high: Schema.Finite }).annotate({
    description: "The expected range; outside it is a spike or a drop"
  }),
  weeks: Integer.annotate({ description: "How many previous weeks the expected range was computed from" }),
  cause: Schema.NullOr(TrafficAnomalyCause).annotate({
    description: "The likely cause; null when the data shows none"
  }),
  moneyAtStake: Schema.NullOr(Money).annotate({
    description: "For a drop of visitors: the lost visitors × the website's revenue per visitor; otherwise null"
  }),
  link: Schema.String.annotate({ description: "The dashboard path of the website's traffic (Analytics)" })
}).annotate({ identifier: "TrafficAnomalyData" })

/** Each kind's `data`. */
export const EVENT_DATA = {
  "signal.opened": SignalEventData.annotate({ identifier: "SignalOpenedData" }),
  "signal.resolved": SignalEventData.annotate({ identifier: "SignalResolvedData" }),
  "briefing.ready": BriefingReadyData,
  "health.changed": HealthChangedData,
  "integration.failed": IntegrationEventData,
  "integration.recovered": IntegrationEventData,
  "revenue.movement": RevenueMovementData,
  "payment.failed": PaymentFailedData,
  "token.revoked": TokenRevokedData,
  "entitlement.ending": EntitlementEndingData,
  "webhook.test": WebhookTestData,
  "recap.ready": RecapReadyData,
  "traffic.anomaly": TrafficAnomalyData
} as const

export type EventData<K extends EventKind> = (typeof EVENT_DATA)[K]["Type"]

/** The body of a delivery: `{type, timestamp, data}` as Standard Webhooks recommends. */
const eventOf = <K extends EventKind>(kind: K) =>
  Schema.Struct({
    type: Schema.Literal(kind),
    timestamp: Timestamp.annotate({ description: "When the event happened" }),
    data: EVENT_DATA[kind]
  })

const identifierOf = (kind: EventKind) =>
  `${kind.split(/[._]/).map((part) => part[0]!.toUpperCase() + part.slice(1)).join("")}Event`

/** Each kind's whole body, named as the OpenAPI document's component (`SignalOpenedEvent`…). */
export const EVENT_SCHEMAS: ReadonlyArray<readonly [EventKind, Schema.Top]> = EVENT_KINDS.map((kind) =>
  [
    kind,
    eventOf(kind).annotate({ identifier: identifierOf(kind), description: EVENT_DESCRIPTIONS[kind] })
  ] as const
)

/** The component name of a kind's body schema. */
export const eventIdentifier = identifierOf
