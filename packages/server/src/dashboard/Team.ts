/**
 * The account's team (DashboardTeam.ts): members and their roles, and invitations by email. An invitation's link
 * is `Signing.sign("invite", invitationId)`: an HMAC over the invitation's id and a 7-day expiry, so nothing
 * secret is stored; the invitation's row (pending, accepted, revoked) makes it single use and revocable.
 * Accepting creates the login with the invited role (its address counts as verified: the link came to it) and
 * logs it in. docs/dashboard.md#team.
 */
import type { DashboardPrincipal } from "@sitehealth/domain/DashboardCore"
import type { DashboardRole } from "@sitehealth/domain/DashboardRoles"
import {
  ACCEPT_INVITATION_PAGE,
  INVITATION_DAYS,
  type TeamInvitation,
  type TeamMember
} from "@sitehealth/domain/DashboardTeam"
import { Conflict, NotFound } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { AppConfig } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import {
  invalidLink,
  normalizeEmail,
  publicBase,
  refuseWeakPassword,
  sendLater,
  sessionView,
  startSession
} from "./Auth.ts"
import { AuthRepo, newUserId, type UserRecord } from "./AuthRepo.ts"
import { Signing } from "./Links.ts"
import { hashPassword } from "./Passwords.ts"
import { type InvitationRecord, newInvitationId } from "./TeamRows.ts"
import { AuthThrottle } from "./Throttle.ts"

const ROLE_WORDS: Record<DashboardRole, string> = {
  owner: "an owner (billing, members and everything an admin does)",
  admin: "an admin (websites, connections, tokens and alerts)",
  viewer: "a viewer (reads every report, changes nothing)"
}

const memberView = (user: UserRecord, you: string): TeamMember => ({
  id: user.id,
  email: user.email,
  role: user.role,
  you: user.id === you,
  joinedAt: user.createdAt.toISOString(),
  twoFactor: user.twoFactorEnabledAt !== null
})

const invitationView = (i: InvitationRecord, members: ReadonlyArray<UserRecord>): TeamInvitation => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invitedBy: members.find((m) => m.id === i.invitedBy)?.email ?? null,
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString()
})

const memberNotFound = () => new NotFound({ message: "No such member of this account", type: "member_not_found" })
const lastOwner = () =>
  new Conflict({
    message: "The account must keep an owner: make another member owner first",
    type: "last_owner"
  })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const team = (session: DashboardPrincipal) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    const members = yield* repo.listMembers(session.accountId)
    const invitations = yield* repo.listInvitations(session.accountId, yield* now)
    return {
      members: members.map((m) => memberView(m, session.userId)),
      invitations: invitations.map((i) => invitationView(i, members))
    }
  })

export const invite = (session: DashboardPrincipal, input: { readonly email: string; readonly role: DashboardRole }) =>
  Effect.gen(function*() {
    const repo = yield* AuthRepo
    yield* (yield* AuthThrottle).attempt("invite", session.accountId)
    const email = normalizeEmail(input.email)
    const members = yield* repo.listMembers(session.accountId)
    if (members.some((m) => m.email === email)) {
      return yield* new Conflict({ message: `${email} is a member of this account already`, type: "already_member" })
    }
    const at = yield* now
    const invitation = yield* repo.createInvitation({
      id: newInvitationId(),
      accountId: session.accountId,
      email,
      role: input.role,
      invitedBy: session.userId,
      createdAt: at,
      expiresAt: new Date(at.getTime() + INVITATION_DAYS * 86_400_000)
    })
    const token = (yield* Signing).sign("invite", invitation.id, at.getTime())
    const url = `${yield* publicBase(yield* AppConfig)}${ACCEPT_INVITATION_PAGE}?token=${encodeURIComponent(token)}`
    const account = yield* (yield* AccountsRepo).find(session.accountId)
    yield* sendLater((yield* Mailer).send({
      to: email,
      subject: `${session.email} invited you to ${account?.name ?? "their account"} on sitehealth`,
      text: `${session.email} invited you to join ${account?.name ?? "their account"} on sitehealth as ` +
        `${ROLE_WORDS[input.role]}.\n\nChoose a password and join:\n${url}\n\nThe link works once, for ` +
        `${INVITATION_DAYS} days. If you did not expect it, ignore this message: nothing happens without you.`
    }))
    return invitationView(invitation, members)
  })

export const revokeInvitation = (session: DashboardPrincipal, id: string) =>
  Effect.gen(function*() {
    if (!(yield* (yield* AuthRepo).revokeInvitation(session.accountId, id, yield* now))) {
      return yield* new NotFound({ message: "No pending invitation with this id", type: "invitation_not_found" })
    }
    return { revoked: true as const }
  })

export const changeRole = (session: DashboardPrincipal, userId: string, role: DashboardRole) =>
  Effect.gen(function*() {
    const changed = yield* (yield* AuthRepo).changeRole(session.accountId, userId, role)
    if (changed === "not_found") return yield* memberNotFound()
    if (changed === "last_owner") return yield* lastOwner()
    yield* Effect.logInfo("team: role changed").pipe(
      Effect.annotateLogs({ accountId: session.accountId, memberId: userId, role, by: session.userId })
    )
    return memberView(changed, session.userId)
  })

export const removeMember = (session: DashboardPrincipal, userId: string) =>
  Effect.gen(function*() {
    const removed = yield* (yield* AuthRepo).removeMember(session.accountId, userId)
    if (removed === "not_found") return yield* memberNotFound()
    if (removed === "last_owner") return yield* lastOwner()
    yield* Effect.logInfo("team: member removed").pipe(
      Effect.annotateLogs({ accountId: session.accountId, memberId: userId, by: session.userId })
    )
    return { removed: true as const, sessionsEnded: removed.sessionsEnded }
  })

/** The pending invitation a link names; invalid_link when forged, expired, revoked or used. */
const pendingInvitation = (token: string) =>
  Effect.gen(function*() {
    yield* (yield* AuthThrottle).attempt("invite", null)
    const at = yield* now
    const signed = (yield* Signing).verify("invite", token, at.getTime())
    if (signed === null) return yield* invalidLink()
    const invitation = yield* (yield* AuthRepo).findInvitation(signed.userId)
    if (
      invitation === null || invitation.acceptedAt !== null || invitation.revokedAt !== null ||
      invitation.expiresAt.getTime() <= at.getTime()
    ) return yield* invalidLink()
    return invitation
  })

export const previewInvitation = (token: string) =>
  Effect.gen(function*() {
    const invitation = yield* pendingInvitation(token)
    const inviter = invitation.invitedBy === null ? null : yield* (yield* AuthRepo).findUser(invitation.invitedBy)
    const account = yield* (yield* AccountsRepo).find(invitation.accountId)
    return {
      email: invitation.email,
      role: invitation.role,
      accountName: account?.name ?? invitation.accountId,
      invitedBy: inviter?.email ?? null,
      expiresAt: invitation.expiresAt.toISOString()
    }
  })

export const acceptInvitation = (
  input: { readonly token: string; readonly password: string; readonly staySignedIn?: boolean }
) =>
  Effect.gen(function*() {
    const invitation = yield* pendingInvitation(input.token)
    yield* refuseWeakPassword(input.password, invitation.email, "body.password")
    const at = yield* now
    const accepted = yield* (yield* AuthRepo).acceptInvitation(invitation.id, {
      id: newUserId(),
      accountId: invitation.accountId,
      email: invitation.email,
      passwordHash: yield* hashPassword(input.password),
      emailVerifiedAt: at,
      createdAt: at
    }, at)
    if (accepted === "gone") return yield* invalidLink()
    if (accepted === "email_taken") {
      return yield* new Conflict({
        message: `${invitation.email} already has a sitehealth login, and a login belongs to one account: ask ` +
          "the inviter to invite another address",
        type: "email_taken"
      })
    }
    yield* Effect.logInfo("team: invitation accepted").pipe(
      Effect.annotateLogs({ accountId: accepted.accountId, memberId: accepted.id, role: accepted.role })
    )
    return sessionView(yield* startSession(accepted, input.staySignedIn === true))
  })
