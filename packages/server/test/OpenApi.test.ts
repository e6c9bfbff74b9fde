/**
 * The served OpenAPI document is what client generators and validators read, so it must pass their checks:
 * `redocly lint` with the recommended rules (minus the licence, see redocly.yaml) finds nothing, and the types
 * `openapi-typescript` generates from it have no string alternative for a number (no `"Infinity" | "NaN"`,
 * `limit` a number). Both tools run offline on the document the in-process app serves.
 */
import { expect, layer } from "@effect/vitest"
import { EVENT_KINDS, eventIdentifier } from "@sitehealth/domain/Events"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import openapiTS, { astToString } from "openapi-typescript"
import { OPENAPI_PATH } from "../src/App.ts"
import { MemoryRepos } from "../src/Layers.ts"
import { makeTestApp, START, type TestAppShape } from "./support/TestApp.ts"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const REDOCLY_CLI = join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin/cli.js")

/** The in-process app, the document as GET /api/v1/openapi.json serves it, and a temp file holding it for the CLI. */
class Served extends Context.Service<Served, {
  readonly h: TestAppShape
  readonly doc: Record<string, any>
  readonly file: string
}>()("Served") {
  static layer = Layer.effect(
    Served,
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const h = yield* makeTestApp({}, { repos: MemoryRepos })
      const r = yield* h.raw("GET", OPENAPI_PATH, { token: null })
      expect(r.status, r.text.slice(0, 300)).toBe(200)
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "sitehealth-openapi-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const file = join(dir, "openapi.json")
      yield* Effect.promise(() => writeFile(file, r.text))
      return { h, doc: r.json as Record<string, any>, file }
    })
  )
}

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number }
  readonly problems: ReadonlyArray<{ readonly ruleId: string; readonly severity: string; readonly message: string }>
}

/** `redocly lint --format=json` with the repository's redocly.yaml; it exits 1 when it finds errors. */
const redoclyLint = (file: string) =>
  Effect.callback<LintReport>((resume) => {
    execFile(
      process.execPath,
      [REDOCLY_CLI, "lint", file, "--format=json", "--config", join(ROOT, "redocly.yaml"), "--lint-config=error"],
      // No telemetry and no update check: the test must not need the network.
      { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
      (error, stdout, stderr) => {
        try {
          resume(Effect.succeed(JSON.parse(stdout) as LintReport))
        } catch {
          resume(Effect.die(new Error(`redocly lint gave no report (${error?.message ?? "no error"}): ${stderr}`)))
        }
      }
    )
  })

/** Every schema object in the document, with where it is. */
const schemasOf = (node: unknown, path = "#"): Array<readonly [string, Record<string, any>]> => {
  if (typeof node !== "object" || node === null) return []
  const here: Array<readonly [string, Record<string, any>]> = Array.isArray(node)
    ? []
    : [[path, node as Record<string, any>]]
  return here.concat(Object.entries(node).flatMap(([key, child]) => schemasOf(child, `${path}/${key}`)))
}

const isNumeric = (s: unknown) => typeof s === "object" && s !== null && ["number", "integer"].includes((s as any).type)

layer(Served.layer)("GET /api/v1/openapi.json", (it) => {
  it.effect(
    "passes redocly lint (recommended rules, licence aside) with no error and no warning",
    () =>
      Effect.gen(function*() {
        const { file } = yield* Served
        const report = yield* redoclyLint(file)
        expect(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([])
        expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
      }),
    30_000
  )

  it.effect("documents no number with a string alternative, and limit as an integer 1–100", () =>
    Effect.gen(function*() {
      const { doc } = yield* Served
      const mixed = schemasOf(doc).filter(([, s]) =>
        ["anyOf", "oneOf"].some((k) =>
          Array.isArray(s[k]) && s[k].some(isNumeric) && s[k].some((m: any) => m?.type === "string")
        )
      )
      expect(mixed.map(([where]) => where)).toEqual([])
      const limits = Object.values<any>(doc.paths).flatMap((item) =>
        Object.values<any>(item).flatMap((op) => (op.parameters ?? []).filter((p: any) => p.name === "limit"))
      )
      expect(limits).toHaveLength(5) // listProjects, listSignals, listExpenses, listTokens, listWebhookDeliveries
      for (const p of limits) {
        expect(p).toMatchObject({ in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100 } })
      }
      expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })])
    }))

  it.effect("openapi-typescript generates number types with no string alternative", () =>
    Effect.gen(function*() {
      const { doc } = yield* Served
      const types = astToString(yield* Effect.promise(() => openapiTS(doc as any)))
      expect(types).not.toMatch(/"(?:-?Infinity|NaN)"/)
      // Each list operation's query parameter, generated from the document.
      expect([...types.matchAll(/\blimit\?: ([^;]+);/g)].map((m) => m[1])).toEqual([
        "number",
        "number",
        "number",
        "number",
        "number"
      ])
      // A response figure that used to be `number | "Infinity" | "-Infinity" | "NaN"`.
      expect(types).toMatch(/\bconfidence: number;/)
    }), 30_000)

  it.effect("lists every event kind under OpenAPI 3.1 webhooks, each body a component of the document", () =>
    Effect.gen(function*() {
      const { doc } = yield* Served
      expect(doc.openapi).toMatch(/^3\.1\./)
      expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_KINDS].sort())
      for (const kind of EVENT_KINDS) {
        const ref: string = doc.webhooks[kind].post.requestBody.content["application/json"].schema.$ref
        const name = ref.replace("#/components/schemas/", "")
        expect(name).toBe(eventIdentifier(kind))
        const schema = doc.components.schemas[name]
        expect(schema, kind).toMatchObject({ type: "object", required: expect.arrayContaining(["type", "data"]) })
        expect(schema.properties.type, kind).toMatchObject({ enum: [kind] })
      }
      // The new permissions are documented on their endpoints.
      expect(doc.paths["/api/v1/projects/{id}/webhooks"].post["x-permission"]).toBe("webhooks:write")
      expect(doc.paths["/api/v1/projects/{id}/webhooks"].get["x-permission"]).toBe("webhooks:read")
    }))

  // The document now says integer; what the server accepts stays the decimal text it accepted before.
  it.effect("limit still decodes from decimal digits only, 1 to 100", () =>
    Effect.gen(function*() {
      const { h } = yield* Served
      const { secret } = yield* h.newAccount({ projects: 3 })
      const list = (query: string) => h.raw("GET", `/api/v1/projects?${query}`, { token: secret })
      for (
        const bad of [
          "limit=abc",
          "limit=0",
          "limit=101",
          "limit=1e1",
          "limit=0x10",
          "limit=%205",
          "limit=-1",
          "limit=2.0",
          "limit=",
          "limit=1&limit=2"
        ]
      ) {
        const r = yield* list(bad)
        expect(r.status, `${bad}: ${r.text}`).toBe(400)
        expect(r.json.error.type, bad).toBe("invalid_request")
      }
      for (const [good, size] of [["limit=2", 2], ["limit=002", 2], ["limit=100", 3], ["limit=1", 1]] as const) {
        const r = yield* list(good)
        expect(r.status, `${good}: ${r.text}`).toBe(200)
        expect(r.json.data.projects, good).toHaveLength(size)
      }
    }))
})
