/** Every response under /api/v1 is an envelope — success, every error status, and the framework's own failures. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/Expect.ts"
import { makeHarness, type CallResult, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())


describe("success envelope", () => {
  it("wraps data in {status:'success', data:{…}} with data always an object", async () => {
    const { projects, secret } = await h.newAccount()
    for (const path of ["/api/v1/projects", `/api/v1/projects/${projects[0].id}/health`, "/api/v1/tokens"]) {
      const r = await h.call("GET", path, { token: secret })
      expect(r.status).toBe(200)
      expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
      expect(r.json.status).toBe("success")
      expect(r.json.data).toBeTypeOf("object")
      expect(Array.isArray(r.json.data)).toBe(false)
      expect(r.headers.get("content-type")).toContain("application/json")
    }
  })
})

describe("error envelope for each status", () => {
  it("400 for malformed JSON, wrong types, unknown values and unknown fields", async () => {
    const { projects, secret } = await h.newAccount()
    const path = `/api/v1/projects/${projects[0].id}/expenses`
    expectError(await h.call("POST", path, { token: secret, rawBody: "{not json" }), 400, "invalid_json")
    const wrongType = await h.call("POST", path, {
      token: secret,
      body: { amount: "12", category: "hosting", description: "x", incurredOn: "2026-11-01", recurrence: "monthly" }
    })
    expectError(wrongType, 400, "invalid_request")
    expect(wrongType.json.error.issues.map((i: any) => i.path)).toContain("body.amount")
    const unknownPeriod = await h.call("GET", `/api/v1/projects/${projects[0].id}/analytics?period=5y`, { token: secret })
    expectError(unknownPeriod, 400, "invalid_request")
    expect(unknownPeriod.json.error.message).toContain("query.period")
    const unknownField = await h.call("POST", "/api/v1/tokens", { token: secret, body: { permisions: ["seo:read"] } })
    expectError(unknownField, 400, "invalid_request")
    expect(unknownField.json.error.issues[0]).toEqual({ path: "body.permisions", message: "Unknown field" })
    expectError(await h.call("POST", path, { token: secret, rawBody: "[]" }), 400)
    expectError(await h.call("POST", path, { token: secret, rawBody: "null" }), 400)
  })

  it("401 for a missing token, with the exact message", async () => {
    const r = await h.call("GET", "/api/v1/projects", { token: null })
    expectError(r, 401)
    expect(r.json.error.message).toBe("Invalid or expired token")
  })

  it("402 with code trial_expired", async () => {
    const { account, secret } = await h.newAccount()
    await h.endTrial(account.id)
    expectError(await h.call("GET", "/api/v1/projects", { token: secret }), 402, "trial_expired")
  })

  it("403, 404 and 409 from handlers", async () => {
    const { account, projects, secret, token } = await h.newAccount()
    const readOnly = await h.mint(account.id, { permissions: ["projects:read"] })
    expectError(await h.call("GET", "/api/v1/tokens", { token: readOnly.secret }), 403, "missing_permission")
    expectError(await h.call("GET", "/api/v1/projects/prj_doesnotexist/health", { token: secret }), 404, "not_found")
    expectError(await h.call("DELETE", `/api/v1/tokens/${token.id}?confirm=true`, { token: secret }), 409, "self_revoke")
    expectError(await h.call("DELETE", `/api/v1/projects/${projects[0].id}`, { token: secret }), 403, "dashboard_only")
  })

  it("413 for an oversized body, whether or not Content-Length is sent", async () => {
    const { projects, secret } = await h.newAccount()
    const path = `/api/v1/projects/${projects[0].id}/expenses`
    const big = JSON.stringify({ description: "x".repeat(100_000) })
    expectError(await h.call("POST", path, { token: secret, rawBody: big }), 413, "payload_too_large")
    expectError(
      await h.call("POST", path, { token: secret, rawBody: big, headers: { "content-length": String(big.length) } }),
      413,
      "payload_too_large"
    )
  })

  it("415 for a body that is not JSON", async () => {
    const { projects, secret } = await h.newAccount()
    const r = await h.call("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
      token: secret,
      rawBody: "amount=1",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expectError(r, 415, "unsupported_media_type")
  })

  it("404 for unknown routes and methods, authenticated or not", async () => {
    const { secret } = await h.newAccount()
    expectError(await h.call("GET", "/api/v1/nope", { token: secret }), 404, "route_not_found")
    expectError(await h.call("GET", "/api/v2/projects", { token: null }), 404, "route_not_found")
    expectError(await h.call("PUT", "/api/v1/projects", { token: secret }), 404, "route_not_found")
    expectError(await h.call("GET", "/api/v1/projects/x/y/z", { token: secret }), 404, "route_not_found")
  })

  it("429 carries limit, remaining and reset in the error", async () => {
    const { secret } = await h.newAccount()
    for (let i = 0; i < 60; i++) await h.call("GET", "/api/v1/tokens", { token: secret })
    const r = await h.call("GET", "/api/v1/tokens", { token: secret })
    expect(r.status).toBe(429)
    expect(r.json.status).toBe("error")
    expect(r.json.error).toMatchObject({ code: 429, limit: 60, remaining: 0, type: "rate_limited" })
    expect(Number.isInteger(r.json.error.reset)).toBe(true)
    h.time.advance(60_000)
  })
})

describe("strict parsing", () => {
  it("page sizes are plain decimal integers 1–100", async () => {
    const { secret } = await h.newAccount()
    for (const bad of ["0", "101", "0x10", "1e1", "%201", "-1", "1.5", "abc", ""]) {
      const r = await h.call("GET", `/api/v1/tokens?limit=${bad}`, { token: secret })
      expect(r.status, `limit=${bad}`).toBe(400)
    }
    expect((await h.call("GET", "/api/v1/tokens?limit=100", { token: secret })).status).toBe(200)
  })

  it("paths are case-sensitive", async () => {
    const { secret } = await h.newAccount()
    expect((await h.call("GET", "/API/V1/projects", { token: secret })).status).toBe(404)
  })
})

describe("validation reports every problem", () => {
  it("a body with several invalid fields lists them all in issues", async () => {
    const { projects, secret } = await h.newAccount()
    const r = await h.call("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
      token: secret,
      body: { amount: -1, category: "nope", description: "", incurredOn: "2026-02-30", recurrence: "weekly" }
    })
    expectError(r, 400, "invalid_request")
    const paths = r.json.error.issues.map((i: any) => i.path)
    for (const field of ["amount", "category", "description", "incurredOn", "recurrence"]) {
      expect(paths, field).toContain(`body.${field}`)
    }
  })

  it("an expiry without a time zone is refused rather than read in the server's zone", async () => {
    const { secret } = await h.newAccount()
    const r = await h.call("POST", "/api/v1/tokens", { token: secret, body: { expiresAt: "2027-01-31T00:00" } })
    expectError(r, 400)
    expect((await h.call("POST", "/api/v1/tokens", { token: secret, body: { expiresAt: "2027-01-31T00:00:00+02:00" } })).status).toBe(200)
  })
})
