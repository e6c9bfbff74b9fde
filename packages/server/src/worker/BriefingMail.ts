/**
 * The morning briefing email (docs/alerts.md): at the account's hour (08:00 by default) in its time zone (its first
 * website's unless it chose one), one email over all its websites — each website's morning edition as written —
 * to the account's owner, HTML and text, with an unsubscribe link that needs no log-in and the List-Unsubscribe /
 * One-Click headers (RFC 8058). Each account's day is claimed before sending (BriefingMailRepo.claim): several
 * workers, or a restart at 08:00, send it once. Without SMTP_URL the mail is written to the log (Mailer.ts).
 * The email itself: dashboard/BriefingEmail.ts.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BriefingMailRepo } from "../alerts/BriefingMailRepo.ts"
import { sendBriefingEmail } from "../dashboard/BriefingEmail.ts"
import { Signing } from "../dashboard/Links.ts"
import { todayIn } from "../metrics/Dates.ts"
import { Mailer } from "../platform/Mailer.ts"
import { localTime } from "../recompute/Recompute.ts"

/**
 * One round: every account whose hour has come today in its time zone and whose day is not yet taken gets its
 * email. `accountIds` limits it (tests sharing a database). Answers the accounts mailed.
 */
export const sendDueBriefings = (options: { readonly accountIds?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const repo = yield* BriefingMailRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const sent: Array<string> = []
    for (const candidate of yield* repo.candidates(options.accountIds)) {
      if (localTime(candidate.timezone, now).hour < candidate.hour) continue
      const localDate = todayIn(candidate.timezone, now)
      if (!(yield* repo.claim(candidate.accountId, localDate, now))) continue
      if (yield* sendBriefingEmail(candidate.accountId, localDate)) {
        yield* repo.markSent(candidate.accountId, localDate, new Date(yield* Clock.currentTimeMillis))
        sent.push(candidate.accountId)
      }
    }
    return sent
  }).pipe(Effect.withSpan("BriefingMail.round"))

const ROUND_MS = 60_000

/** The loop: a round a minute, with the mail transport and link signing of the process. */
export const runBriefingMail = Effect.gen(function*() {
  yield* Effect.logInfo("sitehealth: morning briefing email started")
  return yield* sendDueBriefings().pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(Effect.logError("briefing email round failed", Cause.pretty(cause)), [])
    ),
    Effect.andThen(Effect.sleep(ROUND_MS)),
    Effect.forever,
    Effect.withTracerEnabled(false),
    Effect.annotateLogs("worker", "briefing-mail")
  )
}).pipe(Effect.provide(Layer.mergeAll(Mailer.layer, Signing.layer)))
