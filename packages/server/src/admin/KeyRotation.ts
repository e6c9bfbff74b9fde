/**
 * `admin secret-key rotate` (wired in Cli.ts): re-encrypts every stored integration credential (and every
 * dashboard user's two-factor secret, kept under the same key: dashboard/TwoFactor.ts) from the old
 * key to the new one, in ONE transaction — the new key is SITEHEALTH_SECRET_KEY (or the embedded data dir's
 * key file), the old one SITEHEALTH_SECRET_KEY_OLD or `--old-key-file`. Credentials that already decrypt
 * with the new key are left as they are, so running it twice (or after an interrupted run) is harmless. A
 * credential that decrypts with neither key stops it: the error names the integration, and nothing at all
 * is changed. The procedure around it (servers given both keys first) is in docs/operations.md.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import {
  type CredentialsCipherShape,
  makeCipher,
  oldSecretKey,
  parseSecretKey,
  resolveSecretKey,
  SecretKeyError
} from "../integrations/Crypto.ts"
import { loadAppConfig } from "../platform/Config.ts"
import { type AdminCommand, AdminError } from "./Commands.ts"

const configError = (message: string) => new AdminError({ message, type: "config" })

const keyError = (e: unknown) => configError(e instanceof SecretKeyError || e instanceof Error ? e.message : String(e))

/** The key in a file (one line: base64 or hex), as `openssl rand -base64 32 > file` writes it. */
const readKeyFile = (path: string): Uint8Array => {
  let text: string
  try {
    text = Fs.readFileSync(path, "utf8")
  } catch (e) {
    throw new SecretKeyError({
      message: `cannot read --old-key-file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`
    })
  }
  return parseSecretKey(text, `--old-key-file ${path}`)
}

export interface RotationResult {
  /** "projectId/provider" of each credential re-encrypted now. */
  readonly reencrypted: ReadonlyArray<string>
  /** Those already under the new key, left untouched. */
  readonly unchanged: ReadonlyArray<string>
}

/**
 * The work, on the database: every row with credentials is locked (FOR UPDATE: a concurrent `integrations
 * connect` waits), checked against the new key, else opened with the old one and sealed with the new; the
 * updates are written only once every row was readable.
 */
export const reencryptCredentials = (from: CredentialsCipherShape, to: CredentialsCipherShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ project_id: string; provider: string; credentials: Uint8Array }>`
        SELECT project_id, provider, credentials FROM integrations
        WHERE credentials IS NOT NULL ORDER BY project_id, provider FOR UPDATE`
      const updates: Array<{ readonly projectId: string; readonly provider: string; readonly sealed: Uint8Array }> = []
      const unchanged: Array<string> = []
      for (const row of rows) {
        const id = `${row.project_id}/${row.provider}`
        if ((yield* Effect.result(to.decrypt(row.credentials)))._tag === "Success") {
          unchanged.push(id)
          continue
        }
        const opened = yield* Effect.result(from.decrypt(row.credentials))
        if (opened._tag === "Failure") {
          return yield* new AdminError({
            type: "config",
            message:
              `integration ${id} (project ${row.project_id}, provider ${row.provider}): its stored credentials ` +
              `decrypt ` +
              "with neither the new key (SITEHEALTH_SECRET_KEY) nor the old one; nothing was changed. Find the key " +
              "they " +
              `were stored with, or reconnect it (admin integrations disconnect / connect) and run this again`
          })
        }
        updates.push({ projectId: row.project_id, provider: row.provider, sealed: to.encrypt(opened.success) })
      }
      for (const u of updates) {
        yield* sql`UPDATE integrations SET credentials = ${u.sealed} WHERE project_id = ${u.projectId} AND provider =
            ${u.provider}`
      }
      const users = yield* reencryptTwoFactor(from, to)
      return {
        reencrypted: [...updates.map((u) => `${u.projectId}/${u.provider}`), ...users.reencrypted],
        unchanged: [...unchanged, ...users.unchanged]
      } satisfies RotationResult
    }))
  }).pipe(
    Effect.catchTag(
      "SqlError",
      (e) =>
        Effect.fail(
          new AdminError({ message: `re-encryption failed, nothing was changed: ${e.message}`, type: "database" })
        )
    )
  )

/**
 * The dashboard users' two-factor secrets (enabled, and a setup in progress), in the caller's transaction, as
 * the credentials are: "user <id>" in the result. One that opens with neither key stops everything.
 */
const reencryptTwoFactor = (from: CredentialsCipherShape, to: CredentialsCipherShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; totp_secret: Uint8Array | null; totp_pending: Uint8Array | null }>`
      SELECT id, totp_secret, totp_pending FROM dashboard_users
      WHERE totp_secret IS NOT NULL OR totp_pending IS NOT NULL ORDER BY id FOR UPDATE`
    const reencrypted: Array<string> = []
    const unchanged: Array<string> = []
    for (const row of rows) {
      const sealed: Record<"totp_secret" | "totp_pending", Uint8Array | null> = {
        totp_secret: null,
        totp_pending: null
      }
      let changed = false
      for (const column of ["totp_secret", "totp_pending"] as const) {
        const stored = row[column]
        if (stored === null) continue
        if ((yield* Effect.result(to.decrypt(stored)))._tag === "Success") {
          sealed[column] = stored
          continue
        }
        const opened = yield* Effect.result(from.decrypt(stored))
        if (opened._tag === "Failure") {
          return yield* new AdminError({
            type: "config",
            message:
              `dashboard user ${row.id}: its two-factor secret decrypts with neither the new key nor the old one; ` +
              "nothing was changed. Find the key it was stored with, or turn the user's two-factor sign-in off in " +
              "the database and run this again"
          })
        }
        sealed[column] = to.encrypt(opened.success)
        changed = true
      }
      if (!changed) {
        unchanged.push(`user ${row.id}`)
        continue
      }
      yield* sql`UPDATE dashboard_users SET totp_secret = ${sealed.totp_secret}, totp_pending = ${sealed.totp_pending}
          WHERE id = ${row.id}`
      reencrypted.push(`user ${row.id}`)
    }
    return { reencrypted, unchanged }
  })

/** Validation first (both keys readable and different), before the database is opened. */
export const secretKeyRotate = (input: { readonly oldKeyFile: string | undefined }): AdminCommand =>
  Effect.gen(function*() {
    // Each problem names its variable (SITEHEALTH_SECRET_KEY_OLD's format among them): no prefix needed.
    const config = yield* Effect.mapError(loadAppConfig(), (e) => configError(e.message))
    const newKey = yield* Effect.try({ try: () => resolveSecretKey(config), catch: keyError })
    const oldKey = yield* Effect.try({
      try: () => (input.oldKeyFile !== undefined ? readKeyFile(input.oldKeyFile) : oldSecretKey(config)),
      catch: keyError
    })
    if (oldKey === null) {
      return yield* configError(
        "the old key is needed: set SITEHEALTH_SECRET_KEY_OLD to the key the credentials are encrypted with now, or " +
          "pass " +
          "--old-key-file; SITEHEALTH_SECRET_KEY (or the data dir's key file) is the new key"
      )
    }
    if (Buffer.from(oldKey).equals(Buffer.from(newKey))) {
      return yield* configError("the old and the new key are the same: set SITEHEALTH_SECRET_KEY to the NEW key")
    }
    return Effect.map(reencryptCredentials(makeCipher(oldKey), makeCipher(newKey)), (result) => ({
      json: { reencrypted: result.reencrypted, unchanged: result.unchanged },
      text: [
        `Re-encrypted ${result.reencrypted.length} integration credential${
          result.reencrypted.length === 1 ? "" : "s"
        } and two-factor secret${result.reencrypted.length === 1 ? "" : "s"} with the new key` +
        (result.unchanged.length === 0 ? "." : `; ${result.unchanged.length} already used it (left as they were).`),
        ...result.reencrypted.map((id) => `  ${id}`),
        "Every server and worker needs SITEHEALTH_SECRET_KEY = the new key; SITEHEALTH_SECRET_KEY_OLD can now be " +
        "removed."
      ].join("\n")
    }))
  })
