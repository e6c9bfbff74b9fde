/**
 * Outside the contract's handlers: liveness and readiness probes, the OpenAPI document, and the 404 every
 * unknown route or method gets, all in the envelope where they are errors.
 */
import { describe, expect, layer } from "@effect/vitest"
import { endpointsOf } from "@sitehealth/domain/Api"
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { WEB_DIST } from "../../src/http/Static.ts"
import { type CallResult, h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("System", (it) => {
  const expect404 = (r: CallResult) => {
    expect(r.status, r.text).toBe(404)
    expect(r.headers.get("content-type")).toContain("application/json")
    expect(r.json, r.text).toBeTypeOf("object")
    expect(Object.keys(r.json).sort()).toEqual(["error", "status"])
    expect(r.json.status).toBe("error")
    expect(r.json.error.code).toBe(404)
    expect(r.json.error.message).toBeTypeOf("string")
    expect(r.json.error.message.length).toBeGreaterThan(0)
    expect(r.json.error.type).toBeTypeOf("string")
  }

  /** The contract's routes, read from the contract itself, as OpenAPI templates: [method, path] with {id}, {webhookId}… */
  const contractRoutes = (): Array<readonly [string, string]> =>
    endpointsOf().map(({ endpoint }) =>
      [endpoint.method.toLowerCase(), endpoint.path.replace(/:(\w+)/g, "{$1}")] as const
    )

  describe("probes", () => {
    it.effect("GET /healthz answers 200 without a token", () =>
      Effect.gen(function*() {
        const r = yield* h.raw("GET", "/healthz", { token: null })
        expect(r.status, r.text).toBe(200)
        expect(r.headers.get("content-type")).toContain("application/json")
        expect(r.json).toEqual({ status: "ok" })
      }))

    it.effect("GET /readyz answers 200 without a token when the store answers, with its checks", () =>
      Effect.gen(function*() {
        const r = yield* h.raw("GET", "/readyz", { token: null })
        expect(r.status, r.text).toBe(200)
        // No worker runs beside this app: `degraded` (worker missing) unless some worker beat in this database.
        expect(["ready", "degraded"]).toContain(r.json.status)
        expect(r.json.checks.database).toMatchObject({ status: "ok", latencyMs: expect.any(Number) })
        expect(["ok", "stale", "missing"]).toContain(r.json.checks.worker.status)
        expect(r.json.checks.redis).toBeUndefined() // the harness builds its store without AppConfig: no Redis check
      }))

    it.effect("probes ignore a bad token instead of answering 401", () =>
      Effect.gen(function*() {
        expect((yield* h.raw("GET", "/healthz", { token: "svc_not_a_token" })).status).toBe(200)
        expect((yield* h.raw("GET", "/readyz", { token: "svc_not_a_token" })).status).toBe(200)
      }))
  })

  // The served document, fetched once for the tests below.
  class OpenApiDoc extends Context.Service<OpenApiDoc, any>()("test/OpenApiDoc") {}
  const OpenApiDocLive = Layer.effect(
    OpenApiDoc,
    Effect.gen(function*() {
      const r = yield* h.raw("GET", "/api/v1/openapi.json", { token: null })
      expect(r.status, r.text.slice(0, 500)).toBe(200)
      expect(r.headers.get("content-type")).toContain("application/json")
      return r.json
    })
  )

  it.layer(OpenApiDocLive)("GET /api/v1/openapi.json", (it) => {
    it.effect("is an OpenAPI 3 document with info and bearer security", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        expect(doc).toBeTypeOf("object")
        expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/)
        expect(doc.info.title).toBeTypeOf("string")
        expect(doc.info.version).toBeTypeOf("string")
        const schemes = Object.values(doc.components.securitySchemes ?? {}) as Array<any>
        expect(schemes).toContainEqual(
          expect.objectContaining({ type: "http", scheme: expect.stringMatching(/^bearer$/i) })
        )
      }))

    it.effect("documents every route of the contract, and no other", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        const expected = contractRoutes()
        expect(expected).toHaveLength(32) // the spec's 20, the 8 of webhooks (docs/alerts.md) and the 4 of annotations
        for (const [method, path] of expected) {
          expect(doc.paths[path], `${path} is missing`).toBeTypeOf("object")
          expect(doc.paths[path][method], `${method.toUpperCase()} ${path} is missing`).toBeTypeOf("object")
        }
        const documented = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
          Object.keys(item)
            .filter((k) => ["get", "post", "put", "patch", "delete", "head", "options"].includes(k))
            .map((method) => `${method} ${path}`)
        )
        expect(documented.sort()).toEqual(expected.map(([m, p]) => `${m} ${p}`).sort())
      }))

    it.effect("requires the bearer token on every operation and names each one", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        const ids = new Set<string>()
        for (const [method, path] of contractRoutes()) {
          const op = doc.paths[path][method]
          const security = op.security ?? doc.security
          expect(security, `${method} ${path}`).toEqual(expect.arrayContaining([expect.any(Object)]))
          expect(security.some((s: any) => Object.keys(s).length > 0), `${method} ${path}`).toBe(true)
          expect(op.operationId).toBeTypeOf("string")
          ids.add(op.operationId)
        }
        expect(ids.size).toBe(32)
      }))

    it.effect("documents the success statuses: 201 for created expenses, 202 for a queued sync", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        expect(Object.keys(doc.paths["/api/v1/projects/{id}/expenses"].post.responses)).toContain("201")
        expect(Object.keys(doc.paths["/api/v1/projects/{id}/integrations/{provider}/sync"].post.responses)).toContain(
          "202"
        )
        expect(Object.keys(doc.paths["/api/v1/projects/{id}/health"].get.responses)).toContain("200")
      }))

    it.effect("documents the error envelope {status:'error', error:{code, message, type}} in its components", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        const resolve = (schema: any): any => {
          let s = schema
          for (let i = 0; i < 10 && s?.$ref !== undefined; i++) {
            const name = s.$ref.replace("#/components/schemas/", "")
            s = doc.components.schemas[name]
          }
          return s
        }
        const errorSchemaOf = (status: string) => {
          const response = doc.paths["/api/v1/projects/{id}/expenses"].post.responses[status]
          expect(response, `no ${status} response`).toBeTypeOf("object")
          expect(response.content["application/json"].schema.$ref).toMatch(/^#\/components\/schemas\//)
          return resolve(response.content["application/json"].schema)
        }
        for (
          const [status, code] of [
            ["400", 400],
            ["401", 401],
            ["402", "trial_expired"],
            ["403", 403],
            ["404", 404],
            ["429", 429],
            ["500", 500]
          ] as const
        ) {
          const schema = errorSchemaOf(status)
          expect(schema.type).toBe("object")
          expect(schema.required).toEqual(expect.arrayContaining(["status", "error"]))
          expect(resolve(schema.properties.status).enum).toEqual(["error"])
          const error = resolve(schema.properties.error)
          expect(error.required, status).toEqual(expect.arrayContaining(["code", "message", "type"]))
          expect(resolve(error.properties.code).enum, status).toEqual([code])
          expect(resolve(error.properties.message).type).toBe("string")
        }
        const rateLimited = resolve(errorSchemaOf("429").properties.error)
        expect(rateLimited.required).toEqual(expect.arrayContaining(["limit", "remaining", "reset"]))
        const badRequest = resolve(errorSchemaOf("400").properties.error)
        expect(Object.keys(badRequest.properties)).toContain("issues")
      }))

    it.effect("documents the allowed values of period, dimension and severity", () =>
      Effect.gen(function*() {
        const doc = yield* OpenApiDoc
        const param = (path: string, name: string) =>
          (doc.paths[path].get.parameters as Array<any>).find((p) => p.name === name && p.in === "query")
        const enumOf = (p: any): Array<string> => {
          let s = p.schema
          if (s.$ref) s = doc.components.schemas[s.$ref.replace("#/components/schemas/", "")]
          return s.enum
        }
        expect(enumOf(param("/api/v1/projects/{id}/analytics", "period"))).toEqual([
          "today",
          "yesterday",
          "7d",
          "30d",
          "3m",
          "12m",
          "all"
        ])
        expect(enumOf(param("/api/v1/projects/{id}/signals", "dimension"))).toEqual([
          "traffic",
          "revenue",
          "retention",
          "seo",
          "profitability"
        ])
        expect(enumOf(param("/api/v1/projects/{id}/signals", "severity"))).toEqual(["info", "warning", "critical"])
      }))
  })

  describe("unknown routes and methods", () => {
    it.effect("answer 404 in the error envelope with code 404, with or without a token", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        for (const token of [secret, null]) {
          expect404(yield* h.raw("GET", "/api/v1/nope", { token }))
          expect404(yield* h.raw("GET", "/nope", { token }))
          expect404(yield* h.raw("PUT", "/api/v1/projects", { token }))
          expect404(yield* h.raw("PATCH", "/api/v1/tokens", { token }))
          expect404(yield* h.raw("POST", "/healthz", { token }))
          // `/` stays the envelope's 404 for a client asking for JSON alone (everyone else gets the app, below).
          expect404(yield* h.raw("GET", "/", { token, headers: { accept: "application/json" } }))
          expect((yield* h.raw("HEAD", "/", { token, headers: { accept: "application/json" } })).status).toBe(404)
        }
      }))

    it.effect("`/` is the app for a client that does not ask for JSON alone (curl, by GET or HEAD), not a 404", () =>
      Effect.gen(function*() {
        // The dashboard's build, or the 503 saying how to make one when this checkout has none.
        const built = Fs.existsSync(Path.join(WEB_DIST, "index.html"))
        for (const [method, accept] of [["GET", undefined], ["HEAD", "*/*"], ["GET", "text/html"]] as const) {
          const r = yield* h.raw(method, "/", { token: null, headers: accept === undefined ? {} : { accept } })
          expect(r.status, `${method} / Accept ${accept}`).toBe(built ? 200 : 503)
          if (built) expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8")
        }
      }))

    it.effect("a path with a malformed percent-escape is a client error in the envelope (404 or 400), never a 500", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        for (
          const [method, path, token] of [
            ["GET", "/%FF", null],
            ["GET", "/api/v1/projects/%FF/health", secret],
            ["DELETE", `/api/v1/projects/${projects[0].id}/expenses/exp_%E0%A4%A`, secret]
          ] as const
        ) {
          const r = yield* h.raw(method, path, { token })
          expect(r.status, `${method} ${path}: ${r.text}`).not.toBe(500)
          expect([400, 404], `${method} ${path}: ${r.text}`).toContain(r.status)
          expect(r.json).toMatchObject({ status: "error", error: { code: r.status } })
        }
      }))

    it.effect("a wrong method on a known route is 404, not the route's own answer", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.raw("PUT", `/api/v1/projects/${projects[0].id}/expenses`, { token: secret, body: {} })
        expect404(r)
        expect(r.json.error.type).toBe("route_not_found")
      }))
  })

  describe("OpenAPI operation metadata", () => {
    it.effect("every operation names its permission, kind and confirm gate as its Operation annotation says", () =>
      Effect.gen(function*() {
        const { operationByName, operations } = yield* Effect.promise(() => import("@sitehealth/domain/Api"))
        const spec = (yield* h.raw("GET", "/api/v1/openapi.json", { token: null })).json
        const seen: Array<string> = []
        for (const methods of Object.values<any>(spec.paths)) {
          for (const operation of Object.values<any>(methods)) {
            const name = String(operation.operationId).split(".").pop()!
            const expected = operationByName(name)!
            expect(expected, name).toBeDefined()
            expect(operation["x-permission"]).toBe(expected.permission)
            expect(operation["x-kind"]).toBe(expected.kind)
            expect(operation["x-confirm-gate"]).toBe(expected.confirmGate)
            expect(operation.summary).toBe(expected.summary)
            seen.push(name)
          }
        }
        expect(seen.sort()).toEqual(operations.map(([n]) => n).sort())
      }))
  })
})
