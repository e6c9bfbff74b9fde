/**
 * Writing an event to the outbox: its body encoded with the contract's schema of its kind (Events.ts), so what a
 * receiver gets is what the OpenAPI document's `webhooks` say. Call it inside `WebhooksRepo.transaction` with the
 * change that caused the event.
 */
import { EVENT_SCHEMAS, type EventData, type EventKind } from "@sitehealth/domain/Events"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { DeliveryRecord, WebhooksRepoShape } from "./Records.ts"
import { newMessageId } from "./Signing.ts"

const encoders = new Map(EVENT_SCHEMAS.map(([kind, schema]) => [kind, Schema.encodeUnknownSync(schema as any)]))

/** The JSON body of an event, `{type, timestamp, data}`; a `data` that does not fit its kind is a defect. */
export const eventBody = <K extends EventKind>(kind: K, data: EventData<K>, at: Date): string =>
  JSON.stringify(encoders.get(kind)!({ type: kind, timestamp: at.toISOString(), data }))

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
        ...only
      })
  )
