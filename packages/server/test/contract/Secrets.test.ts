/**
 * Secrets appear nowhere but the one response that mints them. The test mints a token through the API,
 * connects Stripe with a provider key the way the admin CLI does (credentials file → validated against a
 * local fake Stripe → stored encrypted), runs syncs (one with the right key, one with a wrong one), makes
 * failing requests (bad tokens, bad bodies, a secret in the wrong place), and then searches — for the
 * token secrets and the provider keys, as text and as hex / base64 — the logs written meanwhile and a
 * dump of every table of the database (including the idempotency store when it exists).
 *
 * Also: `Cache-Control: no-store` on every response, and no CORS: no `Access-Control-Allow-Origin`, not
 * even to a preflight, which gets the enveloped 404 of any unknown route.
 *
 * On the memory store the "dump" is the in-memory tables as JSON; the Postgres run is the one that matters.
 */
import { describe, expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { type FakeStripe, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { integrationsConnect } from "../../src/admin/Integrations.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { MemoryDb } from "../../src/store/MemoryDb.ts"
import { hashSecret } from "../../src/store/TokenSecret.ts"
import { drainSyncs } from "../../src/worker/SyncRunner.ts"
import { goldenStripe } from "../fixtures/stripeFixtures.ts"
import { expectError } from "../support/Expect.ts"
import { runnerLayer, TEST_KEY } from "../support/SyncFakes.ts"
import { type CallResult, h, type RawOptions, TestApp } from "../support/TestApp.ts"

/** Provider keys no other test uses, so a hit can only come from this test. */
const STRIPE_KEY = `sk_live_${Crypto.randomBytes(18).toString("hex")}`
const WRONG_KEY = `sk_live_${Crypto.randomBytes(18).toString("hex")}`

/** For the file: the fake Stripe account, a directory for credential files, and the cipher key in the env. */
class SecretsEnv
  extends Context.Service<SecretsEnv, { readonly stripe: FakeStripe; readonly dir: string }>()("test/SecretsEnv")
{}
const SecretsEnvLive = Layer.effect(
  SecretsEnv,
  Effect.gen(function*() {
    const stripe = yield* scopedFake(() => startFakeStripe(goldenStripe(), { keys: [STRIPE_KEY] }))
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-secrets-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    // The admin CLI's cipher reads its key from the environment: the same key the runner below decrypts with.
    const previousKey = process.env.SITEHEALTH_SECRET_KEY
    yield* Effect.acquireRelease(
      Effect.sync(() => void (process.env.SITEHEALTH_SECRET_KEY = Buffer.from(TEST_KEY).toString("base64"))),
      () =>
        Effect.sync(() => {
          if (previousKey === undefined) delete process.env.SITEHEALTH_SECRET_KEY
          else process.env.SITEHEALTH_SECRET_KEY = previousKey
        })
    )
    return { stripe, dir }
  })
)

/** Every way a secret could sit in a log line or a column: as is, hex (bytea prints as \x…), base64, base64url. */
const formsOf = (secret: string): Array<string> => {
  const bytes = Buffer.from(secret, "utf8")
  return [
    secret,
    bytes.toString("hex"),
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url")
  ]
}

/** The forms of `secrets` found in `text` (case-insensitive for hex), as "what: form" for the message. */
const hits = (text: string, secrets: Record<string, string>): Array<string> => {
  const lower = text.toLowerCase()
  const found: Array<string> = []
  for (const [what, secret] of Object.entries(secrets)) {
    for (const form of formsOf(secret)) {
      const isHex = /^[0-9a-f]+$/.test(form)
      if (isHex ? lower.includes(form) : text.includes(form)) found.push(`${what}: ${form.slice(0, 12)}…`)
    }
  }
  return found
}

/** Everything written to stdout, stderr and the console while `f` runs. */
const captureLogs = <A, E, R>(f: () => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const written: Array<string> = []
    const streams = [process.stdout, process.stderr]
    const writes = streams.map((s) => s.write)
    streams.forEach((stream, i) => {
      stream.write = ((chunk: any, ...rest: Array<any>) => {
        written.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
        return (writes[i] as any).call(stream, chunk, ...rest)
      }) as any
    })
    const methods = ["log", "info", "warn", "error", "debug", "trace"] as const
    const originals = methods.map((m) => console[m])
    methods.forEach((m) => {
      console[m] = (...args: Array<unknown>) =>
        void written.push(
          args.map((a) => (typeof a === "string" ? a : (() => {
            try {
              return JSON.stringify(a)
            } catch {
              return String(a)
            }
          })())).join(" ")
        )
    })
    try {
      const result = yield* f()
      return { result, logs: written.join("\n") }
    } finally {
      streams.forEach((stream, i) => void (stream.write = writes[i] as any))
      methods.forEach((m, i) => void (console[m] = originals[i] as any))
    }
  })

/** Every row of every table of the database, as text; the table names, to show what was searched. */
const dumpDatabase = () =>
  Effect.gen(function*() {
    if (h.store === "postgres") {
      return yield* h.run(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tables = (yield* sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`).map((r) =>
            r.table_name
          )
          const parts: Array<string> = []
          for (const table of tables) {
            // A row cast to text: every column in its text form (bytea as \x + hex, jsonb as JSON).
            const rows = yield* sql<{ row: string }>`SELECT t::text AS row FROM ${sql(table)} t`
            parts.push(`-- ${table}\n${rows.map((r) => r.row).join("\n")}`)
          }
          return { tables, text: parts.join("\n") }
        }).pipe(Effect.orDie)
      )
    }
    return yield* h.run(Effect.map(MemoryDb, (db) => {
      const bytes = (v: unknown) =>
        v instanceof Uint8Array ? `\\x${Buffer.from(v).toString("hex")} ${Buffer.from(v).toString("base64")}` : v
      const plain = (
        v: unknown
      ): unknown => (v instanceof Map ? Object.fromEntries([...v].map(([k, x]) => [k, plain(x)])) : v)
      const tables = Object.keys(db)
      return { tables, text: JSON.stringify(plain(db), (_k, v) => bytes(v)) }
    }))
  })

const headerCheck = (r: CallResult, label: string) => {
  expect(r.headers.get("cache-control"), label).toBe("no-store")
  expect(r.headers.get("access-control-allow-origin"), label).toBeNull()
}

layer(Layer.mergeAll(TestApp.layer(), SecretsEnvLive))("Secrets", (it) => {
  describe("secrets", () => {
    it.effect("token secrets and provider keys are found nowhere but the mint response: not in the logs, not in the database", () =>
      Effect.gen(function*() {
        const { projects, secret: root } = yield* h.newAccount({ projects: 2 })
        const [p1, p2] = [projects[0].id, projects[1].id]
        const { dir, stripe } = yield* SecretsEnv
        const secrets: Record<string, string> = {
          "root token": root,
          "stripe key": STRIPE_KEY,
          "wrong stripe key": WRONG_KEY
        }
        const responses: Array<{ label: string; r: CallResult }> = []
        let mintedId = ""
        let replayed = false
        const call = (label: string, method: string, path: string, options: RawOptions = {}) =>
          Effect.gen(function*() {
            const r = yield* h.raw(method, path, options)
            responses.push({ label, r })
            headerCheck(r, label)
            return r
          })

        const { logs } = yield* captureLogs(() =>
          Effect.gen(function*() {
            // 1. Mint through the API, with an Idempotency-Key so that the idempotency store (when there is one)
            //    holds this response too; then the same request again.
            const mintBody = {
              confirm: true,
              name: "secrets-test",
              permissions: [
                "projects:read",
                "revenue:read",
                "integrations:read",
                "integrations:sync",
                "expenses:write",
                "tokens:read",
                "tokens:write"
              ]
            }
            const minted = yield* call("mint", "POST", "/api/v1/tokens", {
              token: root,
              body: mintBody,
              headers: { "idempotency-key": "secrets-mint-1" }
            })
            expect(minted.status, minted.text).toBe(201)
            const token: string = minted.json.data.secret
            mintedId = minted.json.data.token.id
            secrets["minted token"] = token
            const again = yield* call("mint again", "POST", "/api/v1/tokens", {
              token: root,
              body: mintBody,
              headers: { "idempotency-key": "secrets-mint-1" }
            })
            expect(again.status, again.text).toBeLessThan(300)
            replayed = again.headers.get("idempotent-replayed") === "true"
            if (replayed) {
              // A replay never carries the secret again.
              expect(again.text).not.toContain(token)
            } else if (typeof again.json.data.secret === "string") {
              secrets["second minted token"] = again.json.data.secret // no idempotency yet: a second token, searched for too
            }

            // 2. Connect Stripe as the admin CLI does: a credentials file, checked against the provider, stored
            // encrypted.
            const file = Path.join(dir, "stripe.json")
            Fs.writeFileSync(file, JSON.stringify({ secret_key: STRIPE_KEY }))
            const connect = (projectId: string) =>
              h.run(
                Effect.flatMap(
                  integrationsConnect({
                    projectId,
                    provider: "stripe",
                    credentialsFile: file,
                    baseUrl: stripe.url,
                    intervalMinutes: undefined
                  }),
                  (run) => run
                ).pipe(Effect.result)
              )
            const connected = yield* connect(p1)
            expect(connected._tag, JSON.stringify(connected)).toBe("Success")
            expect(JSON.stringify(connected)).not.toContain(STRIPE_KEY)
            // The wrong key is refused at connect time, with a message that does not repeat it.
            Fs.writeFileSync(file, JSON.stringify({ secret_key: WRONG_KEY }))
            const refused = yield* connect(p2)
            expect(refused._tag).toBe("Failure")
            expect(JSON.stringify(refused)).toContain("rejected")
            expect(JSON.stringify(refused)).not.toContain(WRONG_KEY)
            Fs.rmSync(file)
            // A key that was right once and is revoked at the provider later: stored, then rejected by the sync.
            yield* h.run(Effect.gen(function*() {
              const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
              yield* (yield* IntegrationsRepo).connect({
                projectId: p2,
                provider: "stripe",
                credentials: cipher.encrypt({ secret_key: WRONG_KEY }),
                baseUrl: stripe.url,
                syncIntervalMinutes: null,
                now: new Date(yield* h.now)
              })
            }))

            // 3. Syncs: p1's first full sync (queued by connect), p2's through the API; the runner carries both to
            // their end.
            const queued = yield* call("sync p2", "POST", `/api/v1/projects/${p2}/integrations/stripe/sync`, {
              token,
              body: { mode: "full" }
            })
            expect(queued.status, queued.text).toBe(202)
            const runs = yield* h.run(drainSyncs({ projectIds: [p1, p2] }).pipe(Effect.provide(runnerLayer(TEST_KEY))))
            expect(runs.map((r) => [r.projectId, r.status]).sort()).toEqual([[p1, "succeeded"], [p2, "failed"]].sort())
            const list1 = yield* call("integrations p1", "GET", `/api/v1/projects/${p1}/integrations`, { token })
            expect(list1.json.data.integrations[0]).toMatchObject({
              provider: "stripe",
              status: "connected",
              lastRun: { status: "succeeded" }
            })
            const list2 = yield* call("integrations p2", "GET", `/api/v1/projects/${p2}/integrations`, { token })
            expect(list2.json.data.integrations[0]).toMatchObject({
              provider: "stripe",
              status: "error",
              lastRun: { status: "failed" }
            })
            const revenue = yield* call("revenue", "GET", `/api/v1/projects/${p1}/revenue?period=3m`, { token })
            expect(revenue.json.data.mrr).toEqual({ amount: 30000, currency: "USD" }) // the sync really ran (fixtures/stripeFixtures.ts)

            // 4. Failing requests, each with a secret in it somewhere.
            const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A")
            expectError(
              yield* call("bad checksum", "GET", "/api/v1/projects", { token: tampered }),
              401,
              "invalid_token"
            )
            expectError(
              yield* call("provider key as bearer", "GET", "/api/v1/projects", { token: STRIPE_KEY }),
              401,
              "invalid_token"
            )
            expectError(
              yield* call("basic scheme", "GET", "/api/v1/projects", {
                token: null,
                headers: { authorization: `Basic ${token}` }
              }),
              401,
              "missing_token"
            )
            expectError(
              yield* call("secret in the path", "GET", `/api/v1/tokens/${token}/oops`, { token }),
              404,
              "route_not_found"
            )
            expectError(
              yield* call("secret as an amount", "POST", `/api/v1/projects/${p1}/expenses`, {
                token,
                body: {
                  amount: token,
                  category: "other",
                  description: "x",
                  incurredOn: "2026-11-01",
                  recurrence: "one_off"
                }
              }),
              400,
              "invalid_request"
            )
            expectError(
              yield* call("secret in bad JSON", "POST", `/api/v1/projects/${p1}/expenses`, {
                token,
                rawBody: `{"amount": "${STRIPE_KEY}"`
              }),
              400
            )
            expectError(
              yield* call("secret as an unknown field", "POST", "/api/v1/tokens", {
                token,
                body: { confirm: true, secret: token }
              }),
              400,
              "invalid_request"
            )
            expectError(
              yield* call("missing permission", "GET", `/api/v1/projects/${p1}/seo`, { token }),
              403,
              "missing_permission"
            )
            const mcp = yield* h.raw("POST", "/mcp", {
              token: tampered,
              body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
            })
            expect(mcp.status).toBe(401)

            // 5. Token responses: list, preview, revoke preview, revoke — metadata only.
            const list = yield* call("list tokens", "GET", "/api/v1/tokens?limit=100", { token })
            expect(list.status).toBe(200)
            const preview = yield* call("mint preview", "POST", "/api/v1/tokens", { token, body: { name: "preview" } })
            expect(preview.json.data.preview).toBe(true)
            const revokePreview = yield* call("revoke preview", "DELETE", `/api/v1/tokens/${mintedId}`, { token: root })
            expect(revokePreview.json.data.preview).toBe(true)
            const revoked = yield* call("revoke", "DELETE", `/api/v1/tokens/${mintedId}?confirm=true`, { token: root })
            expect(revoked.json.data.token.status).toBe("revoked")
            expectError(yield* call("revoked token", "GET", "/api/v1/projects", { token }), 401, "token_revoked")
          })
        )

        // The minted secret is in its one mint response and in no other answer (requests that carried it
        // in their own path or body aside, whose echo goes back to that same caller).
        const echoes = new Set([
          "secret in the path",
          "secret as an amount",
          "secret as an unknown field",
          "secret in bad JSON"
        ])
        for (const { label, r } of responses) {
          if (label === "mint" || echoes.has(label)) continue
          expect(r.text, label).not.toContain(secrets["minted token"])
          expect(r.text, label).not.toContain(STRIPE_KEY)
          expect(r.text, label).not.toContain(WRONG_KEY)
        }

        // The logs: the runner's warnings and whatever else was written. The capture is real: the failed
        // sync's warning is in it (with the provider's answer, which names no key).
        expect(logs).toMatch(/sync syn_\w+ \(stripe of [\w]+\) attempt 1 failed: .*401/)
        expect(hits(logs, secrets), "secrets in the logs").toEqual([])

        // The database: every table, the idempotency store included when it exists.
        const dump = yield* dumpDatabase()
        if (h.store === "postgres") {
          for (const table of ["accounts", "projects", "tokens", "integrations", "sync_runs"]) {
            expect(dump.tables).toContain(table)
          }
          // The dump is real: it holds what the test wrote (the minted token's digest, its id, the runs).
          expect(dump.text).toContain(hashSecret(secrets["minted token"]!))
          expect(dump.text).toContain(mintedId)
          // When the idempotency store exists, the mint's stored answer is in it (and was searched).
          if (dump.tables.includes("idempotency_keys")) {
            expect(dump.text).toContain("secrets-mint-1")
            expect(replayed, "the second mint with the same key is a replay").toBe(true)
          }
          console.info(
            `secrets: searched ${dump.tables.length} tables (${
              dump.tables.includes("idempotency_keys") ? "idempotency_keys included" : "no idempotency_keys table yet"
            }; mint replayed: ${replayed}), ${dump.text.length} characters, and ${logs.length} characters of logs`
          )
        }
        expect(hits(dump.text, secrets), "secrets in the database").toEqual([])
      }))
  })

  describe("no caching, no CORS", () => {
    it.effect("every answer says Cache-Control: no-store, success or error, /api/v1 or not", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        for (
          const [method, path, token] of [
            ["GET", "/api/v1/tokens", secret],
            ["POST", "/api/v1/tokens", secret],
            ["GET", `/api/v1/projects/${projects[0].id}/health`, secret],
            ["GET", "/api/v1/projects", null],
            ["GET", "/api/v1/nowhere", secret],
            ["GET", "/healthz", null]
          ] as const
        ) {
          const r = yield* h.raw(method, path, { token })
          headerCheck(r, `${method} ${path}`)
        }
      }))

    it.effect("no Access-Control-Allow-Origin on any answer; a preflight gets the enveloped 404, not a 500", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        const origin = { origin: "https://evil.example" }
        const get = yield* h.api.projects.listProjects({ query: {} }, { token: secret, headers: origin })
        expect(get.status).toBe(200)
        headerCheck(get, "GET with Origin")
        // The API has no OPTIONS routes: the catch-all's 404. /mcp refuses any foreign Origin first (DNS rebinding).
        for (
          const [path, status, type] of [
            ["/api/v1/projects", 404, "route_not_found"],
            ["/api/v1/tokens", 404, "route_not_found"],
            ["/nowhere", 404, "route_not_found"],
            ["/mcp", 403, "forbidden_origin"]
          ] as const
        ) {
          const preflight = yield* h.raw("OPTIONS", path, {
            token: null,
            headers: {
              ...origin,
              "access-control-request-method": "DELETE",
              "access-control-request-headers": "authorization"
            }
          })
          expectError(preflight, status, type)
          headerCheck(preflight, `OPTIONS ${path}`)
          expect(preflight.headers.get("access-control-allow-methods")).toBeNull()
          expect(preflight.headers.get("access-control-allow-headers")).toBeNull()
        }
      }))
  })
})
