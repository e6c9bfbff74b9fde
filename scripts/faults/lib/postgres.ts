/**
 * A PRIVATE embedded Postgres for one fault — a cluster of its own that can be stopped and started again,
 * never the machine's shared one — and the few things the scenarios do on it: run an effect or a query
 * through a short-lived pool, seed an account to drive load with, read a project's data_version.
 */
import { createAccount, createProject, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { SqlRepos } from "@sitehealth/server/Layers"
import { runMigrations } from "@sitehealth/server/Migrations"
import { pgLayer } from "@sitehealth/server/platform/Database"
import { type EmbeddedHandle, startEmbeddedPostgres } from "@sitehealth/server/platform/EmbeddedPostgres"
import { freePort } from "@sitehealth/server/test/support/Ports"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import { tempDir } from "./common.ts"

export interface PrivatePostgres {
  readonly url: string
  readonly port: number
  readonly dir: string
  /** Fast shutdown (SIGINT to the postmaster: sessions are cut, open transactions roll back). */
  readonly stop: () => Promise<void>
  /** The same cluster, same port, again. */
  readonly start: () => Promise<void>
  /** Stops it (if running) and removes its directory. */
  readonly destroy: () => Promise<void>
}

/**
 * An embedded cluster of our own in a temporary directory on a free port, migrated. Never the shared one on
 * 5432 and never DATABASE_URL: these scripts stop it on purpose.
 */
export const startPrivatePostgres = async (prefix = "sitehealth-faults-pg-"): Promise<PrivatePostgres> => {
  const dir = tempDir(prefix)
  const port = await freePort()
  const boot = () => startEmbeddedPostgres({ dataDir: dir, port, log: (m) => process.stderr.write(`faults: ${m}\n`) })
  let handle: EmbeddedHandle | null = await boot()
  const url = handle.url
  await withDatabase(url, runMigrations)
  return {
    url,
    port,
    dir,
    stop: async () => {
      const h = handle
      handle = null
      if (h !== null) await h.stop()
    },
    start: async () => {
      if (handle === null) handle = await boot()
    },
    destroy: async () => {
      const h = handle
      handle = null
      if (h !== null) await h.stop().catch(() => undefined)
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Runs `effect` with a short-lived pool (and the SQL repositories) on `url`; the pool is closed afterwards. */
export const withDatabase = async <A>(url: string, effect: Effect.Effect<A, any, any>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(SqlRepos.pipe(Layer.provideMerge(pgLayer(url))), scope) as Effect.Effect<any>
    )
    return await Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Rows of a query, through a short-lived pool. */
export const query = <R = Record<string, unknown>>(
  url: string,
  run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, any, any>
) => withDatabase(url, Effect.flatMap(SqlClient.SqlClient, run)) as Promise<ReadonlyArray<R>>

/** An account with one project and an all-access token: what the load drives. */
export const seedAccount = (url: string, name: string) =>
  withDatabase(
    url,
    Effect.gen(function*() {
      const account = yield* createAccount({ name })
      const project = yield* createProject({
        accountId: account.id,
        name,
        domain: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.example`
      })
      const { secret } = yield* mintToken({ accountId: account.id, name: `${name} load` })
      return { accountId: account.id, projectId: project.id, secret }
    })
  )

/** The project's data_version now: one bump per committed write. */
export const dataVersion = async (url: string, projectId: string) =>
  Number(
    (await query<{ v: string }>(
      url,
      (sql) => sql`SELECT data_version::text AS v FROM projects WHERE id = ${projectId}`
    ))[0].v
  )
