/** With the database unreachable: 503 in the envelope (retry later), readiness says so, liveness does not. */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlRepos } from "../../src/Layers.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { generateSecret } from "../../src/store/TokenSecret.ts"
import { h, TestApp } from "../support/TestApp.ts"

// Port 1 on loopback: nothing listens, every connection is refused.
layer(TestApp.layer({}, { repos: SqlRepos.pipe(Layer.provideMerge(pgLayer("postgres://u:p@127.0.0.1:1/none"))) }))(
  "database unavailable",
  (it) => {
    it.effect("answers 503 unavailable, not 500, and leaks nothing", () =>
      Effect.gen(function*() {
        const r = yield* h.api.projects.listProjects({ query: {} }, { token: generateSecret() })
        expect(r.status).toBe(503)
        expect(r.json).toEqual({
          status: "error",
          error: { code: 503, message: "The database is unavailable right now; retry shortly", type: "unavailable" }
        })
        expect(r.text).not.toContain("127.0.0.1")
      }))

    it.effect("a malformed token is still 401: it never needed the database", () =>
      Effect.gen(function*() {
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: "svc_nope" })).status).toBe(401)
      }))

    it.effect("readiness fails, liveness holds", () =>
      Effect.gen(function*() {
        expect((yield* h.raw("GET", "/readyz", { token: null })).status).toBe(503)
        expect((yield* h.raw("GET", "/healthz", { token: null })).status).toBe(200)
      }))
  }
)
