/**
 * GET /tokens/current: the calling token's own metadata (docs/api.md §7.20) — for any valid token, whatever
 * its permissions, never a secret; the same shape as an entry of GET /tokens; the route does not collide
 * with DELETE /tokens/:id.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("CurrentToken", (it) => {
  describe("GET /tokens/current", () => {
    it.effect("answers the caller's own metadata, exactly its entry in GET /tokens, and no secret", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        const narrow = yield* h.mint(account.id, { projects: [projects[1].id], permissions: ["seo:read"] })
        const r = yield* h.api.tokens.getCurrentToken({}, { token: narrow.secret })
        expect(r.status, r.text).toBe(200)
        const data = r.json.data
        expect(data).toMatchObject({
          id: narrow.token.id,
          accountId: account.id,
          projects: [projects[1].id],
          permissions: ["seo:read"],
          prefix: `svc_…${narrow.secret.slice(-4)}`,
          status: "active",
          revokedAt: null
        })
        expect(r.text).not.toContain(narrow.secret)
        const listed = (yield* h.api.tokens.listTokens({ query: { limit: 100 } }, { token: secret })).json.data.tokens
        const entry = listed.find((t: any) => t.id === narrow.token.id)
        // lastUsedAt is written in the background after each request: compare everything else.
        expect({ ...data, lastUsedAt: null }).toEqual({ ...entry, lastUsedAt: null })
      }))

    it.effect("needs no permission: a token without tokens:read reads itself, but still not GET /tokens", () =>
      Effect.gen(function*() {
        const { account } = yield* h.newAccount()
        const only = yield* h.mint(account.id, { permissions: ["analytics:read"] })
        const me = yield* h.raw("GET", "/api/v1/tokens/current", { token: only.secret })
        expect(me.status, me.text).toBe(200)
        expect(me.json.data.permissions).toEqual(["analytics:read"])
        expectError(yield* h.raw("GET", "/api/v1/tokens", { token: only.secret }), 403, "missing_permission")
      }))

    it.effect("401 without a valid token; counts against the rate limit like any request", () =>
      Effect.gen(function*() {
        expectError(yield* h.raw("GET", "/api/v1/tokens/current", { token: null }), 401, "missing_token")
        const { secret } = yield* h.newAccount()
        const r = yield* h.raw("GET", "/api/v1/tokens/current", { token: secret })
        expect(r.status).toBe(200)
        expect(r.headers.get("x-ratelimit-limit")).not.toBeNull()
      }))

    it.effect("`current` is not a token id: DELETE /tokens/current is the revoke route (404), GET /tokens/tok_x no route", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        expectError(
          yield* h.raw("DELETE", "/api/v1/tokens/current", { token: secret, body: { confirm: true } }),
          404,
          "not_found"
        )
        const other = yield* h.raw("GET", "/api/v1/tokens/tok_x", { token: secret })
        expect(other.status).toBe(404)
        // The caller's own token is untouched.
        expect((yield* h.raw("GET", "/api/v1/tokens/current", { token: secret })).json.data.status).toBe("active")
      }))
  })
})
