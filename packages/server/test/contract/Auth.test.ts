/** Authentication and the order of checks: 401 → 429 → 402 → 403 → 404. */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { MemoryDb } from "../../src/store/MemoryDb.ts"
import { generateSecret, hashSecret } from "../../src/store/TokenSecret.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Auth", (it) => {
  const expect401 = (headers: Record<string, string>, type?: string) =>
    Effect.gen(function*() {
      const r = yield* h.api.projects.listProjects({ query: {} }, { token: null, headers })
      expect(r.status).toBe(401)
      expect(r.json).toMatchObject({ status: "error", error: { code: 401, message: "Invalid or expired token" } })
      if (type) expect(r.json.error.type).toBe(type)
      expect(r.headers.get("x-ratelimit-limit")).toBeNull()
    })

  describe("401", () => {
    it.effect("rejects a missing, malformed, unknown, revoked or expired token with the same message", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        yield* expect401({}, "missing_token")
        yield* expect401({ authorization: "" })
        yield* expect401({ authorization: secret }) // no Bearer scheme
        yield* expect401({ authorization: `Basic ${secret}` })
        yield* expect401({ authorization: "Bearer " })
        yield* expect401({ authorization: "Bearer svc_short" }, "invalid_token")
        // Right shape, wrong checksum: rejected without a lookup.
        const tampered = secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A")
        yield* expect401({ authorization: `Bearer ${tampered}` }, "invalid_token")
        // Well-formed with a valid checksum but never issued.
        yield* expect401({ authorization: `Bearer ${generateSecret()}` }, "invalid_token")

        const expiring = yield* h.mint(account.id, { expiresAt: new Date((yield* h.now) + 60_000) })
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: expiring.secret })).status).toBe(200)
        yield* TestClock.adjust(60_001)
        yield* expect401({ authorization: `Bearer ${expiring.secret}` }, "token_expired")
      }))

    it.effect("a revoked token is 401 on the very next request", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        const other = yield* h.mint(account.id)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: other.secret })).status).toBe(200)
        const revoke = yield* h.api.tokens.revokeToken({
          params: { id: other.token.id },
          query: {},
          payload: { confirm: true }
        }, { token: secret })
        expect(revoke.status).toBe(200)
        expect(revoke.json.data.token.status).toBe("revoked")
        yield* expect401({ authorization: `Bearer ${other.secret}` }, "token_revoked")
      }))

    it.effect("a revoked token is 401 on the very next request to a health snapshot it was just served", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        const other = yield* h.mint(account.id)
        const path = `/api/v1/projects/${projects[0].id}/health`
        expect((yield* h.raw("GET", path, { token: other.secret })).status).toBe(200)
        expect((yield* h.raw("GET", path, { token: other.secret })).status).toBe(200) // the stored snapshot, served as stored
        expect(
          (yield* h.api.tokens.revokeToken({ params: { id: other.token.id }, query: {}, payload: { confirm: true } }, {
            token: secret
          })).status
        ).toBe(200)
        expectError(yield* h.raw("GET", path, { token: other.secret }), 401, "token_revoked")
      }))

    it.effect("stores only a SHA-256 of the secret, never the secret", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        const minted = yield* h.api.tokens.createToken({ payload: { confirm: true, name: "ci" } }, { token: secret })
        const newSecret: string = minted.json.data.secret
        expect(newSecret).toMatch(/^svc_[0-9A-Za-z]{36}$/)
        const dump = h.store === "postgres"
          ? (yield* h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`SELECT t.*, encode(secret_sha256, 'hex') AS hex FROM tokens t WHERE account_id = ${account.id}`)))
          : (yield* h.run(Effect.map(MemoryDb, (db) =>
            [...db.tokens.values()].filter((t) =>
              t.accountId === account.id
            ))))
        const text = JSON.stringify(dump, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v))
        expect(text).not.toContain(newSecret)
        expect(text).not.toContain(secret)
        expect(text).toContain(hashSecret(newSecret))
        // And the listing never shows it.
        const list = yield* h.api.tokens.listTokens({ query: {} }, { token: secret })
        expect(list.text).not.toContain(newSecret)
        expect(list.json.data.tokens.every((t: any) => !("secret" in t))).toBe(true)
      }))

    it.effect("never writes a secret to the logs", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const written: Array<string> = []
        const capture = (stream: NodeJS.WriteStream) => {
          const original = stream.write.bind(stream)
          stream.write = ((chunk: any, ...rest: Array<any>) => {
            written.push(String(chunk))
            return original(chunk, ...rest)
          }) as any
          return () => void (stream.write = original as any)
        }
        const restore = [capture(process.stdout), capture(process.stderr)]
        const origLog = console.log, origErr = console.error, origWarn = console.warn
        console.log = console.error = console.warn = (...args: Array<unknown>) =>
          void written.push(args.map(String).join(" "))
        try {
          const minted = yield* h.api.tokens.createToken({ payload: { confirm: true } }, { token: secret })
          yield* h.api.projects.getHealth({ params: { id: projects[0].id } }, { token: minted.json.data.secret })
          yield* h.api.projects.listProjects({ query: {} }, { token: minted.json.data.secret.slice(0, -2) + "zz" })
          const all = written.join("\n")
          expect(all).not.toContain(minted.json.data.secret)
          expect(all).not.toContain(secret)
        } finally {
          restore.forEach((f) => f())
          console.log = origLog
          console.error = origErr
          console.warn = origWarn
        }
      }))
  })

  describe("order of checks", () => {
    it.effect("401 comes before everything: a bad token on a dashboard-only route is 401", () =>
      Effect.gen(function*() {
        const r = yield* h.api.projects.deleteProject({ params: { id: "prj_x" } }, { token: generateSecret() })
        expect(r.status).toBe(401)
      }))

    it.effect("429 comes before 402: an ended trial's token still spends its budget, then gets 429", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        yield* h.endTrial(account.id)
        for (let i = 0; i < 60; i++) {
          expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(402)
        }
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(429)
        yield* TestClock.adjust(60_000)
      }))

    it.effect("402 comes before 403 and 404", () =>
      Effect.gen(function*() {
        const { account } = yield* h.newAccount()
        const weak = yield* h.mint(account.id, { permissions: ["seo:read"] })
        yield* h.endTrial(account.id)
        expect((yield* h.api.tokens.listTokens({ query: {} }, { token: weak.secret })).status).toBe(402)
        expect((yield* h.api.projects.getHealth({ params: { id: "prj_nope" } }, { token: weak.secret })).status).toBe(
          402
        )
        expect((yield* h.api.projects.deleteProject({ params: { id: "prj_nope" } }, { token: weak.secret })).status)
          .toBe(402)
      }))

    it.effect("403 (permission) comes before 404 and before body validation", () =>
      Effect.gen(function*() {
        const { account } = yield* h.newAccount()
        const weak = yield* h.mint(account.id, { permissions: ["projects:read"] })
        const r = yield* h.api.reports.getSeo({ params: { id: "prj_nope" }, query: {} }, { token: weak.secret })
        expect(r.status).toBe(403)
        expect(r.json.error).toMatchObject({ type: "missing_permission", permission: "seo:read" })
        const bad = yield* h.raw("POST", "/api/v1/projects/prj_nope/expenses", { token: weak.secret, rawBody: "{oops" })
        expect(bad.status).toBe(403)
        expect(bad.json.error.permission).toBe("expenses:write")
      }))

    it.effect("with every permission, an unknown project is 404", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        expect((yield* h.api.reports.getSeo({ params: { id: "prj_nope" }, query: {} }, { token: secret })).status).toBe(
          404
        )
      }))
  })
})
