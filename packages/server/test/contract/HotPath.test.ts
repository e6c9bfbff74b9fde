/**
 * The hot path costs one database round trip: with the access checks split into their own middlewares
 * (http/Authentication, RateLimit, Entitlement, ProjectAccess, TokenUsage) and freshness behind a service,
 * a health read whose snapshot is current still issues exactly one SQL statement — the token lookup that
 * brings the project and today's snapshot along. Counted from the SQL client's own spans, on PostgreSQL
 * (the in-memory store has no statements to count).
 */
import { assert, describe, it } from "@effect/vitest"
import { endpointsOf, fastPathOf } from "@sitehealth/domain/Api"
import { Clock, Context, Effect, Layer, Tracer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Zlib from "node:zlib"
import { inject } from "vitest"
import { GZIP_MIN_BYTES } from "../../src/access/StoredAnswers.ts"
import { createAccount, createProject, mintToken } from "../../src/accounts/Provisioning.ts"
import { ROUTER_CONFIG } from "../../src/App.ts"
import { appLayer, SqlRepos } from "../../src/Layers.ts"
import { readConfig } from "../../src/platform/Config.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { store } from "../support/TestApp.ts"

const START = Date.parse("2026-11-20T12:00:30.000Z")

/** The contract's GET endpoints with the pattern of their path, to tell which endpoint a measured URL reached. */
const getEndpoints = endpointsOf().map(({ endpoint }) => endpoint).filter((e) => e.method === "GET").map((
  endpoint
) => ({
  endpoint,
  pattern: new RegExp(`^${endpoint.path.replace(/:\w+/g, "[^/]+")}$`)
}))
const endpointAt = (url: string): string => {
  const path = new URL(url, "http://localhost").pathname
  const found = getEndpoints.filter((e) => e.pattern.test(path))
  assert.lengthOf(found, 1, path)
  return found[0].endpoint.identifier
}

/**
 * Let the app's detached fibers (the last_used_at write) finish before counting: at least 100 ms, then until
 * every recorded span has ended and none began for 50 ms (at most 5 s). A fixed pause was not enough beside
 * another suite on two cores: a late write of the previous read was counted with the next one.
 */
const settleOn = (spans: ReadonlyArray<Tracer.NativeSpan>) =>
  Effect.promise(async () => {
    const pause = () => new Promise((resolve) => setTimeout(resolve, 10))
    for (let i = 0; i < 10; i++) await pause()
    let seen = spans.length
    let quiet = 0
    for (let i = 0; i < 500 && quiet < 5; i++) {
      await pause()
      const open = spans.some((s) => s.status._tag === "Started")
      quiet = !open && spans.length === seen ? quiet + 1 : 0
      seen = spans.length
    }
  })

describe.skipIf(store !== "postgres")("the hot path on PostgreSQL", () => {
  // Health and, the same way, every report read and the briefing (access/StoredAnswers.ts); and it is so for
  // every endpoint the contract gives a fast path (`FastPath` annotations, test/FastPaths.test.ts), no other.
  it.effect("a current health snapshot is served after one SQL statement, the token lookup", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const spans: Array<Tracer.NativeSpan> = []
      const recording = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      const settle = settleOn(spans)
      const statements = () =>
        spans.map((s) => s.attributes.get("db.query.text")).filter((t) => t !== undefined).map(String)
      const repos = yield* Layer.build(SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl")))))
      const { project, secret } = yield* Effect.gen(function*() {
        const account = yield* createAccount({ name: "Hot path" })
        const project = yield* createProject({ accountId: account.id, name: "Site", domain: "hot.example" })
        const { secret } = yield* mintToken({ accountId: account.id })
        return { project, secret }
      }).pipe(Effect.provideContext(repos))

      /**
       * How many answers the project has kept; then a wait (real time, ≤ 10 s) until it keeps more and their number
       * has held for 200 ms (a read may keep two: its own and another it computed on the way).
       */
      const storedAnswers = Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM stored_answers WHERE project_id = ${project.id}`
      ).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie, Effect.provideContext(repos))
      const untilStored = (before: number) =>
        Effect.gen(function*() {
          let seen = before
          let held = 0
          for (let i = 0; i < 1_000 && (seen <= before || held < 10); i++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
            const now = yield* storedAnswers
            held = now === seen ? held + 1 : 0
            seen = now
          }
        })

      const clock = yield* Clock.Clock
      const app = appLayer({ ...readConfig({}), redisUrl: null }, Layer.succeedContext(repos)).pipe(
        Layer.provide(HttpServer.layerServices),
        // Merged into the app's context, which the web handler hands to every request (the /api/v1 groups
        // keep no services of their own beyond their middlewares: http/GroupContext.ts).
        Layer.provideMerge(Layer.succeed(Clock.Clock, clock)),
        Layer.provideMerge(Layer.succeed(Tracer.Tracer, recording))
      )
      const { dispose, handler } = HttpRouter.toWebHandler(app, { disableLogger: true, routerConfig: ROUTER_CONFIG })
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      /** The endpoints whose reads are measured below as served by the one statement. */
      const measured = new Set<string>()
      const getAt = (url: string, headers: Record<string, string> = {}) =>
        Effect.promise(async () => {
          measured.add(endpointAt(`/api/v1${url}`))
          const request = new Request(`http://localhost/api/v1${url}`, {
            headers: { authorization: `Bearer ${secret}`, ...headers }
          })
          // The app needs nothing per request beyond its layers (its type says `any` through App.ts's SafetyNet).
          const response = await handler(request, Context.empty() as Context.Context<unknown>)
          // The body's bytes as sent (a Response made in process is not decoded): gunzipped here when gzip.
          const bytes = Buffer.from(await response.arrayBuffer())
          const encoding = response.headers.get("content-encoding")
          return {
            status: response.status,
            encoding,
            vary: response.headers.get("vary"),
            sent: bytes.length,
            body: (encoding === "gzip" ? Zlib.gunzipSync(bytes) : bytes).toString("utf8")
          }
        })
      const get = (path: string, headers: Record<string, string> = {}) =>
        getAt(`/projects/${project.id}${path}`, headers)
      const gzippedPaths: Array<string> = []
      const health = Effect.map(get("/health"), (r) => r.status)

      // The first read computes and stores the snapshot, and writes the token's last_used_at.
      assert.strictEqual(yield* health, 200)
      yield* settle
      assert.isAbove(statements().length, 1)

      spans.length = 0
      assert.strictEqual(yield* health, 200)
      yield* settle
      const hot = statements()
      assert.strictEqual(hot.length, 1, hot.join("\n---\n"))
      assert.include(hot[0], "FROM tokens")
      assert.include(hot[0], "health_snapshots")

      // Every report read and the briefing: computed and kept once, then served as stored from the same one
      // statement — the same body, byte for byte — until the data changes.
      for (
        const path of [
          "/analytics?period=today",
          "/analytics?period=yesterday",
          "/analytics?period=7d",
          "/analytics",
          "/analytics?period=all",
          "/signals",
          "/revenue?period=12m",
          "/churn",
          "/seo?period=3m",
          "/briefing"
        ]
      ) {
        const kept = yield* storedAnswers
        const first = yield* get(path)
        assert.strictEqual(first.status, 200, first.body)
        // The answer is kept after it is sent: wait for its row, not for a quiet spell (on a loaded machine — two
        // suites at once — its write could start after the spans had gone quiet).
        yield* untilStored(kept)
        yield* settle
        spans.length = 0
        const second = yield* get(path)
        yield* settle
        const served = statements()
        assert.strictEqual(served.length, 1, `${path}:\n${served.join("\n---\n")}`)
        assert.include(served[0], "stored_answers")
        assert.strictEqual(second.body, first.body, path)
        assert.strictEqual(second.encoding, null, path)
        // A client that accepts gzip (node's fetch, browsers) gets the same answer gzipped when it is large
        // enough to be kept so — still the one statement; one that refuses gzip by name gets it as is.
        spans.length = 0
        const gzipped = yield* get(path, { "accept-encoding": "gzip, deflate" })
        yield* settle
        assert.strictEqual(statements().length, 1, path)
        assert.strictEqual(gzipped.body, first.body, path)
        assert.strictEqual(gzipped.vary, "Accept-Encoding", path)
        const large = Buffer.byteLength(first.body) >= GZIP_MIN_BYTES
        assert.strictEqual(gzipped.encoding, large ? "gzip" : null, `${path}: ${Buffer.byteLength(first.body)} bytes`)
        if (large) assert.isBelow(gzipped.sent, Buffer.byteLength(first.body) / 2, path)
        const refused = yield* get(path, { "accept-encoding": "gzip;q=0, deflate" })
        assert.strictEqual(refused.encoding, null, path)
        assert.strictEqual(refused.body, first.body, path)
        if (large) gzippedPaths.push(path)
      }
      // The analytics reads with a series of hours or days are the large ones: they went out gzipped.
      assert.includeMembers(gzippedPaths, ["/analytics?period=today", "/analytics?period=7d", "/analytics"])

      // The projects list likewise: its entries kept once (access/ListAnswer.ts), then the page with them is
      // the one statement, byte for byte the computed answer.
      for (const query of ["", "?limit=1"]) {
        const first = yield* getAt(`/projects${query}`)
        assert.strictEqual(first.status, 200, first.body)
        yield* settle
        spans.length = 0
        const second = yield* getAt(`/projects${query}`)
        yield* settle
        const served = statements()
        assert.strictEqual(served.length, 1, `/projects${query}:\n${served.join("\n---\n")}`)
        assert.include(served[0], "stored_answers")
        assert.strictEqual(second.body, first.body, `/projects${query}`)
      }

      // Every endpoint with a fast path in the contract was measured served by the one statement, and only those:
      // one that loses its annotation (or gains one without being measured here) fails.
      const annotated = getEndpoints.filter(({ endpoint }) => fastPathOf(endpoint) !== undefined).map(({ endpoint }) =>
        endpoint.identifier
      )
      assert.sameMembers([...measured], annotated)

      // A stored answer of an earlier local day is not served: the next day's read computes again.
      yield* TestClock.adjust("1 day")
      spans.length = 0
      assert.strictEqual((yield* get("/analytics?period=7d")).status, 200)
      yield* settle
      assert.isAbove(statements().length, 1)
    }))
})
