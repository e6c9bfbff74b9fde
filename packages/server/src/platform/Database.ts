/**
 * The SqlClient the repositories use: the PostgreSQL named by DATABASE_URL, or else the embedded one in
 * the data directory. Migrations run before the layer is ready.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { AppConfig, POOL_MAX_CONNECTIONS } from "./Config.ts"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

/** Where the database is: an explicit URL or the embedded cluster (started, and stopped with the scope). */
export const resolveDatabaseUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.databaseUrl !== null) {
    yield* Effect.logInfo("database: using DATABASE_URL (no embedded postgres started)")
    return { kind: "external" as const, url: Redacted.value(config.databaseUrl) }
  }
  // The embedded cluster's own messages (initialising, a leftover postmaster) reach us in a callback: they go
  // through this fiber's logger, so that LOG_FORMAT=json stays one JSON object per line.
  const log = Effect.runSyncWith(yield* Effect.context<never>())
  const handle = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        startEmbeddedPostgres({
          dataDir: config.dataDir,
          port: config.embeddedPgPort,
          sharedBuffers: config.embeddedPgSharedBuffers,
          log: (m) => log(Effect.logInfo(m))
        }),
      catch: (e) => new Error(String(e))
    }),
    (h) => Effect.promise(() => h.stop().catch(() => undefined))
    // Start-up: without its database the process cannot serve; main.ts reports the defect and exits.
  ).pipe(Effect.orDie)
  yield* Effect.logInfo(
    `database: embedded postgres on 127.0.0.1:${config.embeddedPgPort}, data in ${config.dataDir}/pg (set ` +
      `DATABASE_URL to use your own)`
  )
  return { kind: "embedded" as const, url: handle.url }
})

/** Connections of a process's pool unless SITEHEALTH_DB_POOL_SIZE says otherwise (Config.ts). */
export { POOL_MAX_CONNECTIONS } from "./Config.ts"

/**
 * The pool's size, for what must leave part of it free: keyed POSTs (http/Idempotency.ts) reserve a
 * connection each for their transaction, and are admitted only while half the pool is left to the rest.
 */
export class DatabasePool
  extends Context.Service<DatabasePool, { readonly maxConnections: number }>()("sitehealth/DatabasePool")
{}

export const pgLayer = (url: string, options: { readonly maxConnections?: number } = {}) => {
  const maxConnections = options.maxConnections ?? POOL_MAX_CONNECTIONS
  // multiplex: statements of concurrent requests share connections and go out pipelined, several per
  // write — fewer syscalls and wake-ups on both sides (docs/benchmarks.md: −30 µs of server CPU and −30 µs of
  // Postgres CPU per health request). Transactions still reserve a connection of their own.
  return Layer.merge(
    PgClient.layer({ url: Redacted.make(url), maxConnections, applicationName: "sitehealth", multiplex: true }),
    Layer.succeed(DatabasePool, { maxConnections })
  )
}

export type { SqlClient }
