/**
 * Integration credentials at rest: AES-256-GCM. A stored value is nonce (12 random bytes) ‖ ciphertext ‖
 * tag (16 bytes), so the same credentials never encrypt to the same bytes and any change to the stored
 * bytes (or the wrong key) fails authentication instead of decrypting to garbage.
 *
 * The key is 32 bytes: SITEHEALTH_SECRET_KEY (base64 or hex), or — for the embedded default only — a key
 * generated once into $SITEHEALTH_DATA_DIR/secret-key (mode 0600) and reused on every start. With an
 * external DATABASE_URL and no SITEHEALTH_SECRET_KEY there is no safe place to keep a generated key (a
 * second server would generate another), so start-up stops with an error saying so.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { AppConfig, readConfig } from "../platform/Config.ts"
import { KEY_BYTES, parseSecretKey, SecretKeyError } from "../platform/SecretKey.ts"
import type { Credentials } from "./Connector.ts"

export { KEY_BYTES, parseSecretKey, SecretKeyError }

const NONCE_BYTES = 12
const TAG_BYTES = 16
export const KEY_FILE = "secret-key"

/** Stored credentials cannot be decrypted (wrong key, or tampered bytes). The message names no secret. */
export class CredentialsError extends Schema.TaggedError<CredentialsError>()("CredentialsError", {
  message: Schema.String
}) {}

/**
 * The key to use: SITEHEALTH_SECRET_KEY if set; else, for the embedded database, the key file in dataDir
 * (created with a fresh random key the first time, readable by its owner only); else an error.
 */
export const resolveSecretKey = (config: {
  readonly secretKey: Redacted.Redacted<string> | string | null
  readonly databaseUrl: Redacted.Redacted<string> | string | null
  readonly dataDir: string
}): Uint8Array => {
  if (config.secretKey !== null) {
    return parseSecretKey(Redacted.isRedacted(config.secretKey) ? Redacted.value(config.secretKey) : config.secretKey)
  }
  if (config.databaseUrl !== null) {
    throw new SecretKeyError({
      message: "SITEHEALTH_SECRET_KEY is not set: with an external DATABASE_URL, integration credentials need a key " +
        `every server and worker shares (${KEY_BYTES} bytes, base64 or hex; e.g. openssl rand -base64 ${KEY_BYTES})`
    })
  }
  const file = Path.join(config.dataDir, KEY_FILE)
  try {
    Fs.mkdirSync(config.dataDir, { recursive: true })
    try {
      // "wx": only one of two processes starting at once creates it; the other reads it.
      Fs.writeFileSync(file, `${NodeCrypto.randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    return parseSecretKey(Fs.readFileSync(file, "utf8"))
  } catch (e) {
    if (e instanceof SecretKeyError) {
      throw new SecretKeyError({ message: `${file} does not hold a valid key: ${e.message}` })
    }
    throw new SecretKeyError({ message: `cannot read or create the key file ${file}: ${(e as Error).message}` })
  }
}

/**
 * SITEHEALTH_SECRET_KEY_OLD: during a key rotation (docs/operations.md), the key credentials may still be
 * encrypted with — decryption falls back to it, so servers and workers already given the new key keep
 * syncing until `admin secret-key rotate` has re-encrypted everything. Null when unset. AppConfig has checked
 * its format with the other settings at start-up.
 */
export const oldSecretKey = (config: { readonly secretKeyOld: Redacted.Redacted<string> | null }): Uint8Array | null =>
  config.secretKeyOld === null ? null : parseSecretKey(Redacted.value(config.secretKeyOld), "SITEHEALTH_SECRET_KEY_OLD")

/** The same from an environment record (tests). */
export const resolveOldSecretKey = (env: Record<string, string | undefined>): Uint8Array | null =>
  oldSecretKey(readConfig(env))

export interface CredentialsCipherShape {
  readonly encrypt: (credentials: Credentials) => Uint8Array
  readonly decrypt: (stored: Uint8Array) => Effect.Effect<Credentials, CredentialsError>
}

const undecryptable = new CredentialsError({
  message: "the stored credentials cannot be decrypted with this server's SITEHEALTH_SECRET_KEY " +
    "(was the key changed?); connect the integration again in the dashboard"
})

/** Plaintext of stored bytes under `key`, or null when they do not authenticate under it. */
const open = (key: Uint8Array, stored: Uint8Array): Credentials | null => {
  const bytes = Buffer.from(stored)
  if (bytes.length < NONCE_BYTES + TAG_BYTES) return null
  try {
    const decipher = NodeCrypto.createDecipheriv("aes-256-gcm", key, bytes.subarray(0, NONCE_BYTES))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    const text = Buffer.concat([
      decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
      decipher.final()
    ])
    return JSON.parse(text.toString("utf8")) as Credentials
  } catch {
    return null
  }
}

/**
 * Encrypts with `key`; decrypts with `key`, else with `previous` (a rotation in progress: see
 * oldSecretKey). GCM's tag makes the wrong key fail, never decrypt to garbage.
 */
export const makeCipher = (key: Uint8Array, previous: Uint8Array | null = null): CredentialsCipherShape => {
  for (const k of previous === null ? [key] : [key, previous]) {
    if (k.length !== KEY_BYTES) {
      throw new SecretKeyError({ message: `the key must be ${KEY_BYTES} bytes, got ${k.length}` })
    }
  }
  return {
    encrypt: (credentials) => {
      const nonce = NodeCrypto.randomBytes(NONCE_BYTES)
      const cipher = NodeCrypto.createCipheriv("aes-256-gcm", key, nonce)
      const body = Buffer.concat([cipher.update(JSON.stringify(credentials), "utf8"), cipher.final()])
      return new Uint8Array(Buffer.concat([nonce, body, cipher.getAuthTag()]))
    },
    decrypt: (stored) =>
      Effect.suspend(() => {
        const plain = open(key, stored) ?? (previous === null ? null : open(previous, stored))
        return plain === null ? Effect.fail(undecryptable) : Effect.succeed(plain)
      })
  }
}

export class CredentialsCipher
  extends Context.Service<CredentialsCipher, CredentialsCipherShape>()("sitehealth/CredentialsCipher")
{
  /** With a given key (tests). */
  static readonly layer = (key: Uint8Array) => Layer.sync(CredentialsCipher, () => makeCipher(key))
  /** The configured key (see resolveSecretKey); fails with a SecretKeyError that says what to set. */
  static readonly fromConfig = Layer.effect(
    CredentialsCipher,
    Effect.flatMap(AppConfig, (config) =>
      Effect.try({
        try: () => makeCipher(resolveSecretKey(config), oldSecretKey(config)),
        catch: (e) =>
          e instanceof SecretKeyError ? e : new SecretKeyError({ message: String((e as Error)?.message ?? e) })
      }))
  )
}
