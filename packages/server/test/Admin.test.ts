/**
 * The operator CLI end to end: each test spawns `packages/server/src/admin/main.ts` as a child process
 * against one database for the whole file — DATABASE_URL when set, else an embedded cluster in a fresh
 * temp data directory on a free port (each CLI run starts it and stops it again on exit).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const MAIN = Path.join(ROOT, "packages/server/src/admin/main.ts")
const TIMEOUT = 60_000

const externalUrl = process.env.DATABASE_URL?.trim() || null
const embedded = externalUrl === null

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

let dataDir = ""
let pgPort = 0

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const env = (overrides: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
  delete base.DATABASE_URL
  delete base.SITEHEALTH_DATA_DIR
  delete base.SITEHEALTH_EMBEDDED_PG_PORT
  return {
    ...base,
    ...(externalUrl !== null
      ? { DATABASE_URL: externalUrl }
      : { SITEHEALTH_DATA_DIR: dataDir, SITEHEALTH_EMBEDDED_PG_PORT: String(pgPort) }),
    ...overrides
  }
}

/** Runs a command in the repo root and collects its output; killed if the effect is interrupted. */
const runCommand = (command: string, args: ReadonlyArray<string>, overrides: Record<string, string> = {}) =>
  Effect.callback<Run>((resume) => {
    const child = spawn(command, args, { cwd: ROOT, env: env(overrides), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", (error) => resume(Effect.die(error)))
    child.once("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

/** Runs the CLI with Node 22 (vitest's own node). */
const admin = (args: ReadonlyArray<string>, overrides: Record<string, string> = {}) =>
  runCommand(process.execPath, [MAIN, ...args], overrides)

/** `--json` run: stdout must be exactly one JSON object. */
const adminJson = (args: ReadonlyArray<string>, overrides: Record<string, string> = {}) =>
  Effect.map(admin([...args, "--json"], overrides), (run) => {
    let body: any
    try {
      body = JSON.parse(run.stdout)
    } catch {
      throw new Error(`stdout is not one JSON value (exit ${run.code}):\n${run.stdout}\n--- stderr ---\n${run.stderr}`)
    }
    expect(typeof body === "object" && body !== null && !Array.isArray(body)).toBe(true)
    return { ...run, body }
  })

const expectNoStackTrace = (run: Run) => {
  expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
  expect(run.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/)
}

const expectJsonError = (run: Run & { body: any }, type: string) => {
  expect(run.code).not.toBe(0)
  expect(run.body).toEqual({ status: "error", error: { message: expect.any(String), type } })
  expect(run.body.error.message.length).toBeGreaterThan(0)
  expectNoStackTrace(run)
}

const postmasterPid = (): number | null => {
  const file = Path.join(dataDir, "pg", "postmaster.pid")
  if (!Fs.existsSync(file)) return null
  const pid = Number(Fs.readFileSync(file, "utf8").split("\n")[0])
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Every file under `dir` whose bytes contain `needle`. */
const filesContaining = (dir: string, needle: string | Buffer): Array<string> => {
  const hits: Array<string> = []
  const bytes = typeof needle === "string" ? Buffer.from(needle, "utf8") : needle
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const file = Path.join(entry.parentPath, entry.name)
    try {
      if (Fs.readFileSync(file).includes(bytes)) hits.push(file)
    } catch {
      // unreadable (permissions): not ours to check
    }
  }
  return hits
}

beforeAll(async () => {
  if (embedded) {
    dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-admin-test-"))
    pgPort = await freePort()
  }
})

afterAll(() => {
  if (!embedded) return
  // The CLI stops its own cluster on exit; a run killed mid-way could leave one behind.
  const pid = postmasterPid()
  if (pid !== null && isAlive(pid)) process.kill(pid, "SIGINT")
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("admin CLI", () => {
  let accountId = ""
  let projectId = ""

  it.live.runIf(embedded)(
    "starts on a fresh data directory: an empty account list, and the cluster stopped afterwards",
    () =>
      Effect.gen(function*() {
        const run = yield* adminJson(["accounts", "list"])
        expect(run.code).toBe(0)
        expect(run.body).toEqual({ accounts: [] })
        expect(Fs.existsSync(Path.join(dataDir, "pg", "PG_VERSION"))).toBe(true)
        const pid = postmasterPid()
        expect(pid === null || !isAlive(pid)).toBe(true)
      }),
    TIMEOUT
  )

  it.live(
    "through `npm run admin -- … --json` exactly as the README says: stdout is only the JSON object",
    () =>
      Effect.gen(function*() {
        const run = yield* runCommand("npm", ["run", "admin", "--", "accounts", "list", "--json"])
        expect(run.code).toBe(0)
        expect(JSON.parse(run.stdout)).toHaveProperty("accounts")
      }),
    TIMEOUT
  )

  it.live("accounts create / list --json: exactly one JSON object on stdout", () =>
    Effect.gen(function*() {
      const before = Date.now()
      const created = yield* adminJson(["accounts", "create", "--name", "Acme Inc", "--trial-days", "14"])
      expect(created.code).toBe(0)
      const account = created.body
      expect(account).toEqual({
        id: expect.stringMatching(/^acc_/),
        name: "Acme Inc",
        trialEndsAt: expect.any(String),
        subscriptionStatus: "none",
        subscriptionUntil: null,
        createdAt: expect.any(String),
        entitled: true
      })
      const trialMs = Date.parse(account.trialEndsAt) - Date.parse(account.createdAt)
      expect(trialMs).toBe(14 * 86_400_000)
      expect(Date.parse(account.createdAt)).toBeGreaterThanOrEqual(before - 5_000)
      accountId = account.id

      const listed = yield* adminJson(["accounts", "list"])
      expect(listed.code).toBe(0)
      expect(Object.keys(listed.body)).toEqual(["accounts"])
      expect(listed.body.accounts).toContainEqual(account)
    }), TIMEOUT)

  it.live("without --json prints text, not JSON", () =>
    Effect.gen(function*() {
      const run = yield* admin(["accounts", "list"])
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(accountId)
      expect(run.stdout).toContain("Acme Inc")
      expect(() => JSON.parse(run.stdout)).toThrow()
    }), TIMEOUT)

  it.live("accounts trial with a past date ends the trial: entitled false", () =>
    Effect.gen(function*() {
      const run = yield* adminJson(["accounts", "trial", accountId, "--ends-at", "2020-01-01T00:00:00Z"])
      expect(run.code).toBe(0)
      expect(run.body).toMatchObject({ id: accountId, trialEndsAt: "2020-01-01T00:00:00.000Z", entitled: false })
    }), TIMEOUT)

  it.live(
    "accounts subscription: active → entitled; canceled with a past --until → not entitled",
    () =>
      Effect.gen(function*() {
        const active = yield* adminJson(["accounts", "subscription", accountId, "--status", "active"])
        expect(active.code).toBe(0)
        expect(active.body).toMatchObject({
          id: accountId,
          subscriptionStatus: "active",
          subscriptionUntil: null,
          entitled: true
        })

        const canceled = yield* adminJson([
          "accounts",
          "subscription",
          accountId,
          "--status",
          "canceled",
          "--until",
          "2021-06-30"
        ])
        expect(canceled.code).toBe(0)
        expect(canceled.body).toMatchObject({
          subscriptionStatus: "canceled",
          subscriptionUntil: "2021-06-30T00:00:00.000Z",
          entitled: false
        })

        const again = yield* adminJson(["accounts", "subscription", accountId, "--status", "active"])
        expect(again.body.entitled).toBe(true)
      }),
    TIMEOUT
  )

  it.live("bad arguments: a JSON error, a non-zero exit, no stack trace", () =>
    Effect.gen(function*() {
      // None of these reaches the database, so they may run side by side.
      const [status, instant, day, flag, group, text] = yield* Effect.all([
        adminJson(["accounts", "subscription", accountId, "--status", "paused"]),
        adminJson(["accounts", "trial", accountId, "--ends-at", "next tuesday"]),
        adminJson(["accounts", "trial", accountId, "--ends-at", "2025-02-30"]),
        adminJson(["accounts", "list", "--bogus"]),
        adminJson(["accounts"]),
        admin(["accounts", "create"])
      ], { concurrency: "unbounded" })
      expectJsonError(status, "usage")
      expectJsonError(instant, "invalid_argument")
      expectJsonError(day, "invalid_argument")
      expectJsonError(flag, "usage")
      expectJsonError(group, "usage")
      expect(text.code).not.toBe(0)
      expect(text.stdout).toBe("")
      expect(text.stderr).toMatch(/--name/)
      expectNoStackTrace(text)

      expectJsonError(
        yield* adminJson(["accounts", "trial", "acc_doesnotexist", "--ends-at", "2030-01-01"]),
        "not_found"
      )
    }), TIMEOUT)

  it.live(
    "projects create: bad time zone or currency → error without touching the database",
    () =>
      Effect.gen(function*() {
        // A data directory that does not exist stays that way: validation comes before the database.
        const untouched = Path.join(Os.tmpdir(), `sitehealth-admin-untouched-${process.pid}`)
        const noDb = { SITEHEALTH_DATA_DIR: untouched, DATABASE_URL: "" }
        const base = ["projects", "create", "--account", accountId, "--name", "Shop", "--domain", "shop.example"]

        const [zone, currency, domain] = yield* Effect.all([
          adminJson([...base, "--timezone", "Mars/Olympus_Mons"], noDb),
          adminJson([...base, "--currency", "XXY"], noDb),
          adminJson([...base.slice(0, -1), "https://shop.example/"], noDb)
        ], { concurrency: "unbounded" })
        expectJsonError(zone, "invalid_argument")
        expect(zone.body.error.message).toContain("Mars/Olympus_Mons")
        expectJsonError(currency, "invalid_argument")
        expectJsonError(domain, "invalid_argument")
        expect(Fs.existsSync(untouched)).toBe(false)
      }),
    TIMEOUT
  )

  it.live("projects create: validated time zone and currency; unknown account → error", () =>
    Effect.gen(function*() {
      const run = yield* adminJson([
        "projects",
        "create",
        "--account",
        accountId,
        "--name",
        "Shop",
        "--domain",
        "Shop.Example",
        "--timezone",
        "Europe/Berlin",
        "--currency",
        "eur"
      ])
      expect(run.code).toBe(0)
      expect(run.body).toEqual({
        id: expect.stringMatching(/^prj_/),
        accountId,
        name: "Shop",
        domain: "shop.example",
        timezone: "Europe/Berlin",
        currency: "EUR",
        createdAt: expect.any(String)
      })
      projectId = run.body.id

      const defaults = yield* adminJson([
        "projects",
        "create",
        "--account",
        accountId,
        "--name",
        "Blog",
        "--domain",
        "blog.example"
      ])
      expect(defaults.body).toMatchObject({ timezone: "UTC", currency: "USD" })

      expectJsonError(
        yield* adminJson([
          "projects",
          "create",
          "--account",
          "acc_doesnotexist",
          "--name",
          "X",
          "--domain",
          "x.example"
        ]),
        "not_found"
      )
    }), TIMEOUT)

  it.live(
    "tokens mint prints the secret once and stores only its hash; revoke is idempotent",
    () =>
      Effect.gen(function*() {
        const minted = yield* adminJson([
          "tokens",
          "mint",
          "--account",
          accountId,
          "--name",
          "ci",
          "--projects",
          projectId,
          "--permissions",
          "projects:read,analytics:read"
        ])
        expect(minted.code).toBe(0)
        const secret: string = minted.body.secret
        expect(secret).toMatch(/^svc_[0-9A-Za-z]{36}$/)
        expect(minted.body.token).toMatchObject({
          id: expect.stringMatching(/^tok_/),
          name: "ci",
          prefix: `svc_…${secret.slice(-4)}`,
          projects: [projectId],
          permissions: ["projects:read", "analytics:read"],
          revokedAt: null,
          status: "active"
        })
        expect(minted.stderr).not.toContain(secret)
        const tokenId: string = minted.body.token.id

        if (embedded) {
          // The cluster is stopped (checkpointed) after each run, so what was stored is in its files: the
          // secret's SHA-256 (the control: the search does see stored bytes), never the secret itself.
          const sha256 = Crypto.createHash("sha256").update(secret).digest()
          expect(filesContaining(dataDir, sha256).length).toBeGreaterThan(0)
          expect(filesContaining(dataDir, secret)).toEqual([])
          expect(filesContaining(dataDir, secret.slice(4))).toEqual([])
        }

        const revoked = yield* adminJson(["tokens", "revoke", tokenId])
        expect(revoked.code).toBe(0)
        expect(revoked.body).toMatchObject({ id: tokenId, status: "revoked", revokedAt: expect.any(String) })
        expect(JSON.stringify(revoked.body)).not.toContain(secret.slice(4, -4))

        const again = yield* adminJson(["tokens", "revoke", tokenId])
        expect(again.code).toBe(0)
        expect(again.body).toMatchObject({ id: tokenId, status: "revoked", revokedAt: revoked.body.revokedAt })
        for (const run of [revoked, again]) expect(run.stderr).not.toContain(secret)

        expectJsonError(yield* adminJson(["tokens", "revoke", "tok_doesnotexist"]), "not_found")
      }),
    TIMEOUT
  )

  it.live("tokens mint validates permissions, projects and the account", () =>
    Effect.gen(function*() {
      expectJsonError(
        yield* adminJson(["tokens", "mint", "--account", accountId, "--permissions", "projects:read,admin:all"]),
        "invalid_argument"
      )
      const other = yield* adminJson(["accounts", "create", "--name", "Other"])
      expectJsonError(
        yield* adminJson(["tokens", "mint", "--account", other.body.id, "--projects", projectId]),
        "not_found"
      )
      expectJsonError(yield* adminJson(["tokens", "mint", "--account", "acc_doesnotexist"]), "not_found")

      const all = yield* adminJson(["tokens", "mint", "--account", other.body.id])
      expect(all.code).toBe(0)
      expect(all.body.token).toMatchObject({ projects: null, name: "API token", status: "active" })
      expect(all.body.token.permissions).toContain("tokens:write")
    }), TIMEOUT)

  it.live("projects delete: deletes once, then unknown → non-zero", () =>
    Effect.gen(function*() {
      const deleted = yield* adminJson(["projects", "delete", projectId])
      expect(deleted.code).toBe(0)
      expect(deleted.body).toEqual({ deleted: true, projectId })

      const unknown = yield* adminJson(["projects", "delete", projectId])
      expectJsonError(unknown, "not_found")
      expect(unknown.code).toBe(1)

      const text = yield* admin(["projects", "delete", "prj_doesnotexist"])
      expect(text.code).toBe(1)
      expect(text.stdout).toBe("")
      expect(text.stderr).toContain("prj_doesnotexist")
      expectNoStackTrace(text)
    }), TIMEOUT)

  it.runIf(embedded)("leaves no cluster running", () => {
    const pid = postmasterPid()
    expect(pid === null || !isAlive(pid)).toBe(true)
  })
})
