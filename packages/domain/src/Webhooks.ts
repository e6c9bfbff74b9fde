/**
 * A website's webhook endpoints: where its events are sent (Events.ts), signed per Standard Webhooks with a
 * secret shown once (`whsec_…`), and the log of their deliveries.
 */
import * as Schema from "effect/Schema"
import { DeliveryId, Integer, NextCursor, ProjectId, Text, Timestamp, WebhookId } from "./Common.ts"
import { Cadence, EventKind } from "./Events.ts"
import { Severity } from "./Projects.ts"

/** A signing secret stays valid this long after a rotation, beside the new one. */
export const SECRET_OVERLAP_HOURS = 24

const Confirm = Schema.optionalKey(
  Schema.Boolean.annotate({ description: "true to act; anything else answers a preview" })
)

/** One plain address after `mailto:` (no query, no list): an email destination's target. */
const EMAIL_TARGET = /^[^\s@?,;:<>()[\]\\"]+@[^\s@?,;:<>()[\]\\"]+\.[^\s@?,;:<>()[\]\\"]+$/

export const WebhookUrl = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(2000),
  Schema.makeFilter((s: string) => {
    if (s.startsWith("mailto:")) {
      return EMAIL_TARGET.test(s.slice(7)) || "an email destination is mailto: and one address (mailto:you@example.com)"
    }
    try {
      const url = new URL(s)
      return url.protocol === "https:" || url.protocol === "http:" || "must be an https:// URL"
    } catch {
      return "must be an absolute URL (https://…)"
    }
  }, {
    // Values generated from the schema (the fuzz tests): a random string is almost never a URL.
    arbitraryConstraint: { patterns: [{ source: "^https://[a-z]{1,12}\\.example\\.com/[a-z]{0,12}$", flags: "" }] }
  })
).annotate({
  description: "https:// only; never a private, loopback or link-local address (see docs/alerts.md). For an email " +
    "destination: mailto:address, the address of one of the account's members",
  format: "uri"
})

export const WEBHOOK_FORMATS = ["standard_webhooks", "slack", "email"] as const
export const WebhookFormat = Schema.Literals(WEBHOOK_FORMATS).annotate({
  identifier: "WebhookFormat",
  description:
    "standard_webhooks: the event as JSON, signed (docs/alerts.md); slack: a Block Kit message for a Slack " +
    "incoming-webhook URL; email: a plain email to a member of the account (url mailto:address)"
})
export type WebhookFormat = typeof WebhookFormat.Type

export const EventKinds = Schema.Array(EventKind).check(Schema.isMinLength(1), Schema.isMaxLength(20)).annotate({
  description: "The event kinds sent to the endpoint"
})

export const MinMoneyAtStake = Schema.NullOr(Integer.check(Schema.isGreaterThanOrEqualTo(0))).annotate({
  description: "Minimum money at stake, minor units (5000 = €50.00); kinds without an amount pass; null: none"
})

export const MinSeverity = Schema.NullOr(Severity).annotate({
  description: "Minimum signal severity; other kinds pass; null: none"
})

/** Slack endpoints start with this minimum (€50 in minor units): a live message only for what costs money. */
export const SLACK_DEFAULT_MIN_MONEY = 5000

export const Webhook = Schema.Struct({
  id: WebhookId,
  projectId: ProjectId,
  url: Schema.String,
  format: WebhookFormat,
  description: Schema.NullOr(Schema.String),
  events: Schema.Array(EventKind),
  minMoneyAtStake: MinMoneyAtStake,
  minSeverity: MinSeverity,
  cadence: Cadence,
  status: Schema.Literals(["enabled", "disabled"]),
  disabledReason: Schema.NullOr(Schema.String).annotate({
    description: "Why it was disabled: by its owner, or after 3 days of failed deliveries"
  }),
  failingSince: Schema.NullOr(Timestamp).annotate({
    description: "The first failed delivery since the last success; null when the last one succeeded"
  }),
  secretRotatedAt: Schema.NullOr(Timestamp),
  previousSecretExpiresAt: Schema.NullOr(Timestamp).annotate({
    description: "Until then, deliveries are signed with the previous secret too (two signatures)"
  }),
  createdAt: Timestamp
}).annotate({ identifier: "Webhook" })
export type Webhook = typeof Webhook.Type

export const WebhookList = Schema.Struct({ webhooks: Schema.Array(Webhook) }).annotate({
  identifier: "WebhookList"
})

export const CreateWebhookPayload = Schema.Struct({
  confirm: Confirm,
  url: WebhookUrl,
  events: EventKinds,
  format: Schema.optionalKey(WebhookFormat.annotate({ description: "Default standard_webhooks" })),
  description: Schema.optionalKey(Text(200)),
  minMoneyAtStake: Schema.optionalKey(MinMoneyAtStake.annotate({
    description: "Default null (no minimum); 5000 (€50) for a slack or email destination"
  })),
  minSeverity: Schema.optionalKey(MinSeverity.annotate({ description: "Default null (no minimum)" })),
  cadence: Schema.optionalKey(Cadence.annotate({ description: "Default live" }))
}).annotate({ identifier: "CreateWebhookRequest" })
export type CreateWebhookPayload = typeof CreateWebhookPayload.Type

export const WebhookPreview = Schema.Struct({
  preview: Schema.Literal(true),
  webhook: Schema.Struct({
    url: Schema.String,
    format: WebhookFormat,
    events: Schema.Array(EventKind),
    description: Schema.NullOr(Schema.String),
    minMoneyAtStake: MinMoneyAtStake,
    minSeverity: MinSeverity,
    cadence: Cadence
  }),
  message: Schema.String
}).annotate({ identifier: "WebhookPreview" })

export const WebhookSecret = Schema.NullOr(Schema.String).annotate({
  description: "The signing secret, `whsec_…`. Shown once; store it now. null only in a replay (same Idempotency-Key)"
})

export const WebhookCreated = Schema.Struct({
  webhook: Webhook,
  secret: WebhookSecret,
  secretRedacted: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "WebhookCreated" })

export const UpdateWebhookPayload = Schema.Struct({
  url: Schema.optionalKey(WebhookUrl),
  events: Schema.optionalKey(EventKinds),
  description: Schema.optionalKey(Schema.NullOr(Text(200))),
  minMoneyAtStake: Schema.optionalKey(MinMoneyAtStake),
  minSeverity: Schema.optionalKey(MinSeverity),
  cadence: Schema.optionalKey(Cadence),
  enabled: Schema.optionalKey(Schema.Boolean.annotate({
    description: "false disables it; true enables it again (and forgets its failures)"
  })),
  rotateSecret: Schema.optionalKey(
    Schema.Literal(true).annotate({
      description: "A new secret, answered once; the old one stays valid for 24 hours"
    })
  )
}).annotate({ identifier: "UpdateWebhookRequest" })
export type UpdateWebhookPayload = typeof UpdateWebhookPayload.Type

export const WebhookUpdated = Schema.Struct({
  webhook: Webhook,
  secret: Schema.optionalKey(Schema.String.annotate({ description: "With rotateSecret only: the new secret, once" }))
}).annotate({ identifier: "WebhookUpdated" })

export const WebhookDeleted = Schema.Struct({
  deleted: Schema.Literal(true),
  webhook: Webhook
}).annotate({ identifier: "WebhookDeleted" })

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const

export const Delivery = Schema.Struct({
  id: DeliveryId,
  webhookId: WebhookId,
  eventId: Schema.String.annotate({ description: "The `webhook-id` header: the same on every attempt, `msg_…`" }),
  type: EventKind,
  status: Schema.Literals(DELIVERY_STATUSES).annotate({
    description: "pending: to be sent or retried; succeeded: a 2xx; failed: retried for 3 days, given up"
  }),
  attempts: Integer,
  responseStatus: Schema.NullOr(Integer),
  latencyMs: Schema.NullOr(Integer),
  responseExcerpt: Schema.NullOr(Schema.String).annotate({
    description: "The first 200 characters of the answer, or why there was none"
  }),
  createdAt: Timestamp,
  lastAttemptAt: Schema.NullOr(Timestamp),
  nextAttemptAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery), nextCursor: NextCursor }).annotate({
  identifier: "DeliveryList"
})

export const WebhookTested = Schema.Struct({ delivery: Delivery }).annotate({ identifier: "WebhookTested" })
export const Redelivered = Schema.Struct({ delivery: Delivery }).annotate({ identifier: "Redelivered" })
