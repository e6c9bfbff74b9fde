/** With the database unreachable: 503 in the envelope (retry later), readiness says so, liveness does not. */
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgLayer } from "../../src/db/Database.ts"
import { SqlRepos } from "../../src/Layers.ts"
import { generateSecret } from "../../src/tokens/TokenSecret.ts"
import { makeHarness, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  // Port 1 on loopback: nothing listens, every connection is refused.
  h = await makeHarness({}, { repos: SqlRepos.pipe(Layer.provideMerge(pgLayer("postgres://u:p@127.0.0.1:1/none"))) })
})
afterAll(() => h.close())

describe("database unavailable", () => {
  it("answers 503 unavailable, not 500, and leaks nothing", async () => {
    const r = await h.call("GET", "/api/v1/projects", { token: generateSecret() })
    expect(r.status).toBe(503)
    expect(r.json).toEqual({
      status: "error",
      error: { code: 503, message: "The database is unavailable right now; retry shortly", type: "unavailable" }
    })
    expect(r.text).not.toContain("127.0.0.1")
  })

  it("a malformed token is still 401: it never needed the database", async () => {
    expect((await h.call("GET", "/api/v1/projects", { token: "svc_nope" })).status).toBe(401)
  })

  it("readiness fails, liveness holds", async () => {
    expect((await h.call("GET", "/readyz", { token: null })).status).toBe(503)
    expect((await h.call("GET", "/healthz", { token: null })).status).toBe(200)
  })
})
