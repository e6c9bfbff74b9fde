/** Migration 0006_snapshots: the tables of this feature folder. Registered in db/Migrations.ts. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const snapshotsMigration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  void sql // filled in by this feature's tables
})
