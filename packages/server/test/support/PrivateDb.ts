/**
 * A migrated database of the test file's own (`privateDatabase()`: a new database on DATABASE_URL's server,
 * else a private embedded cluster) as layers for `layer(...)` from @effect/vitest: built before the block's
 * first test, dropped after its last.
 */
import { Context, Effect, Layer } from "effect"
import { SqlRepos } from "../../src/Layers.ts"
import { runMigrations } from "../../src/Migrations.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { type PrivateDatabase, privateDatabase } from "./ScaleOut.ts"

export class PrivateDb extends Context.Service<PrivateDb, PrivateDatabase>()("test/PrivateDb") {
  /** The database, migrated. */
  static readonly layer = Layer.effect(
    PrivateDb,
    Effect.acquireRelease(
      Effect.promise(privateDatabase).pipe(
        Effect.tap((db) => Effect.scoped(Effect.provide(runMigrations, pgLayer(db.url))))
      ),
      (db) => Effect.promise(() => db.drop())
    )
  )

  /** The database with one pool and the SQL repositories on it (the SqlClient included), as a server has. */
  static readonly repos = SqlRepos.pipe(
    Layer.provideMerge(Layer.unwrap(Effect.map(Effect.service(PrivateDb), (db) => pgLayer(db.url)))),
    Layer.provideMerge(PrivateDb.layer)
  )
}
