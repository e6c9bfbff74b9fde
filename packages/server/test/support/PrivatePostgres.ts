/**
 * A migrated PostgreSQL for one test file (DATABASE_URL when set, else a private embedded cluster in a
 * temporary directory), and "instances" on it: each with its own connection pool and repositories, as
 * separate processes would have, running effects under the caller's clock (a test's `TestClock`) or the one
 * given. Call `usePrivatePostgres` at the top level of a test file: it registers the beforeAll/afterAll hooks.
 */
import { Clock, Effect, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { SqlRepos } from "../../src/Layers.ts"
import { runMigrations } from "../../src/Migrations.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres.ts"
import { freePort } from "./postgresGlobalSetup.ts"

export type Instance = (<A>(effect: Effect.Effect<A, any, any>) => Promise<A>) & {
  readonly provide: <A>(effect: Effect.Effect<A, any, any>) => Effect.Effect<A>
}

export const usePrivatePostgres = (options: { readonly clock?: Clock.Clock; readonly dirPrefix: string }) => {
  let url = ""
  let stop = async () => {}
  let dir: string | undefined
  const scopes: Array<Scope.Closeable> = []

  beforeAll(async () => {
    const external = process.env.DATABASE_URL
    if (external) url = external
    else {
      dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), options.dirPrefix))
      const handle = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), log: () => {} })
      url = handle.url
      stop = handle.stop
    }
    await Effect.runPromise(Effect.scoped(Effect.provide(runMigrations, pgLayer(url))) as Effect.Effect<unknown>)
  }, 120_000)

  afterAll(async () => {
    for (const s of scopes) await Effect.runPromise(Scope.close(s, { _tag: "Success", value: undefined } as any))
    await stop()
    if (dir) Fs.rmSync(dir, { recursive: true, force: true })
  })

  /** One "process": its own pool and the SQL repositories (plus `extra` layers). */
  const instance = async (extra?: Layer.Layer<any, any, any>): Promise<Instance> => {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    const repos: Layer.Layer<any, any, any> = extra === undefined ? SqlRepos : Layer.mergeAll(SqlRepos, extra)
    const layer = repos.pipe(Layer.provideMerge(pgLayer(url)))
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope) as Effect.Effect<any>)
    const clock = options.clock
    const provide = <A>(effect: Effect.Effect<A, any, any>) =>
      (clock === undefined
        ? Effect.provideContext(effect, context)
        : effect.pipe(Effect.provideContext(context), Effect.provideService(Clock.Clock, clock))) as Effect.Effect<A>
    return Object.assign(<A>(effect: Effect.Effect<A, any, any>) => Effect.runPromise(provide(effect)), { provide })
  }

  return { instance, url: () => url }
}
