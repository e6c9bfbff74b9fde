/**
 * `admin integrations connect|disconnect|list` end to end (the CLI as a child process, like Admin.test.ts,
 * on a fresh embedded cluster or DATABASE_URL): credentials checked against a local fake provider with
 * what is wrong said plainly, stored encrypted (no plaintext in any database file), never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { runAdmin } from "./support/AdminCli.ts"
import { freePort } from "./support/postgresGlobalSetup.ts"

const TIMEOUT = 60_000
const externalUrl = process.env.DATABASE_URL?.trim() || null
const API_KEY = "plausible_KEY_S3CR3T_9876"

let dataDir = ""
let pgPort = 0
let fake: Http.Server
let fakeBase = ""
/** What the fake Plausible answers /api/v2/query with. */
let answer: { status: number; body: unknown } = { status: 200, body: { results: [{ dimensions: [], metrics: [0] }] } }

/** The admin CLI with `--json`, on this file's cluster. */
const admin = (args: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
    delete env.DATABASE_URL
    delete env.SITEHEALTH_SECRET_KEY
    Object.assign(
      env,
      externalUrl !== null
        ? { DATABASE_URL: externalUrl, SITEHEALTH_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }
        : { SITEHEALTH_DATA_DIR: dataDir, SITEHEALTH_EMBEDDED_PG_PORT: String(pgPort) }
    )
    return runAdmin([...args, "--json"], env)
  })

const writeJson = (name: string, value: unknown) => {
  const file = Path.join(dataDir, name)
  Fs.writeFileSync(file, JSON.stringify(value))
  return file
}

beforeAll(async () => {
  dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-admin-int-"))
  pgPort = await freePort()
  fake = Http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const ok = req.headers.authorization === `Bearer ${API_KEY}`
      const { body, status } = ok ? answer : { status: 401, body: { error: "Invalid API key or site ID" } }
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve))
  fakeBase = `http://127.0.0.1:${(fake.address() as Net.AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => fake.close(() => resolve()))
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("admin integrations", () => {
  let projectId = ""

  it.live(
    "connect checks the credentials, stores them encrypted, queues a full sync; list shows no secret",
    () =>
      Effect.gen(function*() {
        const account = yield* admin(["accounts", "create", "--name", "Int Co"])
        expect(account.code, account.stderr).toBe(0)
        const project = yield* admin([
          "projects",
          "create",
          "--account",
          account.body.id,
          "--name",
          "Site",
          "--domain",
          "site.example"
        ])
        expect(project.code, project.stderr).toBe(0)
        projectId = project.body.id
        const creds = writeJson("plausible.json", { api_key: API_KEY, site_id: "site.example" })
        const run = yield* admin([
          "integrations",
          "connect",
          "--project",
          projectId,
          "--provider",
          "plausible",
          "--credentials-file",
          creds,
          "--base-url",
          fakeBase
        ])
        expect(run.code, run.stderr).toBe(0)
        expect(run.body.integration).toMatchObject({
          projectId,
          provider: "plausible",
          status: "connected",
          baseUrl: fakeBase,
          lastError: null
        })
        expect(run.body.sync).toMatchObject({ provider: "plausible", mode: "full", status: "queued" })
        const list = yield* admin(["integrations", "list", "--project", projectId])
        expect(list.code).toBe(0)
        expect(list.body.integrations.map((i: any) => i.provider)).toEqual(["plausible"])
        for (const r of [run, list]) expect(r.stdout + r.stderr).not.toContain(API_KEY)
        if (externalUrl === null) {
          expect(Fs.statSync(Path.join(dataDir, "secret-key")).mode & 0o777).toBe(0o600)
          // No database file holds the key in clear.
          const hits: Array<string> = []
          for (const entry of Fs.readdirSync(Path.join(dataDir, "pg"), { withFileTypes: true, recursive: true })) {
            if (!entry.isFile()) continue
            const file = Path.join(entry.parentPath, entry.name)
            try {
              if (Fs.readFileSync(file).includes(Buffer.from("KEY_S3CR3T"))) hits.push(file)
            } catch {
              // unreadable
            }
          }
          expect(hits).toEqual([])
        }
      }),
    TIMEOUT
  )

  it.live(
    "says what is wrong: a rejected key, an unknown site, missing fields, an unknown provider — and stores nothing",
    () =>
      Effect.gen(function*() {
        const wrong = writeJson("wrong.json", { api_key: "nope_WRONGKEY", site_id: "site.example" })
        const rejected = yield* admin([
          "integrations",
          "connect",
          "--project",
          projectId,
          "--provider",
          "plausible",
          "--credentials-file",
          wrong,
          "--base-url",
          fakeBase
        ])
        expect(rejected.code).toBe(1)
        expect(rejected.body.error.type).toBe("credentials")
        expect(rejected.body.error.message).toMatch(/^plausible: the key was rejected/)
        expect(rejected.stdout + rejected.stderr).not.toContain("WRONGKEY")

        answer = { status: 404, body: { error: "Site not found" } }
        const good = writeJson("good.json", { api_key: API_KEY, site_id: "other.example" })
        const missingSite = yield* admin([
          "integrations",
          "connect",
          "--project",
          projectId,
          "--provider",
          "plausible",
          "--credentials-file",
          good,
          "--base-url",
          fakeBase
        ])
        expect(missingSite.body.error.message).toMatch(/not found — check its id/)
        answer = { status: 200, body: { results: [{ dimensions: [], metrics: [0] }] } }

        const partial = writeJson("partial.json", { api_key: API_KEY })
        const lacks = yield* admin([
          "integrations",
          "connect",
          "--project",
          projectId,
          "--provider",
          "plausible",
          "--credentials-file",
          partial
        ])
        expect([lacks.code, lacks.body.error.type]).toEqual([2, "invalid_argument"])
        expect(lacks.body.error.message).toMatch(/lacks "site_id"/)
        const unknown = yield* admin([
          "integrations",
          "connect",
          "--project",
          projectId,
          "--provider",
          "paypal",
          "--credentials-file",
          partial
        ])
        expect(unknown.body.error.message).toMatch(
          /--provider must be one of stripe, plausible, google-search-console; got "paypal"/
        )
        const noProject = yield* admin([
          "integrations",
          "connect",
          "--project",
          "prj_nope",
          "--provider",
          "plausible",
          "--credentials-file",
          good,
          "--base-url",
          fakeBase
        ])
        expect(noProject.body.error.type).toBe("not_found")
        // Still the one integration, connected as before.
        const list = yield* admin(["integrations", "list"])
        expect(
          list.body.integrations.filter((i: any) => i.projectId === projectId).map((i: any) => [i.provider, i.status])
        ).toEqual([["plausible", "connected"]])
      }),
    TIMEOUT
  )

  it.live("disconnect removes it (again: not_found)", () =>
    Effect.gen(function*() {
      const gone = yield* admin(["integrations", "disconnect", "--project", projectId, "--provider", "plausible"])
      expect(gone.code, gone.stderr).toBe(0)
      expect(gone.body).toEqual({ disconnected: true, projectId, provider: "plausible" })
      const again = yield* admin(["integrations", "disconnect", "--project", projectId, "--provider", "plausible"])
      expect(again.body.error.type).toBe("not_found")
      expect((yield* admin(["integrations", "list", "--project", projectId])).body).toEqual({ integrations: [] })
    }), TIMEOUT)
})
