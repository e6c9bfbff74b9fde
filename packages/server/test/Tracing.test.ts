/**
 * Traces (src/Tracing.ts), end to end: the server as main.ts builds it, on a database of its own, exporting
 * OTLP/HTTP JSON to a collector on 127.0.0.1 (node:http). One authenticated request yields one trace — the
 * server span named by its route with the status code, the SQL statements and the recomputation as its
 * descendants — and a sync run yields its own, with the provider call templated. No span and no byte sent to
 * the collector carries the token, the provider key or the credentials key. Repository and service methods
 * are named spans (`Effect.fn("AuthRepo.touchSession")`…): a dashboard page load and a sync run say what they
 * did. Without OTEL_EXPORTER_OTLP_ENDPOINT, no span is created at all.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { SESSION_COOKIE } from "@sitehealth/domain/DashboardApi"
import { Context, Effect, Exit, Fiber, Layer, Redacted, Scope, Tracer } from "effect"
import { HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { createAccount, createProject, mintToken } from "../src/accounts/Provisioning.ts"
import { ROUTER_CONFIG } from "../src/App.ts"
import { AuthRepo, newUserId } from "../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../src/dashboard/Passwords.ts"
import type { Connector } from "../src/integrations/Connector.ts"
import { CredentialsCipher } from "../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../src/integrations/IntegrationsRepo.ts"
import { ProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { SyncQueue } from "../src/integrations/SyncQueue.ts"
import { appLayer, SqlRepos } from "../src/Layers.ts"
import { AppConfig, readConfig } from "../src/platform/Config.ts"
import { pgLayer } from "../src/platform/Database.ts"
import { readTracingConfig, tracingLayer } from "../src/platform/Tracing.ts"
import { runWorker } from "../src/worker/RecomputeWorker.ts"
import { runNextSync } from "../src/worker/SyncRunner.ts"
import { PrivateDb } from "./support/PrivateDb.ts"

const SECRET_KEY = Buffer.alloc(32, 9)
const PROVIDER_KEY = "sk_live_TRACE_S3CR3T_4242"
const COLLECTOR_TOKEN = "collector-auth-TOKEN-777"

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly status: { readonly code: number }
}

const attr = (span: OtlpSpan, key: string): unknown => {
  const v = span.attributes.find((a) => a.key === key)?.value
  if (v === undefined) return undefined
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue ?? v.doubleValue)
}

const everyAttributeValue = (spans: ReadonlyArray<OtlpSpan>): Array<string> =>
  spans.flatMap((s) => s.attributes.map((a) => JSON.stringify(a.value)))

let collector: Http.Server
let collectorUrl = ""
const bodies: Array<{ readonly text: string; readonly auth: string | undefined; readonly type: string | undefined }> =
  []
let provider: Http.Server
let providerBase = ""
const providerHits: Array<string> = []

const received = (): Array<OtlpSpan> =>
  bodies.flatMap((b) =>
    (JSON.parse(b.text).resourceSpans as Array<any>).flatMap((r) => r.scopeSpans.flatMap((s: any) => s.spans))
  )

beforeAll(async () => {
  collector = Http.createServer((req, res) => {
    let text = ""
    req.setEncoding("utf8").on("data", (d: string) => (text += d)).on("end", () => {
      bodies.push({
        text,
        auth: req.headers["x-collector-auth"] as string | undefined,
        type: req.headers["content-type"]
      })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
  provider = Http.createServer((req, res) => {
    providerHits.push(req.url ?? "")
    const ok = req.headers.authorization === `Bearer ${PROVIDER_KEY}`
    res.writeHead(ok ? 200 : 401, { "content-type": "application/json" }).end(ok ? "{\"id\":\"cus_Q8xk2\"}" : "{}")
  })
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve))
  providerBase = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => collector?.close(() => resolve()))
  await new Promise<void>((resolve) => provider?.close(() => resolve()))
})

/**
 * The server as main.ts composes it, on port 0, under `tracing`, on the file's database; returns its base URL,
 * a way to run effects on its repositories (under the same tracing), and its stop (which flushes the
 * exporter; the test's scope stops it too, should the test end first).
 */
const startServer = Effect.fnUntraced(function*(tracing: Layer.Layer<never>) {
  const db = yield* PrivateDb
  const scope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  const config = {
    ...readConfig({}),
    port: 0,
    databaseUrl: Redacted.make(db.url),
    secretKey: Redacted.make(SECRET_KEY.toString("base64"))
  }
  const httpServer = Http.createServer()
  const context =
    (yield* Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(db.url))), scope)) as Context.Context<any>
  const served = HttpRouter.serve(appLayer(config, Layer.succeedContext(context)), {
    disableLogger: true,
    routerConfig: ROUTER_CONFIG
  }).pipe(
    Layer.provide(NodeHttpServer.layer(() => httpServer, { port: 0, host: "127.0.0.1" }))
  )
  // The tracing layer's own context (the tracer, or tracing off), given to the server and to `run` alike.
  const traced = yield* Layer.buildWithScope(tracing, scope)
  yield* (Layer.buildWithScope(served, scope).pipe(Effect.provideContext(traced)) as Effect.Effect<unknown>)
  const base = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`
  const run = <A>(effect: Effect.Effect<A, any, any>): Effect.Effect<A> =>
    effect.pipe(Effect.provideContext(Context.merge(context, traced))) as Effect.Effect<A>
  const stop = Scope.close(scope, Exit.void)
  return { base, run, stop }
})

/** A request to the server, its body read. */
const get = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const res = await fetch(url, init)
    return { status: res.status, text: await res.text(), setCookies: res.headers.getSetCookie() }
  })

const seed = (run: <A>(effect: Effect.Effect<A, any, any>) => Effect.Effect<A>) =>
  run(Effect.gen(function*() {
    const account = yield* createAccount({ name: "Traced" })
    const project = yield* createProject({ accountId: account.id, name: "Traced site", domain: "traced.example" })
    const { secret } = yield* mintToken({ accountId: account.id, name: "trace" })
    return { project, secret }
  }))

/** A connector whose one call carries the key in a header AND in the query string, with an id in the path. */
const fakeConnector: Connector = {
  provider: "stripe",
  kind: "payments",
  defaultBaseUrl: "http://unused.invalid",
  baseUrlEnv: null,
  credentialFields: ["secret_key"],
  validate: () => Effect.void,
  sync: (ctx) =>
    ctx.http.request({
      method: "GET",
      url: `${ctx.baseUrl}/v1/customers/cus_Q8xk2?expand=subscriptions&api_key=${ctx.credentials.secret_key}`,
      headers: { authorization: `Bearer ${ctx.credentials.secret_key}` }
    }).pipe(Effect.as({ counts: { customers: 1 }, state: null }))
}

// One database for the servers below; the live clock, as exporters, workers and sockets run in real time.
layer(PrivateDb.layer, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
  describe("tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
    it.effect(
      "one request: the route-named server span with its status, SQL and the recomputation beneath it; a sync run " +
        "with its provider call; no secret anywhere",
      () =>
        Effect.gen(function*() {
          const config = readTracingConfig({
            OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
            OTEL_EXPORTER_OTLP_HEADERS: `x-collector-auth=${COLLECTOR_TOKEN}`,
            OTEL_SERVICE_NAME: "sitehealth-test"
          })
          expect(config?.url).toBe(`${collectorUrl}/v1/traces`)
          bodies.length = 0
          const server = yield* startServer(tracingLayer(config, "server"))
          let requestTraceId = ""
          let secret = ""
          yield* Effect.gen(function*() {
            const seeded = yield* seed(server.run)
            secret = seeded.secret
            const res = yield* get(
              `${server.base}/api/v1/projects/${seeded.project.id}/health?probe=1&token=${secret}`,
              {
                headers: { authorization: `Bearer ${secret}`, "user-agent": "trace-test" }
              }
            )
            expect(res.status, res.text).toBe(200)

            // A sync run of the same process, through the real runner and ProviderHttp, against the local fake.
            yield* server.run(
              Effect.gen(function*() {
                const cipher = yield* CredentialsCipher
                yield* (yield* IntegrationsRepo).connect({
                  projectId: seeded.project.id,
                  provider: "stripe",
                  credentials: cipher.encrypt({ secret_key: PROVIDER_KEY }),
                  baseUrl: providerBase,
                  syncIntervalMinutes: null,
                  now: new Date()
                })
                yield* (yield* SyncQueue).request({
                  projectId: seeded.project.id,
                  provider: "stripe",
                  mode: "full",
                  requestedBy: null,
                  now: new Date()
                })
                // This test's run only: another suite on the same database (DATABASE_URL) queues its own.
                const run = yield* runNextSync({
                  connectors: (p) => (p === "stripe" ? fakeConnector : undefined),
                  projectIds: [seeded.project.id]
                })
                expect(run?.status).toBe("succeeded")
              }).pipe(Effect.provide([CredentialsCipher.layer(SECRET_KEY), ProviderHttp.layer({ maxAttempts: 1 })]))
            )
            expect(providerHits).toHaveLength(1)
          }).pipe(Effect.ensuring(server.stop)) // closes the tracer's scope: the exporter flushes what it holds

          expect(bodies.length).toBeGreaterThan(0)
          expect(bodies.every((b) => b.auth === COLLECTOR_TOKEN && b.type?.includes("json"))).toBe(true)
          const resource = JSON.parse(bodies[0].text).resourceSpans[0].resource.attributes
          expect(resource).toContainEqual({ key: "service.name", value: { stringValue: "sitehealth-test" } })
          expect(resource).toContainEqual({ key: "sitehealth.role", value: { stringValue: "server" } })
          const spans = received()

          // The request: one server span, named by the route template, with the status code.
          const servers = spans.filter((s) => s.kind === 2) // SPAN_KIND_SERVER
          expect(servers.map((s) => s.name)).toEqual(["GET /api/v1/projects/:id/health"])
          const request = servers[0]
          requestTraceId = request.traceId
          expect(attr(request, "http.route")).toBe("/api/v1/projects/:id/health")
          expect(attr(request, "http.response.status_code")).toBe(200)
          expect(attr(request, "http.request.method")).toBe("GET")
          expect(attr(request, "url.path")).toMatch(/^\/api\/v1\/projects\/prj_[^/]+\/health$/)
          expect(String(attr(request, "url.query"))).toContain("token=REDACTED")

          // Its trace: every span reaches the request span through its parents.
          const byId = new Map(spans.map((s) => [s.spanId, s]))
          const inRequest = spans.filter((s) => s.traceId === requestTraceId && s !== request)
          for (const s of inRequest) {
            let parent = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId)
            while (parent !== undefined && parent !== request) {
              parent = parent.parentSpanId === undefined
                ? undefined
                : byId.get(parent.parentSpanId)
            }
            expect(parent, `${s.name} descends from the request span`).toBe(request)
          }
          // One client span per statement, with the parameterised text ($1…: the bound values are not recorded).
          const sql = inRequest.filter((s) => attr(s, "db.query.text") !== undefined)
          expect(sql.length).toBeGreaterThan(2)
          expect(sql.every((s) => s.kind === 3)).toBe(true) // SPAN_KIND_CLIENT
          expect(sql.some((s) => String(attr(s, "db.query.text")).includes("FROM tokens"))).toBe(true)
          // A fresh project's health is computed on first read: the recomputation is part of the request's trace.
          const recompute = inRequest.filter((s) => s.name === "Recompute.project")
          expect(recompute).toHaveLength(1)
          expect(attr(recompute[0], "sitehealth.project_id")).toMatch(/^prj_/)

          // The sync run: its own trace, with the provider call as a child, named by method and path template.
          const syncRuns = spans.filter((s) => s.name === "SyncRunner.run")
          expect(syncRuns).toHaveLength(1)
          const syncRun = syncRuns[0]
          expect(syncRun.traceId).not.toBe(requestTraceId)
          expect(attr(syncRun, "sitehealth.provider")).toBe("stripe")
          expect(attr(syncRun, "sitehealth.sync.outcome")).toBe("succeeded")
          const calls = spans.filter((s) =>
            s.parentSpanId === syncRun.spanId && s.kind === 3 && attr(s, "db.system.name") === undefined
          )
          expect(calls.map((s) => s.name)).toEqual(["GET /v1/customers/{}"])
          expect(attr(calls[0], "sitehealth.provider")).toBe("stripe")
          expect(attr(calls[0], "url.template")).toBe("/v1/customers/{}")
          expect(attr(calls[0], "http.response.status_code")).toBe(200)

          // Nothing the collector received carries a secret: attributes, names, resource, anything.
          const everything = bodies.map((b) => b.text).join("\n")
          for (
            const s of [
              secret,
              secret.slice(4),
              PROVIDER_KEY,
              SECRET_KEY.toString("base64"),
              SECRET_KEY.toString("hex"),
              "cus_Q8xk2"
            ]
          ) {
            expect(everything.includes(s), `collector received ${s.slice(0, 6)}…`).toBe(false)
          }
          expect(everyAttributeValue(spans).some((v) => v.includes("Bearer"))).toBe(false)
        }),
      60_000
    )

    it.effect(
      "named work: a dashboard log-in and page load, and a sync run, name the repository and service methods they ran",
      () =>
        Effect.gen(function*() {
          bodies.length = 0
          const server = yield* startServer(
            tracingLayer(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl }), "server")
          )
          const untraced = <A>(effect: Effect.Effect<A, any, any>) =>
            server.run(Effect.withTracerEnabled(effect, false))
          const email = `named-${Date.now()}@traced.example`
          const password = "correct horse battery staple 42"
          let projectId = ""
          yield* Effect.gen(function*() {
            const { project } = yield* seed(untraced)
            projectId = project.id
            const passwordHash = yield* hashPassword(password)
            yield* untraced(Effect.flatMap(AuthRepo, (repo) =>
              repo.createUser({
                id: newUserId(),
                accountId: project.accountId,
                email,
                passwordHash,
                emailVerifiedAt: new Date(),
                createdAt: new Date()
              })))

            // Log in, then load the websites page with the session.
            const login = yield* get(`${server.base}/app/api/auth/login`, {
              method: "POST",
              headers: { "content-type": "application/json", origin: server.base },
              body: JSON.stringify({ email, password })
            })
            expect(login.status, login.text).toBe(200)
            const session = login.setCookies.map((c) => c.split(";")[0]).find((c) => c.startsWith(`${SESSION_COOKIE}=`))
            expect(session).toBeDefined()
            const page = yield* get(`${server.base}/app/api/websites`, { headers: { cookie: session! } })
            expect(page.status, page.text).toBe(200)

            // A sync run of a connection without credentials, through the real runner.
            yield* untraced(Effect.gen(function*() {
              yield* (yield* IntegrationsRepo).connect({
                projectId: project.id,
                provider: "plausible",
                credentials: null,
                baseUrl: null,
                syncIntervalMinutes: null,
                now: new Date()
              })
              yield* (yield* SyncQueue).request({
                projectId: project.id,
                provider: "plausible",
                mode: "full",
                requestedBy: null,
                now: new Date()
              })
            }))
            const quiet: Connector = {
              ...fakeConnector,
              provider: "plausible",
              kind: "analytics",
              credentialFields: [],
              sync: () => Effect.succeed({ counts: { days: 0 }, state: null })
            }
            const run = yield* server.run(
              runNextSync({ connectors: (p) => (p === "plausible" ? quiet : undefined), projectIds: [project.id] })
                .pipe(
                  Effect.provide([CredentialsCipher.layer(SECRET_KEY), ProviderHttp.layer({ maxAttempts: 1 })])
                )
            )
            expect(run?.status).toBe("succeeded")
          }).pipe(Effect.ensuring(server.stop))

          const spans = received()
          const byId = new Map(spans.map((s) => [s.spanId, s]))
          /** The names of the spans below `root` (its trace, reached through the parents). */
          const below = (root: OtlpSpan): Array<string> =>
            spans.filter((s) => {
              let parent = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId)
              while (parent !== undefined && parent !== root) {
                parent = parent.parentSpanId === undefined
                  ? undefined
                  : byId.get(parent.parentSpanId)
              }
              return parent === root
            }).map((s) => s.name)
          const serverSpan = (route: string) => {
            const found = spans.filter((s) => s.kind === 2 && attr(s, "http.route") === route)
            expect(found, route).toHaveLength(1)
            return found[0]
          }

          // The log-in: the user looked up, the throttle consulted and cleared, the session stored.
          const login = serverSpan("/app/api/auth/login")
          expect(login.name).toBe("POST /app/api/auth/login")
          expect(below(login)).toEqual(expect.arrayContaining([
            "AuthRepo.findUserByEmail",
            "AuthThrottle.guard",
            "FailuresRepo.stats",
            "AuthThrottle.succeeded",
            "FailuresRepo.clearPair",
            "AuthRepo.insertSession"
          ]))

          // The page load: the session found (and its idle expiry pushed) by the middleware, the websites listed.
          const websites = serverSpan("/app/api/websites")
          expect(below(websites)).toEqual(expect.arrayContaining(["AuthRepo.touchSession", "ProjectsRepo.list"]))
          // The statements are the children of the method that ran them.
          const touch = spans.find((s) => s.traceId === websites.traceId && s.name === "AuthRepo.touchSession")!
          expect(spans.filter((s) => s.parentSpanId === touch.spanId).map((s) => String(attr(s, "db.query.text"))))
            .toEqual([expect.stringContaining("UPDATE dashboard_sessions")])
          const list = spans.find((s) => s.traceId === websites.traceId && s.name === "ProjectsRepo.list")!
          expect(spans.filter((s) => s.parentSpanId === list.spanId).map((s) => String(attr(s, "db.query.text"))))
            .toEqual([expect.stringContaining("FROM projects")])

          // The sync run: its trace names the lookups, the outcome and the history rebuilt after a first success.
          const syncRun = spans.filter((s) =>
            s.name === "SyncRunner.run" && attr(s, "sitehealth.project_id") === projectId
          )
          expect(syncRun).toHaveLength(1)
          expect(syncRun[0].parentSpanId).toBeUndefined()
          const direct = spans.filter((s) => s.parentSpanId === syncRun[0].spanId).map((s) => s.name)
          expect(direct).toEqual(
            expect.arrayContaining([
              "IntegrationsRepo.connection",
              "ProjectsRepo.find",
              "SyncQueue.succeed",
              "SyncQueue.find"
            ])
          )
          expect(below(syncRun[0])).toEqual(expect.arrayContaining([
            "Recompute.rebuildHistory",
            "JobsRepo.withProjectLock",
            "IntegrationsRepo.takeHistoryPending",
            "Recompute.project",
            "MetricsRepo.loadProject",
            "SnapshotsRepo.putHealth",
            "SignalsRepo.reconcile",
            "JobsRepo.markComputed"
          ]))
          // The poll that found it is not traced (nor an idle one).
          expect(spans.filter((s) => s.name === "SyncQueue.claim")).toEqual([])
          // The set-up ran untraced: no other root than the two requests and the run.
          expect(spans.filter((s) => s.parentSpanId === undefined).map((s) => s.name).sort())
            .toEqual(["GET /app/api/websites", "POST /app/api/auth/login", "SyncRunner.run"])
        }),
      60_000
    )
  })

  describe("what is not traced", () => {
    it.effect(
      "probes and the scrape make no span, nor a worker's idle polls; a recomputation by the worker is a trace of " +
        "its own",
      () =>
        Effect.gen(function*() {
          bodies.length = 0
          const server = yield* startServer(
            tracingLayer(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl }), "server")
          )
          let projectId = ""
          yield* Effect.gen(function*() {
            // The test's own set-up is no trace of the worker's: its repository calls would be roots of their own.
            const { project } = yield* seed((effect) => server.run(Effect.withTracerEnabled(effect, false)))
            projectId = project.id
            for (const path of ["/healthz", "/readyz", "/metrics", "/readyz"]) {
              const res = yield* get(`${server.base}${path}`)
              expect(res.status, path).toBeLessThan(500)
            }
            const db = yield* PrivateDb
            const config = {
              ...readConfig({}),
              databaseUrl: Redacted.make(db.url),
              secretKey: Redacted.make(SECRET_KEY.toString("base64"))
            }
            const worker = yield* Effect.forkChild(server.run(Effect.provideService(runWorker, AppConfig, config)))
            yield* Effect.gen(function*() {
              const deadline = Date.now() + 15_000
              let computed = 0
              while (computed === 0 && Date.now() < deadline) {
                yield* Effect.sleep(100)
                const rows = yield* server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
                  sql<{ n: number }>`SELECT count(*)::int AS n FROM health_snapshots WHERE project_id = ${projectId}`))
                computed = rows[0].n
              }
              expect(computed).toBeGreaterThan(0)
              yield* Effect.sleep("6 seconds") // one more poll of both loops, with nothing to do
            }).pipe(Effect.ensuring(Fiber.interrupt(worker)))
          }).pipe(Effect.ensuring(server.stop))
          const spans = received()
          expect(spans.filter((s) =>
            s.kind === 2
          )).toEqual([]) // no server span: only probes and a scrape were served
          // One trace per project the worker recomputed (this database also has the first test's project).
          const roots = spans.filter((s) => s.parentSpanId === undefined)
          expect(new Set(roots.map((s) => s.name))).toEqual(new Set(["Recompute.project"]))
          expect(roots.map((s) => attr(s, "sitehealth.project_id"))).toContain(projectId)
          const traces = new Set(roots.map((s) => s.traceId))
          expect(spans.every((s) => traces.has(s.traceId))).toBe(true)
          expect(spans.some((s) => String(attr(s, "db.query.text")).includes("INSERT INTO health_snapshots"))).toBe(
            true
          )
        }),
      60_000
    )
  })

  describe("export and sampling", () => {
    /** 50 traces of a root span with one child, exported under `env`; what the collector then received. */
    const export50 = (env: Record<string, string>) =>
      Effect.gen(function*() {
        bodies.length = 0
        const layer = tracingLayer(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, ...env }), "worker")
        const one = Effect.void.pipe(Effect.withSpan("child"), Effect.withSpan("root"))
        yield* Effect.scoped(Effect.provide(Effect.repeat(one, { times: 49 }), layer))
        return [...bodies]
      })

    it.effect("http/protobuf when asked: the collector gets protobuf", () =>
      Effect.gen(function*() {
        const got = yield* export50({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })
        expect(got.length).toBeGreaterThan(0)
        expect(got.every((b) => b.type === "application/x-protobuf")).toBe(true)
      }))

    it.effect("a ratio keeps whole traces or nothing: none of 50 at a one-in-a-billion ratio, all 100 spans at 1", () =>
      Effect.gen(function*() {
        expect(yield* export50({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.000000001" }))
          .toEqual([])
        const all = yield* export50({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" })
        const spans = all.flatMap((b) =>
          (JSON.parse(b.text).resourceSpans as Array<any>).flatMap((r) => r.scopeSpans.flatMap((x: any) => x.spans))
        )
        expect(spans).toHaveLength(100)
        expect(new Set(spans.map((x: OtlpSpan) => x.traceId)).size).toBe(50)
      }))
  })

  describe("tracing off (no endpoint)", () => {
    it.effect(
      "not one span is created for a request, its SQL or its recomputation — where Effect's default tracer makes " +
        "dozens",
      () =>
        Effect.gen(function*() {
          const made: Array<string> = []
          const recording = Layer.succeed(
            Tracer.Tracer,
            Tracer.make({
              span(options) {
                made.push(options.name)
                return new Tracer.NativeSpan(options)
              }
            })
          )
          // Tracing as enabled by default, recorded: what every request would pay for without platform/Tracing.ts.
          const on = yield* startServer(recording)
          let withDefault = 0
          yield* Effect.gen(function*() {
            const { project, secret } = yield* seed(on.run)
            made.length = 0
            const res = yield* get(`${on.base}/api/v1/projects/${project.id}/health`, {
              headers: { authorization: `Bearer ${secret}` }
            })
            expect(res.status).toBe(200)
            withDefault = made.length
          }).pipe(Effect.ensuring(on.stop))
          expect(withDefault).toBeGreaterThan(5)

          expect(readTracingConfig({})).toBeNull()
          const off = yield* startServer(Layer.merge(recording, tracingLayer(readTracingConfig({}), "server")))
          yield* Effect.gen(function*() {
            const { project, secret } = yield* seed(off.run)
            made.length = 0
            for (const path of ["health", "health", "signals"]) {
              const res = yield* get(`${off.base}/api/v1/projects/${project.id}/${path}`, {
                headers: { authorization: `Bearer ${secret}` }
              })
              expect(res.status).toBe(200)
            }
            expect(made).toEqual([])
          }).pipe(Effect.ensuring(off.stop))
        }),
      60_000
    )
  })
})

describe("readTracingConfig", () => {
  it("follows the OpenTelemetry variables", () => {
    const plain = readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })
    expect({ ...plain, headers: Redacted.value(plain!.headers) }).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/json",
      headers: {},
      serviceName: "sitehealth",
      sampleRatio: 1,
      parentBased: true
    })
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/otlp/" })?.url).toBe(
      "https://otel.example/otlp/v1/traces"
    )
    // The signal's own endpoint is used as given and wins.
    expect(
      readTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom"
      })?.url
    ).toBe("http://b:4318/custom")
    const withHeaders = readTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb%3D, X-Tenant = acme ",
      OTEL_SERVICE_NAME: "edge"
    })
    expect(Redacted.value(withHeaders!.headers)).toEqual({ "api-key": "a,b=", "x-tenant": "acme" })
    expect(withHeaders?.serviceName).toBe("edge")
    expect(
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })
        ?.protocol
    ).toBe("http/protobuf")
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318" })).toMatchObject({
      sampleRatio: 1,
      parentBased: true
    })
    expect(readTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
      OTEL_TRACES_SAMPLER: "traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25"
    })).toMatchObject({ sampleRatio: 0.25, parentBased: false })
  })

  it("is off without an endpoint, or when switched off", () => {
    expect(readTracingConfig({})).toBeNull()
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeNull()
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_SDK_DISABLED: "true" })).toBeNull()
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_TRACES_EXPORTER: "none" })).toBeNull()
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_TRACES_EXPORTER: "otlp" })).not
      .toBeNull()
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_TRACES_SAMPLER: "always_off" }))
      .toBeNull()
  })

  it("refuses what it cannot honour, saying what to set (and never echoing a header's value)", () => {
    expect(() => readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/
    )
    expect(() =>
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })
    )
      .toThrow(/gRPC export is not supported.*4318/)
    expect(() =>
      readTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "10%"
      })
    )
      .toThrow(/OTEL_TRACES_SAMPLER_ARG must be a ratio/)
    expect(() =>
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_TRACES_SAMPLER: "jaeger_remote" })
    )
      .toThrow(/OTEL_TRACES_SAMPLER must be one of/)
    expect(() =>
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_HEADERS: "=SECRETVALUE" })
    )
      .toThrow(/key=value/)
    try {
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_HEADERS: "k=%E0%A4%A" })
    } catch (e) {
      expect((e as Error).message).toContain("\"k\"")
      expect((e as Error).message).not.toContain("%E0")
    }
  })
})
