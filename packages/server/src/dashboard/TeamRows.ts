/**
 * The team half of AuthRepo: an account's logins (members) and its invitations, over SQL or in memory. AuthRepo's
 * layers spread `teamSql(sql)` / `teamMemory(state)` into their service; the memory twin shares its users and
 * sessions maps. Changes that could leave an account without an owner lock the account's row first, so two
 * owners demoting each other at once cannot both succeed.
 */
import { AccountId } from "@sitehealth/domain/Common"
import { DashboardRole } from "@sitehealth/domain/DashboardRoles"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { looksLikeId, randomBase62 } from "../store/Ids.ts"
import { dieOnSqlError, Instant, rowsOf } from "../store/Sql.ts"
import { type NewUser, toUser, type UserRecord, UserRow } from "./UserRows.ts"

export interface InvitationRecord {
  readonly id: string
  readonly accountId: AccountId
  /** Lower case, trimmed. */
  readonly email: string
  readonly role: DashboardRole
  /** The inviting login; null once it was removed. */
  readonly invitedBy: string | null
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly acceptedAt: Date | null
  readonly revokedAt: Date | null
}
export type NewInvitation = Omit<InvitationRecord, "acceptedAt" | "revokedAt">

export const newInvitationId = () => `inv_${randomBase62(16)}`

export type MemberChange = UserRecord | "not_found" | "last_owner"
export type MemberRemoval = { readonly sessionsEnded: number } | "not_found" | "last_owner"
export type Acceptance = UserRecord | "gone" | "email_taken"

export interface TeamRepoShape {
  /** The account's logins, oldest first. */
  readonly listMembers: (accountId: string) => Effect.Effect<ReadonlyArray<UserRecord>>
  /** Sets a member's role, unless that leaves the account without an owner. */
  readonly changeRole: (accountId: string, userId: string, role: DashboardRole) => Effect.Effect<MemberChange>
  /** Deletes a member's login and every session of theirs, unless that leaves the account without an owner. */
  readonly removeMember: (accountId: string, userId: string) => Effect.Effect<MemberRemoval>
  /** Stores an invitation; a pending one of the same address in the account is revoked (its link dies). */
  readonly createInvitation: (invitation: NewInvitation) => Effect.Effect<InvitationRecord>
  /** The account's invitations neither accepted, revoked nor expired at `now`, newest first. */
  readonly listInvitations: (accountId: string, now: Date) => Effect.Effect<ReadonlyArray<InvitationRecord>>
  readonly findInvitation: (id: string) => Effect.Effect<InvitationRecord | null>
  /** false when it is not the account's, or no longer pending. */
  readonly revokeInvitation: (accountId: string, id: string, at: Date) => Effect.Effect<boolean>
  /**
   * Marks a pending, unexpired invitation accepted and creates its login with the invited role, in one transaction:
   * "gone" when it is not pending any more (used, revoked, expired), "email_taken" when the address has a login.
   */
  readonly acceptInvitation: (id: string, user: NewUser, at: Date) => Effect.Effect<Acceptance>
  /** Deletes every login of the account with its sessions, and its invitations (the account is being deleted). */
  readonly removeAccountLogins: (accountId: string) => Effect.Effect<void>
}

const InvitationRow = Schema.Struct({
  id: Schema.String,
  account_id: AccountId,
  email: Schema.String,
  role: DashboardRole,
  invited_by: Schema.NullOr(Schema.String),
  created_at: Instant,
  expires_at: Instant,
  accepted_at: Schema.NullOr(Instant),
  revoked_at: Schema.NullOr(Instant)
})
const toInvitation = (r: typeof InvitationRow.Type): InvitationRecord => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  role: r.role,
  invitedBy: r.invited_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  acceptedAt: r.accepted_at,
  revokedAt: r.revoked_at
})
const invitations = (rows: ReadonlyArray<unknown>) =>
  Effect.map(rowsOf("dashboard_invitations", InvitationRow)(rows), (rs) => rs.map(toInvitation))
const users = (rows: ReadonlyArray<unknown>) =>
  Effect.map(rowsOf("dashboard_users", UserRow)(rows), (rs) => rs.map(toUser))

const OwnerCount = Schema.Struct({ owners: Schema.Number, role: Schema.NullOr(DashboardRole) })

export const teamSql = (sql: SqlClient.SqlClient): TeamRepoShape => {
  /** Locks the account, then answers how many owners it has and the member's role (null: not its member). */
  const ownersAnd = (accountId: string, userId: string) =>
    Effect.gen(function*() {
      yield* sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`
      const rows = yield* sql`SELECT
          (SELECT count(*)::int FROM dashboard_users WHERE account_id = ${accountId} AND role = 'owner') AS owners,
          (SELECT role FROM dashboard_users WHERE account_id = ${accountId} AND id = ${userId}) AS role`
      return yield* Effect.map(rowsOf("dashboard_users", OwnerCount)(rows), (rs) => rs[0]!)
    })
  const leavesNoOwner = (c: typeof OwnerCount.Type, role: DashboardRole | null) =>
    c.role === "owner" && role !== "owner" && c.owners <= 1
  return {
    listMembers: Effect.fn("AuthRepo.listMembers")(function*(accountId) {
      return yield* sql`SELECT * FROM dashboard_users WHERE account_id = ${accountId} ORDER BY created_at, id`.pipe(
        Effect.flatMap(users),
        dieOnSqlError
      )
    }),
    changeRole: Effect.fn("AuthRepo.changeRole")(function*(accountId, userId, role) {
      if (!looksLikeId(userId)) return "not_found" as const
      return yield* sql.withTransaction(Effect.gen(function*() {
        const count = yield* ownersAnd(accountId, userId)
        if (count.role === null) return "not_found" as const
        if (leavesNoOwner(count, role)) return "last_owner" as const
        const rows = yield* sql`UPDATE dashboard_users SET role = ${role} WHERE id = ${userId} RETURNING *`.pipe(
          Effect.flatMap(users)
        )
        return rows[0]!
      })).pipe(dieOnSqlError)
    }),
    removeMember: Effect.fn("AuthRepo.removeMember")(function*(accountId, userId) {
      if (!looksLikeId(userId)) return "not_found" as const
      return yield* sql.withTransaction(Effect.gen(function*() {
        const count = yield* ownersAnd(accountId, userId)
        if (count.role === null) return "not_found" as const
        if (leavesNoOwner(count, null)) return "last_owner" as const
        const ended = yield* sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId} RETURNING id`
        yield* sql`DELETE FROM dashboard_users WHERE id = ${userId}`
        return { sessionsEnded: ended.length }
      })).pipe(dieOnSqlError)
    }),
    createInvitation: Effect.fn("AuthRepo.createInvitation")(function*(i) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        // One invitation of an address at a time: two at once would both find none pending to replace.
        yield* sql`SELECT id FROM accounts WHERE id = ${i.accountId} FOR UPDATE`
        yield* sql`UPDATE dashboard_invitations SET revoked_at = ${i.createdAt}
          WHERE account_id = ${i.accountId} AND email = ${i.email} AND accepted_at IS NULL AND revoked_at IS NULL`
        const rows = yield* sql`INSERT INTO dashboard_invitations
            (id, account_id, email, role, invited_by, created_at, expires_at)
          VALUES (${i.id}, ${i.accountId}, ${i.email}, ${i.role}, ${i.invitedBy}, ${i.createdAt}, ${i.expiresAt})
          RETURNING *`.pipe(Effect.flatMap(invitations))
        return rows[0]!
      })).pipe(dieOnSqlError)
    }),
    listInvitations: Effect.fn("AuthRepo.listInvitations")(function*(accountId, now) {
      return yield* sql`SELECT * FROM dashboard_invitations WHERE account_id = ${accountId}
          AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
          ORDER BY created_at DESC, id`.pipe(Effect.flatMap(invitations), dieOnSqlError)
    }),
    findInvitation: Effect.fn("AuthRepo.findInvitation")(function*(id) {
      if (!looksLikeId(id)) return null
      return yield* sql`SELECT * FROM dashboard_invitations WHERE id = ${id}`.pipe(
        Effect.flatMap(invitations),
        Effect.map((rows) => rows[0] ?? null),
        dieOnSqlError
      )
    }),
    revokeInvitation: Effect.fn("AuthRepo.revokeInvitation")(function*(accountId, id, at) {
      if (!looksLikeId(id)) return false
      const rows = yield* sql`UPDATE dashboard_invitations SET revoked_at = ${at}
          WHERE id = ${id} AND account_id = ${accountId} AND accepted_at IS NULL AND revoked_at IS NULL
          RETURNING id`.pipe(dieOnSqlError)
      return rows.length === 1
    }),
    acceptInvitation: Effect.fn("AuthRepo.acceptInvitation")(function*(id, u, at) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        const taken = yield* sql`UPDATE dashboard_invitations SET accepted_at = ${at}
            WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${at}
            RETURNING *`.pipe(Effect.flatMap(invitations))
        const invitation = taken[0]
        if (invitation === undefined) return "gone" as const
        const created = yield* sql`INSERT INTO dashboard_users (id, account_id, email, password_hash,
            email_verified_at, created_at, role)
          VALUES (${u.id}, ${invitation.accountId}, ${u.email}, ${u.passwordHash}, ${u.emailVerifiedAt},
            ${u.createdAt}, ${invitation.role})
          ON CONFLICT (email) DO NOTHING RETURNING *`.pipe(Effect.flatMap(users))
        // The address has a login already: nothing is kept (the invitation stays pending for nobody to use).
        if (created.length === 0) return yield* Effect.fail("email_taken" as const)
        return created[0]!
      })).pipe(
        Effect.catchIf((e): e is "email_taken" => e === "email_taken", (e) => Effect.succeed(e)),
        dieOnSqlError
      )
    }),
    removeAccountLogins: Effect.fn("AuthRepo.removeAccountLogins")(function*(accountId) {
      // Sessions and invitations go with the logins and the account (ON DELETE CASCADE).
      yield* sql`DELETE FROM dashboard_invitations WHERE account_id = ${accountId}`.pipe(dieOnSqlError)
      yield* sql`DELETE FROM dashboard_users WHERE account_id = ${accountId}`.pipe(dieOnSqlError)
    })
  }
}

/** The memory twin's state; `users` and `sessions` are AuthRepo's own maps. */
export interface TeamMemoryState {
  readonly users: Map<string, UserRecord>
  readonly sessions: Map<string, { readonly userId: string }>
}

export const teamMemory = (state: TeamMemoryState): TeamRepoShape => {
  const invites = new Map<string, InvitationRecord>()
  const membersOf = (accountId: string) =>
    [...state.users.values()].filter((u) => u.accountId === accountId).sort((a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id)
    )
  const leavesNoOwner = (accountId: string, user: UserRecord, role: DashboardRole | null) =>
    user.role === "owner" && role !== "owner" && membersOf(accountId).filter((u) => u.role === "owner").length <= 1
  const pending = (i: InvitationRecord, now: Date) =>
    i.acceptedAt === null && i.revokedAt === null && i.expiresAt.getTime() > now.getTime()
  return {
    listMembers: Effect.fn("AuthRepo.listMembers")((accountId) => Effect.sync(() => membersOf(accountId))),
    changeRole: Effect.fn("AuthRepo.changeRole")((accountId, userId, role) =>
      Effect.sync((): MemberChange => {
        const user = state.users.get(userId)
        if (user === undefined || user.accountId !== accountId) return "not_found"
        if (leavesNoOwner(accountId, user, role)) return "last_owner"
        const changed = { ...user, role }
        state.users.set(userId, changed)
        return changed
      })
    ),
    removeMember: Effect.fn("AuthRepo.removeMember")((accountId, userId) =>
      Effect.sync((): MemberRemoval => {
        const user = state.users.get(userId)
        if (user === undefined || user.accountId !== accountId) return "not_found"
        if (leavesNoOwner(accountId, user, null)) return "last_owner"
        let sessionsEnded = 0
        for (const [id, s] of state.sessions) {
          if (s.userId === userId) {
            state.sessions.delete(id)
            sessionsEnded++
          }
        }
        state.users.delete(userId)
        for (const [id, i] of invites) if (i.invitedBy === userId) invites.set(id, { ...i, invitedBy: null })
        return { sessionsEnded }
      })
    ),
    createInvitation: Effect.fn("AuthRepo.createInvitation")((i) =>
      Effect.sync(() => {
        for (const [id, other] of invites) {
          if (other.accountId === i.accountId && other.email === i.email && other.acceptedAt === null) {
            if (other.revokedAt === null) invites.set(id, { ...other, revokedAt: i.createdAt })
          }
        }
        const stored: InvitationRecord = { ...i, acceptedAt: null, revokedAt: null }
        invites.set(i.id, stored)
        return stored
      })
    ),
    listInvitations: Effect.fn("AuthRepo.listInvitations")((accountId, now) =>
      Effect.sync(() =>
        [...invites.values()]
          .filter((i) => i.accountId === accountId && pending(i, now))
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id))
      )
    ),
    findInvitation: Effect.fn("AuthRepo.findInvitation")((id) => Effect.sync(() => invites.get(id) ?? null)),
    revokeInvitation: Effect.fn("AuthRepo.revokeInvitation")((accountId, id, at) =>
      Effect.sync(() => {
        const i = invites.get(id)
        if (i === undefined || i.accountId !== accountId || i.acceptedAt !== null || i.revokedAt !== null) {
          return false
        }
        invites.set(id, { ...i, revokedAt: at })
        return true
      })
    ),
    acceptInvitation: Effect.fn("AuthRepo.acceptInvitation")((id, u, at) =>
      Effect.sync((): Acceptance => {
        const i = invites.get(id)
        if (i === undefined || !pending(i, at)) return "gone"
        if ([...state.users.values()].some((other) => other.email === u.email)) return "email_taken"
        invites.set(id, { ...i, acceptedAt: at })
        const user: UserRecord = {
          ...u,
          accountId: i.accountId,
          passwordVersion: 0,
          twoFactorEnabledAt: null,
          role: i.role
        }
        state.users.set(user.id, user)
        return user
      })
    ),
    removeAccountLogins: Effect.fn("AuthRepo.removeAccountLogins")((accountId) =>
      Effect.sync(() => {
        for (const [id, u] of state.users) {
          if (u.accountId !== accountId) continue
          for (const [sid, s] of state.sessions) if (s.userId === id) state.sessions.delete(sid)
          state.users.delete(id)
        }
        for (const [id, i] of invites) if (i.accountId === accountId) invites.delete(id)
      })
    )
  }
}
