/**
 * The dashboard's `security` group (`/app/api/security/…`): the owner's password and two-factor sign-in (TOTP,
 * RFC 6238, with ten single-use recovery codes). Every change asks for the current password again, so a
 * session left open on a shared computer cannot take the account over; every change is mailed to the owner.
 * Apart from the core (the web app's shell) like the tokens group: only the account page uses it, through
 * `DashboardSecurityHttpApi`. docs/security.md describes the rules.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { Integer, Timestamp } from "./Common.ts"
import { AnyPassword, NewPassword, OneTimeCode } from "./Dashboard.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { DashboardAccessAnnotation } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict, RateLimited } from "./Errors.ts"

export const ChangePasswordPayload = Schema.Struct({
  currentPassword: AnyPassword,
  newPassword: NewPassword
}).annotate({ identifier: "ChangePasswordRequest" })
export const PasswordChanged = Schema.Struct({
  message: Schema.String,
  sessionsEnded: Integer.annotate({ description: "The account's other sessions, ended by the change" })
}).annotate({ identifier: "PasswordChanged" })

/** The current password, asked again before a change to two-factor sign-in. */
export const PasswordConfirmation = Schema.Struct({ password: AnyPassword }).annotate({
  identifier: "PasswordConfirmation"
})
export const PasswordAndCode = Schema.Struct({ password: AnyPassword, code: OneTimeCode }).annotate({
  identifier: "PasswordAndCode"
})
export const CodePayload = Schema.Struct({ code: OneTimeCode }).annotate({ identifier: "TwoFactorCode" })

export const TwoFactorStatus = Schema.Struct({
  enabled: Schema.Boolean,
  enabledAt: Schema.NullOr(Timestamp),
  recoveryCodesLeft: Integer.annotate({ description: "Unused recovery codes (0 when two-factor sign-in is off)" })
}).annotate({ identifier: "TwoFactorStatus" })

/** The secret of a setup in progress: shown to be scanned (QR code) or typed, once. */
export const TwoFactorSetup = Schema.Struct({
  secret: Schema.String.annotate({ description: "Base32, for typing into the app by hand" }),
  otpauthUri: Schema.String.annotate({ description: "`otpauth://totp/…`, what the QR code holds" }),
  qrSvg: Schema.String.annotate({ description: "The QR code of `otpauthUri`, as an SVG document" })
}).annotate({ identifier: "TwoFactorSetup" })

export const RecoveryCodes = Schema.Struct({
  recoveryCodes: Schema.Array(Schema.String).annotate({
    description:
      "Ten single-use codes, each a way in when the phone is lost. Shown this once: only their hashes are kept"
  })
}).annotate({ identifier: "RecoveryCodes" })

export class DashboardSecurityApi extends HttpApiGroup.make("security")
  .add(
    doc(
      HttpApiEndpoint.post("changePassword", "/security/password", {
        payload: ChangePasswordPayload,
        success: Envelope("PasswordChangedResponse", PasswordChanged),
        error: [BadRequest, RateLimited]
      }).annotate(DashboardAccessAnnotation, "self"),
      "Change the password, giving the current one; ends every other session and mails the owner",
      "400 `wrong_password` when the current password is wrong (throttled as log-in is: 429 with Retry-After), " +
        "`weak_password` when the new one is common, breached or made of the address."
    ),
    doc(
      HttpApiEndpoint.get("twoFactor", "/security/two-factor", {
        success: Envelope("TwoFactorStatusResponse", TwoFactorStatus)
      }).annotate(DashboardAccessAnnotation, "self"),
      "Whether two-factor sign-in is on, and how many recovery codes are left"
    ),
    doc(
      HttpApiEndpoint.post("setUpTwoFactor", "/security/two-factor/setup", {
        payload: PasswordConfirmation,
        success: Envelope("TwoFactorSetupResponse", TwoFactorSetup),
        error: [BadRequest, Conflict, RateLimited]
      }).annotate(DashboardAccessAnnotation, "self"),
      "Start turning two-factor sign-in on: a new secret and its QR code (nothing changes until it is confirmed)",
      "400 `wrong_password`; 409 `two_factor_enabled` when it is already on (turn it off first)."
    ),
    doc(
      HttpApiEndpoint.post("enableTwoFactor", "/security/two-factor/enable", {
        payload: CodePayload,
        success: Envelope("TwoFactorEnabledResponse", RecoveryCodes),
        error: [BadRequest, Conflict, RateLimited]
      }).annotate(DashboardAccessAnnotation, "self"),
      "Turn two-factor sign-in on with a first code from the app; answers the ten recovery codes, once",
      "400 `invalid_code` for a wrong code; 400 `no_setup` without a setup started in the last 15 minutes; 409 " +
        "`two_factor_enabled`. Mails the owner."
    ),
    doc(
      HttpApiEndpoint.post("disableTwoFactor", "/security/two-factor/disable", {
        payload: PasswordAndCode,
        success: Envelope("TwoFactorDisabledResponse", TwoFactorStatus),
        error: [BadRequest, Conflict, RateLimited]
      }).annotate(DashboardAccessAnnotation, "self"),
      "Turn two-factor sign-in off, with the password and a code (or a recovery code); mails the owner",
      "400 `wrong_password` or `invalid_code`; 409 `two_factor_disabled` when it is off."
    ),
    doc(
      HttpApiEndpoint.post("regenerateRecoveryCodes", "/security/two-factor/recovery-codes", {
        payload: PasswordAndCode,
        success: Envelope("RecoveryCodesResponse", RecoveryCodes),
        error: [BadRequest, Conflict, RateLimited]
      }).annotate(DashboardAccessAnnotation, "self"),
      "Ten new recovery codes (the old ones stop working), with the password and a code from the app",
      "400 `wrong_password` or `invalid_code`; 409 `two_factor_disabled`."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Security", description: "Password and two-factor sign-in" }))
{}

/** The security group alone, as `DashboardApi` serves it: the web app's client for the account page. */
export class DashboardSecurityHttpApi extends HttpApi.make("dashboard")
  .add(DashboardSecurityApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
