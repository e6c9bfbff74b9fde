/**
 * Idempotency-Key on the POST endpoints (http/Idempotency.ts): replay with Idempotent-Replayed and no
 * second effect, 422 for another request under the same key, 409 while the first is running, keys scoped
 * to the token and kept 24 h, a mint replay without its secret (nor a secret in the store), 400 on a
 * malformed key, a key left free by a failure — and, on PostgreSQL, the request's write and its stored
 * answer as one transaction: a failure or a dead session at any point leaves both or neither.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { inject } from "vitest"
import { ExpensesRepo } from "../../src/expenses/ExpensesRepo.ts"
import { requestHash } from "../../src/http/Idempotency.ts"
import { type ClaimInput, IdempotencyRepo, KEEP_MS } from "../../src/http/IdempotencyRepo.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { SqlRepos } from "../../src/Layers.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { newId } from "../../src/store/Ids.ts"
import { expensesPath, VALID_EXPENSE as expense } from "../fixtures/expenses.ts"
import { expectError, expectFailure } from "../support/Expect.ts"
import { h, makeTestApp, store, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Idempotency", (it) => {
  let counter = 0
  const newKey = () => `key-${Date.now()}-${++counter}`

  const post = (path: string, token: string, key: string | null, body?: unknown) =>
    h.raw("POST", path, {
      token,
      ...(body === undefined ? {} : { body }),
      headers: key === null ? {} : { "idempotency-key": key }
    })

  const expenseCount = (token: string, projectId: string) =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", `${expensesPath(projectId)}?limit=100`, { token })
      expect(r.status, r.text).toBe(200)
      return r.json.data.expenses.length as number
    })

  const withRepo = <A>(f: (repo: IdempotencyRepo["Service"]) => Effect.Effect<A, any, any>) =>
    h.run(Effect.flatMap(Effect.service(IdempotencyRepo), f))

  const claimInput = (tokenId: string, key: string, path: string, body: unknown): Effect.Effect<ClaimInput> =>
    Effect.map(h.now, (now) => ({
      tokenId,
      key,
      requestHash: requestHash("POST", path, JSON.stringify(body)),
      now: new Date(now)
    }))

  /**
   * A request in flight, as the middleware runs one: a unit of work that has claimed the key and then runs
   * `during` until `finish` is called. `ended` settles with how the unit ended.
   */
  const inFlight = <A>(input: ClaimInput, during: Effect.Effect<A, any, any> = Effect.void as any) =>
    Effect.gen(function*() {
      const gate = yield* h.run(Deferred.make<void>())
      const claimed = yield* h.run(Deferred.make<string>())
      // Forked so it runs alongside the test's own requests, within the test's scope.
      const unit = yield* withRepo((repo) =>
        repo.atomically(Effect.gen(function*() {
          const claim = yield* repo.claim(input)
          yield* Deferred.succeed(claimed, claim._tag)
          if (claim._tag !== "Claimed") return claim._tag
          const result = yield* during
          yield* Deferred.await(gate)
          return result
        })).pipe(Effect.exit)
      ).pipe(Effect.forkScoped)
      const tag = yield* h.run(Deferred.await(claimed))
      return { tag, ended: Fiber.join(unit), finish: () => h.run(Deferred.succeed(gate, undefined)) }
    })

  describe("Idempotency-Key: replay", () => {
    it.effect("the same key and body: the stored answer again (same status and body), Idempotent-Replayed: true, one expense", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const key = newKey()
        const first = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(first.status, first.text).toBe(201)
        expect(first.headers.get("idempotent-replayed")).toBeNull()

        const again = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(again.status).toBe(201)
        expect(again.text).toBe(first.text)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(again.headers.get("content-type")).toMatch(/^application\/json/)

        // The same JSON with its fields in another order and other whitespace is the same request.
        const reordered =
          `{ "recurrence": "monthly", "incurredOn": "2026-11-01",\n "description": "VPS for November", "category": ` +
          `"hosting", "amount": 4999 }`
        const third = yield* h.raw("POST", expensesPath(projects[0].id), {
          token: secret,
          rawBody: reordered,
          headers: { "idempotency-key": key }
        })
        expect(third.status).toBe(201)
        expect(third.text).toBe(first.text)
        expect(third.headers.get("idempotent-replayed")).toBe("true")

        expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
        // Without a key, every POST acts.
        expect((yield* post(expensesPath(projects[0].id), secret, null, expense)).status).toBe(201)
        expect((yield* post(expensesPath(projects[0].id), secret, null, expense)).status).toBe(201)
        expect(yield* expenseCount(secret, projects[0].id)).toBe(3)
      }))

    it.effect("a queued sync is replayed the same (202, same run)", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        yield* h.run(Effect.gen(function*() {
          const integrations = yield* IntegrationsRepo
          return yield* integrations.connect({
            projectId: projects[0].id,
            provider: "plausible",
            credentials: null,
            baseUrl: null,
            syncIntervalMinutes: null,
            now: new Date(yield* h.now)
          })
        }))
        const path = `/api/v1/projects/${projects[0].id}/integrations/plausible/sync`
        const key = newKey()
        const first = yield* post(path, secret, key, { mode: "full" })
        expect(first.status, first.text).toBe(202)
        const again = yield* post(path, secret, key, { mode: "full" })
        expect(again.status).toBe(202)
        expect(again.text).toBe(first.text)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
      }))

    it.effect("the handler's own 4xx is stored and replayed; a request the API could not decode is not (the key stays free)", () =>
      Effect.gen(function*() {
        const { secret } = yield* h.newAccount()
        const other = yield* h.newAccount()
        const key = newKey()
        const first = yield* post(expensesPath(other.projects[0].id), secret, key, expense)
        expectError(first, 404, "not_found")
        const again = yield* post(expensesPath(other.projects[0].id), secret, key, expense)
        expect(again.status).toBe(404)
        expect(again.text).toBe(first.text)
        expect(again.headers.get("idempotent-replayed")).toBe("true")

        const mine = yield* h.newAccount()
        const invalidKey = newKey()
        const invalid = yield* post(expensesPath(mine.projects[0].id), mine.secret, invalidKey, {
          ...expense,
          amount: -1
        })
        expectError(invalid, 400, "invalid_request")
        expect(yield* withRepo((r) => r.find(mine.token.id, invalidKey))).toBeNull()
        // The corrected request under the same key acts (not 422).
        const fixed = yield* post(expensesPath(mine.projects[0].id), mine.secret, invalidKey, expense)
        expect(fixed.status, fixed.text).toBe(201)
      }))
  })

  describe("Idempotency-Key: conflicts", () => {
    it.effect("the same key with another body, endpoint or project: 422 idempotency_key_reused, nothing done", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        const key = newKey()
        expect((yield* post(expensesPath(projects[0].id), secret, key, expense)).status).toBe(201)

        expectError(
          yield* post(expensesPath(projects[0].id), secret, key, { ...expense, amount: 5000 }),
          422,
          "idempotency_key_reused"
        )
        expectError(yield* post(expensesPath(projects[1].id), secret, key, expense), 422, "idempotency_key_reused")
        const tokensBefore = (yield* h.api.tokens.listTokens({ query: {} }, { token: secret })).json.data.tokens.length
        expectError(yield* post("/api/v1/tokens", secret, key, { confirm: true }), 422, "idempotency_key_reused")

        expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
        expect(yield* expenseCount(secret, projects[1].id)).toBe(0)
        expect((yield* h.api.tokens.listTokens({ query: {} }, { token: secret })).json.data.tokens.length).toBe(
          tokensBefore
        )
      }))

    it.effect("a key whose first request is still running: 409 with Retry-After: 1, whatever the body; free again if it ends without an answer", () =>
      Effect.gen(function*() {
        const { account, projects, secret, token } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const key = newKey()
        const first = yield* inFlight(yield* claimInput(token.id, key, path, expense))
        expect(first.tag).toBe("Claimed")
        try {
          const busy = yield* post(path, secret, key, expense)
          expectError(busy, 409, "idempotency_request_in_progress")
          expect(busy.headers.get("retry-after")).toBe("1")
          // Nothing of the running request is committed, so its body cannot be compared yet: 409, not 422.
          expectError(yield* post(path, secret, key, { ...expense, amount: 1 }), 409, "idempotency_request_in_progress")
          // Another token's same key is its own.
          const second = yield* h.mint(account.id)
          expect((yield* post(path, second.secret, key, expense)).status).toBe(201)
        } finally {
          yield* first.finish()
        }
        expect((yield* first.ended)._tag).toBe("Success")
        // It ended without storing an answer (as a 5xx would): the key is free, and the request acts.
        expect(yield* withRepo((r) => r.find(token.id, key))).toBeNull()
        const retried = yield* post(path, secret, key, expense)
        expect(retried.status, retried.text).toBe(201)
        expect(retried.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* expenseCount(secret, projects[0].id)).toBe(2)
      }))

    it.effect("claim and complete refuse to run outside a unit of work (the key would not be held)", () =>
      Effect.gen(function*() {
        const { token } = yield* h.newAccount()
        const input = yield* claimInput(token.id, newKey(), "/x", {})
        yield* expectFailure(withRepo((r) => r.claim(input)), /must run inside IdempotencyRepo\.atomically/)
        yield* expectFailure(withRepo((r) => r.complete(input, { status: 201, body: "{}" })), /must run inside/)
      }))

    it.effect("concurrent requests with one key: one acts; the others answer 409 or its replay", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const key = newKey()
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, () => post(expensesPath(projects[0].id), secret, key, expense)),
          { concurrency: "unbounded" }
        )
        const statuses = answers.map((a) => a.status)
        expect(statuses.every((s) => s === 201 || s === 409), statuses.join(",")).toBe(true)
        const created = answers.filter((a) => a.status === 201)
        expect(created.filter((a) => a.headers.get("idempotent-replayed") === null)).toHaveLength(1)
        expect(new Set(created.map((a) => a.text)).size).toBe(1)
        expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
      }))

    it.effect.skipIf(store === "memory")(
      "two instances (two apps, each its own pool, one database) racing on one key: one acts",
      () =>
        Effect.gen(function*() {
          // A second app for this test only; both read the one test clock, as NTP gives real instances one time.
          const other = yield* makeTestApp()
          const { projects, secret } = yield* h.newAccount()
          const key = newKey()
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) =>
              (i % 2 === 0 ? h.raw : other.raw)("POST", expensesPath(projects[0].id), {
                token: secret,
                body: expense,
                headers: { "idempotency-key": key }
              })),
            { concurrency: "unbounded" }
          )
          const statuses = answers.map((a) => a.status)
          expect(statuses.every((s) => s === 201 || s === 409), statuses.join(",")).toBe(true)
          expect(answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") === null)).toHaveLength(
            1
          )
          expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
        })
    )

    it.effect("a 5xx leaves the key free: the retry with the same key acts once", () =>
      Effect.gen(function*() {
        const { projects, secret, token } = yield* h.newAccount()
        const expenses = yield* h.run(Effect.service(ExpensesRepo))
        const insert = expenses.insert // One insert dies as a bug would (a defect → 500); the next one works.
        ;(expenses as { insert: typeof insert }).insert = () => {
          ;(expenses as { insert: typeof insert }).insert = insert
          return Effect.die(new Error("injected failure"))
        }
        const key = newKey()
        try {
          expectError(yield* post(expensesPath(projects[0].id), secret, key, expense), 500, "internal_error")
        } finally {
          ;(expenses as { insert: typeof insert }).insert = insert
        }
        expect(yield* withRepo((r) => r.find(token.id, key))).toBeNull()
        const retried = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(retried.status, retried.text).toBe(201)
        expect(retried.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
      }))
  })

  describe.skipIf(store === "memory")(
    "Idempotency-Key: the write and its answer are one transaction (PostgreSQL)",
    () => {
      const sqlRun = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, any>) =>
        h.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), f))

      it.effect("keyed POSTs waiting in their transactions hold at most half the pool: the other half answers a read meanwhile (pool of 2)", () =>
        Effect.gen(function*() {
          const small = yield* makeTestApp({}, {
            repos: SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl"), { maxConnections: 2 })))
          })
          const { projects, secret } = yield* h.newAccount()
          const projectId = projects[0].id
          // Another session holds the project's row: every expense POST waits for it inside its transaction
          // (the data_version bump), as behind a long sync write.
          const locked = Deferred.makeUnsafe<void>()
          const release = Deferred.makeUnsafe<void>()
          const holder = yield* Effect.forkChild(sqlRun((sql) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* sql`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            }))
          ))
          yield* Deferred.await(locked)
          // Whatever happens below, the row is released at the end (or the suite's teardown would wait for it).
          yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
          const keyed = yield* Effect.forkChild(Effect.all(
            [1, 2, 3].map(() =>
              small.raw("POST", expensesPath(projectId), {
                token: secret,
                body: expense,
                headers: { "idempotency-key": newKey() }
              })
            ),
            { concurrency: "unbounded" }
          ))
          // Sessions of this database waiting for the row: the admitted keyed request only (the others wait for
          // their turn without a connection).
          const waitingOnLock = sqlRun((sql) =>
            sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE projects SET data_version%'`
          )
            .pipe(Effect.map((rows) => rows[0].n))
          let waiting = 0
          for (let i = 0; i < 200 && waiting === 0; i++) {
            waiting = yield* waitingOnLock
            if (waiting === 0) yield* TestClock.withLive(Effect.sleep("25 millis"))
          }
          expect(waiting).toBe(1)
          // A read through the same small pool is answered while they wait (no pool connection left: it would not be).
          const read = yield* TestClock.withLive(
            Effect.timeoutOption(
              small.raw("GET", `${expensesPath(projectId)}?limit=10`, { token: secret }),
              "10 seconds"
            )
          )
          expect(read._tag === "Some" && read.value.status).toBe(200)
          expect(yield* waitingOnLock).toBe(1)
          // The row is released: every keyed POST acts, once each.
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          const answers = yield* Fiber.join(keyed)
          expect(answers.map((a) => a.status)).toEqual([201, 201, 201])
          expect(yield* expenseCount(secret, projectId)).toBe(3)
        }))
      const expenseExists = (id: string) =>
        Effect.map(sqlRun((sql) => sql`SELECT 1 FROM expenses WHERE id = ${id}`), (rows) => rows.length > 0)

      it.effect("a request that fails after its write (a defect, 500): the write rolls back with it; the retry acts once", () =>
        Effect.gen(function*() {
          const { projects, secret, token } = yield* h.newAccount()
          const expenses = yield* h.run(Effect.service(ExpensesRepo))
          const insert = expenses.insert
          const written: Array<string> = [] // The insert itself succeeds; the request dies right after it, as a bug in the handler would.
          ;(expenses as { insert: typeof insert }).insert = (e) => {
            ;(expenses as { insert: typeof insert }).insert = insert
            return insert(e).pipe(
              Effect.tap((row) => Effect.sync(() => written.push(row.id))),
              Effect.andThen(Effect.die(new Error("injected failure after the write")))
            )
          }
          const key = newKey()
          try {
            expectError(yield* post(expensesPath(projects[0].id), secret, key, expense), 500, "internal_error")
          } finally {
            ;(expenses as { insert: typeof insert }).insert = insert
          }
          expect(written).toHaveLength(1)
          expect(yield* expenseExists(written[0]!)).toBe(false)
          expect(yield* withRepo((r) => r.find(token.id, key))).toBeNull()
          const retried = yield* post(expensesPath(projects[0].id), secret, key, expense)
          expect(retried.status, retried.text).toBe(201)
          expect(retried.headers.get("idempotent-replayed")).toBeNull()
          expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
        }))

      // The process killed mid-request, as Postgres sees it: the session ends inside the transaction. Once with
      // the expense written, once with its answer stored too — the instant that left a duplicate before.
      for (const storedToo of [false, true]) {
        it.effect(`a session that dies after the write${storedToo ? " and the stored answer" : ""}, before COMMIT: neither stays; the retry acts once`, () =>
          Effect.gen(function*() {
            const { projects, secret, token } = yield* h.newAccount()
            const path = expensesPath(projects[0].id)
            const key = newKey()
            const input = yield* claimInput(token.id, key, path, expense)
            const expenseId = newId("exp")
            const session = yield* h.run(Deferred.make<number>())
            const first = yield* inFlight(
              input,
              Effect.gen(function*() {
                const repo = yield* IdempotencyRepo
                const sql = yield* SqlClient.SqlClient
                // Through the repositories, as the handler writes: on the unit's connection, inside its transaction.
                yield* Effect.flatMap(Effect.service(ExpensesRepo), (expenses) =>
                  expenses.insert({
                    id: expenseId,
                    projectId: projects[0].id,
                    amountMinor: expense.amount,
                    currency: "USD",
                    category: expense.category,
                    description: expense.description,
                    vendor: null,
                    incurredOn: expense.incurredOn,
                    recurrence: expense.recurrence,
                    createdAt: input.now,
                    deletedAt: null
                  }))
                if (storedToo) {
                  yield* repo.complete(input, { status: 201, body: "{\"status\":\"success\",\"data\":{}}" })
                }
                const rows = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
                yield* Deferred.succeed(session, Number(rows[0]!.pid))
              })
            )
            expect(first.tag).toBe("Claimed")
            const pid = yield* h.run(Deferred.await(session))
            // Not committed yet: invisible to everyone else, and the key is held.
            expect(yield* expenseExists(expenseId)).toBe(false)
            expectError(yield* post(path, secret, key, expense), 409, "idempotency_request_in_progress")

            const killed = yield* sqlRun((sql) => sql<{ ok: boolean }>`SELECT pg_terminate_backend(${pid}) AS ok`)
            expect(killed[0]!.ok).toBe(true)
            yield* first.finish()
            expect((yield* first.ended)._tag).toBe("Failure")

            expect(yield* expenseExists(expenseId)).toBe(false)
            expect(yield* withRepo((r) => r.find(token.id, key))).toBeNull()
            const retried = yield* post(path, secret, key, expense)
            expect(retried.status, retried.text).toBe(201)
            expect(retried.headers.get("idempotent-replayed")).toBeNull()
            const again = yield* post(path, secret, key, expense)
            expect(again.headers.get("idempotent-replayed")).toBe("true")
            expect(again.text).toBe(retried.text)
            expect(yield* expenseCount(secret, projects[0].id)).toBe(1)
          }))
      }
    }
  )

  describe("Idempotency-Key: scope and lifetime", () => {
    it.effect("keys are scoped to the token: another token's same key is its own", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        const second = yield* h.mint(account.id)
        const key = newKey()
        const a = yield* post(expensesPath(projects[0].id), secret, key, expense)
        const b = yield* post(expensesPath(projects[0].id), second.secret, key, expense)
        expect([a.status, b.status]).toEqual([201, 201])
        expect(b.headers.get("idempotent-replayed")).toBeNull()
        expect(b.json.data.expense.id).not.toBe(a.json.data.expense.id)
        // Another body under the other token's key is no conflict either.
        expect((yield* post(expensesPath(projects[0].id), second.secret, newKey(), { ...expense, amount: 7 })).status)
          .toBe(201)
        expect(yield* expenseCount(secret, projects[0].id)).toBe(3)
      }))

    it.effect("kept 24 h: replayed just before, a new request just after; expired rows are swept by later keyed requests", () =>
      Effect.gen(function*() {
        const { projects, secret, token } = yield* h.newAccount()
        const key = newKey()
        const first = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(first.status).toBe(201)
        const idle = newKey()
        expect((yield* post(expensesPath(projects[0].id), secret, idle, { ...expense, amount: 2 })).status).toBe(201)

        yield* TestClock.adjust(KEEP_MS - 1000)
        const replayed = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(replayed.headers.get("idempotent-replayed")).toBe("true")
        expect(replayed.text).toBe(first.text)

        yield* TestClock.adjust(2000)
        const fresh = yield* post(expensesPath(projects[0].id), secret, key, expense)
        expect(fresh.status).toBe(201)
        expect(fresh.headers.get("idempotent-replayed")).toBeNull()
        expect(fresh.json.data.expense.id).not.toBe(first.json.data.expense.id)
        expect(yield* expenseCount(secret, projects[0].id)).toBe(3)
        // The other key, never used again, is deleted by the sweeps of later keyed requests (each deletes a bounded
        // batch of any expired rows: other tests' keys on a shared database may come first).
        let swept = false
        for (let i = 0; i < 50 && !swept; i++) {
          swept = (yield* withRepo((r) => r.find(token.id, idle))) === null
          if (!swept) expect((yield* post(expensesPath(projects[0].id), secret, newKey(), expense)).status).toBe(201)
        }
        expect(swept).toBe(true)
      }))
  })

  describe("Idempotency-Key: token mint", () => {
    it.effect("a replayed mint says the secret is redacted and never shows it; the stored row has no secret", () =>
      Effect.gen(function*() {
        const { secret, token } = yield* h.newAccount()
        const key = newKey()
        const body = { name: "ci", permissions: ["projects:read"], confirm: true }
        const minted = yield* post("/api/v1/tokens", secret, key, body)
        expect(minted.status, minted.text).toBe(201)
        const newSecret: string = minted.json.data.secret
        expect(newSecret).toMatch(/^svc_/)
        expect(minted.json.data.secretRedacted).toBeUndefined()

        const replay = yield* post("/api/v1/tokens", secret, key, body)
        expect(replay.status).toBe(201)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.json.data).toEqual({ token: minted.json.data.token, secret: null, secretRedacted: true })
        expect(replay.text).not.toContain(newSecret)
        expect(replay.text).not.toContain(newSecret.slice(4, 20))

        const row = yield* withRepo((r) => r.find(token.id, key))
        expect(row?.status).toBe("done")
        expect(row?.responseStatus).toBe(201)
        expect(row?.responseBody).not.toContain(newSecret)
        expect(row?.responseBody).not.toContain(newSecret.slice(4, 20))
        expect(JSON.stringify(row)).not.toContain(newSecret)

        const tokens = (yield* h.api.tokens.listTokens({ query: { limit: 100 } }, { token: secret })).json.data.tokens
        expect(tokens.filter((t: any) => t.name === "ci")).toHaveLength(1)
        // The minted secret works; the replay did not mint another.
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: newSecret })).status).toBe(200)
      }))

    it.effect("a preview is not stored: the confirmed request may reuse its key", () =>
      Effect.gen(function*() {
        const { secret, token } = yield* h.newAccount()
        const key = newKey()
        const preview = yield* post("/api/v1/tokens", secret, key, { name: "later" })
        expect(preview.status).toBe(200)
        expect(preview.json.data.preview).toBe(true)
        expect(yield* withRepo((r) => r.find(token.id, key))).toBeNull()
        expect((yield* post("/api/v1/tokens", secret, key, { name: "later", confirm: true })).status).toBe(201)
      }))
  })

  describe("Idempotency-Key: the header", () => {
    it.effect("400 invalid_idempotency_key unless 1–255 printable ASCII characters; nothing done", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        for (const key of ["", "k".repeat(256), "caf\u00e9", "a\tb"]) {
          const r = yield* post(expensesPath(projects[0].id), secret, key, expense)
          expectError(r, 400, "invalid_idempotency_key")
        }
        expect(yield* expenseCount(secret, projects[0].id)).toBe(0)
        expect((yield* post(expensesPath(projects[0].id), secret, "~".repeat(255), expense)).status).toBe(201)
        expect((yield* post(expensesPath(projects[0].id), secret, "a key with spaces & symbols!", expense)).status)
          .toBe(201)
      }))

    it.effect("runs after authentication: a bad token with a bad key is 401; a GET ignores the header", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        expectError(yield* post(expensesPath(projects[0].id), "svc_nope", "", expense), 401)
        const r = yield* h.raw("GET", expensesPath(projects[0].id), {
          token: secret,
          headers: { "idempotency-key": "" }
        })
        expect(r.status, r.text).toBe(200)
      }))

    it.effect("the OpenAPI document lists the header and the 409/422 answers on the POSTs only", () =>
      Effect.gen(function*() {
        const doc = (yield* h.raw("GET", "/api/v1/openapi.json", { token: null })).json
        const post = doc.paths["/api/v1/projects/{id}/expenses"].post
        const header = post.parameters.find((p: any) => p.name === "Idempotency-Key")
        expect(header).toMatchObject({ in: "header", required: false, schema: { maxLength: 255 } })
        expect(post.parameters.some((p: any) => p.name === "id" && p.in === "path")).toBe(true)
        expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["201", "409", "422"]))
        expect(doc.paths["/api/v1/tokens"].post.parameters.some((p: any) => p.name === "Idempotency-Key")).toBe(true)
        const get = doc.paths["/api/v1/projects/{id}/expenses"].get
        expect((get.parameters ?? []).some((p: any) => p.name === "Idempotency-Key")).toBe(false)
      }))
  })
})
