/**
 * A stored row that no longer has its table's shape (written by hand, by a half-applied migration) is a clear
 * defect naming the table and the field — a logged 500 in the envelope for that request, never a crash and
 * never a wrong answer — and the rest of the API keeps working. PostgreSQL only: the memory store has no rows
 * to corrupt.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { SnapshotsRepo } from "../../src/snapshots/SnapshotsRepo.ts"
import { CorruptRow } from "../../src/store/Sql.ts"
import { TokensRepo } from "../../src/tokens/TokensRepo.ts"
import { h, store, TestApp } from "../support/TestApp.ts"

const onPostgres = store === "postgres"

const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  h.run(Effect.flatMap(SqlClient.SqlClient, f))

const defectOf = <A>(exit: Exit.Exit<A, unknown>): unknown => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (!Exit.isFailure(exit)) return undefined
  const defect = Cause.findDefect(exit.cause)
  return defect._tag === "Success" ? defect.success : undefined
}

// The app is built on the first test that runs: on the memory store, none does.
layer(TestApp.layer())("a corrupt row", (it) => {
  it.effect.skipIf(!onPostgres)(
    "a token with a permission the contract does not know: 500 for the list, the rest still answers",
    () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount()
        const other = yield* h.mint(account.id, { permissions: ["projects:read"] })
        yield* sql((s) =>
          s`UPDATE tokens SET permissions = ARRAY['projects:read', 'projects:delete_everything'] WHERE id = ${other.token.id}`
        )

        const list = yield* h.api.tokens.listTokens({ query: {} }, { token: secret })
        expect(list.status).toBe(500)
        expect(list.json).toMatchObject({
          status: "error",
          error: { code: 500, message: "Unexpected server error", type: "internal_error" }
        })
        expect(list.text).not.toContain("delete_everything")

        expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(200)

        const exit = yield* h.run(
          Effect.exit(Effect.flatMap(TokensRepo, (t) => t.list(account.id, { limit: 10, after: null })))
        )
        const defect = defectOf(exit)
        expect(defect).toBeInstanceOf(CorruptRow)
        expect((defect as CorruptRow).table).toBe("tokens")
        expect((defect as CorruptRow).message).toContain("permissions")
      })
  )

  it.effect.skipIf(!onPostgres)(
    "a stored briefing whose body lost a field: a CorruptRow naming the table, not a half-built briefing",
    () =>
      Effect.gen(function*() {
        const { projects } = yield* h.newAccount()
        const projectId = projects[0].id
        yield* sql((s) =>
          s`INSERT INTO briefings (project_id, local_date, generated_at, body)
          VALUES (${projectId}, '2026-01-02'::date, now(), ${JSON.stringify({ projectId, headline: 42 })}::jsonb)`
        )
        const exit = yield* h.run(
          Effect.exit(Effect.flatMap(SnapshotsRepo, (s) => s.briefingOf(projectId, "2026-01-02")))
        )
        const defect = defectOf(exit)
        expect(defect).toBeInstanceOf(CorruptRow)
        expect((defect as CorruptRow).table).toBe("briefings")
      })
  )
})
