/**
 * The recaps (docs/alerts.md, Cadence): each enabled destination whose cadence is daily, weekly or monthly gets,
 * from 08:00 local time (its website's zone) on the day after its period, one `recap.ready` listing the period's
 * largest gains and losses among the events its rules take — written to the outbox for it alone, in the same
 * transaction as the claim of its (destination, period) row: two workers, or a restart, write it once. The
 * delivery worker sends it as any event (signed, or as a Slack message). A period with no event sends nothing.
 */
import type { ProjectId } from "@sitehealth/domain/Common"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { addDays, startOfDayIn, todayIn } from "../metrics/Dates.ts"
import { localTime } from "../recompute/Recompute.ts"
import { emit } from "../webhooks/Outbox.ts"
import { composeRecap, duePeriod, type RecapCadence } from "../webhooks/Recap.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"

/** Recaps go from this local hour, as the morning email does by default. */
export const RECAP_HOUR = 8

/** One round; answers the destinations a recap was written for. `webhookIds` limits it (tests). */
export const writeDueRecaps = (options: { readonly webhookIds?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const written: Array<string> = []
    for (const { webhook, timezone } of yield* repo.recapDestinations(options.webhookIds)) {
      if (localTime(timezone, now).hour < RECAP_HOUR) continue
      const cadence = webhook.cadence as RecapCadence
      const period = duePeriod(cadence, todayIn(timezone, now))
      const from = new Date(startOfDayIn(period.from, timezone))
      const to = new Date(startOfDayIn(addDays(period.to, 1), timezone))
      // A destination added after the period ended has nothing of it to recap.
      if (webhook.createdAt >= to) continue
      const wrote = yield* repo.transaction(Effect.gen(function*() {
        if (!(yield* repo.claimRecap(webhook.id, period.from, now))) return false
        const events = yield* repo.eventsFor(webhook, from, to)
        if (events.length === 0) return false
        const { gains, losses } = composeRecap(events)
        yield* emit(repo)(
          "recap.ready",
          webhook.projectId,
          {
            projectId: webhook.projectId as ProjectId,
            cadence,
            from: period.from,
            to: period.to,
            gains: gains.map((g) => ({ ...g })),
            losses: losses.map((l) => ({ ...l })),
            eventCount: events.length
          },
          now,
          { webhookId: webhook.id }
        )
        return true
      }))
      if (wrote) written.push(webhook.id)
    }
    return written
  }).pipe(Effect.withSpan("Recaps.round"))

const ROUND_MS = 60_000

/** The loop: a round a minute. */
export const runRecaps = Effect.gen(function*() {
  yield* Effect.logInfo("sitehealth: recaps started")
  return yield* writeDueRecaps().pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(Effect.logError("recap round failed", Cause.pretty(cause)), [])
    ),
    Effect.andThen(Effect.sleep(ROUND_MS)),
    Effect.forever,
    Effect.withTracerEnabled(false),
    Effect.annotateLogs("worker", "recaps")
  )
})
