/**
 * A keyed request's unit of work (IdempotencyRepo.atomically) on real PostgreSQL when its connection drops:
 * the body fails, and the ROLLBACK that follows fails too. Postgres discards the transaction with the
 * connection, so the unit must end as its body did — the request's own ending, which the API answers (503
 * for a lost database) — and not in the rollback's defect beside it, which made a keyed write answer 500
 * during a Postgres restart (seen once in Faults.test: "requests across the stop/start … 500×1").
 */
import { expect, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import pg from "pg"
import { IdempotencyRepo } from "../src/http/IdempotencyRepo.ts"
import { PrivateDb } from "./support/PrivateDb.ts"

class BodyFailed extends Data.TaggedError("BodyFailed")<{}> {}

/** Ends this transaction's backend from another session, as a Postgres restart does. */
const terminateOwnBackend = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const db = yield* PrivateDb
  const [{ pid }] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
  yield* Effect.promise(async () => {
    const other = new pg.Client({ connectionString: db.url })
    await other.connect()
    try {
      await other.query("SELECT pg_terminate_backend($1)", [pid])
    } finally {
      await other.end()
    }
  })
})

layer(PrivateDb.repos, { timeout: 60_000 })("a keyed unit whose connection drops", (it) => {
  it.effect("ends in its body's failure when the rollback fails too, with no defect beside it", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const exit = yield* Effect.exit(
        repo.atomically(Effect.andThen(terminateOwnBackend, Effect.fail(new BodyFailed())))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      expect(exit.cause.reasons.map((r) => r._tag)).toEqual(["Fail"])
      expect(Cause.findErrorOption(exit.cause)).toMatchObject({ _tag: "Some", value: { _tag: "BodyFailed" } })
    }))

  it.effect("a body that dies of the lost connection ends in that defect alone (the API's 503)", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const sql = yield* SqlClient.SqlClient
      const exit = yield* Effect.exit(repo.atomically(Effect.andThen(terminateOwnBackend, Effect.orDie(sql`SELECT 1`))))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      expect(exit.cause.reasons.map((r) => r._tag)).toEqual(["Die"])
    }))

  it.effect("the database answers again afterwards: the pool replaced the dropped connection", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ one: number }>`SELECT 1 AS one`
      expect(rows[0]?.one).toBe(1)
    }))
})
