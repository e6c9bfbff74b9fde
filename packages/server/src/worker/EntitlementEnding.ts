/**
 * `entitlement.ending` (docs/alerts.md): every ROUND_MS, each account whose trial or subscription ends within 3 days
 * (accounts/Ending.ts) has the event written to the outbox for each of its websites, in one transaction with the
 * claim of its (account, end date) row — so two workers, or a restart, write it once; a new end date (a trial
 * extended, a new subscription canceled) is a new notice.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { endingSoon } from "../accounts/Ending.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { emit } from "../webhooks/Outbox.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"

const ROUND_MS = 10 * 60_000
const MAX_WEBSITES = 1_000

/** One round; `accountIds` limits it (tests). Answers how many accounts' notices were written. */
export const entitlementRound = (accountIds?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsRepo
    const projects = yield* ProjectsRepo
    const webhooks = yield* WebhooksRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    let written = 0
    for (const account of yield* accounts.list()) {
      if (accountIds !== undefined && !accountIds.includes(account.id)) continue
      const ending = endingSoon(account, now)
      if (ending === null) continue
      const websites = (yield* projects.list(account.id, null, { limit: MAX_WEBSITES, after: null })).items
      const claimed = yield* webhooks.transaction(Effect.gen(function*() {
        if (!(yield* webhooks.claimEntitlementEnding(account.id, ending.endsAt, now))) return false
        for (const w of websites) {
          yield* emit(webhooks)("entitlement.ending", w.id, {
            projectId: w.id,
            what: ending.what,
            endsAt: ending.endsAt.toISOString()
          }, now)
        }
        return true
      }))
      if (claimed) written++
    }
    return written
  })

export const runEntitlementEnding = entitlementRound().pipe(
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause)
      : Effect.as(Effect.logError("entitlement ending round failed", Cause.pretty(cause)), 0)
  ),
  Effect.andThen(Effect.sleep(ROUND_MS)),
  Effect.forever,
  // A round over the accounts every 10 minutes is not a trace worth keeping (the events it writes are logged).
  Effect.withTracerEnabled(false),
  Effect.annotateLogs("worker", "entitlement-ending")
)
