/**
 * The dashboard's `alerts` group (`/app/api/alerts/…`): the account's morning briefing email — on or off, the
 * hour and time zone it goes at (docs/alerts.md, "The morning email") — and "Send today's briefing now". The
 * website's webhook and Slack destinations are edited through /api/v1 (ApiWebhooks.ts).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { DateOnly, Integer, Timestamp } from "./Common.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { access } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict } from "./Errors.ts"

export const BriefingHour = Integer.check(Schema.isBetween({ minimum: 0, maximum: 23 })).annotate({
  description: "The local hour the email goes at, 0–23 (8 = 08:00)"
})

export const BriefingEmailSettings = Schema.Struct({
  enabled: Schema.Boolean.annotate({ description: "false: no morning email (the unsubscribe link sets it too)" }),
  hour: BriefingHour,
  timezone: Schema.NullOr(Schema.String).annotate({
    description: "The IANA time zone chosen; null follows the account's first website"
  }),
  effectiveTimezone: Schema.NullOr(Schema.String).annotate({
    description: "The zone the email follows now (null: the account has no website yet, so no email)"
  }),
  lastSent: Schema.NullOr(Schema.Struct({ localDate: DateOnly, at: Timestamp })).annotate({
    description: "Today's email in the effective zone, when it was sent"
  })
}).annotate({ identifier: "BriefingEmailSettings" })
export type BriefingEmailSettings = typeof BriefingEmailSettings.Type

export const UpdateBriefingEmail = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  hour: Schema.optionalKey(BriefingHour),
  timezone: Schema.optionalKey(
    Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64))).annotate({
      description: "An IANA time zone (Europe/Paris); null to follow the first website again"
    })
  )
}).annotate({ identifier: "UpdateBriefingEmailRequest" })

export const BriefingSent = Schema.Struct({
  sent: Schema.Boolean.annotate({ description: "false when today's email had already gone (it goes once a day)" }),
  localDate: DateOnly,
  message: Schema.String
}).annotate({ identifier: "BriefingSent" })
export type BriefingSent = typeof BriefingSent.Type

export class DashboardAlertsApi extends HttpApiGroup.make("alerts")
  .add(
    access(
      "viewer",
      doc(
        HttpApiEndpoint.get("getEmail", "/alerts/email", {
          success: Envelope("BriefingEmailSettingsResponse", BriefingEmailSettings)
        }),
        "The morning briefing email: on or off, its hour and time zone, today's sending"
      )
    ),
    access(
      "admin",
      doc(
        HttpApiEndpoint.patch("updateEmail", "/alerts/email", {
          payload: UpdateBriefingEmail,
          success: Envelope("BriefingEmailSettingsResponse", BriefingEmailSettings),
          error: [BadRequest]
        }),
        "Turn the email on or off, choose its hour and time zone",
        "400 `invalid_timezone` for a zone Node does not know."
      )
    ),
    access(
      "admin",
      doc(
        HttpApiEndpoint.post("sendEmailNow", "/alerts/email/send", {
          success: Envelope("BriefingSentResponse", BriefingSent),
          error: [Conflict]
        }),
        "Send today's briefing email now (once a day: the morning one is then not sent again)",
        "409 `no_websites` before the account has a website."
      )
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Alerts", description: "The morning briefing email" }))
{}

/** The alerts group alone, as `DashboardApi` serves it: the web app's client for the Alerts page. */
export class DashboardAlertsHttpApi extends HttpApi.make("dashboard")
  .add(DashboardAlertsApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
