/**
 * `integration.failed` when a run fails for good on an integration that was connected, `integration.recovered`
 * when one succeeds on an integration in error: written by SyncQueue.succeed / fail in their transaction.
 */
import type { Provider } from "@sitehealth/domain/Integrations"
import * as Effect from "effect/Effect"
import type { SyncRunRecord } from "../store/Records.ts"
import { emit } from "../webhooks/Outbox.ts"
import type { WebhooksRepoShape } from "../webhooks/WebhooksRepo.ts"

export const onTransition = (webhooks: WebhooksRepoShape) =>
(
  run: SyncRunRecord,
  was: string | null | undefined,
  now: Date,
  error: string | null
): Effect.Effect<void> => {
  const kind = error === null
    ? (was === "error" ? "integration.recovered" : null)
    : (was === "connected" ? "integration.failed" : null)
  if (kind === null) return Effect.void
  return Effect.asVoid(
    emit(webhooks)(kind, run.projectId, {
      projectId: run.projectId as any,
      provider: run.provider as Provider,
      error,
      at: now.toISOString()
    }, now)
  )
}
