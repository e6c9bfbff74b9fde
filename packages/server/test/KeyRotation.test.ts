/**
 * `admin secret-key rotate` end to end (the CLI as a child process, on a database of its own): every stored
 * credential re-encrypted from the old key to the new one, those already under the new key left byte for
 * byte, a second run a no-op, and a credential neither key opens stopping it with its integration named and
 * NOTHING changed. Plus the cipher's fallback to SITEHEALTH_SECRET_KEY_OLD that servers use meanwhile.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { pgLayer, runMigrations } from "../src/db/Database.ts"
import { makeCipher, resolveOldSecretKey } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { SqlRepos } from "../src/Layers.ts"
import { type PrivateDatabase, privateDatabase } from "./support/ScaleOut.ts"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const MAIN = Path.join(ROOT, "packages/server/src/admin/main.ts")

const OLD = Buffer.alloc(32, 1)
const NEW = Buffer.alloc(32, 2)
const STRANGER = Buffer.alloc(32, 3)
const b64 = (key: Buffer) => key.toString("base64")
const PLAIN = { stripe: { secret_key: "sk_live_ROTATE_ME_1" }, plausible: { api_key: "plausible_ROTATE_ME_2", site_id: "a.example" } }

let db: PrivateDatabase
let dir = ""
const scope = Effect.runSync(Scope.make())
let context: Context.Context<any>
const run = <A>(effect: Effect.Effect<A, any, any>) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
const projects: Array<string> = []

beforeAll(async () => {
  db = await privateDatabase()
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-rotate-"))
  context = await Effect.runPromise(
    Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(db.url))), scope) as Effect.Effect<Context.Context<any>>
  )
  await run(runMigrations)
  await run(Effect.gen(function*() {
    const account = yield* createAccount({ name: "Rotation" })
    for (let i = 0; i < 3; i++) projects.push((yield* createProject({ accountId: account.id, name: `p${i}`, domain: `p${i}.example` })).id)
  }))
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as any))
  await db?.drop()
  if (dir) Fs.rmSync(dir, { recursive: true, force: true })
})

const connect = (projectId: string, provider: string, credentials: Uint8Array | null) =>
  run(Effect.flatMap(IntegrationsRepo, (repo) =>
    repo.connect({ projectId, provider, credentials, baseUrl: null, syncIntervalMinutes: null, now: new Date() })))

/** Every row's stored bytes, by "project/provider" (hex; null for none). */
const stored = () =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ project_id: string; provider: string; credentials: Uint8Array | null }>`
      SELECT project_id, provider, credentials FROM integrations ORDER BY project_id, provider`)).then((rows) =>
    Object.fromEntries(rows.map((r) => [`${r.project_id}/${r.provider}`, r.credentials === null ? null : Buffer.from(r.credentials).toString("hex")])))

const admin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; body: any }>((resolve, reject) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", DATABASE_URL: db.url, ...env }
    delete childEnv.SITEHEALTH_SECRET_KEY_OLD
    Object.assign(childEnv, env)
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => {
      let body: any
      try {
        body = JSON.parse(stdout)
      } catch {
        body = undefined
      }
      resolve({ code, stdout, stderr, body })
    })
  })

const secretsIn = (text: string) =>
  [PLAIN.stripe.secret_key, PLAIN.plausible.api_key, b64(OLD), b64(NEW), b64(STRANGER), OLD.toString("hex"), NEW.toString("hex")]
    .filter((s) => text.includes(s))

describe("admin secret-key rotate", () => {
  it("refuses without the old key, or with the same key twice, before touching anything", async () => {
    const none = await admin(["secret-key", "rotate", "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW) })
    expect(none.code).toBe(1)
    expect(none.body.error.type).toBe("config")
    expect(none.body.error.message).toContain("SITEHEALTH_SECRET_KEY_OLD")
    const same = await admin(["secret-key", "rotate", "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW), SITEHEALTH_SECRET_KEY_OLD: NEW.toString("hex") })
    expect(same.code).toBe(1)
    expect(same.body.error.message).toMatch(/the same/)
    const bad = await admin(["secret-key", "rotate", "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW), SITEHEALTH_SECRET_KEY_OLD: "short" })
    expect(bad.code).toBe(1)
    expect(bad.body.error.message).toMatch(/^SITEHEALTH_SECRET_KEY_OLD must be 32 bytes/)
  }, 60_000)

  it("re-encrypts what the old key opens, leaves what the new key opens, and a second run changes nothing", async () => {
    const oldCipher = makeCipher(OLD)
    await connect(projects[0], "stripe", oldCipher.encrypt(PLAIN.stripe))
    await connect(projects[0], "plausible", oldCipher.encrypt(PLAIN.plausible))
    await connect(projects[1], "stripe", makeCipher(NEW).encrypt(PLAIN.stripe)) // connected after the switch
    await connect(projects[1], "demo", null) // nothing stored
    const before = await stored()

    // The old key from a file, in hex, as an operator might keep it.
    const keyFile = Path.join(dir, "old-key")
    Fs.writeFileSync(keyFile, `${OLD.toString("hex")}\n`, { mode: 0o600 })
    const first = await admin(["secret-key", "rotate", "--old-key-file", keyFile, "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW) })
    expect(first.code, first.stderr).toBe(0)
    expect(first.body).toEqual({
      reencrypted: [`${projects[0]}/plausible`, `${projects[0]}/stripe`],
      unchanged: [`${projects[1]}/stripe`]
    })
    expect(secretsIn(first.stdout + first.stderr)).toEqual([])

    const after = await stored()
    expect(after[`${projects[1]}/stripe`]).toBe(before[`${projects[1]}/stripe`])
    expect(after[`${projects[1]}/demo`]).toBeNull()
    const newOnly = makeCipher(NEW)
    for (const [id, plain] of [[`${projects[0]}/stripe`, PLAIN.stripe], [`${projects[0]}/plausible`, PLAIN.plausible]] as const) {
      expect(after[id]).not.toBe(before[id])
      expect(await Effect.runPromise(newOnly.decrypt(Buffer.from(after[id]!, "hex")))).toEqual(plain)
      // Really re-encrypted: the old key alone no longer opens it.
      expect((await Effect.runPromise(Effect.result(oldCipher.decrypt(Buffer.from(after[id]!, "hex")))))._tag).toBe("Failure")
    }

    const text = await admin(["secret-key", "rotate"], { SITEHEALTH_SECRET_KEY: b64(NEW), SITEHEALTH_SECRET_KEY_OLD: b64(OLD) })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain("Re-encrypted 0 integration credentials with the new key; 3 already used it")
    expect(await stored()).toEqual(after)
  }, 60_000)

  it("a credential neither key opens: exit 1 naming the integration, and not one row changed", async () => {
    await connect(projects[2], "stripe", makeCipher(OLD).encrypt(PLAIN.stripe)) // would be re-encrypted…
    await connect(projects[2], "plausible", makeCipher(STRANGER).encrypt(PLAIN.plausible)) // …but this stops it
    const before = await stored()
    const r = await admin(["secret-key", "rotate", "--json"], { SITEHEALTH_SECRET_KEY: b64(NEW), SITEHEALTH_SECRET_KEY_OLD: b64(OLD) })
    expect(r.code).toBe(1)
    expect(r.body.status).toBe("error")
    expect(r.body.error.message).toContain(`integration ${projects[2]}/plausible`)
    expect(r.body.error.message).toContain("nothing was changed")
    expect(secretsIn(r.stdout + r.stderr)).toEqual([])
    expect(await stored()).toEqual(before)
  }, 60_000)
})

describe("the cipher during a rotation", () => {
  it("decrypts with the new key, else with SITEHEALTH_SECRET_KEY_OLD; always encrypts with the new one", async () => {
    const both = makeCipher(NEW, resolveOldSecretKey({ SITEHEALTH_SECRET_KEY_OLD: b64(OLD) }))
    expect(await Effect.runPromise(both.decrypt(makeCipher(OLD).encrypt(PLAIN.stripe)))).toEqual(PLAIN.stripe)
    expect(await Effect.runPromise(both.decrypt(makeCipher(NEW).encrypt(PLAIN.stripe)))).toEqual(PLAIN.stripe)
    expect(await Effect.runPromise(makeCipher(NEW).decrypt(both.encrypt(PLAIN.stripe)))).toEqual(PLAIN.stripe)
    const stranger = await Effect.runPromise(Effect.result(both.decrypt(makeCipher(STRANGER).encrypt(PLAIN.stripe))))
    expect(stranger._tag).toBe("Failure")
    expect(resolveOldSecretKey({})).toBeNull()
    expect(() => resolveOldSecretKey({ SITEHEALTH_SECRET_KEY_OLD: "nope" })).toThrow(/SITEHEALTH_SECRET_KEY_OLD must be 32 bytes/)
  })
})
