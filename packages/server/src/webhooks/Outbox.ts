/**
 * Writing an event to the outbox: its body encoded with the contract's schema of its kind (Events.ts), so what a
 * receiver gets is what the OpenAPI document's `webhooks` say. Call it inside `WebhooksRepo.transaction` with the
 * change that caused the event.
 */
import { EVENT_SCHEMAS, type EventData, type EventKind } from "@sitehealth/domain/Events"
import type { Severity } from "@sitehealth/domain/Projects"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { DeliveryRecord, WebhooksRepoShape } from "./Records.ts"
import { newMessageId } from "./Signing.ts"

const encoders = new Map(EVENT_SCHEMAS.map(([kind, schema]) => [kind, Schema.encodeUnknownSync(schema as any)]))

/** The JSON body of an event, `{type, timestamp, data}`; a `data` that does not fit its kind is a defect. */
export const eventBody = <K extends EventKind>(kind: K, data: EventData<K>, at: Date): string =>
  JSON.stringify(encoders.get(kind)!({ type: kind, timestamp: at.toISOString(), data }))

/**
 * What a destination's rules compare (docs/alerts.md, Rules): the money at stake in minor units and the severity,
 * each null when the kind carries none (such events pass that rule). A signal without an estimate counts as 0.
 */
export const eventFacts = <K extends EventKind>(
  kind: K,
  data: EventData<K>
): { readonly money: number | null; readonly severity: Severity | null } => {
  switch (kind) {
    case "signal.opened":
    case "signal.resolved": {
      const signal = (data as EventData<"signal.opened">).signal
      return { money: Math.abs(signal.moneyAtStake?.amount ?? 0), severity: signal.severity }
    }
    case "revenue.movement":
      return { money: Math.abs((data as EventData<"revenue.movement">).mrrChange.amount), severity: null }
    case "payment.failed":
      return { money: Math.abs((data as EventData<"payment.failed">).amount.amount), severity: null }
    case "traffic.anomaly": {
      const anomaly = data as EventData<"traffic.anomaly">
      return { money: Math.abs(anomaly.moneyAtStake?.amount ?? 0), severity: anomaly.severity }
    }
    default:
      return { money: null, severity: null }
  }
}

export const emit = (repo: WebhooksRepoShape) =>
<K extends EventKind>(
  kind: K,
  projectId: string,
  data: EventData<K>,
  at: Date,
  only?: { readonly webhookId: string; readonly lockedUntil?: Date }
): Effect.Effect<ReadonlyArray<DeliveryRecord>> =>
  Effect.flatMap(
    Effect.sync(() => eventBody(kind, data, at)),
    (body) =>
      repo.enqueue({
        id: newMessageId(),
        projectId,
        type: kind,
        body,
        createdAt: at,
        ...eventFacts(kind, data),
        ...only
      })
  )
