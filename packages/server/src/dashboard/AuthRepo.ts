/**
 * The dashboard's users, sessions and used email links, over SQL or in memory (tests). A session is found by
 * the SHA-256 of its cookie secret (hex here, bytea in the table); the secret itself is never stored.
 */
import { AccountId } from "@sitehealth/domain/Common"
import { DashboardRole } from "@sitehealth/domain/DashboardRoles"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { randomBase62 } from "../store/Ids.ts"
import { Bytes, dieOnSqlError, firstOf, Instant, rowsOf } from "../store/Sql.ts"
import { teamMemory, type TeamRepoShape, teamSql } from "./TeamRows.ts"
import { twoFactorMemory, type TwoFactorRecord, type TwoFactorRepoShape, twoFactorSql } from "./TwoFactorRows.ts"
import { type NewUser, toUser, type UserRecord, UserRow } from "./UserRows.ts"

export type { NewUser, UserRecord } from "./UserRows.ts"

export interface SessionRecord {
  readonly id: string
  /** SHA-256 of the cookie's secret, hex. */
  readonly secretSha256: string
  readonly userId: string
  readonly createdAt: Date
  readonly lastSeenAt: Date
  readonly idleExpiresAt: Date
  readonly absoluteExpiresAt: Date
  readonly userAgent: string | null
  readonly address: string | null
  /** This session's idle span: the server's default, or the "Stay signed in" span. */
  readonly idleSeconds: number
  /** "Stay signed in": a persistent cookie and the long span. */
  readonly persistent: boolean
}

export interface SessionWithUser {
  readonly session: SessionRecord
  readonly user: UserRecord
}

export const newUserId = () => `usr_${randomBase62(16)}`
export const newSessionId = () => `ses_${randomBase62(16)}`

export interface AuthRepoShape extends TwoFactorRepoShape, TeamRepoShape {
  /** null when the email is taken (a concurrent sign-up). */
  readonly createUser: (user: NewUser) => Effect.Effect<UserRecord | null>
  readonly findUserByEmail: (email: string) => Effect.Effect<UserRecord | null>
  readonly findUser: (id: string) => Effect.Effect<UserRecord | null>
  /** The account's owner login (the morning email, the demo's magic link); null when it has none. */
  readonly findUserByAccount: (accountId: string) => Effect.Effect<UserRecord | null>
  readonly markVerified: (id: string, at: Date) => Effect.Effect<UserRecord | null>
  /** Sets the hash and bumps the password version (every outstanding reset link dies); the new version. */
  readonly setPassword: (id: string, hash: string) => Effect.Effect<number>
  /** Sets the login's role; the next request of each of its sessions is checked against it. false: no such login. */
  readonly setRole: (id: string, role: DashboardRole) => Effect.Effect<boolean>
  readonly insertSession: (session: SessionRecord) => Effect.Effect<void>
  /**
   * The live session with this secret hash, its idle expiry pushed to min(now + its idle span, absolute) and
   * last_seen_at to now, in one statement; null when unknown or expired (idle or absolute).
   */
  readonly touchSession: (secretSha256: string, now: Date) => Effect.Effect<SessionWithUser | null>
  readonly listSessions: (userId: string, now: Date) => Effect.Effect<ReadonlyArray<SessionRecord>>
  /** Deletes one session of the user; false when it is not theirs or does not exist. */
  readonly deleteSession: (userId: string, id: string) => Effect.Effect<boolean>
  /** Deletes every session of the user except `keep` (null: all); how many ended (live or not). */
  readonly deleteSessionsOf: (userId: string, keep: string | null) => Effect.Effect<number>
  /** Marks a link as used; false when it already was (single use). */
  readonly useLink: (id: string, at: Date, expiresAt: Date) => Effect.Effect<boolean>
}

const SessionRow = Schema.Struct({
  id: Schema.String,
  secret_sha256: Bytes,
  user_id: Schema.String,
  created_at: Instant,
  last_seen_at: Instant,
  idle_expires_at: Instant,
  absolute_expires_at: Instant,
  user_agent: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  idle_seconds: Schema.Number,
  persistent: Schema.Boolean
})
const toSession = (r: typeof SessionRow.Type): SessionRecord => ({
  id: r.id,
  secretSha256: Buffer.from(r.secret_sha256).toString("hex"),
  userId: r.user_id,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  idleExpiresAt: r.idle_expires_at,
  absoluteExpiresAt: r.absolute_expires_at,
  userAgent: r.user_agent,
  address: r.address,
  idleSeconds: r.idle_seconds,
  persistent: r.persistent
})
const SessionUserRow = Schema.Struct({
  ...SessionRow.fields,
  u_account_id: AccountId,
  u_email: Schema.String,
  u_password_hash: Schema.NullOr(Schema.String),
  u_email_verified_at: Schema.NullOr(Instant),
  u_created_at: Instant,
  u_password_version: Schema.Number,
  u_totp_enabled_at: Schema.NullOr(Instant),
  u_role: DashboardRole
})

const firstUser = firstOf("dashboard_users", UserRow)
const oneUser = (rows: ReadonlyArray<unknown>) => Effect.map(firstUser(rows), (r) => (r === null ? null : toUser(r)))

export class AuthRepo extends Context.Service<AuthRepo, AuthRepoShape>()("sitehealth/AuthRepo") {
  static readonly sql = Layer.effect(
    AuthRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return AuthRepo.of({
        ...twoFactorSql(sql),
        ...teamSql(sql),
        createUser: Effect.fn("AuthRepo.createUser")(function*(u) {
          return yield* sql`INSERT INTO dashboard_users (id, account_id, email, password_hash, email_verified_at,
              created_at)
              VALUES (${u.id}, ${u.accountId}, ${u.email}, ${u.passwordHash}, ${u.emailVerifiedAt}, ${u.createdAt})
              ON CONFLICT (email) DO NOTHING RETURNING *`.pipe(Effect.flatMap(oneUser), dieOnSqlError)
        }),
        findUserByEmail: Effect.fn("AuthRepo.findUserByEmail")(function*(email) {
          return yield* sql`SELECT * FROM dashboard_users WHERE email = ${email}`.pipe(
            Effect.flatMap(oneUser),
            dieOnSqlError
          )
        }),
        findUser: Effect.fn("AuthRepo.findUser")(function*(id) {
          return yield* sql`SELECT * FROM dashboard_users WHERE id = ${id}`.pipe(Effect.flatMap(oneUser), dieOnSqlError)
        }),
        findUserByAccount: Effect.fn("AuthRepo.findUserByAccount")(function*(accountId) {
          return yield* sql`SELECT * FROM dashboard_users WHERE account_id = ${accountId} AND role = 'owner'
              ORDER BY created_at LIMIT 1`.pipe(
            Effect.flatMap(oneUser),
            dieOnSqlError
          )
        }),
        markVerified: Effect.fn("AuthRepo.markVerified")(function*(id, at) {
          return yield* sql`UPDATE dashboard_users SET email_verified_at = coalesce(email_verified_at, ${at}) WHERE id =
              ${id}
              RETURNING *`.pipe(Effect.flatMap(oneUser), dieOnSqlError)
        }),
        setPassword: Effect.fn("AuthRepo.setPassword")(function*(id, hash) {
          return yield* sql`UPDATE dashboard_users SET password_hash = ${hash}, password_version = password_version + 1
              WHERE id = ${id} RETURNING password_version`.pipe(
            Effect.map((rows) =>
              Number((rows[0] as { password_version?: unknown } | undefined)?.password_version ?? 0)
            ),
            dieOnSqlError
          )
        }),
        setRole: Effect.fn("AuthRepo.setRole")(function*(id, role) {
          return yield* sql`UPDATE dashboard_users SET role = ${role} WHERE id = ${id} RETURNING id`.pipe(
            Effect.map((rows) => rows.length > 0),
            dieOnSqlError
          )
        }),
        insertSession: Effect.fn("AuthRepo.insertSession")(function*(s) {
          return yield* sql`INSERT INTO dashboard_sessions
                (id, secret_sha256, user_id, created_at, last_seen_at, idle_expires_at, absolute_expires_at, user_agent,
                  address,
                 idle_seconds, persistent)
              VALUES (${s.id}, ${Buffer.from(s.secretSha256, "hex")}, ${s.userId}, ${s.createdAt}, ${s.lastSeenAt},
                ${s.idleExpiresAt}, ${s.absoluteExpiresAt}, ${s.userAgent}, ${s.address}, ${s.idleSeconds},
                  ${s.persistent})`
            .pipe(
              Effect.asVoid,
              dieOnSqlError
            )
        }),
        touchSession: Effect.fn("AuthRepo.touchSession")(function*(hash, now) {
          return yield* sql`UPDATE dashboard_sessions s
              SET last_seen_at = ${now},
                  idle_expires_at = least(${now}::timestamptz + make_interval(secs => s.idle_seconds),
                    s.absolute_expires_at)
              FROM dashboard_users u
              WHERE s.secret_sha256 = ${Buffer.from(hash, "hex")} AND u.id = s.user_id
                AND s.idle_expires_at > ${now} AND s.absolute_expires_at > ${now}
              RETURNING s.*, u.account_id AS u_account_id, u.email AS u_email, u.password_hash AS u_password_hash,
                u.email_verified_at AS u_email_verified_at, u.created_at AS u_created_at,
                u.password_version AS u_password_version, u.totp_enabled_at AS u_totp_enabled_at,
                u.role AS u_role`.pipe(
            Effect.flatMap(firstOf("dashboard_sessions", SessionUserRow)),
            Effect.map((r) =>
              r === null ? null : {
                session: toSession(r),
                user: toUser({
                  id: r.user_id,
                  account_id: r.u_account_id,
                  email: r.u_email,
                  password_hash: r.u_password_hash,
                  email_verified_at: r.u_email_verified_at,
                  created_at: r.u_created_at,
                  password_version: r.u_password_version,
                  totp_enabled_at: r.u_totp_enabled_at,
                  role: r.u_role
                })
              }
            ),
            dieOnSqlError
          )
        }),
        listSessions: Effect.fn("AuthRepo.listSessions")(function*(userId, now) {
          return yield* sql`SELECT * FROM dashboard_sessions WHERE user_id = ${userId}
                AND idle_expires_at > ${now} AND absolute_expires_at > ${now}
              ORDER BY created_at DESC, id`.pipe(
            Effect.flatMap(rowsOf("dashboard_sessions", SessionRow)),
            Effect.map((rows) => rows.map(toSession)),
            dieOnSqlError
          )
        }),
        deleteSession: Effect.fn("AuthRepo.deleteSession")(function*(userId, id) {
          return yield* sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId} AND id = ${id} RETURNING id`.pipe(
            Effect.map((rows) => rows.length > 0),
            dieOnSqlError
          )
        }),
        deleteSessionsOf: Effect.fn("AuthRepo.deleteSessionsOf")(function*(userId, keep) {
          return yield* sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId}
              ${keep === null ? sql`` : sql`AND id <> ${keep}`} RETURNING id`.pipe(
            Effect.map((rows) => rows.length),
            dieOnSqlError
          )
        }),
        useLink: Effect.fn("AuthRepo.useLink")(function*(id, at, expiresAt) {
          // Expired entries can go: their links fail the expiry check before they get here.
          yield* sql`DELETE FROM dashboard_used_links WHERE expires_at < ${at}`
          const rows = yield* sql`INSERT INTO dashboard_used_links (id, used_at, expires_at)
            VALUES (${Buffer.from(id, "hex")}, ${at}, ${expiresAt}) ON CONFLICT (id) DO NOTHING RETURNING id`
          return rows.length === 1
        }, dieOnSqlError)
      })
    })
  )

  static readonly memory = Layer.sync(AuthRepo, () => {
    const users = new Map<string, UserRecord>()
    const sessions = new Map<string, SessionRecord>()
    const usedLinks = new Map<string, Date>()
    const twoFactor = new Map<string, TwoFactorRecord>()
    /** user → code hash → when used (null: unused). */
    const recoveryCodes = new Map<string, Map<string, Date | null>>()
    const live = (s: SessionRecord, now: Date) =>
      s.idleExpiresAt.getTime() > now.getTime() && s.absoluteExpiresAt.getTime() > now.getTime()
    const byEmail = (email: string) => [...users.values()].find((u) => u.email === email) ?? null
    return AuthRepo.of({
      ...twoFactorMemory({ users, twoFactor, recoveryCodes }),
      ...teamMemory({ users, sessions }),
      createUser: Effect.fn("AuthRepo.createUser")((u) =>
        Effect.sync(() => {
          if (byEmail(u.email) !== null) return null
          const user: UserRecord = { ...u, passwordVersion: 0, twoFactorEnabledAt: null, role: "owner" }
          users.set(u.id, user)
          return user
        })
      ),
      findUserByEmail: Effect.fn("AuthRepo.findUserByEmail")((email) => Effect.sync(() => byEmail(email))),
      findUser: Effect.fn("AuthRepo.findUser")((id) => Effect.sync(() => users.get(id) ?? null)),
      findUserByAccount: Effect.fn("AuthRepo.findUserByAccount")((accountId) =>
        Effect.sync(() => [...users.values()].find((u) => u.accountId === accountId && u.role === "owner") ?? null)
      ),
      markVerified: Effect.fn("AuthRepo.markVerified")((id, at) =>
        Effect.sync(() => {
          const u = users.get(id)
          if (!u) return null
          const next = { ...u, emailVerifiedAt: u.emailVerifiedAt ?? at }
          users.set(id, next)
          return next
        })
      ),
      setPassword: Effect.fn("AuthRepo.setPassword")((id, hash) =>
        Effect.sync(() => {
          const u = users.get(id)
          if (!u) return 0
          users.set(id, { ...u, passwordHash: hash, passwordVersion: u.passwordVersion + 1 })
          return u.passwordVersion + 1
        })
      ),
      setRole: Effect.fn("AuthRepo.setRole")((id, role) =>
        Effect.sync(() => {
          const u = users.get(id)
          if (!u) return false
          users.set(id, { ...u, role })
          return true
        })
      ),
      insertSession: Effect.fn("AuthRepo.insertSession")((s) => Effect.sync(() => void sessions.set(s.id, s))),
      touchSession: Effect.fn("AuthRepo.touchSession")((hash, now) =>
        Effect.sync(() => {
          const s = [...sessions.values()].find((x) => x.secretSha256 === hash)
          const user = s && users.get(s.userId)
          if (!s || !user || !live(s, now)) return null
          const next: SessionRecord = {
            ...s,
            lastSeenAt: now,
            idleExpiresAt: new Date(Math.min(now.getTime() + s.idleSeconds * 1000, s.absoluteExpiresAt.getTime()))
          }
          sessions.set(s.id, next)
          return { session: next, user }
        })
      ),
      listSessions: Effect.fn("AuthRepo.listSessions")((userId, now) =>
        Effect.sync(() =>
          [...sessions.values()]
            .filter((s) => s.userId === userId && live(s, now))
            .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        )
      ),
      deleteSession: Effect.fn("AuthRepo.deleteSession")((userId, id) =>
        Effect.sync(() => {
          const s = sessions.get(id)
          if (!s || s.userId !== userId) return false
          return sessions.delete(id)
        })
      ),
      deleteSessionsOf: Effect.fn("AuthRepo.deleteSessionsOf")((userId, keep) =>
        Effect.sync(() => {
          let n = 0
          for (const [id, s] of sessions) {
            if (s.userId === userId && id !== keep) {
              sessions.delete(id)
              n++
            }
          }
          return n
        })
      ),
      useLink: Effect.fn("AuthRepo.useLink")((id, at) =>
        Effect.sync(() => {
          if (usedLinks.has(id)) return false
          usedLinks.set(id, at)
          return true
        })
      )
    })
  })
}
