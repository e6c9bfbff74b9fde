/**
 * A stored row that no longer has its table's shape (written by hand, by a half-applied migration) is a clear
 * defect naming the table and the field — a logged 500 in the envelope for that request, never a crash and
 * never a wrong answer — and the rest of the API keeps working. PostgreSQL only: the memory store has no rows
 * to corrupt.
 */
import { Cause, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SnapshotsRepo } from "../../src/snapshots/SnapshotsRepo.ts"
import { CorruptRow } from "../../src/store/Sql.ts"
import { TokensRepo } from "../../src/tokens/TokensRepo.ts"
import { makeHarness, type Harness } from "../support/Harness.ts"

const onPostgres = process.env.SITEHEALTH_TEST_STORE === "postgres"

let h: Harness
beforeAll(async () => {
  if (onPostgres) h = await makeHarness()
})
afterAll(() => (onPostgres ? h.close() : undefined))

const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  h.run(Effect.flatMap(SqlClient.SqlClient, f))

const defectOf = <A>(exit: Exit.Exit<A, unknown>): unknown => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (!Exit.isFailure(exit)) return undefined
  const defect = Cause.findDefect(exit.cause)
  return defect._tag === "Success" ? defect.success : undefined
}

describe.skipIf(!onPostgres)("a corrupt row", () => {
  it("a token with a permission the contract does not know: 500 for the list, the rest still answers", async () => {
    const { account, secret } = await h.newAccount()
    const other = await h.mint(account.id, { permissions: ["projects:read"] })
    await sql((s) => s`UPDATE tokens SET permissions = ARRAY['projects:read', 'projects:delete_everything'] WHERE id = ${other.token.id}`)

    const list = await h.call("GET", "/api/v1/tokens", { token: secret })
    expect(list.status).toBe(500)
    expect(list.json).toMatchObject({ status: "error", error: { code: 500, message: "Unexpected server error", type: "internal_error" } })
    expect(list.text).not.toContain("delete_everything")

    expect((await h.call("GET", "/api/v1/projects", { token: secret })).status).toBe(200)

    const exit = await h.run(Effect.exit(Effect.flatMap(TokensRepo, (t) => t.list(account.id, { limit: 10, after: null }))))
    const defect = defectOf(exit)
    expect(defect).toBeInstanceOf(CorruptRow)
    expect((defect as CorruptRow).table).toBe("tokens")
    expect((defect as CorruptRow).message).toContain("permissions")
  })

  it("a stored briefing whose body lost a field: a CorruptRow naming the table, not a half-built briefing", async () => {
    const { projects } = await h.newAccount()
    const projectId = projects[0].id
    await sql((s) => s`INSERT INTO briefings (project_id, local_date, generated_at, body)
        VALUES (${projectId}, '2026-01-02'::date, now(), ${JSON.stringify({ projectId, headline: 42 })}::jsonb)`)
    const exit = await h.run(Effect.exit(Effect.flatMap(SnapshotsRepo, (s) => s.briefingOf(projectId, "2026-01-02"))))
    const defect = defectOf(exit)
    expect(defect).toBeInstanceOf(CorruptRow)
    expect((defect as CorruptRow).table).toBe("briefings")
  })
})
