/** The one way a migration runs its DDL (every migration module of the feature folders, and Migrations.ts). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * A migration from its SQL text: the statements, separated by a `;` at the end of a line, run one by one in
 * order — the extended protocol runs a single command at a time. No statement may hold `;` at a line's end.
 */
export const ddlMigration = (text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = text.split(/;\s*\n/).map((s) => s.trim()).filter((s) => s.length > 0)
    for (const statement of statements) yield* sql.unsafe(statement)
  })
