/**
 * The owners' notice that one of their website's destinations was disabled after 3 days of failed deliveries:
 * which website, which destination (its host or address), failing since when, and the Alerts page to enable it
 * again once fixed. Claimed first (WebhooksRepo.claimDisabledNotice, one per endpoint and failing streak), so two
 * workers, or a round recorded twice, mail it once. Without a Mailer in the context it is only logged.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AccountMembers } from "../accounts/Members.ts"
import { Mailer } from "../platform/Mailer.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import type { WebhookRecord, WebhooksRepoShape } from "./Records.ts"

/** Where a destination sends, for a person: a URL's host, an email destination's address. */
export const destinationName = (w: Pick<WebhookRecord, "url" | "format" | "description">): string => {
  if (w.description !== null) return w.description
  if (w.format === "email") return w.url.slice("mailto:".length)
  try {
    return new URL(w.url).host
  } catch {
    return w.url
  }
}

export const noticeDisabled = (repo: WebhooksRepoShape, dashboardUrl: string) =>
  Effect.fn("Webhooks.noticeDisabled")(function*(webhook: WebhookRecord, failingSince: Date) {
    const now = new Date(yield* Clock.currentTimeMillis)
    yield* Effect.logWarning("webhook endpoint disabled after 3 days of failed deliveries").pipe(
      Effect.annotateLogs({ webhookId: webhook.id, projectId: webhook.projectId })
    )
    if (!(yield* repo.claimDisabledNotice(webhook.id, failingSince, now))) return false
    const mailer = yield* Effect.serviceOption(Mailer)
    const members = yield* Effect.serviceOption(AccountMembers)
    const projects = yield* Effect.serviceOption(ProjectsRepo)
    if (Option.isNone(mailer) || Option.isNone(members) || Option.isNone(projects)) return false
    const project = yield* projects.value.find(webhook.projectId)
    const site = project?.name ?? webhook.projectId
    const name = destinationName(webhook)
    const page = `${dashboardUrl}/websites/${encodeURIComponent(webhook.projectId)}/alerts`
    for (const to of yield* members.value.ownerEmailsOfProject(webhook.projectId)) {
      yield* mailer.value.send({
        to,
        subject: `${site}: alerts to ${name} are disabled`,
        text: `Every delivery to ${name} (${webhook.url}) has failed since ${failingSince.toISOString()}, so after ` +
          `3 days sitehealth disabled it: no more events of ${site} go there, and none are kept for it.\n\nFix the ` +
          `receiver, then enable the destination again on the Alerts page (its delivery log shows each answer):\n${page}`
      })
    }
    return true
  })
