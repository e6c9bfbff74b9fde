/**
 * The dashboard API's core (`/app/api`): its constants, the session and origin middlewares, and the groups
 * the web app's shell uses — accounts and sessions, websites — composed as `DashboardCoreApi`, which the
 * shell builds its client from. The groups only some pages use (tokens and account, connections, reports)
 * live in their own modules, each with an HttpApi of its own for a
 * client loaded with those pages; `DashboardApi` (DashboardApi.ts) composes them all for the server, the
 * tests and the OpenAPI document. Kept apart so that importing the core never reaches the public contract.
 *
 *   RequestErrors (400/413/500/503) → DashboardOrigin (403 `csrf_origin`) → [DashboardSession (401, 403
 *   `csrf_token`)] → handler
 */
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import type { AccountId } from "./Common.ts"
import {
  Accepted,
  CreateWebsitePayload,
  CurrentSessionView,
  DashboardUser,
  DeleteWebsitePayload,
  EmailPayload,
  LoggedOut,
  LogInPayload,
  LogInResult,
  ResetPasswordPayload,
  SecondFactorPayload,
  type SessionId,
  SessionList,
  SessionsRevoked,
  SignUpPayload,
  UpdateWebsitePayload,
  VerifyEmailPayload,
  Website,
  WebsiteDeleted,
  WebsiteList
} from "./Dashboard.ts"
import { DashboardAccessAnnotation, type DashboardRole } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Forbidden, NotFound, RateLimited, Unauthorized } from "./Errors.ts"

export const DASHBOARD_PREFIX = "/app/api"
/** The session cookie: an opaque random id; the server keeps only its SHA-256. */
export const SESSION_COOKIE = "sitehealth_session"
/**
 * Its name when PUBLIC_URL is https: the `__Host-` prefix makes the browser refuse it unless it is Secure, for
 * Path=/ and set by this very host (no Domain), so a sibling subdomain cannot plant or shadow it.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`
/** The header carrying the session's CSRF token on every state-changing request. */
export const CSRF_HEADER = "x-csrf-token"
/** The web app's pages that mailed links open; each posts its `?token=` to verifyEmail / resetPassword. */
export const VERIFY_EMAIL_PAGE = "/verify-email"
export const RESET_PASSWORD_PAGE = "/reset-password"
/** The page a team invitation's link opens (DashboardTeam.ts): it posts its `?token=` to preview and accept. */
export const ACCEPT_INVITATION_PAGE = "/accept-invite"
/** The one-time login link printed by `npm start` for the demo account: GET, creates a session, redirects to `/`. */
export const MAGIC_LINK_PATH = `${DASHBOARD_PREFIX}/auth/magic`
/**
 * The web app's page Google sends the browser back to (`GOOGLE_REDIRECT_URI` defaults to PUBLIC_URL + this):
 * it reads `code` and `state` from its query and posts them to `googleCallback` (DashboardConnections.ts).
 */
export const GOOGLE_CALLBACK_PAGE = "/oauth/google/callback"

/** Who is logged in, provided by `DashboardSession` to the handlers. */
export interface DashboardPrincipal {
  readonly sessionId: SessionId
  /** The login (`usr_…`) this session is of: an account may have several (members, docs/dashboard.md#roles). */
  readonly userId: string
  readonly accountId: AccountId
  readonly email: string
  readonly emailVerified: boolean
  readonly csrfToken: string
  readonly idleExpiresAt: Date
  readonly absoluteExpiresAt: Date
  readonly staySignedIn: boolean
  /** The member's role, read with the session on every request (never kept in the session). */
  readonly role: DashboardRole
}
export class CurrentDashboardSession extends Context.Service<CurrentDashboardSession, DashboardPrincipal>()(
  "sitehealth/CurrentDashboardSession"
) {}

/**
 * The session cookie (401 `session_required` when absent, unknown, revoked or expired, idle or absolute),
 * and on POST/PATCH/PUT/DELETE the session's CSRF token in `X-CSRF-Token` (403 `csrf_token`). Refreshes the
 * idle expiry.
 */
export class DashboardSession extends HttpApiMiddleware.Service<
  DashboardSession,
  { provides: CurrentDashboardSession }
>()("sitehealth/DashboardSession", {
  // Tried in order: the `__Host-` cookie (PUBLIC_URL https), then the plain one (http only: refused over https).
  security: {
    secureCookie: HttpApiSecurity.apiKey({ key: SECURE_SESSION_COOKIE, in: "cookie" }),
    cookie: HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" })
  },
  error: [Unauthorized, Forbidden] as const
}) {}

/**
 * Cross-site request refusal for every state-changing request, logged in or not (log-in CSRF too): the
 * `Origin` header (or, without one, `Referer`) must be the server's own origin — PUBLIC_URL's, or the request's
 * Host — else 403 `csrf_origin`.
 */
export class DashboardOrigin extends HttpApiMiddleware.Service<DashboardOrigin>()("sitehealth/DashboardOrigin", {
  error: [Forbidden] as const
}) {}

const idParams = { id: Schema.String }

export class DashboardAuthApi extends HttpApiGroup.make("auth")
  .add(
    doc(
      HttpApiEndpoint.post("signUp", "/auth/signup", {
        payload: SignUpPayload,
        success: Envelope("SignUpResponse", Accepted, { status: 202 }),
        error: [BadRequest, RateLimited]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Create an account (starts the 14-day trial) and mail a verification link",
      "Answers the same whether or not the email is already registered; a registered address gets a mail saying so " +
        "instead."
    ),
    doc(
      HttpApiEndpoint.post("logIn", "/auth/login", {
        payload: LogInPayload,
        success: Envelope("LogInResponse", LogInResult),
        error: [BadRequest, Unauthorized, Forbidden, RateLimited]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Log in: sets a new session cookie (a new id every time) and answers the session with its CSRF token",
      "401 `invalid_credentials` for an unknown email or a wrong password alike; 403 `email_not_verified` once the " +
        "password is right but the address is not verified. With two-factor sign-in on, no session yet: " +
        "`{secondFactorRequired: true, challenge}` for `POST /auth/login/second-factor`. 429 (with Retry-After) " +
        "while this address is slowed down for this account after repeated failures, after too many failures from " +
        "the address, or while the account is under attack (over 100 failures in an hour) for a browser that has not " +
        "logged in to it before. docs/security.md."
    ),
    doc(
      HttpApiEndpoint.post("logInSecondFactor", "/auth/login/second-factor", {
        payload: SecondFactorPayload,
        success: Envelope("SecondFactorResponse", CurrentSessionView),
        error: [BadRequest, Unauthorized, RateLimited]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Log in, second step: the challenge from log-in and a code from the authenticator app (or a recovery code)",
      "401 `invalid_code` for a wrong, reused or expired code; 400 `invalid_link` when the challenge is malformed, " +
        "expired (5 minutes) or already used; 429 with Retry-After, throttled as log-in is."
    ),
    doc(
      HttpApiEndpoint.post("requestPasswordReset", "/auth/password-reset", {
        payload: EmailPayload,
        success: Envelope("PasswordResetRequested", Accepted, { status: 202 }),
        error: [BadRequest, RateLimited]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Mail a single-use password-reset link (same answer for an unregistered email)"
    ),
    doc(
      HttpApiEndpoint.post("resetPassword", "/auth/password-reset/confirm", {
        payload: ResetPasswordPayload,
        success: Envelope("PasswordResetDone", Accepted),
        error: [BadRequest, RateLimited]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Set a new password from a reset link's token; ends every session of the account",
      "400 `invalid_link` when the token is malformed, forged, expired or already used."
    ),
    doc(
      HttpApiEndpoint.post("verifyEmail", "/auth/verify-email", {
        payload: VerifyEmailPayload,
        success: Envelope("EmailVerified", DashboardUser),
        error: [BadRequest]
      }).annotate(DashboardAccessAnnotation, "public"),
      "Verify the email address from the verification link's token",
      "400 `invalid_link` when the token is malformed, forged, expired or already used."
    ),
    doc(
      HttpApiEndpoint.post("logOut", "/auth/logout", {
        success: Envelope("LoggedOut", LoggedOut)
      }).annotate(DashboardAccessAnnotation, "self").middleware(DashboardSession),
      "End this session and clear its cookie"
    ),
    doc(
      HttpApiEndpoint.get("session", "/auth/session", {
        success: Envelope("SessionResponse", CurrentSessionView)
      }).annotate(DashboardAccessAnnotation, "self").middleware(DashboardSession),
      "The logged-in user and this session's CSRF token (401 when logged out)"
    ),
    doc(
      HttpApiEndpoint.get("listSessions", "/auth/sessions", {
        success: Envelope("SessionListResponse", SessionList)
      }).annotate(DashboardAccessAnnotation, "self").middleware(DashboardSession),
      "The account's live sessions"
    ),
    doc(
      HttpApiEndpoint.delete("revokeSession", "/auth/sessions/:id", {
        params: idParams,
        success: Envelope("SessionRevoked", SessionsRevoked),
        error: [NotFound]
      }).annotate(DashboardAccessAnnotation, "self").middleware(DashboardSession),
      "End one session of the account (404 for another account's or an unknown one)"
    ),
    doc(
      HttpApiEndpoint.post("logOutOtherSessions", "/auth/sessions/revoke-others", {
        success: Envelope("OtherSessionsRevoked", SessionsRevoked)
      }).annotate(DashboardAccessAnnotation, "self").middleware(DashboardSession),
      "End every session of the account but this one"
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Auth", description: "Sign up, log in, sessions, password reset" }))
{}

export class DashboardWebsitesApi extends HttpApiGroup.make("websites")
  .add(
    doc(
      HttpApiEndpoint.get("list", "/websites", { success: Envelope("WebsiteListResponse", WebsiteList) }).annotate(
        DashboardAccessAnnotation,
        "viewer"
      ),
      "The account's websites"
    ),
    doc(
      HttpApiEndpoint.post("create", "/websites", {
        payload: CreateWebsitePayload,
        success: Envelope("WebsiteCreated", Website, { status: 201 }),
        error: [BadRequest]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Add a website"
    ),
    doc(
      HttpApiEndpoint.patch("update", "/websites/:id", {
        params: idParams,
        payload: UpdateWebsitePayload,
        success: Envelope("WebsiteUpdated", Website),
        error: [BadRequest, NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Edit a website's name, domain, time zone or currency"
    ),
    doc(
      HttpApiEndpoint.delete("delete", "/websites/:id", {
        params: idParams,
        payload: DeleteWebsitePayload,
        success: Envelope("WebsiteDeletedResponse", WebsiteDeleted),
        error: [BadRequest, NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Delete a website, its data and credentials; takes it out of every token's scope",
      "`confirmDomain` must equal the website's domain (400 `confirmation_mismatch` otherwise). A token scoped to " +
        "this website alone stops working for it."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Websites", description: "The account's websites" }))
{}

/**
 * The groups of the web app's shell — sessions and websites — alone (no tokens or account: DashboardTokens.ts;
 * no connections, no reports: see the module's comment).
 */
export class DashboardCoreApi extends HttpApi.make("dashboard")
  .add(DashboardAuthApi, DashboardWebsitesApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
