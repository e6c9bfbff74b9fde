/**
 * Operability (issue 9): one JSON log line per request, X-Request-Id on every response and in 500 bodies, and
 * GET /metrics in the Prometheus text format, protected by METRICS_TOKEN — with no secret in either.
 *
 * The app runs with the server's own logging (LOG_FORMAT=json) by handing the harness repositories that carry
 * the logging layer too: the harness provides whatever they build to the app, as main.ts provides it to the
 * whole program.
 */
import { describe, expect, inject, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { ExpensesRepo } from "../../src/expenses/ExpensesRepo.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import { MemoryRepos, SqlRepos } from "../../src/Layers.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { flushLogs, loggingLayer } from "../../src/platform/Logging.ts"
import { generateSecret } from "../../src/store/TokenSecret.ts"
import { TokensRepo } from "../../src/tokens/TokensRepo.ts"
import { drainSyncs } from "../../src/worker/SyncRunner.ts"
import { makeFakeConnector, runnerLayer, SECRET, TEST_KEY } from "../support/SyncFakes.ts"
import { h, makeTestApp, store, TestApp, type TestAppShape } from "../support/TestApp.ts"

const METRICS_TOKEN = "metrics-token-0123456789abcdef"

const baseRepos = (): Layer.Layer<any, any> =>
  store === "memory" ? MemoryRepos : SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl"))))

const withJsonLogs = (repos: Layer.Layer<any, any>) =>
  Layer.merge(repos, loggingLayer({ logFormat: "json", logLevel: "info" }))

/** Request lines written outside `captured` below are dropped: they would only fill the test output. */
const stdoutWrite = process.stdout.write
const quietLogs = () => {
  const original = process.stdout.write.bind(process.stdout)
  process.stdout.write =
    ((chunk: any, ...rest: Array<any>) =>
      String(chunk).startsWith("{\"time\":") ? true : original(chunk, ...rest)) as any
}

/** A second app, with /metrics open (no metrics token). */
class OpenApp extends Context.Service<OpenApp, TestAppShape>()("test/OpenApp") {}

const QuietLogs = Layer.effectDiscard(
  Effect.acquireRelease(Effect.sync(quietLogs), () => Effect.sync(() => void (process.stdout.write = stdoutWrite)))
)

// A small budget, so that a 429 takes a few requests; every test uses its own accounts and tokens.
const Apps = Layer.mergeAll(
  TestApp.layer({ rateLimit: 5, metricsToken: Redacted.make(METRICS_TOKEN) }, { repos: withJsonLogs(baseRepos()) }),
  Layer.effect(OpenApp, makeTestApp({ metricsToken: null }, { repos: withJsonLogs(baseRepos()) }))
).pipe(Layer.provideMerge(QuietLogs))

/** Everything written to stdout, stderr or the console while `f` runs. */
const captured = <A, E, R>(f: () => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    flushLogs() // lines of earlier requests still buffered (platform/Logging.ts) are not this capture's
    const written: Array<string> = []
    const capture = (stream: NodeJS.WriteStream) => {
      const original = stream.write.bind(stream)
      stream.write = ((chunk: any, ..._rest: Array<any>) => {
        written.push(String(chunk))
        return true
      }) as any
      return () => void (stream.write = original as any)
    }
    const restore = [capture(process.stdout), capture(process.stderr)]
    const origLog = console.log, origErr = console.error, origWarn = console.warn, origInfo = console.info
    console.log =
      console.error =
      console.warn =
      console.info =
        (...args: Array<unknown>) => void written.push(args.map(String).join(" "))
    try {
      const result = yield* f()
      flushLogs()
      return { result, output: written.join("") }
    } finally {
      restore.forEach((r) => r())
      console.log = origLog
      console.error = origErr
      console.warn = origWarn
      console.info = origInfo
    }
  })

const jsonLines = (output: string): Array<Record<string, unknown>> =>
  output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))

const requestLines = (output: string) => jsonLines(output).filter((l) => l.msg === "request")

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

// --- Prometheus text ----------------------------------------------------------------------------------------

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g

/** Parses the text format 0.0.4 strictly: a line that is neither a comment nor a sample fails the test. */
const parseMetrics = (text: string): Array<Sample> => {
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    if (line.startsWith("#")) {
      expect(line, "comment line").toMatch(/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* \S/)
      continue
    }
    const m = SAMPLE_LINE.exec(line)
    expect(m, `sample line: ${line}`).not.toBeNull()
    const labels: Record<string, string> = {}
    for (const l of (m![2] ?? "").matchAll(LABEL)) labels[l[1]] = l[2]
    const value = m![3] === "+Inf" ? Infinity : Number(m![3])
    expect(Number.isNaN(value), `value of ${line}`).toBe(false)
    samples.push({ name: m![1], labels, value })
  }
  return samples
}

const sampleValue = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Record<string, string> = {}
): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value

const scrape = () =>
  Effect.gen(function*() {
    const r = yield* h.raw("GET", "/metrics", { token: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(r.status, r.text).toBe(200)
    expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    return { text: r.text, samples: parseMetrics(r.text) }
  })

const requestsTotal = (samples: ReadonlyArray<Sample>, route: string, method: string, status: number) =>
  sampleValue(samples, "http_requests_total", { route, method, status: String(status) }) ?? 0

// --- Tests --------------------------------------------------------------------------------------------------

layer(Apps)("Observability", (it) => {
  describe("request log", () => {
    it.effect("writes one JSON line per request: method, route template, status, duration, token, project, request id", () =>
      Effect.gen(function*() {
        const { projects, secret, token } = yield* h.newAccount()
        const project = projects[0].id
        const { output, result } = yield* captured(() =>
          h.api.projects.getHealth({ params: { id: project } }, { token: secret })
        )
        expect(result.status, result.text).toBe(200)
        const lines = requestLines(output)
        expect(lines).toHaveLength(1)
        const [line] = lines
        expect(line).toEqual({
          time: expect.any(String),
          level: "info",
          msg: "request",
          requestId: result.headers.get("x-request-id"),
          method: "GET",
          route: "/api/v1/projects/:id/health",
          status: 200,
          durationMs: expect.any(Number),
          tokenId: token.id,
          projectId: project
        })
        expect(line.durationMs as number).toBeGreaterThanOrEqual(0)
        expect(new Date(line.time as string).toISOString()).toBe(line.time)
        // The route is the template: the raw path and its ids are nowhere in it.
        expect(line.route).not.toContain(project)
      }))

    it.effect("knows no token or project where there is none, and says `unmatched` for an unknown path", () =>
      Effect.gen(function*() {
        const { output } = yield* captured(() =>
          Effect.gen(function*() {
            expect((yield* h.raw("GET", "/healthz", { token: null })).status).toBe(200)
            expect((yield* h.api.projects.listProjects({ query: {} }, { token: null })).status).toBe(401)
            expect((yield* h.raw("GET", "/no/such/prj_abc123/path?x=1", { token: null })).status).toBe(404)
            expect(
              (yield* h.api.expenses.deleteExpense({ params: { id: "prj_nope", expenseId: "exp_nope" } }, {
                token: "svc_malformed"
              })).status
            ).toBe(401)
          })
        )
        const lines = requestLines(output)
        expect(lines.map((l) => [l.method, l.route, l.status])).toEqual([
          ["GET", "/healthz", 200],
          ["GET", "/api/v1/projects", 401],
          ["GET", "unmatched", 404],
          ["DELETE", "/api/v1/projects/:id/expenses/:expenseId", 401]
        ])
        for (const line of lines) {
          expect(line).not.toHaveProperty("tokenId")
          expect(line).not.toHaveProperty("projectId")
        }
        expect(output).not.toContain("prj_abc123")
        expect(output).not.toContain("x=1")
      }))

    it.effect("logs the token but no project when the project is not the token's account's", () =>
      Effect.gen(function*() {
        const { secret, token } = yield* h.newAccount()
        const other = yield* h.newAccount()
        const { output, result } = yield* captured(() =>
          h.api.projects.getHealth({ params: { id: other.projects[0].id } }, { token: secret })
        )
        expect(result.status).toBe(404)
        const [line] = requestLines(output)
        expect(line).toMatchObject({ route: "/api/v1/projects/:id/health", status: 404, tokenId: token.id })
        expect(line).not.toHaveProperty("projectId")
      }))
  })

  describe("X-Request-Id", () => {
    it.effect("echoes a sane one (1–128 of [A-Za-z0-9._:-]) and logs it", () =>
      Effect.gen(function*() {
        for (const id of ["abc-123.X:y_z", "a", "x".repeat(128), "0af7651916cd43dd8448eb211c80319c"]) {
          const { output, result } = yield* captured(() =>
            h.raw("GET", "/healthz", { token: null, headers: { "x-request-id": id } })
          )
          expect(result.headers.get("x-request-id")).toBe(id)
          expect(requestLines(output).map((l) => l.requestId)).toEqual([id])
        }
      }))

    it.effect("replaces a missing, empty, over-long or malformed one with a generated UUID", () =>
      Effect.gen(function*() {
        const seen = new Set<string>()
        for (
          const headers of [
            {},
            { "x-request-id": "" },
            { "x-request-id": "x".repeat(129) },
            { "x-request-id": "has space" },
            { "x-request-id": "a/b" },
            { "x-request-id": "<script>" },
            { "x-request-id": "naïve" },
            { "x-request-id": "q\"uote" }
          ]
        ) {
          const { output, result } = yield* captured(() => h.raw("GET", "/healthz", { token: null, headers }))
          const id = result.headers.get("x-request-id")!
          expect(id).toMatch(UUID)
          expect(requestLines(output).map((l) => l.requestId)).toEqual([id])
          seen.add(id)
        }
        expect(seen.size).toBe(8)
      }))

    it.effect("is on every response: errors, unknown routes, a body refused before routing, /metrics", () =>
      Effect.gen(function*() {
        const answers = [
          yield* h.api.projects.listProjects({ query: {} }, { token: null }),
          yield* h.raw("GET", "/nope", { token: null }),
          yield* h.raw("POST", "/api/v1/tokens", {
            token: null,
            rawBody: "x".repeat(70 * 1024),
            headers: { "content-length": String(70 * 1024) }
          }),
          yield* h.raw("GET", "/metrics", { token: null })
        ]
        expect(answers.map((a) => a.status)).toEqual([401, 404, 413, 401])
        for (const a of answers) expect(a.headers.get("x-request-id")).toMatch(UUID)
      }))
  })

  describe("500", () => {
    it.effect("an API handler's defect: the body's error.requestId is the response's X-Request-Id and the log line's", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const expenses = yield* h.run(Effect.service(ExpensesRepo))
        const insert = expenses.insert
        ;(expenses as { insert: typeof insert }).insert = () => Effect.die(new Error("injected failure"))
        try {
          const { output, result } = yield* captured(() =>
            h.api.expenses.createExpense({
              params: { id: projects[0].id },
              payload: {
                amount: 4999,
                category: "hosting",
                description: "VPS",
                incurredOn: "2026-11-01",
                recurrence: "monthly"
              }
            }, { token: secret, headers: { "x-request-id": "support-ticket-42" } })
          )
          expect(result.status, result.text).toBe(500)
          expect(result.json).toEqual({
            status: "error",
            error: {
              code: 500,
              message: "Unexpected server error",
              type: "internal_error",
              requestId: "support-ticket-42"
            }
          })
          expect(result.headers.get("x-request-id")).toBe("support-ticket-42")
          expect(requestLines(output)).toMatchObject([{
            requestId: "support-ticket-42",
            status: 500,
            route: "/api/v1/projects/:id/expenses"
          }])
          // The defect itself is logged (as JSON too) under the same request id; the body says nothing of it.
          expect(jsonLines(output).filter((l) => l.level === "error" && String(l.msg).includes("injected failure")))
            .toMatchObject([{ requestId: "support-ticket-42" }])
          expect(result.text).not.toContain("injected")
        } finally {
          ;(expenses as { insert: typeof insert }).insert = insert
        }
      }))

    it.effect("a defect outside the API (the safety net's 500) carries it too", () =>
      Effect.gen(function*() {
        // /mcp checks its bearer itself (App.ts McpRoutes), outside the API's handlers: a defect there reaches the
        // safety net.
        const tokens = yield* h.run(Effect.service(TokensRepo))
        const find = tokens.findBySecretHash
        ;(tokens as { findBySecretHash: typeof find }).findBySecretHash = () =>
          Effect.die(new Error("injected token lookup failure"))
        try {
          const { output, result } = yield* captured(() => h.raw("POST", "/mcp", { token: generateSecret(), body: {} }))
          expect(result.status, result.text).toBe(500)
          const id = result.headers.get("x-request-id")
          expect(id).toMatch(UUID)
          expect(result.json).toEqual({
            status: "error",
            error: { code: 500, message: "Unexpected server error", type: "internal_error", requestId: id }
          })
          expect(requestLines(output)).toMatchObject([{ requestId: id, status: 500, route: "/mcp", method: "POST" }])
          expect(
            jsonLines(output).filter((l) =>
              l.level === "error" && String(l.msg).includes("injected token lookup failure")
            )
          )
            .toMatchObject([{ requestId: id }])
        } finally {
          ;(tokens as { findBySecretHash: typeof find }).findBySecretHash = find
        }
      }))

    it.effect("other errors keep their envelope as it was: no requestId", () =>
      Effect.gen(function*() {
        const r = yield* h.api.projects.listProjects({ query: {} }, { token: null })
        expect(r.json.error).not.toHaveProperty("requestId")
      }))
  })

  describe("GET /metrics", () => {
    it.effect("counts requests by route template, method and status, with a latency histogram", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const before = (yield* scrape()).samples
        for (let i = 0; i < 3; i++) expect((yield* h.raw("GET", "/healthz", { token: null })).status).toBe(200)
        expect((yield* h.api.projects.getHealth({ params: { id: projects[0].id } }, { token: secret })).status).toBe(
          200
        )
        expect((yield* h.raw("GET", "/nope/abc", { token: null })).status).toBe(404)
        expect((yield* h.raw("BREW", "/healthz", { token: null })).status).toBe(404)
        const { samples, text } = yield* scrape()

        const delta = (route: string, method: string, status: number) =>
          requestsTotal(samples, route, method, status) - requestsTotal(before, route, method, status)
        expect(delta("/healthz", "GET", 200)).toBe(3)
        expect(delta("/api/v1/projects/:id/health", "GET", 200)).toBe(1)
        expect(delta("unmatched", "GET", 404)).toBe(1)
        // A method outside the standard ones is OTHER: clients cannot mint series.
        expect(delta("unmatched", "OTHER", 404)).toBe(1)
        // The scrape before this one is counted too.
        expect(delta("/metrics", "GET", 200)).toBe(1)

        const health = { route: "/api/v1/projects/:id/health", method: "GET" }
        const count = sampleValue(samples, "http_request_duration_seconds_count", health)!
        expect(count).toBeGreaterThanOrEqual(1)
        expect(sampleValue(samples, "http_request_duration_seconds_bucket", { ...health, le: "+Inf" })).toBe(count)
        expect(sampleValue(samples, "http_request_duration_seconds_sum", health)).toBeGreaterThan(0)
        const buckets = samples.filter((s) =>
          s.name === "http_request_duration_seconds_bucket" && s.labels.route === health.route
        )
        expect(buckets.map((b) => b.labels.le)).toEqual([
          "0.001",
          "0.0025",
          "0.005",
          "0.01",
          "0.025",
          "0.05",
          "0.1",
          "0.25",
          "0.5",
          "1",
          "2.5",
          "5",
          "+Inf"
        ])
        // Cumulative.
        for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value)

        expect(text).toContain("# TYPE http_requests_total counter")
        expect(text).toContain("# TYPE http_request_duration_seconds histogram")
        expect(text).not.toContain(projects[0].id)
      }))

    it.effect("counts rate-limit rejections", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        const before = sampleValue((yield* scrape()).samples, "rate_limit_rejections_total") ?? 0
        const statuses = []
        for (let i = 0; i < 7; i++) {
          statuses.push((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status)
        }
        expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429])
        const { samples } = yield* scrape()
        expect(sampleValue(samples, "rate_limit_rejections_total")).toBe(before + 2)
        expect(requestsTotal(samples, "/api/v1/projects", "GET", 429)).toBeGreaterThanOrEqual(2)
      }))

    it.effect("reports the sync queue (and, on Postgres, the recompute backlog and the database connections)", () =>
      Effect.gen(function*() {
        const { projects } = yield* h.newAccount()
        const queued = () => Effect.map(scrape(), ({ samples }) => sampleValue(samples, "sync_runs_queued"))
        const first = yield* queued()
        expect(Number.isInteger(first)).toBe(true)
        // On Postgres the queue is shared with the test files running meanwhile (and a run queued here would be
        // theirs to drain): only the memory store's is ours alone.
        if (store === "memory") {
          yield* h.run(Effect.gen(function*() {
            const q = yield* SyncQueue
            return yield* q.request({
              projectId: projects[0].id,
              provider: "plausible",
              mode: "full",
              requestedBy: null,
              now: new Date(yield* h.now)
            })
          }))
          expect(yield* queued()).toBe(first! + 1)
        }
        const { samples } = yield* scrape()
        expect(Number.isInteger(sampleValue(samples, "sync_runs_running"))).toBe(true)
        if (store === "postgres") {
          expect(Number.isInteger(sampleValue(samples, "recompute_projects_due"))).toBe(true)
          // At least the connection this scrape's own statement runs on.
          const connections = ["active", "idle", "idle_in_transaction"].map((state) =>
            sampleValue(samples, "db_connections", { state })
          )
          expect(connections.every(Number.isInteger)).toBe(true)
          expect(connections[0]!).toBeGreaterThanOrEqual(1)
        }
      }))

    // Memory only: draining runs the queue's oldest runs, and on Postgres those may be another test file's.
    it.effect.runIf(store === "memory")(
      "counts finished sync runs by provider and outcome",
      () =>
        Effect.gen(function*() {
          const { projects } = yield* h.newAccount({ projects: 2 })
          const fake = makeFakeConnector()
          const connect = (projectId: string) =>
            h.run(Effect.gen(function*() {
              const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
              yield* (yield* IntegrationsRepo).connect({
                projectId,
                provider: "plausible",
                credentials: cipher.encrypt({ apiKey: SECRET }),
                baseUrl: null,
                syncIntervalMinutes: null,
                now: new Date(yield* h.now)
              })
              yield* (yield* SyncQueue).request({
                projectId,
                provider: "plausible",
                mode: "full",
                requestedBy: null,
                now: new Date(yield* h.now)
              })
            }))
          const drain = () =>
            h.run(
              // This test's projects only: another suite on the same database (DATABASE_URL) queues its own runs.
              drainSyncs({
                connectors: (p) => (p === "plausible" ? fake.connector : undefined),
                projectIds: projects.map((p) => p.id)
              }).pipe(
                Effect.provide(runnerLayer())
              )
            )
          const outcome = (samples: ReadonlyArray<Sample>, o: string) =>
            sampleValue(samples, "sync_runs_total", { provider: "plausible", outcome: o }) ?? 0

          yield* drain() // what earlier tests left queued, so that only this test's runs count below
          const before = (yield* scrape()).samples
          const { output } = yield* captured(() =>
            Effect.gen(function*() {
              yield* connect(projects[0].id)
              yield* drain()
              fake.behaviour = { kind: "fail", error: "unauthorized", message: "rejected API key" }
              yield* connect(projects[1].id)
              yield* drain()
            })
          )
          const { samples, text } = yield* scrape()
          expect(outcome(samples, "succeeded") - outcome(before, "succeeded")).toBe(1)
          expect(outcome(samples, "failed") - outcome(before, "failed")).toBe(1)
          expect(text).not.toContain(SECRET)
          expect(output).not.toContain(SECRET)
        })
    )

    it.effect("wants METRICS_TOKEN as a bearer when it is set, and answers 401 in the envelope otherwise", () =>
      Effect.gen(function*() {
        for (
          const authorization of [
            undefined,
            "",
            "Bearer",
            "Bearer wrong-token-0123456789",
            `Basic ${METRICS_TOKEN}`,
            METRICS_TOKEN,
            `Bearer ${METRICS_TOKEN}x`,
            `Bearer ${METRICS_TOKEN.slice(0, -1)}`
          ]
        ) {
          const r = yield* h.raw("GET", "/metrics", {
            token: null,
            headers: authorization === undefined ? {} : { authorization }
          })
          expect(r.status, String(authorization)).toBe(401)
          expect(r.json).toEqual({
            status: "error",
            error: { code: 401, message: "Invalid or missing metrics token", type: "unauthorized" }
          })
          expect(r.headers.get("www-authenticate")).toContain("Bearer")
          expect(r.text).not.toContain("http_requests_total")
        }
        expect(
          (yield* h.raw("GET", "/metrics", { token: null, headers: { authorization: `bearer ${METRICS_TOKEN}` } }))
            .status
        ).toBe(200)
      }))

    it.effect("is open without METRICS_TOKEN, outside /api/v1, and never rate limited", () =>
      Effect.gen(function*() {
        const open = yield* OpenApp
        for (let i = 0; i < 8; i++) {
          const r = yield* open.raw("GET", "/metrics", { token: null })
          expect(r.status).toBe(200)
          expect(r.headers.get("x-ratelimit-limit")).toBeNull()
        }
        expect((yield* open.raw("GET", "/api/v1/metrics", { token: null })).status).toBe(404)
        expect((yield* open.raw("POST", "/metrics", { token: null })).status).toBe(404)
      }))
  })

  describe("secrets", () => {
    it.effect("no token secret, Authorization value or METRICS_TOKEN in any log line or in the metrics", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const { output } = yield* captured(() =>
          Effect.gen(function*() {
            const minted = yield* h.api.tokens.createToken({ payload: { confirm: true } }, { token: secret })
            expect(minted.status, minted.text).toBe(201)
            const newSecret = minted.json.data.secret as string
            yield* h.api.projects.getHealth({ params: { id: projects[0].id } }, { token: newSecret })
            yield* h.raw("GET", `/api/v1/projects?token=${secret}`, { token: newSecret.slice(0, -2) + "zz" })
            yield* h.raw("GET", `/metrics?token=${secret}`, {
              token: null,
              headers: { authorization: "Bearer not-the-metrics-token" }
            })
            const { text } = yield* scrape()
            return { newSecret, text }
          })
        ).pipe(Effect.map(({ result, output }) => {
          for (const s of [secret, result.newSecret, METRICS_TOKEN]) {
            expect(result.text).not.toContain(s)
            expect(output).not.toContain(s)
          }
          return { output }
        }))
        expect(output).not.toMatch(/Bearer/i)
        expect(requestLines(output).length).toBeGreaterThanOrEqual(5)
      }))
  })
})
