/**
 * `admin secret-key rotate` end to end (the CLI as a child process, on a database of its own): every stored
 * credential re-encrypted from the old key to the new one, those already under the new key left byte for
 * byte, a second run a no-op, and a credential neither key opens stopping it with its integration named and
 * NOTHING changed. Plus the cipher's fallback to SITEHEALTH_SECRET_KEY_OLD that servers use meanwhile.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { makeCipher, resolveOldSecretKey } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { runAdmin } from "./support/AdminCli.ts"
import { PrivateDb } from "./support/PrivateDb.ts"

const OLD = Buffer.alloc(32, 1)
const NEW = Buffer.alloc(32, 2)
const STRANGER = Buffer.alloc(32, 3)
const b64 = (key: Buffer) => key.toString("base64")
const PLAIN = {
  stripe: { secret_key: "sk_live_ROTATE_ME_1" },
  plausible: { api_key: "plausible_ROTATE_ME_2", site_id: "a.example" }
}

const projects: Array<string> = []

/** The file's database with three projects of one account on it. */
const Database = Layer.effectDiscard(Effect.gen(function*() {
  const account = yield* createAccount({ name: "Rotation" })
  for (let i = 0; i < 3; i++) {
    projects.push((yield* createProject({ accountId: account.id, name: `p${i}`, domain: `p${i}.example` })).id)
  }
})).pipe(Layer.provideMerge(PrivateDb.repos))

const connect = (projectId: string, provider: string, credentials: Uint8Array | null) =>
  Effect.flatMap(
    IntegrationsRepo,
    (repo) =>
      repo.connect({ projectId, provider, credentials, baseUrl: null, syncIntervalMinutes: null, now: new Date() })
  )

/** Every row's stored bytes, by "project/provider" (hex; null for none). */
const stored = () =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ project_id: string; provider: string; credentials: Uint8Array | null }>`
      SELECT project_id, provider, credentials FROM integrations ORDER BY project_id, provider`
  ).pipe(
    Effect.map((rows) =>
      Object.fromEntries(
        rows.map((
          r
        ) => [
          `${r.project_id}/${r.provider}`,
          r.credentials === null ? null : Buffer.from(r.credentials).toString("hex")
        ])
      )
    )
  )

const admin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.flatMap(Effect.service(PrivateDb), (db) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", DATABASE_URL: db.url, ...env }
    delete childEnv.SITEHEALTH_SECRET_KEY_OLD
    Object.assign(childEnv, env)
    return runAdmin(args, childEnv)
  })

const secretsIn = (text: string) =>
  [
    PLAIN.stripe.secret_key,
    PLAIN.plausible.api_key,
    b64(OLD),
    b64(NEW),
    b64(STRANGER),
    OLD.toString("hex"),
    NEW.toString("hex")
  ]
    .filter((s) => text.includes(s))

// One database for the block; the live clock, as the child processes and the pool run in real time.
layer(Database, { excludeTestServices: true, timeout: "120 seconds" })("admin secret-key rotate", (it) => {
  it.effect(
    "refuses without the old key, or with the same key twice, before touching anything",
    () =>
      Effect.gen(function*() {
        const none = yield* admin(["secret-key", "rotate", "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW) })
        expect(none.code).toBe(1)
        expect(none.body.error.type).toBe("config")
        expect(none.body.error.message).toContain("SITEHEALTH_SECRET_KEY_OLD")
        const same = yield* admin(["secret-key", "rotate", "--json"], {
          SITEHEALTH_SECRET_KEY: b64(NEW),
          SITEHEALTH_SECRET_KEY_OLD: NEW.toString("hex")
        })
        expect(same.code).toBe(1)
        expect(same.body.error.message).toMatch(/the same/)
        const bad = yield* admin(["secret-key", "rotate", "--json"], {
          SITEHEALTH_SECRET_KEY: b64(NEW),
          SITEHEALTH_SECRET_KEY_OLD: "short"
        })
        expect(bad.code).toBe(1)
        expect(bad.body.error.message).toMatch(/^SITEHEALTH_SECRET_KEY_OLD must be 32 bytes/)
      }),
    60_000
  )

  it.effect(
    "re-encrypts what the old key opens, leaves what the new key opens, and a second run changes nothing",
    () =>
      Effect.gen(function*() {
        const oldCipher = makeCipher(OLD)
        yield* connect(projects[0], "stripe", oldCipher.encrypt(PLAIN.stripe))
        yield* connect(projects[0], "plausible", oldCipher.encrypt(PLAIN.plausible))
        yield* connect(projects[1], "stripe", makeCipher(NEW).encrypt(PLAIN.stripe)) // connected after the switch
        yield* connect(projects[1], "google-search-console", null) // nothing stored (a display row)
        // A dashboard user with two-factor sign-in on, its secret under the old key.
        const sql = yield* SqlClient.SqlClient
        const accountId =
          (yield* sql<{ account_id: string }>`SELECT account_id FROM projects WHERE id = ${projects[0]}`)[0].account_id
        yield* sql`INSERT INTO dashboard_users (id, account_id, email, password_hash, created_at, totp_secret, totp_enabled_at)
        VALUES ('usr_rotate', ${accountId}, 'rotate@example.test', NULL, now(), ${
          oldCipher.encrypt({ totp: "JBSWY3DPEHPK3PXP" })
        }, now())`
        const before = yield* stored()

        // The old key from a file, in hex, as an operator might keep it.
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-rotate-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
        const keyFile = Path.join(dir, "old-key")
        Fs.writeFileSync(keyFile, `${OLD.toString("hex")}\n`, { mode: 0o600 })
        const first = yield* admin(["secret-key", "rotate", "--old-key-file", keyFile, "--json"], {
          SITEHEALTH_SECRET_KEY: b64(NEW)
        })
        expect(first.code, first.stderr).toBe(0)
        expect(first.body).toEqual({
          reencrypted: [`${projects[0]}/plausible`, `${projects[0]}/stripe`, "user usr_rotate"],
          unchanged: [`${projects[1]}/stripe`]
        })
        const totp =
          (yield* sql<{ totp_secret: Uint8Array }>`SELECT totp_secret FROM dashboard_users WHERE id = 'usr_rotate'`)[0]
            .totp_secret
        expect(yield* makeCipher(NEW).decrypt(totp)).toEqual({ totp: "JBSWY3DPEHPK3PXP" })
        expect(secretsIn(first.stdout + first.stderr)).toEqual([])

        const after = yield* stored()
        expect(after[`${projects[1]}/stripe`]).toBe(before[`${projects[1]}/stripe`])
        expect(after[`${projects[1]}/google-search-console`]).toBeNull()
        const newOnly = makeCipher(NEW)
        for (
          const [id, plain] of [[`${projects[0]}/stripe`, PLAIN.stripe], [
            `${projects[0]}/plausible`,
            PLAIN.plausible
          ]] as const
        ) {
          expect(after[id]).not.toBe(before[id])
          expect(yield* newOnly.decrypt(Buffer.from(after[id]!, "hex"))).toEqual(plain)
          // Really re-encrypted: the old key alone no longer opens it.
          expect((yield* Effect.result(oldCipher.decrypt(Buffer.from(after[id]!, "hex"))))._tag).toBe("Failure")
        }

        const text = yield* admin(["secret-key", "rotate"], {
          SITEHEALTH_SECRET_KEY: b64(NEW),
          SITEHEALTH_SECRET_KEY_OLD: b64(OLD)
        })
        expect(text.code, text.stderr).toBe(0)
        expect(text.stdout).toContain(
          "Re-encrypted 0 integration credentials and two-factor secrets with the new key; 4 already used it"
        )
        expect(yield* stored()).toEqual(after)
      }),
    60_000
  )

  it.effect(
    "a credential neither key opens: exit 1 naming the integration, and not one row changed",
    () =>
      Effect.gen(function*() {
        yield* connect(projects[2], "stripe", makeCipher(OLD).encrypt(PLAIN.stripe)) // would be re-encrypted…
        yield* connect(projects[2], "plausible", makeCipher(STRANGER).encrypt(PLAIN.plausible)) // …but this stops it
        const before = yield* stored()
        const r = yield* admin(["secret-key", "rotate", "--json"], {
          SITEHEALTH_SECRET_KEY: b64(NEW),
          SITEHEALTH_SECRET_KEY_OLD: b64(OLD)
        })
        expect(r.code).toBe(1)
        expect(r.body.status).toBe("error")
        expect(r.body.error.message).toContain(`integration ${projects[2]}/plausible`)
        expect(r.body.error.message).toContain("nothing was changed")
        expect(secretsIn(r.stdout + r.stderr)).toEqual([])
        expect(yield* stored()).toEqual(before)
      }),
    60_000
  )
})

describe("the cipher during a rotation", () => {
  it.effect("decrypts with the new key, else with SITEHEALTH_SECRET_KEY_OLD; always encrypts with the new one", () =>
    Effect.gen(function*() {
      const both = makeCipher(NEW, resolveOldSecretKey({ SITEHEALTH_SECRET_KEY_OLD: b64(OLD) }))
      expect(yield* both.decrypt(makeCipher(OLD).encrypt(PLAIN.stripe))).toEqual(PLAIN.stripe)
      expect(yield* both.decrypt(makeCipher(NEW).encrypt(PLAIN.stripe))).toEqual(PLAIN.stripe)
      expect(yield* makeCipher(NEW).decrypt(both.encrypt(PLAIN.stripe))).toEqual(PLAIN.stripe)
      const stranger = yield* Effect.result(both.decrypt(makeCipher(STRANGER).encrypt(PLAIN.stripe)))
      expect(stranger._tag).toBe("Failure")
      expect(resolveOldSecretKey({})).toBeNull()
      expect(() => resolveOldSecretKey({ SITEHEALTH_SECRET_KEY_OLD: "nope" })).toThrow(
        /SITEHEALTH_SECRET_KEY_OLD must be 32 bytes/
      )
    }))
})
