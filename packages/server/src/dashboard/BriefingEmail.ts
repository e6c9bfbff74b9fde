/**
 * Composing and sending one account's morning briefing email (docs/alerts.md): each website's morning edition, to
 * the account's owner, HTML and text, with an unsubscribe link that needs no log-in and the List-Unsubscribe /
 * One-Click headers (RFC 8058). Used by the worker at the account's hour (worker/BriefingMail.ts) and by "Send
 * today's briefing now" (AlertsHttp.ts); both claim the account's day first, so it goes once.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { composeBriefingEmail, type WebsiteEdition } from "../alerts/Compose.ts"
import { todayIn } from "../metrics/Dates.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { ensureBriefing } from "../recompute/Recompute.ts"
import { SnapshotsRepo } from "../snapshots/SnapshotsRepo.ts"
import { AuthRepo } from "./AuthRepo.ts"
import { Signing } from "./Links.ts"
import { UNSUBSCRIBE_PATH, unsubscribeToken } from "./Unsubscribe.ts"

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
