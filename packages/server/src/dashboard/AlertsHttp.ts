/**
 * The Alerts page's API (`DashboardAlertsApi`): the morning email's settings — on/off, hour, time zone — that the
 * worker honours (worker/BriefingMail.ts), and "Send today's briefing now", which claims the account's local day
 * as the worker does: pressed twice, or pressed and then 08:00 comes, the email still goes once that day.
 */
import type { BriefingEmailSettings } from "@sitehealth/domain/DashboardAlerts"
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import { BadRequest, Conflict } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { BriefingMailRepo, type MailSettingsPatch } from "../alerts/BriefingMailRepo.ts"
import { todayIn } from "../metrics/Dates.ts"
import { canonicalTimezone } from "../projects/Parse.ts"
import { sendBriefingEmail } from "./BriefingEmail.ts"

const present = (accountId: string) =>
  Effect.gen(function*() {
    const repo = yield* BriefingMailRepo
    const s = yield* repo.settings(accountId)
    let lastSent: BriefingEmailSettings["lastSent"] = null
    if (s.effectiveTimezone !== null) {
      const localDate = todayIn(s.effectiveTimezone, new Date(yield* Clock.currentTimeMillis))
      const at = yield* repo.sentOn(accountId, localDate)
      if (at !== null) lastSent = { localDate, at: at.toISOString() }
    }
    return {
      enabled: s.enabled,
      hour: s.hour,
      timezone: s.timezone,
      effectiveTimezone: s.effectiveTimezone,
      lastSent
    } satisfies BriefingEmailSettings
  })

export const DashboardAlertsHttp = HttpApiBuilder.group(DashboardApi, "alerts", (h) =>
  h
    .handle("getEmail", () => Effect.flatMap(CurrentDashboardSession, (session) => present(session.accountId)))
    .handle("updateEmail", ({ payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        let timezone: string | null | undefined = undefined
        if (payload.timezone !== undefined && payload.timezone !== null) {
          timezone = canonicalTimezone(payload.timezone) ?? undefined
          if (timezone === undefined) {
            return yield* new BadRequest({
              message: `Unknown time zone: ${payload.timezone.slice(0, 64)} (an IANA name like Europe/Paris)`,
              type: "invalid_timezone",
              issues: [{ path: "body.timezone", message: "must be an IANA time zone" }]
            })
          }
        } else if (payload.timezone === null) {
          timezone = null
        }
        const patch: MailSettingsPatch = {
          ...(payload.enabled === undefined ? {} : { enabled: payload.enabled }),
          ...(payload.hour === undefined ? {} : { hour: payload.hour }),
          ...(timezone === undefined ? {} : { timezone })
        }
        yield* (yield* BriefingMailRepo).saveSettings(
          session.accountId,
          patch,
          new Date(yield* Clock.currentTimeMillis)
        )
        return yield* present(session.accountId)
      }))
    .handle("sendEmailNow", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const repo = yield* BriefingMailRepo
        const settings = yield* repo.settings(session.accountId)
        if (settings.effectiveTimezone === null) {
          return yield* new Conflict({ message: "Add a website first: the briefing is about it", type: "no_websites" })
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        const localDate = todayIn(settings.effectiveTimezone, now)
        if (!(yield* repo.claim(session.accountId, localDate, now))) {
          return {
            sent: false,
            localDate,
            message: `Today's briefing (${localDate}) was already sent; it goes once a day.`
          }
        }
        yield* sendBriefingEmail(session.accountId, localDate)
        yield* repo.markSent(session.accountId, localDate, new Date(yield* Clock.currentTimeMillis))
        return { sent: true, localDate, message: `Today's briefing (${localDate}) was sent to your email address.` }
      })))
