/** Migration 0003_traffic: the tables of this feature folder. Registered in db/Migrations.ts. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const trafficMigration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  void sql // filled in by this feature's tables
})
