/** Minting and revoking behind the confirmation gate; no escalation; no self-revocation. */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Tokens", (it) => {
  const tokenCount = (secret: string) =>
    Effect.gen(function*() {
      return (yield* h.api.tokens.listTokens({ query: { limit: 100 } }, { token: secret })).json.data.tokens.length
    })

  describe("minting", () => {
    it.effect("without confirm: a 200 preview, no secret, nothing stored", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        for (const body of [undefined, {}, { confirm: false }, { name: "x" }]) {
          const r = yield* h.raw("POST", "/api/v1/tokens", { token: secret, ...(body ? { body } : {}) })
          expect(r.status).toBe(200)
          expect(r.json.data.preview).toBe(true)
          expect(r.json.data.token).toMatchObject({ projects: null, expiresAt: null })
          expect(r.text).not.toMatch(/svc_[0-9A-Za-z]{20}/)
        }
        expect(yield* tokenCount(secret)).toBe(1)
      }))

    it.effect("confirm must be the boolean true", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        const r = yield* h.raw("POST", "/api/v1/tokens", { token: secret, body: { confirm: "true" } })
        expect(r.status).toBe(400)
        expect(yield* tokenCount(secret)).toBe(1)
      }))

    it.effect("with confirm: 201, the secret once, metadata, and the new token works within its limits", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        const r = yield* h.api.tokens.createToken({
          payload: {
            confirm: true,
            name: "reporting",
            projects: [projects[0].id],
            permissions: ["projects:read", "seo:read"]
          }
        }, { token: secret })
        expect(r.status).toBe(201)
        const { secret: newSecret, token } = r.json.data
        expect(newSecret).toMatch(/^svc_/)
        expect(token).toMatchObject({
          name: "reporting",
          projects: [projects[0].id],
          permissions: ["projects:read", "seo:read"],
          status: "active",
          lastUsedAt: null,
          expiresAt: null,
          revokedAt: null
        })
        expect(token.id).toMatch(/^tok_[0-9A-Za-z]{16}$/)
        expect(token.prefix).toBe(`svc_…${newSecret.slice(-4)}`)
        expect(
          (yield* h.api.reports.getSeo({ params: { id: projects[0].id }, query: {} }, { token: newSecret })).status
        ).toBe(200)
        expect(
          (yield* h.api.reports.getSeo({ params: { id: projects[1].id }, query: {} }, { token: newSecret })).status
        ).toBe(403)
        expect(
          (yield* h.api.reports.getRevenue({ params: { id: projects[0].id }, query: {} }, { token: newSecret })).status
        ).toBe(403)
        // lastUsedAt is written in the background (at most once a minute), so give it a moment.
        let mine: any
        for (let i = 0; i < 50 && !mine?.lastUsedAt; i++) {
          yield* TestClock.withLive(Effect.sleep("20 millis"))
          const listed = (yield* h.api.tokens.listTokens({ query: {} }, { token: secret })).json.data.tokens
          mine = listed.find((t: any) => t.id === token.id)
        }
        expect(mine.lastUsedAt).toBe(new Date(yield* h.now).toISOString())
        expect(account.id).toBeTruthy()
      }))

    it.effect("omitted projects and permissions default to the caller's own", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount({ projects: 2 })
        const caller = yield* h.mint(account.id, {
          projects: [projects[1].id],
          permissions: ["projects:read", "tokens:write", "tokens:read"]
        })
        const r = yield* h.api.tokens.createToken({ payload: { confirm: true } }, { token: caller.secret })
        expect(r.status).toBe(201)
        expect(r.json.data.token.projects).toEqual([projects[1].id])
        expect(r.json.data.token.permissions).toEqual(["projects:read", "tokens:write", "tokens:read"])
      }))

    it.effect("no escalation: not more projects, permissions or lifetime than the caller, even in preview", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        const expiresAt = new Date((yield* h.now) + 3_600_000)
        const caller = yield* h.mint(account.id, {
          projects: [projects[0].id],
          permissions: ["projects:read", "tokens:write", "tokens:read"],
          expiresAt
        })
        const before = yield* tokenCount(secret)
        for (
          const [body, what] of [
            [{ projects: [projects[1].id] }, "other project"],
            [{ projects: null }, "every project"],
            [{ permissions: ["revenue:read"] }, "missing permission"],
            [{ expiresAt: null }, "never expiring"],
            [{ expiresAt: new Date(expiresAt.getTime() + 1000).toISOString() }, "outliving the caller"]
          ] as const
        ) {
          for (const confirm of [false, true]) {
            const r = yield* h.api.tokens.createToken({ payload: { ...body, confirm } }, { token: caller.secret })
            expect(r.status, what).toBe(403)
            expect(r.json.error.type).toBe("escalation")
          }
        }
        expect(yield* tokenCount(secret)).toBe(before)
      }))

    it.effect("rejects unknown projects (404), unknown permissions and bad expiries (400)", () =>
      Effect.gen(function*() {
        const other = yield* h.newAccount()
        const { secret } = yield* h.newAccount()
        expect(
          (yield* h.api.tokens.createToken({ payload: { projects: [other.projects[0].id] } }, { token: secret })).status
        ).toBe(404)
        expect((yield* h.raw("POST", "/api/v1/tokens", { token: secret, body: { permissions: ["admin"] } })).status)
          .toBe(400)
        expect((yield* h.raw("POST", "/api/v1/tokens", { token: secret, body: { permissions: [] } })).status).toBe(400)
        expect((yield* h.raw("POST", "/api/v1/tokens", { token: secret, body: { expiresAt: "tomorrow" } })).status)
          .toBe(400)
        const past = new Date((yield* h.now) - 1000).toISOString()
        const r = yield* h.api.tokens.createToken({ payload: { expiresAt: past, confirm: true } }, { token: secret })
        expect(r.status).toBe(400)
        expect(r.json.error.message).toContain("future")
      }))
  })

  describe("revoking", () => {
    it.effect("without confirmation: a preview and the token keeps working", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        const victim = yield* h.mint(account.id)
        for (const opts of [{}, { body: { confirm: false } }, { body: {} }]) {
          const r = yield* h.raw("DELETE", `/api/v1/tokens/${victim.token.id}`, { token: secret, ...opts })
          expect(r.status).toBe(200)
          expect(r.json.data).toMatchObject({ preview: true, token: { id: victim.token.id, status: "active" } })
        }
        const q = yield* h.api.tokens.revokeToken({
          params: { id: victim.token.id },
          query: { confirm: "false" },
          payload: null
        }, { token: secret })
        expect(q.json.data.preview).toBe(true)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: victim.secret })).status).toBe(200)
      }))

    it.effect("confirmed by body or by query: revoked at once", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        const a = yield* h.mint(account.id)
        const b = yield* h.mint(account.id)
        const byBody = yield* h.api.tokens.revokeToken({
          params: { id: a.token.id },
          query: {},
          payload: { confirm: true }
        }, { token: secret })
        expect(byBody.status).toBe(200)
        expect(byBody.json.data).toMatchObject({ revoked: true, token: { id: a.token.id, status: "revoked" } })
        const byQuery = yield* h.api.tokens.revokeToken({
          params: { id: b.token.id },
          query: { confirm: "true" },
          payload: null
        }, { token: secret })
        expect(byQuery.json.data.revoked).toBe(true)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: a.secret })).status).toBe(401)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: b.secret })).status).toBe(401)
        const listed = (yield* h.api.tokens.listTokens({ query: {} }, { token: secret })).json.data.tokens
        expect(listed.find((t: any) => t.id === a.token.id).status).toBe("revoked")
      }))

    it.effect("a token cannot revoke itself: 409, confirmed or not, and it keeps working", () =>
      Effect.gen(function*() {
        const { secret, token } = yield* h.newAccount()
        for (const opts of [{}, { body: { confirm: true } }]) {
          const r = yield* h.raw("DELETE", `/api/v1/tokens/${token.id}`, { token: secret, ...opts })
          expect(r.status).toBe(409)
          expect(r.json.error.type).toBe("self_revoke")
        }
        expect((yield* h.raw("GET", `/api/v1/tokens/${token.id}?confirm=true`, { token: secret })).status).toBe(404)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(200)
      }))

    it.effect("no escalation: a narrower token cannot revoke a broader one", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        const narrow = yield* h.mint(account.id, {
          projects: [projects[0].id],
          permissions: ["tokens:write", "projects:read"]
        })
        const broad = yield* h.mint(account.id)
        const otherProject = yield* h.mint(account.id, { projects: [projects[1].id], permissions: ["projects:read"] })
        for (const target of [broad, otherProject]) {
          const r = yield* h.api.tokens.revokeToken({
            params: { id: target.token.id },
            query: { confirm: "true" },
            payload: null
          }, { token: narrow.secret })
          expect(r.status).toBe(403)
          expect(r.json.error.type).toBe("escalation")
          expect((yield* h.api.projects.listProjects({ query: {} }, { token: target.secret })).status).toBe(200)
        }
        const peer = yield* h.mint(account.id, { projects: [projects[0].id], permissions: ["projects:read"] })
        const ok = yield* h.api.tokens.revokeToken({
          params: { id: peer.token.id },
          query: { confirm: "true" },
          payload: null
        }, { token: narrow.secret })
        expect(ok.status).toBe(200)
        expect(secret).toBeTruthy()
      }))

    it.effect("unknown tokens and other accounts' tokens are 404", () =>
      Effect.gen(function*() {
        const a = yield* h.newAccount()
        const b = yield* h.newAccount()
        expect(
          (yield* h.api.tokens.revokeToken({ params: { id: "tok_nope" }, query: { confirm: "true" }, payload: null }, {
            token: a.secret
          })).status
        ).toBe(404)
        const r = yield* h.api.tokens.revokeToken({
          params: { id: b.token.id },
          query: { confirm: "true" },
          payload: null
        }, { token: a.secret })
        expect(r.status).toBe(404)
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: b.secret })).status).toBe(200)
      }))
  })

  describe("listing", () => {
    it.effect("metadata only, newest first, paginated with a cursor", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        for (let i = 0; i < 3; i++) {
          yield* TestClock.adjust(1)
          yield* h.mint(account.id)
        }
        const seen: Array<string> = []
        let cursor: string | null = null
        do {
          const r: any = yield* h.raw("GET", `/api/v1/tokens?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
            token: secret
          })
          expect(r.status).toBe(200)
          expect(r.json.data.tokens.length).toBeLessThanOrEqual(2)
          for (const t of r.json.data.tokens) {
            expect(Object.keys(t).sort()).toEqual(
              [
                "accountId",
                "createdAt",
                "expiresAt",
                "id",
                "lastUsedAt",
                "name",
                "permissions",
                "prefix",
                "projects",
                "revokedAt",
                "status"
              ]
            )
            seen.push(t.id)
          }
          cursor = r.json.data.nextCursor
        } while (cursor !== null)
        expect(seen).toHaveLength(4)
        expect(new Set(seen).size).toBe(4)
      }))

    it.effect("a token scoped to some projects lists only the tokens whose scope is within its own, paginated over them", () =>
      Effect.gen(function*() {
        const { account, projects, secret, token: accountWide } = yield* h.newAccount({ projects: 3 })
        const [p0, p1, p2] = projects.map((p) => p.id)
        const lister = yield* h.mint(account.id, { projects: [p0, p1], permissions: ["tokens:read"] })
        const within: Array<string> = [lister.token.id]
        for (const scope of [[p0], [p1], [p0, p1]]) {
          yield* TestClock.adjust(1)
          within.push((yield* h.mint(account.id, { projects: scope, permissions: ["projects:read"] })).token.id)
        }
        yield* TestClock.adjust(1)
        const outside = [
          (yield* h.mint(account.id, { projects: [p2], permissions: ["projects:read"] })).token.id,
          (yield* h.mint(account.id, { projects: [p0, p2], permissions: ["projects:read"] })).token.id,
          (yield* h.mint(account.id)).token.id // account-wide
        ]
        const listAll = (secret: string) =>
          Effect.gen(function*() {
            const seen: Array<{ id: string; projects: Array<string> | null }> = []
            let cursor: string | null = null
            do {
              const r: any = yield* h.raw("GET", `/api/v1/tokens?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
                token: secret
              })
              expect(r.status, r.text).toBe(200)
              seen.push(...r.json.data.tokens)
              cursor = r.json.data.nextCursor
            } while (cursor !== null)
            return seen
          })
        const scoped = yield* listAll(lister.secret)
        expect(scoped.map((t) => t.id).sort()).toEqual([...within].sort())
        expect(scoped.every((t) => t.projects !== null && t.projects.every((p) => p === p0 || p === p1))).toBe(true)
        // An account-wide token still sees every token of the account.
        const all = (yield* listAll(secret)).map((t) => t.id)
        expect([...within, ...outside, accountWide.id].every((id) => all.includes(id))).toBe(true)
      }))
  })
})
