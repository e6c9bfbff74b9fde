/** What the webhooks repository stores and answers (WebhooksRepo.ts, its SQL and memory twins). */
import type { Cadence, EventKind } from "@sitehealth/domain/Events"
import type { Severity } from "@sitehealth/domain/Projects"
import type { WebhookFormat } from "@sitehealth/domain/Webhooks"
import type * as Effect from "effect/Effect"
import type { Page, PageRequest } from "../store/Records.ts"

export interface WebhookRecord {
  readonly id: string
  readonly projectId: string
  readonly url: string
  /** What is sent: the signed event (Standard Webhooks), or a Slack Block Kit message (Slack.ts). */
  readonly format: WebhookFormat
  readonly description: string | null
  readonly events: ReadonlyArray<EventKind>
  /** Rules (docs/alerts.md): minimum money at stake in minor units, minimum signal severity; null: none. */
  readonly minMoneyAtStake: number | null
  readonly minSeverity: Severity | null
  /** live: a delivery per event; otherwise the events wait for the period's recap (worker/Recaps.ts). */
  readonly cadence: Cadence
  readonly enabled: boolean
  readonly disabledReason: string | null
  readonly failingSince: Date | null
  /** The signing secret encrypted (integrations/Crypto.ts), never the secret. */
  readonly secretEnc: Uint8Array
  readonly previousSecretEnc: Uint8Array | null
  readonly previousSecretExpiresAt: Date | null
  readonly secretRotatedAt: Date | null
  readonly createdAt: Date
}

export type WebhookPatch = Partial<
  Pick<
    WebhookRecord,
    | "url"
    | "description"
    | "events"
    | "minMoneyAtStake"
    | "minSeverity"
    | "cadence"
    | "enabled"
    | "disabledReason"
    | "failingSince"
    | "secretEnc"
    | "previousSecretEnc"
    | "previousSecretExpiresAt"
    | "secretRotatedAt"
  >
>

export type DeliveryStatus = "pending" | "succeeded" | "failed"

export interface DeliveryRecord {
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly type: EventKind
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly responseStatus: number | null
  readonly latencyMs: number | null
  readonly responseExcerpt: string | null
  readonly createdAt: Date
  readonly firstAttemptAt: Date | null
  readonly lastAttemptAt: Date | null
  readonly nextAttemptAt: Date | null
}

/** An event for the outbox: its body as sent, and the endpoint it is for when only one (webhook.test). */
export interface OutboxEvent {
  readonly id: string
  readonly projectId: string
  readonly type: EventKind
  readonly body: string
  readonly createdAt: Date
  /** What the destinations' rules compare (Outbox.eventFacts): null when the kind carries no such figure. */
  readonly money: number | null
  readonly severity: Severity | null
  readonly webhookId?: string
  /** Held (not due for the worker) until then: the API sends a test itself. */
  readonly lockedUntil?: Date
}

/** A delivery the worker holds (its lease), with what it needs to send it. */
export interface ClaimedDelivery {
  readonly delivery: DeliveryRecord
  readonly body: string
  readonly webhook: WebhookRecord
}

/** The outcome of one attempt, as recorded. */
export interface AttemptRecord {
  readonly ok: boolean
  readonly status: number | null
  readonly latencyMs: number
  readonly excerpt: string
  readonly at: Date
  /** What becomes of the delivery: done, tried again at `nextAttemptAt`, or given up. */
  readonly next: DeliveryStatus
  readonly nextAttemptAt: Date | null
  /** Disable the endpoint (3 days of failures). */
  readonly disable: boolean
}

/** An attempt of a claimed delivery of the endpoint `webhookId`, for `recordMany`. */
export interface AttemptOutcome {
  readonly deliveryId: string
  readonly webhookId: string
  readonly attempt: AttemptRecord
}

/**
 * What a round's attempts do to an endpoint, as recording them one after the other would: `reset` when one
 * succeeded (the streak then starts again at `failedFrom`, the first failure after the last success, or not at
 * all), else the streak starts at `failedFrom` unless it already had; `disable` when any attempt disables it.
 */
export interface StreakChange {
  readonly webhookId: string
  readonly reset: boolean
  readonly failedFrom: Date | null
  readonly disable: boolean
}

/** The endpoints' streak changes of a round's outcomes (in the order they are recorded), by endpoint id. */
export const streakChanges = (outcomes: ReadonlyArray<AttemptOutcome>): ReadonlyArray<StreakChange> => {
  const changes = new Map<string, StreakChange>()
  for (const { attempt, webhookId } of outcomes) {
    const before = changes.get(webhookId) ?? { webhookId, reset: false, failedFrom: null, disable: false }
    changes.set(webhookId, {
      webhookId,
      reset: before.reset || attempt.ok,
      failedFrom: attempt.ok ? null : (before.failedFrom ?? attempt.at),
      disable: before.disable || attempt.disable
    })
  }
  return [...changes.values()].sort((a, b) => a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0)
}

export interface WebhooksRepoShape {
  readonly insert: (webhook: WebhookRecord) => Effect.Effect<WebhookRecord>
  readonly list: (projectId: string) => Effect.Effect<ReadonlyArray<WebhookRecord>>
  readonly find: (projectId: string, id: string) => Effect.Effect<WebhookRecord | null>
  readonly update: (projectId: string, id: string, patch: WebhookPatch) => Effect.Effect<WebhookRecord | null>
  /** Deletes the endpoint and its deliveries; null when there is none. */
  readonly remove: (projectId: string, id: string) => Effect.Effect<WebhookRecord | null>
  /**
   * Writes the event to the outbox with one pending delivery per enabled endpoint of its project that takes its
   * kind (or for `webhookId` alone), due at once; nothing at all when no endpoint takes it. Run it inside
   * `transaction` with the change that caused it.
   */
  readonly enqueue: (event: OutboxEvent) => Effect.Effect<ReadonlyArray<DeliveryRecord>>
  /** The event kinds the project's enabled endpoints take (empty: no event of it needs writing). */
  readonly subscribed: (projectId: string) => Effect.Effect<ReadonlySet<EventKind>>
  readonly listDeliveries: (webhookId: string, page: PageRequest) => Effect.Effect<Page<DeliveryRecord>>
  readonly findDelivery: (webhookId: string, id: string) => Effect.Effect<DeliveryRecord | null>
  /**
   * Takes up to `limit` due deliveries of enabled endpoints for `leaseMs` (FOR UPDATE SKIP LOCKED: two workers
   * never take the same one; a worker that dies lets its lease run out and another takes it). `webhookIds`
   * limits it to those endpoints (tests sharing a database).
   */
  readonly claim: (
    now: Date,
    leaseMs: number,
    limit: number,
    webhookIds?: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /** Records an attempt of a claimed delivery, and the endpoint's failing streak. */
  readonly record: (deliveryId: string, attempt: AttemptRecord) => Effect.Effect<DeliveryRecord | null>
  /**
   * Records a round's attempts at once (the worker), as `record` of each in turn would: each delivery's outcome,
   * and each endpoint's failing streak (cleared by a success, started by the first failure after it) and disabling.
   * Answers how many deliveries were recorded.
   */
  readonly recordMany: (outcomes: ReadonlyArray<AttemptOutcome>) => Effect.Effect<number>
  /** Makes a delivery due again now (manual redelivery: same event, same webhook-id). */
  readonly redeliver: (webhookId: string, id: string, now: Date) => Effect.Effect<DeliveryRecord | null>
  /** Enabled endpoints with a recap cadence, each with its website's time zone; `webhookIds` limits it (tests). */
  readonly recapDestinations: (
    webhookIds?: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<{ readonly webhook: WebhookRecord; readonly timezone: string }>>
  /** The events of [from, to) of the endpoint's project that its kinds and rules take (never a recap or a test). */
  readonly eventsFor: (
    webhook: WebhookRecord,
    from: Date,
    to: Date
  ) => Effect.Effect<ReadonlyArray<{ readonly type: EventKind; readonly body: string; readonly createdAt: Date }>>
  /**
   * Takes the endpoint's recap of the period starting `periodStart` (a local day): true for the one caller that
   * writes it. Run it in `transaction` with the recap's enqueue, so a recap is written once or not at all.
   */
  readonly claimRecap: (webhookId: string, periodStart: string, now: Date) => Effect.Effect<boolean>
  /**
   * Claims the owner's notice that an endpoint was disabled, once per failing streak (`failingSince`): false when
   * it was already claimed (another worker, or a round recorded twice).
   */
  readonly claimDisabledNotice: (webhookId: string, failingSince: Date, now: Date) => Effect.Effect<boolean>
  /**
   * The websites with an enabled endpoint taking `traffic.anomaly` (the only ones an anomaly is written for);
   * `projectIds` limits it (tests).
   */
  readonly anomalyProjects: (projectIds?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Takes the website's `traffic.anomaly` of the UTC hour starting `hour`: true for the one caller that writes it.
   * Run it in `transaction` with the event's enqueue, so an hour's anomaly is written once or not at all.
   */
  readonly claimAnomaly: (projectId: string, hour: Date, now: Date) => Effect.Effect<boolean>
  /**
   * Claims the `entitlement.ending` events of an account's trial or subscription ending at `endsAt` (one claim per
   * account and end date): false when another worker, or an earlier round, wrote them. Run it in `transaction`.
   */
  readonly claimEntitlementEnding: (accountId: string, endsAt: Date, now: Date) => Effect.Effect<boolean>
  /** Runs `effect` in one transaction (SQL): the change and its outbox event commit together or not at all. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}
