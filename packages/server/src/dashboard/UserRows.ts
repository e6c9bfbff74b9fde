/**
 * A dashboard login as AuthRepo and its halves (TwoFactorRows.ts, TeamRows.ts) keep it, and its row's decoder.
 */
import { AccountId } from "@sitehealth/domain/Common"
import { DashboardRole } from "@sitehealth/domain/DashboardRoles"
import * as Schema from "effect/Schema"
import { Instant } from "../store/Sql.ts"

export interface UserRecord {
  readonly id: string
  readonly accountId: AccountId
  /** Lower case, trimmed. */
  readonly email: string
  /** `scrypt$…` (Passwords.ts); null for an account that only logs in by a magic link (the demo). */
  readonly passwordHash: string | null
  readonly emailVerifiedAt: Date | null
  readonly createdAt: Date
  /** Bumped by every password change; a reset link is valid only for the version it was made for. */
  readonly passwordVersion: number
  /** When two-factor sign-in was turned on; null: off. */
  readonly twoFactorEnabledAt: Date | null
  /** The login's role in its account (DashboardRoles.ts); a new login is its account's owner. */
  readonly role: DashboardRole
}

/** A user as created: the version and two-factor state start at their defaults. */
export type NewUser = Omit<UserRecord, "passwordVersion" | "twoFactorEnabledAt" | "role">

export const UserRow = Schema.Struct({
  id: Schema.String,
  account_id: AccountId,
  email: Schema.String,
  password_hash: Schema.NullOr(Schema.String),
  email_verified_at: Schema.NullOr(Instant),
  created_at: Instant,
  password_version: Schema.Number,
  totp_enabled_at: Schema.NullOr(Instant),
  role: DashboardRole
})
export const toUser = (r: typeof UserRow.Type): UserRecord => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  passwordHash: r.password_hash,
  emailVerifiedAt: r.email_verified_at,
  createdAt: r.created_at,
  passwordVersion: r.password_version,
  twoFactorEnabledAt: r.totp_enabled_at,
  role: r.role
})
