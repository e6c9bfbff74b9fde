/** Authentication and the order of checks: 401 → 429 → 402 → 403 → 404. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MemoryDb } from "../../src/store/MemoryDb.ts"
import { generateSecret, hashSecret } from "../../src/tokens/TokenSecret.ts"
import { expectError } from "../support/Expect.ts"
import { makeHarness, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const expect401 = async (headers: Record<string, string>, type?: string) => {
  const r = await h.call("GET", "/api/v1/projects", { token: null, headers })
  expect(r.status).toBe(401)
  expect(r.json).toMatchObject({ status: "error", error: { code: 401, message: "Invalid or expired token" } })
  if (type) expect(r.json.error.type).toBe(type)
  expect(r.headers.get("x-ratelimit-limit")).toBeNull()
}

describe("401", () => {
  it("rejects a missing, malformed, unknown, revoked or expired token with the same message", async () => {
    const { account, secret } = await h.newAccount()
    await expect401({}, "missing_token")
    await expect401({ authorization: "" })
    await expect401({ authorization: secret }) // no Bearer scheme
    await expect401({ authorization: `Basic ${secret}` })
    await expect401({ authorization: "Bearer " })
    await expect401({ authorization: "Bearer svc_short" }, "invalid_token")
    // Right shape, wrong checksum: rejected without a lookup.
    const tampered = secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A")
    await expect401({ authorization: `Bearer ${tampered}` }, "invalid_token")
    // Well-formed with a valid checksum but never issued.
    await expect401({ authorization: `Bearer ${generateSecret()}` }, "invalid_token")

    const expiring = await h.mint(account.id, { expiresAt: new Date(h.time.now() + 60_000) })
    expect((await h.call("GET", "/api/v1/projects", { token: expiring.secret })).status).toBe(200)
    h.time.advance(60_001)
    await expect401({ authorization: `Bearer ${expiring.secret}` }, "token_expired")
  })

  it("a revoked token is 401 on the very next request", async () => {
    const { account, secret } = await h.newAccount()
    const other = await h.mint(account.id)
    expect((await h.call("GET", "/api/v1/projects", { token: other.secret })).status).toBe(200)
    const revoke = await h.call("DELETE", `/api/v1/tokens/${other.token.id}`, { token: secret, body: { confirm: true } })
    expect(revoke.status).toBe(200)
    expect(revoke.json.data.token.status).toBe("revoked")
    await expect401({ authorization: `Bearer ${other.secret}` }, "token_revoked")
  })

  it("a revoked token is 401 on the very next request to a health snapshot it was just served", async () => {
    const { account, projects, secret } = await h.newAccount()
    const other = await h.mint(account.id)
    const path = `/api/v1/projects/${projects[0].id}/health`
    expect((await h.call("GET", path, { token: other.secret })).status).toBe(200)
    expect((await h.call("GET", path, { token: other.secret })).status).toBe(200) // the stored snapshot, served as stored
    expect((await h.call("DELETE", `/api/v1/tokens/${other.token.id}`, { token: secret, body: { confirm: true } })).status).toBe(200)
    expectError(await h.call("GET", path, { token: other.secret }), 401, "token_revoked")
  })

  it("stores only a SHA-256 of the secret, never the secret", async () => {
    const { account, secret } = await h.newAccount()
    const minted = await h.call("POST", "/api/v1/tokens", { token: secret, body: { confirm: true, name: "ci" } })
    const newSecret: string = minted.json.data.secret
    expect(newSecret).toMatch(/^svc_[0-9A-Za-z]{36}$/)
    const dump = h.store === "postgres"
      ? await h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT t.*, encode(secret_sha256, 'hex') AS hex FROM tokens t WHERE account_id = ${account.id}`))
      : await h.run(Effect.map(MemoryDb, (db) => [...db.tokens.values()].filter((t) => t.accountId === account.id)))
    const text = JSON.stringify(dump, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v))
    expect(text).not.toContain(newSecret)
    expect(text).not.toContain(secret)
    expect(text).toContain(hashSecret(newSecret))
    // And the listing never shows it.
    const list = await h.call("GET", "/api/v1/tokens", { token: secret })
    expect(list.text).not.toContain(newSecret)
    expect(list.json.data.tokens.every((t: any) => !("secret" in t))).toBe(true)
  })

  it("never writes a secret to the logs", async () => {
    const { projects, secret } = await h.newAccount()
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
    console.log = console.error = console.warn = (...args: Array<unknown>) => void written.push(args.map(String).join(" "))
    try {
      const minted = await h.call("POST", "/api/v1/tokens", { token: secret, body: { confirm: true } })
      await h.call("GET", `/api/v1/projects/${projects[0].id}/health`, { token: minted.json.data.secret })
      await h.call("GET", "/api/v1/projects", { token: minted.json.data.secret.slice(0, -2) + "zz" })
      const all = written.join("\n")
      expect(all).not.toContain(minted.json.data.secret)
      expect(all).not.toContain(secret)
    } finally {
      restore.forEach((f) => f())
      console.log = origLog
      console.error = origErr
      console.warn = origWarn
    }
  })
})

describe("order of checks", () => {
  it("401 comes before everything: a bad token on a dashboard-only route is 401", async () => {
    const r = await h.call("DELETE", "/api/v1/projects/prj_x", { token: generateSecret() })
    expect(r.status).toBe(401)
  })

  it("429 comes before 402: an ended trial's token still spends its budget, then gets 429", async () => {
    const { account, secret } = await h.newAccount()
    await h.endTrial(account.id)
    for (let i = 0; i < 60; i++) expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(402)
    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(429)
    h.time.advance(60_000)
  })

  it("402 comes before 403 and 404", async () => {
    const { account } = await h.newAccount()
    const weak = await h.mint(account.id, { permissions: ["seo:read"] })
    await h.endTrial(account.id)
    expect((await h.call("GET", "/api/v1/tokens", { token: weak.secret })).status).toBe(402)
    expect((await h.call("GET", "/api/v1/projects/prj_nope/health", { token: weak.secret })).status).toBe(402)
    expect((await h.call("DELETE", "/api/v1/projects/prj_nope", { token: weak.secret })).status).toBe(402)
  })

  it("403 (permission) comes before 404 and before body validation", async () => {
    const { account } = await h.newAccount()
    const weak = await h.mint(account.id, { permissions: ["projects:read"] })
    const r = await h.call("GET", "/api/v1/projects/prj_nope/seo", { token: weak.secret })
    expect(r.status).toBe(403)
    expect(r.json.error).toMatchObject({ type: "missing_permission", permission: "seo:read" })
    const bad = await h.call("POST", "/api/v1/projects/prj_nope/expenses", { token: weak.secret, rawBody: "{oops" })
    expect(bad.status).toBe(403)
    expect(bad.json.error.permission).toBe("expenses:write")
  })

  it("with every permission, an unknown project is 404", async () => {
    const { secret } = await h.newAccount()
    expect((await h.call("GET", "/api/v1/projects/prj_nope/seo", { token: secret })).status).toBe(404)
  })
})
