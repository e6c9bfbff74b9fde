/** Every response under /api/v1 is an envelope — success, every error status, and the framework's own failures. */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Envelope", (it) => {
  describe("success envelope", () => {
    it.effect("wraps data in {status:'success', data:{…}} with data always an object", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        for (const path of ["/api/v1/projects", `/api/v1/projects/${projects[0].id}/health`, "/api/v1/tokens"]) {
          const r = yield* h.raw("GET", path, { token: secret })
          expect(r.status).toBe(200)
          expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
          expect(r.json.status).toBe("success")
          expect(r.json.data).toBeTypeOf("object")
          expect(Array.isArray(r.json.data)).toBe(false)
          expect(r.headers.get("content-type")).toContain("application/json")
        }
      }))
  })

  describe("error envelope for each status", () => {
    it.effect("400 for malformed JSON, wrong types, unknown values and unknown fields", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = `/api/v1/projects/${projects[0].id}/expenses`
        expectError(yield* h.raw("POST", path, { token: secret, rawBody: "{not json" }), 400, "invalid_json")
        const wrongType = yield* h.raw("POST", path, {
          token: secret,
          body: { amount: "12", category: "hosting", description: "x", incurredOn: "2026-11-01", recurrence: "monthly" }
        })
        expectError(wrongType, 400, "invalid_request")
        expect(wrongType.json.error.issues.map((i: any) => i.path)).toContain("body.amount")
        const unknownPeriod = yield* h.raw("GET", `/api/v1/projects/${projects[0].id}/analytics?period=5y`, {
          token: secret
        })
        expectError(unknownPeriod, 400, "invalid_request")
        expect(unknownPeriod.json.error.message).toContain("query.period")
        const unknownField = yield* h.raw("POST", "/api/v1/tokens", {
          token: secret,
          body: { permisions: ["seo:read"] }
        })
        expectError(unknownField, 400, "invalid_request")
        expect(unknownField.json.error.issues[0]).toEqual({ path: "body.permisions", message: "Unknown field" })
        expectError(yield* h.raw("POST", path, { token: secret, rawBody: "[]" }), 400)
        expectError(yield* h.raw("POST", path, { token: secret, rawBody: "null" }), 400)
      }))

    it.effect("401 for a missing token, with the exact message", () =>
      Effect.gen(function*() {
        const r = yield* h.api.projects.listProjects({ query: {} }, { token: null })
        expectError(r, 401)
        expect(r.json.error.message).toBe("Invalid or expired token")
      }))

    it.effect("402 with code trial_expired", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        yield* h.endTrial(account.id)
        expectError(yield* h.api.projects.listProjects({ query: {} }, { token: secret }), 402, "trial_expired")
      }))

    it.effect("403, 404 and 409 from handlers", () =>
      Effect.gen(function*() {
        const { account, projects, secret, token } = yield* h.newAccount()
        const readOnly = yield* h.mint(account.id, { permissions: ["projects:read"] })
        expectError(
          yield* h.api.tokens.listTokens({ query: {} }, { token: readOnly.secret }),
          403,
          "missing_permission"
        )
        expectError(
          yield* h.api.projects.getHealth({ params: { id: "prj_doesnotexist" } }, { token: secret }),
          404,
          "not_found"
        )
        expectError(
          yield* h.api.tokens.revokeToken({ params: { id: token.id }, query: { confirm: "true" }, payload: null }, {
            token: secret
          }),
          409,
          "self_revoke"
        )
        expectError(
          yield* h.api.projects.deleteProject({ params: { id: projects[0].id } }, { token: secret }),
          403,
          "dashboard_only"
        )
      }))

    it.effect("413 for an oversized body, whether or not Content-Length is sent", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = `/api/v1/projects/${projects[0].id}/expenses`
        const big = JSON.stringify({ description: "x".repeat(100_000) })
        expectError(yield* h.raw("POST", path, { token: secret, rawBody: big }), 413, "payload_too_large")
        expectError(
          yield* h.raw("POST", path, {
            token: secret,
            rawBody: big,
            headers: { "content-length": String(big.length) }
          }),
          413,
          "payload_too_large"
        )
      }))

    it.effect("415 for a body that is not JSON", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.raw("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
          token: secret,
          rawBody: "amount=1",
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        expectError(r, 415, "unsupported_media_type")
      }))

    it.effect("404 for unknown routes and methods, authenticated or not", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        expectError(yield* h.raw("GET", "/api/v1/nope", { token: secret }), 404, "route_not_found")
        expectError(yield* h.raw("GET", "/api/v2/projects", { token: null }), 404, "route_not_found")
        expectError(yield* h.raw("PUT", "/api/v1/projects", { token: secret }), 404, "route_not_found")
        expectError(yield* h.raw("GET", "/api/v1/projects/x/y/z", { token: secret }), 404, "route_not_found")
      }))

    it.effect("429 carries limit, remaining and reset in the error", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        for (let i = 0; i < 60; i++) yield* h.api.tokens.listTokens({ query: {} }, { token: secret })
        const r = yield* h.api.tokens.listTokens({ query: {} }, { token: secret })
        expect(r.status).toBe(429)
        expect(r.json.status).toBe("error")
        expect(r.json.error).toMatchObject({ code: 429, limit: 60, remaining: 0, type: "rate_limited" })
        expect(Number.isInteger(r.json.error.reset)).toBe(true)
        yield* TestClock.adjust(60_000)
      }))
  })

  describe("strict parsing", () => {
    it.effect("page sizes are plain decimal integers 1–100", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        for (const bad of ["0", "101", "0x10", "1e1", "%201", "-1", "1.5", "abc", ""]) {
          const r = yield* h.raw("GET", `/api/v1/tokens?limit=${bad}`, { token: secret })
          expect(r.status, `limit=${bad}`).toBe(400)
        }
        expect((yield* h.api.tokens.listTokens({ query: { limit: 100 } }, { token: secret })).status).toBe(200)
      }))

    it.effect("paths are case-sensitive", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        expect((yield* h.raw("GET", "/API/V1/projects", { token: secret })).status).toBe(404)
      }))
  })

  describe("validation reports every problem", () => {
    it.effect("a body with several invalid fields lists them all in issues", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.raw("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
          token: secret,
          body: { amount: -1, category: "nope", description: "", incurredOn: "2026-02-30", recurrence: "weekly" }
        })
        expectError(r, 400, "invalid_request")
        const paths = r.json.error.issues.map((i: any) => i.path)
        for (const field of ["amount", "category", "description", "incurredOn", "recurrence"]) {
          expect(paths, field).toContain(`body.${field}`)
        }
      }))

    it.effect("an expiry without a time zone is refused rather than read in the server's zone", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        const r = yield* h.api.tokens.createToken({ payload: { expiresAt: "2027-01-31T00:00" } }, { token: secret })
        expectError(r, 400)
        expect(
          (yield* h.api.tokens.createToken({ payload: { expiresAt: "2027-01-31T00:00:00+02:00" } }, { token: secret }))
            .status
        ).toBe(200)
      }))
  })
})
