/**
 * The morning briefing email (docs/alerts.md): at the account's hour (08:00 by default) in its time zone (its first
 * website's unless it chose one), one email over all its websites — each website's morning edition as written —
 * to the account's owner, HTML and text, with an unsubscribe link that needs no log-in and the List-Unsubscribe /
 * One-Click headers (RFC 8058). Each account's day is claimed before sending (BriefingMailRepo.claim): several
 * workers, or a restart at 08:00, send it once. Without SMTP_URL the mail is written to the log (Mailer.ts).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { BriefingMailRepo } from "../alerts/BriefingMailRepo.ts"
import { composeBriefingEmail, type WebsiteEdition } from "../alerts/Compose.ts"
import { AuthRepo } from "../dashboard/AuthRepo.ts"
import { Signing } from "../dashboard/Links.ts"
import { Mailer } from "../dashboard/Mailer.ts"
import { UNSUBSCRIBE_PATH, unsubscribeToken } from "../dashboard/Unsubscribe.ts"
import { todayIn } from "../metrics/Dates.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { ensureBriefing, localTime } from "../recompute/Recompute.ts"
import { SnapshotsRepo } from "../snapshots/SnapshotsRepo.ts"

const baseUrl = (config: AppConfigShape) => config.publicUrl ?? `http://${config.host}:${config.port}`

/** Composes and sends the account's email of `localDate` (no claim: the callers claim). False when it has no owner. */
export const sendBriefingEmail = (accountId: string, localDate: string) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const owner = yield* (yield* AuthRepo).findUserByAccount(accountId)
    const account = yield* (yield* AccountsRepo).find(accountId)
    if (owner === null || account === null) return false
    const projects = (yield* (yield* ProjectsRepo).list(accountId, null, { limit: 1_000, after: null })).items
    const snapshots = yield* SnapshotsRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const websites: Array<WebsiteEdition> = []
    for (const p of projects) {
      // Written now if the worker has not yet (a website added last night): the morning edition, then as written.
      yield* ensureBriefing(p.id, p.timezone)
      const briefing = yield* snapshots.morningBriefingOf(p.id, todayIn(p.timezone, now))
      websites.push({ projectId: p.id, name: p.name, domain: p.domain, briefing })
    }
    const signing = yield* Signing
    const unsubscribeUrl = `${baseUrl(config)}${UNSUBSCRIBE_PATH}?account=${encodeURIComponent(accountId)}&token=${
      unsubscribeToken(signing, accountId)
    }`
    const email = composeBriefingEmail({
      accountName: account.name,
      localDate,
      websites,
      dashboardUrl: baseUrl(config),
      unsubscribeUrl
    })
    yield* (yield* Mailer).send({
      to: owner.email,
      ...email,
      headers: { "List-Unsubscribe": `<${unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" }
    })
    return true
  })

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
