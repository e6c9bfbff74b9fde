/**
 * The two-factor half of AuthRepo: TOTP state and recovery codes, over SQL or in memory. AuthRepo's layers
 * spread `twoFactorSql(sql)` / `twoFactorMemory(state)` into their service; the memory twin shares its users map.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { Bytes, dieOnSqlError, firstOf, Instant, Int8 } from "../store/Sql.ts"

/** Two-factor sign-in (TwoFactor.ts). Secrets arrive and leave encrypted (CredentialsCipher). */
export interface TwoFactorRepoShape {
  /** The user's TOTP state; null for an unknown user. */
  readonly twoFactorOf: (userId: string) => Effect.Effect<TwoFactorRecord | null>
  /** Keeps a setup's secret until it is confirmed by a first code. */
  readonly setTwoFactorPending: (userId: string, secret: Uint8Array, at: Date) => Effect.Effect<void>
  /** Turns it on with this secret, its first code's step and the recovery codes' hashes; false when already on. */
  readonly enableTwoFactor: (
    userId: string,
    secret: Uint8Array,
    at: Date,
    step: number,
    recoveryHashes: ReadonlyArray<string>
  ) => Effect.Effect<boolean>
  /** Turns it off and forgets the secret and the recovery codes; false when it was off. */
  readonly disableTwoFactor: (userId: string) => Effect.Effect<boolean>
  /** Records a TOTP step as used; false when this or a later step already was (a code works once). */
  readonly useTotpStep: (userId: string, step: number) => Effect.Effect<boolean>
  /** Uses an unused recovery code by its hash; false when unknown or used. */
  readonly useRecoveryCode: (userId: string, sha256: string, at: Date) => Effect.Effect<boolean>
  readonly replaceRecoveryCodes: (userId: string, hashes: ReadonlyArray<string>) => Effect.Effect<void>
  readonly recoveryCodesLeft: (userId: string) => Effect.Effect<number>
}

export interface TwoFactorRecord {
  /** The enabled secret, encrypted; null when off. */
  readonly secret: Uint8Array | null
  readonly enabledAt: Date | null
  readonly lastStep: number | null
  /** A setup's secret awaiting its first code, encrypted. */
  readonly pending: Uint8Array | null
  readonly pendingAt: Date | null
}

const TwoFactorRow = Schema.Struct({
  totp_secret: Schema.NullOr(Bytes),
  totp_enabled_at: Schema.NullOr(Instant),
  totp_last_step: Schema.NullOr(Int8),
  totp_pending: Schema.NullOr(Bytes),
  totp_pending_at: Schema.NullOr(Instant)
})

/** The memory twin's state; `users` is AuthRepo's own map, whose `twoFactorEnabledAt` this keeps. */
export interface TwoFactorMemoryState<U extends { readonly twoFactorEnabledAt: Date | null }> {
  readonly users: Map<string, U>
  readonly twoFactor: Map<string, TwoFactorRecord>
  /** user → code hash → when used (null: unused). */
  readonly recoveryCodes: Map<string, Map<string, Date | null>>
}

export const twoFactorSql = (sql: SqlClient.SqlClient): TwoFactorRepoShape => ({
  twoFactorOf: Effect.fn("AuthRepo.twoFactorOf")(function*(userId) {
    return yield* sql`SELECT totp_secret, totp_enabled_at, totp_last_step, totp_pending, totp_pending_at
        FROM dashboard_users WHERE id = ${userId}`.pipe(
      Effect.flatMap(firstOf("dashboard_users", TwoFactorRow)),
      Effect.map((r) =>
        r === null ? null : {
          secret: r.totp_secret,
          enabledAt: r.totp_enabled_at,
          lastStep: r.totp_last_step === null ? null : Number(r.totp_last_step),
          pending: r.totp_pending,
          pendingAt: r.totp_pending_at
        }
      ),
      dieOnSqlError
    )
  }),
  setTwoFactorPending: Effect.fn("AuthRepo.setTwoFactorPending")(function*(userId, secret, at) {
    return yield* sql`UPDATE dashboard_users SET totp_pending = ${Buffer.from(secret)}, totp_pending_at = ${at}
        WHERE id = ${userId}`.pipe(Effect.asVoid, dieOnSqlError)
  }),
  enableTwoFactor: Effect.fn("AuthRepo.enableTwoFactor")(
    function*(userId, secret, at, step, hashes) {
      const rows = yield* sql`UPDATE dashboard_users
      SET totp_secret = ${Buffer.from(secret)}, totp_enabled_at = ${at}, totp_last_step = ${step},
          totp_pending = NULL, totp_pending_at = NULL
      WHERE id = ${userId} AND totp_enabled_at IS NULL RETURNING id`
      if (rows.length === 0) return false
      yield* sql`DELETE FROM dashboard_recovery_codes WHERE user_id = ${userId}`
      for (const hash of hashes) {
        yield* sql`INSERT INTO dashboard_recovery_codes (user_id, code_sha256) VALUES (${userId}, ${
          Buffer.from(hash, "hex")
        })`
      }
      return true
    },
    sql.withTransaction,
    dieOnSqlError
  ),
  disableTwoFactor: Effect.fn("AuthRepo.disableTwoFactor")(
    function*(userId) {
      const rows = yield* sql`UPDATE dashboard_users
      SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, totp_pending = NULL, totp_pending_at = NULL
      WHERE id = ${userId} AND totp_enabled_at IS NOT NULL RETURNING id`
      yield* sql`DELETE FROM dashboard_recovery_codes WHERE user_id = ${userId}`
      return rows.length > 0
    },
    sql.withTransaction,
    dieOnSqlError
  ),
  useTotpStep: Effect.fn("AuthRepo.useTotpStep")(function*(userId, step) {
    return yield* sql`UPDATE dashboard_users SET totp_last_step = ${step}
        WHERE id = ${userId} AND (totp_last_step IS NULL OR totp_last_step < ${step}) RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      dieOnSqlError
    )
  }),
  useRecoveryCode: Effect.fn("AuthRepo.useRecoveryCode")(function*(userId, hash, at) {
    return yield* sql`UPDATE dashboard_recovery_codes SET used_at = ${at}
        WHERE user_id = ${userId} AND code_sha256 = ${Buffer.from(hash, "hex")} AND used_at IS NULL
        RETURNING user_id`.pipe(Effect.map((rows) => rows.length > 0), dieOnSqlError)
  }),
  replaceRecoveryCodes: Effect.fn("AuthRepo.replaceRecoveryCodes")(
    function*(userId, hashes) {
      yield* sql`DELETE FROM dashboard_recovery_codes WHERE user_id = ${userId}`
      for (const hash of hashes) {
        yield* sql`INSERT INTO dashboard_recovery_codes (user_id, code_sha256) VALUES (${userId}, ${
          Buffer.from(hash, "hex")
        })`
      }
    },
    sql.withTransaction,
    dieOnSqlError
  ),
  recoveryCodesLeft: Effect.fn("AuthRepo.recoveryCodesLeft")(function*(userId) {
    return yield* sql`SELECT count(*)::int AS n FROM dashboard_recovery_codes WHERE user_id = ${userId} AND used_at IS
        NULL`
      .pipe(
        Effect.map((rows) => Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0)),
        dieOnSqlError
      )
  })
})

export const twoFactorMemory = <U extends { readonly twoFactorEnabledAt: Date | null }>(
  { recoveryCodes, twoFactor, users }: TwoFactorMemoryState<U>
): TwoFactorRepoShape => ({
  twoFactorOf: Effect.fn("AuthRepo.twoFactorOf")((userId) =>
    Effect.sync(() => {
      if (!users.has(userId)) return null
      return twoFactor.get(userId) ??
        { secret: null, enabledAt: null, lastStep: null, pending: null, pendingAt: null }
    })
  ),
  setTwoFactorPending: Effect.fn("AuthRepo.setTwoFactorPending")((userId, secret, at) =>
    Effect.sync(() => {
      const current = twoFactor.get(userId) ??
        { secret: null, enabledAt: null, lastStep: null, pending: null, pendingAt: null }
      twoFactor.set(userId, { ...current, pending: secret, pendingAt: at })
    })
  ),
  enableTwoFactor: Effect.fn("AuthRepo.enableTwoFactor")((userId, secret, at, step, hashes) =>
    Effect.sync(() => {
      const u = users.get(userId)
      if (!u || u.twoFactorEnabledAt !== null) return false
      users.set(userId, { ...u, twoFactorEnabledAt: at })
      twoFactor.set(userId, { secret, enabledAt: at, lastStep: step, pending: null, pendingAt: null })
      recoveryCodes.set(userId, new Map(hashes.map((h) => [h, null])))
      return true
    })
  ),
  disableTwoFactor: Effect.fn("AuthRepo.disableTwoFactor")((userId) =>
    Effect.sync(() => {
      const u = users.get(userId)
      twoFactor.delete(userId)
      recoveryCodes.delete(userId)
      if (!u || u.twoFactorEnabledAt === null) return false
      users.set(userId, { ...u, twoFactorEnabledAt: null })
      return true
    })
  ),
  useTotpStep: Effect.fn("AuthRepo.useTotpStep")((userId, step) =>
    Effect.sync(() => {
      const current = twoFactor.get(userId)
      if (!current || (current.lastStep !== null && current.lastStep >= step)) return false
      twoFactor.set(userId, { ...current, lastStep: step })
      return true
    })
  ),
  useRecoveryCode: Effect.fn("AuthRepo.useRecoveryCode")((userId, hash, at) =>
    Effect.sync(() => {
      const codes = recoveryCodes.get(userId)
      if (!codes || !codes.has(hash) || codes.get(hash) !== null) return false
      codes.set(hash, at)
      return true
    })
  ),
  replaceRecoveryCodes: Effect.fn("AuthRepo.replaceRecoveryCodes")((userId, hashes) =>
    Effect.sync(() => void recoveryCodes.set(userId, new Map(hashes.map((h) => [h, null]))))
  ),
  recoveryCodesLeft: Effect.fn("AuthRepo.recoveryCodesLeft")((userId) =>
    Effect.sync(() => [...(recoveryCodes.get(userId)?.values() ?? [])].filter((used) => used === null).length)
  )
})
