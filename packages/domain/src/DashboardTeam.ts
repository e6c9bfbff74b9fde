/**
 * The dashboard's `team` group (`/app/api/team/…`): the account's members and their roles (DashboardRoles.ts),
 * and invitations. An owner invites by email: the mail carries a signed link that expires after 7 days and works
 * once (nothing secret is stored: the link is an HMAC over the invitation's id). Whoever holds the link sees who
 * invited them (`previewInvitation`) and joins by choosing a password (`acceptInvitation`): a new login of the
 * account with the invited role, logged in at once. An owner changes a member's role or removes a member (their
 * sessions end at once); the account always keeps at least one owner (409 `last_owner`). docs/dashboard.md#team.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { Timestamp } from "./Common.ts"
import { CurrentSessionView, Email, LinkToken, NewPassword } from "./Dashboard.ts"
import { ACCEPT_INVITATION_PAGE, DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"

export { ACCEPT_INVITATION_PAGE }
import { access, DashboardRole } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict, NotFound, RateLimited } from "./Errors.ts"

/** How long an invitation's link works. */
export const INVITATION_DAYS = 7

export const TeamMember = Schema.Struct({
  id: Schema.String.annotate({ description: "The member's login id (`usr_…`)" }),
  email: Schema.String,
  role: DashboardRole,
  you: Schema.Boolean.annotate({ description: "This is the login asking" }),
  joinedAt: Timestamp,
  twoFactor: Schema.Boolean.annotate({ description: "Two-factor sign-in is on for this login" })
}).annotate({ identifier: "TeamMember" })
export type TeamMember = typeof TeamMember.Type

export const TeamInvitation = Schema.Struct({
  id: Schema.String.annotate({ description: "`inv_…`" }),
  email: Schema.String,
  role: DashboardRole,
  invitedBy: Schema.NullOr(Schema.String).annotate({ description: "The inviter's email (null once removed)" }),
  createdAt: Timestamp,
  expiresAt: Timestamp
}).annotate({ identifier: "TeamInvitation" })
export type TeamInvitation = typeof TeamInvitation.Type

export const Team = Schema.Struct({
  members: Schema.Array(TeamMember),
  invitations: Schema.Array(TeamInvitation).annotate({ description: "Invitations not yet accepted nor expired" })
}).annotate({ identifier: "Team" })
export type Team = typeof Team.Type

export const InvitePayload = Schema.Struct({ email: Email, role: DashboardRole }).annotate({
  identifier: "InviteRequest"
})
export const ChangeRolePayload = Schema.Struct({ role: DashboardRole }).annotate({ identifier: "ChangeRoleRequest" })
export const MemberRemoved = Schema.Struct({
  removed: Schema.Literal(true),
  sessionsEnded: Schema.Number.annotate({ description: "The member's sessions, ended at once" })
}).annotate({ identifier: "MemberRemoved" })
export const InvitationRevoked = Schema.Struct({ revoked: Schema.Literal(true) }).annotate({
  identifier: "InvitationRevoked"
})

export const InvitationTokenPayload = Schema.Struct({ token: LinkToken }).annotate({
  identifier: "InvitationTokenRequest"
})
export const InvitationPreview = Schema.Struct({
  email: Schema.String.annotate({ description: "The invited address: the new login's email" }),
  role: DashboardRole,
  accountName: Schema.String,
  invitedBy: Schema.NullOr(Schema.String),
  expiresAt: Timestamp
}).annotate({ identifier: "InvitationPreview" })
export const AcceptInvitationPayload = Schema.Struct({
  token: LinkToken,
  password: NewPassword,
  staySignedIn: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "AcceptInvitationRequest" })

const idParams = { id: Schema.String }
const INVALID = "400 `invalid_link` when the token is malformed, forged, expired, revoked or already used"

export class DashboardTeamApi extends HttpApiGroup.make("team")
  .add(
    doc(
      access("viewer", HttpApiEndpoint.get("team", "/team", { success: Envelope("TeamResponse", Team) }))
        .middleware(DashboardSession),
      "The account's members with their roles, and its pending invitations"
    ),
    doc(
      access(
        "owner",
        HttpApiEndpoint.post("invite", "/team/invitations", {
          payload: InvitePayload,
          success: Envelope("InvitationCreated", TeamInvitation, { status: 201 }),
          error: [BadRequest, Conflict, RateLimited]
        })
      ).middleware(DashboardSession),
      "Invite someone by email with a role: mails a link that works once, for 7 days",
      "409 `already_member` when the address is a member already. A pending invitation of the same address is " +
        "replaced (its link stops working). Without SMTP_URL the mail, link included, goes to the server log."
    ),
    doc(
      access(
        "owner",
        HttpApiEndpoint.delete("revokeInvitation", "/team/invitations/:id", {
          params: idParams,
          success: Envelope("InvitationRevokedResponse", InvitationRevoked),
          error: [NotFound]
        })
      ).middleware(DashboardSession),
      "Withdraw a pending invitation: its link stops working"
    ),
    doc(
      access(
        "owner",
        HttpApiEndpoint.patch("changeRole", "/team/members/:id", {
          params: idParams,
          payload: ChangeRolePayload,
          success: Envelope("MemberUpdated", TeamMember),
          error: [NotFound, Conflict]
        })
      ).middleware(DashboardSession),
      "Change a member's role; their next request is checked against it",
      "409 `last_owner` when it would leave the account without an owner."
    ),
    doc(
      access(
        "owner",
        HttpApiEndpoint.delete("removeMember", "/team/members/:id", {
          params: idParams,
          success: Envelope("MemberRemovedResponse", MemberRemoved),
          error: [NotFound, Conflict]
        })
      ).middleware(DashboardSession),
      "Remove a member: their login is deleted and every session of theirs ends at once",
      "409 `last_owner` when it would leave the account without an owner."
    ),
    doc(
      access(
        "public",
        HttpApiEndpoint.post("previewInvitation", "/team/invitation/preview", {
          payload: InvitationTokenPayload,
          success: Envelope("InvitationPreviewResponse", InvitationPreview),
          error: [BadRequest, RateLimited]
        })
      ),
      "What an invitation's link offers: the account, the role, who invited (does not use the link up)",
      INVALID + "."
    ),
    doc(
      access(
        "public",
        HttpApiEndpoint.post("acceptInvitation", "/team/invitation/accept", {
          payload: AcceptInvitationPayload,
          success: Envelope("InvitationAccepted", CurrentSessionView),
          error: [BadRequest, Conflict, RateLimited]
        })
      ),
      "Join the account from an invitation's link with a new password: a new login with the invited role, logged in",
      INVALID + "; 400 `weak_password`; 409 `email_taken` when the address already has a sitehealth login (a " +
        "login belongs to one account)."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Team", description: "Members, roles and invitations" }))
{}

/** The team group alone, as `DashboardApi` serves it: the web app's client for the team and invitation pages. */
export class DashboardTeamHttpApi extends HttpApi.make("dashboard")
  .add(DashboardTeamApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
