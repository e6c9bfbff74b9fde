/**
 * The schemas of the dashboard's own API (`/app/api`, DashboardApi.ts): accounts and sessions, websites,
 * tokens made in the dashboard, and the account's entitlement. Ids and permissions are the public API's.
 */
import * as Schema from "effect/Schema"
import { AccountId, Currency, Integer, ProjectId, Text, Timestamp } from "./Common.ts"
import { DashboardRole } from "./DashboardRoles.ts"

/** An email address as typed; compared case-insensitively after trimming. */
export const Email = Schema.String.check(
  Schema.isMaxLength(254),
  Schema.makeFilter((s: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/u.test(s.trim()) || "must be an email address")
).annotate({ description: "Email address", format: "email" })

/** OWASP ASVS 2.1.1: at least 12 characters. The server also refuses common and breached passwords. */
export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 256
/** A new password: 12–256 characters. Any password is accepted at log-in (a wrong one simply fails). */
export const NewPassword = Schema.String.check(
  Schema.isMinLength(PASSWORD_MIN_LENGTH),
  Schema.isMaxLength(PASSWORD_MAX_LENGTH)
).annotate({ description: `Password, ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters` })
export const AnyPassword = Schema.String.check(Schema.isMaxLength(PASSWORD_MAX_LENGTH))

export const SessionId = Schema.String.pipe(Schema.brand("SessionId")).annotate({
  description: "Public id of a session, `ses_…` (not the cookie's secret)"
})
export type SessionId = typeof SessionId.Type

/** A signed single-use link's token, as found in the link's `?token=`. */
export const LinkToken = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2000))

export const SignUpPayload = Schema.Struct({ email: Email, password: NewPassword }).annotate({
  identifier: "SignUpRequest"
})
export const LogInPayload = Schema.Struct({
  email: Email,
  password: AnyPassword,
  staySignedIn: Schema.optionalKey(Schema.Boolean.annotate({
    description: "The owner's \"Stay signed in for 14 days\" box: a session that lives 14 days (idle and absolute) " +
      "in a persistent cookie. Without it: 30 minutes idle, 12 hours at most, in a cookie that ends with the browser"
  }))
}).annotate({ identifier: "LogInRequest" })

/** A one-time code: six digits from the authenticator app, or a recovery code (`xxxxx-xxxxx`). */
export const OneTimeCode = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(40)).annotate({
  description: "Six digits from the authenticator app, or one of the ten recovery codes"
})

/**
 * The password was right and the account has two-factor sign-in: no session yet. Send `challenge` with a
 * one-time code to `POST /app/api/auth/login/second-factor` before `expiresAt` (5 minutes).
 */
export const SecondFactorRequired = Schema.Struct({
  secondFactorRequired: Schema.Literal(true),
  challenge: Schema.String.annotate({ description: "Signed, single-use, valid 5 minutes" }),
  expiresAt: Timestamp
}).annotate({ identifier: "SecondFactorRequired" })
export type SecondFactorRequired = typeof SecondFactorRequired.Type

export const SecondFactorPayload = Schema.Struct({
  challenge: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2000)),
  code: OneTimeCode,
  staySignedIn: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "SecondFactorRequest" })
export const EmailPayload = Schema.Struct({ email: Email }).annotate({ identifier: "PasswordResetRequest" })
export const ResetPasswordPayload = Schema.Struct({ token: LinkToken, password: NewPassword }).annotate({
  identifier: "ResetPasswordRequest"
})
export const VerifyEmailPayload = Schema.Struct({ token: LinkToken }).annotate({ identifier: "VerifyEmailRequest" })

/**
 * The same answer whether or not the email is registered (sign-up, password reset): what happens next
 * arrives by mail.
 */
export const Accepted = Schema.Struct({ message: Schema.String }).annotate({ identifier: "Accepted" })

export const DashboardUser = Schema.Struct({
  accountId: AccountId,
  email: Schema.String,
  emailVerified: Schema.Boolean
}).annotate({ identifier: "DashboardUser" })

/**
 * The logged-in session: who, until when, and the CSRF token every state-changing request must send back in
 * the `X-CSRF-Token` header.
 */
export const CurrentSessionView = Schema.Struct({
  user: DashboardUser,
  sessionId: SessionId,
  csrfToken: Schema.String.annotate({
    description: "Send as the X-CSRF-Token header on every POST, PATCH, PUT and DELETE"
  }),
  idleExpiresAt: Timestamp,
  absoluteExpiresAt: Timestamp,
  staySignedIn: Schema.Boolean.annotate({ description: "Whether the owner ticked \"Stay signed in\" at log-in" }),
  role: DashboardRole.annotate({
    description: "This login's role in the account, as of this answer: the web app hides what the role cannot do " +
      "(the server checks it on every request)"
  })
}).annotate({ identifier: "DashboardSession" })
export type CurrentSessionView = typeof CurrentSessionView.Type

/** What log-in answers: the session, or (two-factor sign-in on) the challenge of the second step. */
export const LogInResult = Schema.Union([CurrentSessionView, SecondFactorRequired]).annotate({
  identifier: "LogInResult"
})
export type LogInResult = typeof LogInResult.Type

export const SessionView = Schema.Struct({
  id: SessionId,
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  userAgent: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  current: Schema.Boolean
}).annotate({ identifier: "SessionView" })
export const SessionList = Schema.Struct({ sessions: Schema.Array(SessionView) }).annotate({
  identifier: "SessionList"
})
export const LoggedOut = Schema.Struct({ loggedOut: Schema.Literal(true) })
export const SessionsRevoked = Schema.Struct({ revoked: Integer.annotate({ description: "How many sessions ended" }) })

export const Website = Schema.Struct({
  id: ProjectId,
  name: Schema.String,
  domain: Schema.String,
  timezone: Schema.String,
  currency: Currency,
  createdAt: Timestamp
}).annotate({ identifier: "Website" })
export type Website = typeof Website.Type
export const WebsiteList = Schema.Struct({ websites: Schema.Array(Website) }).annotate({ identifier: "WebsiteList" })

const DomainText = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(253)).annotate({
  description: "A bare host name such as example.com (no scheme, path or port)"
})
const TimezoneText = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)).annotate({
  description: "IANA time zone, e.g. Europe/Paris"
})

export const CreateWebsitePayload = Schema.Struct({
  name: Text(100),
  domain: DomainText,
  timezone: TimezoneText,
  currency: Currency
}).annotate({ identifier: "CreateWebsiteRequest" })
export const UpdateWebsitePayload = Schema.Struct({
  name: Schema.optionalKey(Text(100)),
  domain: Schema.optionalKey(DomainText),
  timezone: Schema.optionalKey(TimezoneText),
  currency: Schema.optionalKey(Currency)
}).annotate({ identifier: "UpdateWebsiteRequest" })
export const DeleteWebsitePayload = Schema.Struct({
  confirmDomain: Schema.String.annotate({ description: "The website's domain, typed by the owner to confirm" })
}).annotate({ identifier: "DeleteWebsiteRequest" })
export const WebsiteDeleted = Schema.Struct({
  deleted: Schema.Literal(true),
  id: ProjectId,
  tokensNarrowed: Integer.annotate({ description: "Tokens whose website list named it (it is taken out of each)" })
}).annotate({ identifier: "WebsiteDeleted" })
