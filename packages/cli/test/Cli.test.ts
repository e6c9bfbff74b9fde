/**
 * The CLI end to end: a real server (the app's real layers over the in-memory repositories) listening on
 * 127.0.0.1, and the `sitehealth` executable run as a child process against it. Every command's --json
 * output must decode with the contract's own schema and equal the API's `data`.
 */
import { describe, expect, it } from "@effect/vitest"
import { ExpenseCreated, ExpenseDeleted, ExpenseList } from "@sitehealth/domain/Expenses"
import { IntegrationList } from "@sitehealth/domain/Integrations"
import { Briefing, Health, ProjectList, SignalList } from "@sitehealth/domain/Projects"
import { Analytics, Churn, Revenue, Seo } from "@sitehealth/domain/Reports"
import { RevokePreview, TokenList, TokenMinted, TokenPreview, TokenRevoked } from "@sitehealth/domain/Tokens"
import { AccountsRepo } from "@sitehealth/server/accounts/AccountsRepo"
import { createProject, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { DEMO_PROJECTS } from "@sitehealth/server/demo/Profiles"
import { startDemoProviders } from "@sitehealth/server/demo/Providers"
import { CredentialsCipher } from "@sitehealth/server/integrations/Crypto"
import { IntegrationsRepo } from "@sitehealth/server/integrations/IntegrationsRepo"
import { ProviderHttp } from "@sitehealth/server/integrations/ProviderHttp"
import { connectorFor } from "@sitehealth/server/integrations/Registry"
import { TEST_KEY } from "@sitehealth/server/test/support/SyncFakes"
import { drainSyncs } from "@sitehealth/server/worker/SyncRunner"
import { Effect, Fiber, Layer, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { runCli, serverForFile, type TestServer } from "./support/TestServer.ts"

let server: TestServer
let secret = ""
let projectId = ""
let accountId = ""
let xdg = ""

const env = (extra: Record<string, string | undefined> = {}) => ({
  SITEHEALTH_URL: server.baseUrl,
  SITEHEALTH_TOKEN: secret,
  XDG_CONFIG_HOME: xdg,
  ...extra
})

/** GET through plain fetch: what the API's `data` is on the wire, to compare the CLI's --json with. */
const apiData = (path: string, token = secret) =>
  Effect.promise(async () => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } })
    return ((await response.json()) as { data: unknown }).data
  })

const decodes = (schema: Schema.Top, stdout: string) => {
  const parsed = JSON.parse(stdout)
  expect(() => Schema.decodeUnknownSync(schema as any)(parsed, { onExcessProperty: "error" })).not.toThrow()
  return parsed
}

serverForFile({ projects: 2, tmpPrefix: "sitehealth-cli-" }, (file) => {
  server = file.server
  secret = file.account.secret
  projectId = file.account.projects[0]!.id
  accountId = file.account.account.id
  xdg = file.xdg
})

describe("--json prints the API's data, decodable with the contract's schema", () => {
  const reads: ReadonlyArray<readonly [string, () => ReadonlyArray<string>, Schema.Top, () => string]> = [
    ["projects list", () => ["projects", "list"], ProjectList, () => "/projects"],
    ["health", () => ["health", projectId], Health, () => `/projects/${projectId}/health`],
    ["briefing", () => ["briefing", projectId], Briefing, () => `/projects/${projectId}/briefing`],
    [
      "signals",
      () => ["signals", projectId, "--severity", "critical", "--dimension", "revenue"],
      SignalList,
      () => `/projects/${projectId}/signals?severity=critical&dimension=revenue`
    ],
    [
      "analytics",
      () => ["analytics", projectId, "--period", "7d"],
      Analytics,
      () => `/projects/${projectId}/analytics?period=7d`
    ],
    [
      "revenue",
      () => ["revenue", projectId, "--period", "3m"],
      Revenue,
      () => `/projects/${projectId}/revenue?period=3m`
    ],
    ["churn", () => ["churn", projectId], Churn, () => `/projects/${projectId}/churn`],
    ["seo", () => ["seo", projectId], Seo, () => `/projects/${projectId}/seo`],
    [
      "integrations list",
      () => ["integrations", "list", projectId],
      IntegrationList,
      () => `/projects/${projectId}/integrations`
    ],
    ["expenses list", () => ["expenses", "list", projectId], ExpenseList, () => `/projects/${projectId}/expenses`],
    ["tokens list", () => ["tokens", "list"], TokenList, () => "/tokens"]
  ]
  for (const [name, args, schema, path] of reads) {
    it.live(name, () =>
      Effect.gen(function*() {
        const run = yield* runCli([...args(), "--json"], env())
        expect(run.stderr).toBe("")
        expect(run.code).toBe(0)
        const printed = decodes(schema, run.stdout)
        const direct: any = yield* apiData(path())
        // Fields computed at request time (computedAt, lastUsedAt) may move between the two requests.
        const stable = (v: unknown) =>
          JSON.parse(JSON.stringify(v).replace(/"(computedAt|generatedAt|lastUsedAt)":"[^"]*"/g, "\"$1\":\"…\""))
        expect(stable(printed)).toEqual(stable(direct))
      }))
  }

  it.live("expenses create and delete", () =>
    Effect.gen(function*() {
      const created = yield* runCli(
        [
          "expenses",
          "create",
          projectId,
          "--amount",
          "2900",
          "--category",
          "hosting",
          "--description",
          "VPS",
          "--date",
          "2026-11-01",
          "--recurrence",
          "monthly",
          "--json"
        ],
        env()
      )
      expect(created.code).toBe(0)
      const { expense } = decodes(ExpenseCreated, created.stdout)
      expect(expense).toMatchObject({
        amount: 2900,
        category: "hosting",
        incurredOn: "2026-11-01",
        recurrence: "monthly"
      })
      const deleted = yield* runCli(["expenses", "delete", projectId, expense.id, "--json"], env())
      expect(deleted.code).toBe(0)
      expect(decodes(ExpenseDeleted, deleted.stdout).expense.id).toBe(expense.id)
    }))

  it.live("tokens create --yes: the secret once on stdout, the warning on stderr; tokens revoke --yes", () =>
    Effect.gen(function*() {
      const text = yield* runCli(["tokens", "create", "--name", "ci", "--permissions", "projects:read", "--yes"], env())
      expect(text.code).toBe(0)
      const minted = text.stdout.trim()
      expect(minted).toMatch(/^svc_[0-9A-Za-z]{36}$/)
      expect(text.stderr).toContain("shown only once")
      expect(text.stderr).not.toContain(minted)

      const json = yield* runCli(["tokens", "create", "--name", "ci2", "--yes", "--json"], env())
      expect(json.code).toBe(0)
      const data = decodes(TokenMinted, json.stdout)
      expect(json.stdout.split(data.secret).length - 1).toBe(1)
      expect(json.stderr).toContain("shown only once")

      const revoked = yield* runCli(["tokens", "revoke", data.token.id, "--yes", "--json"], env())
      expect(revoked.code).toBe(0)
      expect(decodes(TokenRevoked, revoked.stdout).token).toMatchObject({ id: data.token.id, status: "revoked" })
    }))
})

describe("confirmation", () => {
  const confirming = () =>
    server.requests.filter((r) =>
      r.method !== "GET" && r.path.startsWith("/api/v1/tokens") && /"confirm"\s*:\s*true/.test(r.body)
    )

  it.live("without a terminal and without --yes, create and revoke print the preview, exit 2 and change nothing", () =>
    Effect.gen(function*() {
      const before = confirming().length
      const tokensBefore = JSON.stringify(yield* apiData("/tokens"))
      const create = yield* runCli(["tokens", "create", "--name", "nope", "--json"], env())
      expect(create.code).toBe(2)
      const refusal = JSON.parse(create.stdout)
      expect(refusal).toMatchObject({ status: "error", error: { type: "confirmation_required" } })
      expect(Schema.decodeUnknownSync(TokenPreview)(refusal.error.preview).token.name).toBe("nope")
      expect(create.stderr).toContain("confirmation required")

      const victim = yield* server.provide(mintToken({ accountId, permissions: ["projects:read"] }))
      const revoke = yield* runCli(["tokens", "revoke", victim.token.id], env())
      expect(revoke.code).toBe(2)
      expect(revoke.stdout).toContain(`This would revoke ${victim.token.id}`)
      expect(confirming().length).toBe(before)
      const after: any = yield* apiData("/tokens")
      expect(after.tokens.find((t: any) => t.id === victim.token.id).status).toBe("active")
      expect(JSON.stringify((after.tokens as Array<any>).filter((t) => t.id !== victim.token.id).map((t) => t.id)))
        .toBe(JSON.stringify((JSON.parse(tokensBefore).tokens as Array<any>).map((t) => t.id)))
      // the preview itself is decodable too
      const previewJson = yield* runCli(["tokens", "revoke", victim.token.id, "--json"], env())
      expect(previewJson.code).toBe(2)
      expect(Schema.decodeUnknownSync(RevokePreview)(JSON.parse(previewJson.stdout).error.preview).token.id).toBe(
        victim.token.id
      )
    }))
})

describe("exit codes", () => {
  it.live("0 ok, 2 usage (invalid flag value names the allowed values, no request made)", () =>
    Effect.gen(function*() {
      const count = server.requests.length
      const bad = yield* runCli(["analytics", projectId, "--period", "fortnight"], env())
      expect(bad.code).toBe(2)
      for (const period of ["today", "yesterday", "7d", "30d", "3m", "12m", "all"]) expect(bad.stderr).toContain(period)
      const badSeverity = yield* runCli(["signals", projectId, "--severity", "loud", "--json"], env())
      expect(badSeverity.code).toBe(2)
      expect(JSON.parse(badSeverity.stdout).status).toBe("error")
      const badLimit = yield* runCli(["projects", "list", "--limit", "500"], env())
      expect(badLimit.code).toBe(2)
      const badPermission = yield* runCli(["tokens", "create", "--permissions", "root:all", "--yes"], env())
      expect(badPermission.code).toBe(2)
      expect(badPermission.stderr).toContain("projects:read")
      const badExpense = yield* runCli([
        "expenses",
        "create",
        projectId,
        "--amount",
        "12.50",
        "--category",
        "hosting",
        "--description",
        "x"
      ], env())
      expect(badExpense.code).toBe(2)
      const unknownCommand = yield* runCli(["frobnicate"], env())
      expect(unknownCommand.code).toBe(2)
      expect(server.requests.length).toBe(count)
    }))

  it.live("3 when the server is unreachable", () =>
    Effect.gen(function*() {
      const run = yield* runCli(["projects", "list", "--json"], env({ SITEHEALTH_URL: "http://127.0.0.1:9" }))
      expect(run.code).toBe(3)
      expect(JSON.parse(run.stdout).error.type).toBe("unreachable")
    }))

  it.live("4 on 401 (and with no token at all), with the API's envelope under --json", () =>
    Effect.gen(function*() {
      const run = yield* runCli(
        ["projects", "list", "--json"],
        env({ SITEHEALTH_TOKEN: "svc_000000000000000000000000000000000000" })
      )
      expect(run.code).toBe(4)
      expect(JSON.parse(run.stdout)).toEqual({
        status: "error",
        error: { code: 401, message: "Invalid or expired token", type: expect.any(String) }
      })
      const none = yield* runCli(["projects", "list"], env({ SITEHEALTH_TOKEN: undefined }))
      expect(none.code).toBe(4)
      expect(none.stderr).toContain("auth login")
    }))

  it.live("5 on 403, 6 on 404", () =>
    Effect.gen(function*() {
      const limited = yield* server.provide(mintToken({ accountId, permissions: ["projects:read"] }))
      const forbidden = yield* runCli(["revenue", projectId, "--json"], env({ SITEHEALTH_TOKEN: limited.secret }))
      expect(forbidden.code).toBe(5)
      expect(JSON.parse(forbidden.stdout).error).toMatchObject({
        code: 403,
        type: "missing_permission",
        permission: "revenue:read"
      })
      const missing = yield* runCli(["health", "prj_doesnotexist"], env())
      expect(missing.code).toBe(6)
    }))

  it.live("8 on 402 (trial over)", () =>
    Effect.gen(function*() {
      const account = yield* Effect.promise(() => server.newAccount(1))
      yield* server.provide(
        Effect.flatMap(AccountsRepo, (a) => a.setTrial(account.account.id, new Date(Date.now() - 1000)))
      )
      const run = yield* runCli(["projects", "list", "--json"], env({ SITEHEALTH_TOKEN: account.secret }))
      expect(run.code).toBe(8)
      expect(JSON.parse(run.stdout).error.code).toBe("trial_expired")
    }))
})

describe("token and base-URL precedence, transport safety", () => {
  it.live("--token beats SITEHEALTH_TOKEN, which beats the stored login", () =>
    Effect.gen(function*() {
      const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-cli-prec-"))
      const stored = yield* server.provide(mintToken({ accountId, permissions: ["projects:read", "tokens:read"] }))
      const fromEnv = yield* server.provide(mintToken({ accountId, permissions: ["projects:read", "tokens:read"] }))
      const fromFlag = yield* server.provide(mintToken({ accountId, permissions: ["projects:read", "tokens:read"] }))
      const login = yield* runCli(
        ["auth", "login", "--base-url", server.baseUrl],
        { XDG_CONFIG_HOME: home },
        `${stored.secret}\n`
      )
      expect(login.code).toBe(0)
      const status = Effect.fnUntraced(function*(extra: Record<string, string | undefined>, args: Array<string> = []) {
        const run = yield* runCli(["auth", "status", "--json", ...args], {
          XDG_CONFIG_HOME: home,
          SITEHEALTH_URL: undefined,
          ...extra
        })
        expect(run.code).toBe(0)
        return JSON.parse(run.stdout)
      })
      const a = yield* status({})
      expect(a).toMatchObject({ tokenSource: "profile", baseUrlSource: "profile", baseUrl: server.baseUrl })
      expect(a.token.id).toBe(stored.token.id)
      expect(a.secret).toBe(`svc_…${stored.secret.slice(-4)}`)
      expect(JSON.stringify(a)).not.toContain(stored.secret)
      const b = yield* status({ SITEHEALTH_TOKEN: fromEnv.secret })
      expect(b).toMatchObject({ tokenSource: "env" })
      expect(b.token.id).toBe(fromEnv.token.id)
      const c = yield* status({ SITEHEALTH_TOKEN: fromEnv.secret }, ["--token", fromFlag.secret])
      expect(c).toMatchObject({ tokenSource: "flag" })
      expect(c.token.id).toBe(fromFlag.token.id)
      // SITEHEALTH_URL beats the profile's URL, --base-url beats both
      const d = yield* runCli(["projects", "list"], { XDG_CONFIG_HOME: home, SITEHEALTH_URL: "http://127.0.0.1:9" })
      expect(d.code).toBe(3)
      const e = yield* runCli(["projects", "list", "--base-url", server.baseUrl], {
        XDG_CONFIG_HOME: home,
        SITEHEALTH_URL: "http://127.0.0.1:9"
      })
      expect(e.code).toBe(0)
      Fs.rmSync(home, { recursive: true, force: true })
    }))

  it.live(
    "refuses plain http:// to a non-loopback host without --insecure-http, before any request",
    () =>
      Effect.gen(function*() {
        const run = yield* runCli(
          ["projects", "list", "--json"],
          env({ SITEHEALTH_URL: "http://sitehealth.invalid:8787" })
        )
        expect(run.code).toBe(2)
        expect(JSON.parse(run.stdout).error.message).toContain("--insecure-http")
        // with the flag it does try (and a .invalid host never resolves: exit 3, not 2)
        const allowed = yield* runCli(
          ["projects", "list", "--insecure-http"],
          env({ SITEHEALTH_URL: "http://sitehealth.invalid:8787" })
        )
        expect(allowed.code).toBe(3)
        // loopback needs no flag, whatever its spelling
        expect(
          (yield* runCli(
            ["projects", "list"],
            env({ SITEHEALTH_URL: server.baseUrl.replace("127.0.0.1", "localhost") })
          )).code
        ).toBe(0)
      }),
    60_000
  )
})

describe("auth", () => {
  it.live("login stores the token (dir 0700, file 0600) from stdin after checking it; status masks it; logout forgets it", () =>
    Effect.gen(function*() {
      const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-cli-auth-"))
      const base = { XDG_CONFIG_HOME: home }
      const refused = yield* runCli(
        ["auth", "login", "--base-url", server.baseUrl],
        base,
        "svc_000000000000000000000000000000000000\n"
      )
      expect(refused.code).toBe(4)
      expect(Fs.existsSync(Path.join(home, "sitehealth/config.json"))).toBe(false)

      const login = yield* runCli(
        ["auth", "login", "--base-url", server.baseUrl, "--profile", "work"],
        base,
        `${secret}\n`
      )
      expect(login.code).toBe(0)
      expect(login.stdout).not.toContain(secret)
      const dir = Path.join(home, "sitehealth")
      const file = Path.join(dir, "config.json")
      expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(JSON.parse(Fs.readFileSync(file, "utf8")).profiles.work).toEqual({
        baseUrl: server.baseUrl,
        token: secret
      })

      const status = yield* runCli(["auth", "status", "--profile", "work"], base)
      expect(status.code).toBe(0)
      expect(status.stdout).toContain(`svc_…${secret.slice(-4)}`)
      expect(status.stdout).not.toContain(secret)
      expect(status.stdout).toContain(projectId)
      // the default profile is not logged in
      expect((yield* runCli(["auth", "status"], base)).code).toBe(4)

      const logout = yield* runCli(["auth", "logout", "--profile", "work"], base)
      expect(logout.code).toBe(0)
      expect(JSON.parse(Fs.readFileSync(file, "utf8")).profiles).toEqual({})
      expect((yield* runCli(["auth", "status", "--profile", "work"], base)).code).toBe(4)
      Fs.rmSync(home, { recursive: true, force: true })
    }))
})

describe("auth status: who am I", () => {
  it.live("reads GET /tokens/current: a token without tokens:read (or projects:read) still learns its id, permissions, scope", () =>
    Effect.gen(function*() {
      const narrow = yield* server.provide(
        mintToken({ accountId, name: "narrow", permissions: ["revenue:read"], projects: [projectId] })
      )
      const before = server.requests.length
      const run = yield* runCli(["auth", "status", "--json"], env({ SITEHEALTH_TOKEN: narrow.secret }))
      expect(run.code).toBe(0)
      const status = JSON.parse(run.stdout)
      expect(status.token).toMatchObject({
        id: narrow.token.id,
        name: "narrow",
        permissions: ["revenue:read"],
        projects: [projectId]
      })
      // projects:read is missing: that part is unknown, the rest is not
      expect(status.projects).toBeNull()
      expect(JSON.stringify(status)).not.toContain(narrow.secret)
      const sent = server.requests.slice(before).map((r) => `${r.method} ${r.path.split("?")[0]}`)
      expect(sent).toContain("GET /api/v1/tokens/current")
      // not the token list, matched by the secret's last characters
      expect(sent).not.toContain("GET /api/v1/tokens")
      const human = yield* runCli(["auth", "status"], env({ SITEHEALTH_TOKEN: narrow.secret }))
      expect(human.code).toBe(0)
      expect(human.stdout).toContain(narrow.token.id)
      expect(human.stdout).toContain("revenue:read")
    }))
})

describe("help, version, completions", () => {
  it.live("every command's --help has an example; --version matches package.json; completions for bash, zsh, fish", () =>
    Effect.gen(function*() {
      const commands = [
        [],
        ["auth", "login"],
        ["auth", "status"],
        ["auth", "logout"],
        ["projects", "list"],
        ["health"],
        ["briefing"],
        ["signals"],
        ["analytics"],
        ["revenue"],
        ["churn"],
        ["seo"],
        ["integrations", "list"],
        ["integrations", "sync"],
        ["expenses", "list"],
        ["expenses", "create"],
        ["expenses", "delete"],
        ["tokens", "list"],
        ["tokens", "create"],
        ["tokens", "revoke"]
      ]
      yield* Effect.forEach(commands, (path) =>
        Effect.map(runCli([...path, "--help"], {}), (run) => {
          expect(run.code, path.join(" ")).toBe(0)
          expect(run.stdout, path.join(" ")).toMatch(/EXAMPLES[\s\S]*sitehealth /)
        }), { concurrency: "unbounded" })
      const pkg = JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "../package.json"), "utf8"))
      expect((yield* runCli(["--version"], {})).stdout).toContain(pkg.version)
      for (const shell of ["bash", "zsh", "fish"]) {
        const run = yield* runCli(["--completions", shell], {})
        expect(run.code).toBe(0)
        expect(run.stdout).toContain("sitehealth")
        expect(run.stdout).toContain("analytics")
      }
    }))
})

describe("integrations sync --wait", () => {
  it.live(
    "queues a run, waits while it is queued and running, and exits 0 with the finished run once a worker has run it",
    () =>
      Effect.gen(function*() {
        // A project of the demo profile connected to the demo's local Plausible, so a real sync has work to do.
        const spec = DEMO_PROJECTS[2]
        const project = yield* server.provide(
          createProject({
            accountId,
            name: spec.name,
            domain: spec.domain,
            timezone: spec.timezone,
            currency: spec.currency
          })
        )
        const providers = yield* startDemoProviders({ epoch: new Date(), broken: false })
        const plausible = providers.connectionsOf(spec.key).find((c) => c.provider === "plausible")!
        yield* server.provide(Effect.gen(function*() {
          const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
          return yield* (yield* IntegrationsRepo).connect({
            projectId: project.id,
            provider: "plausible",
            credentials: cipher.encrypt(plausible.credentials),
            baseUrl: plausible.baseUrl,
            syncIntervalMinutes: null,
            now: new Date()
          })
        }))
        const cli = yield* Effect.forkChild(
          runCli(["integrations", "sync", project.id, "plausible", "--wait", "--interval", "0.2", "--json"], env())
        )
        // The worker's part, in this process: once the CLI has queued the run, drain the queue.
        const queued = () =>
          server.requests.some((r) =>
            r.method === "POST" && r.path.includes(`${project.id}/integrations/plausible/sync`)
          )
        for (let i = 0; i < 200 && !queued(); i++) yield* Effect.sleep(50)
        expect(queued()).toBe(true)
        // The demo's data of the hour is built on its first request: no short timeout.
        const runner = Layer.mergeAll(
          CredentialsCipher.layer(TEST_KEY),
          ProviderHttp.layer({ maxAttempts: 1, timeoutMs: 60_000 })
        )
        const [run] = yield* server.provide(
          drainSyncs({ connectors: connectorFor, projectIds: [project.id] }).pipe(Effect.provide(runner))
        )
        expect(run?.status).toBe("succeeded")
        const done = yield* Fiber.join(cli)
        expect(done.code, done.stderr).toBe(0)
        // --json: the finished run, in the shape POST …/sync answers
        const out = JSON.parse(done.stdout)
        expect(out.sync).toMatchObject({ id: run!.id, provider: "plausible", status: "succeeded", error: null })
        expect(out.sync.finishedAt).not.toBeNull()
      }),
    60_000
  )
})
