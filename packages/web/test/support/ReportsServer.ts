/**
 * What the report pages' browser test runs against: the real server as `npm start` runs it — the demo
 * account seeded (three websites, a year of data, its all-access token), the sync worker running ("sync now"
 * really syncs the demo provider) — over the in-memory repositories, on 127.0.0.1 and a free port; and a
 * one-time login link to the demo account's dashboard. The recompute half of the worker is SQL-only (its
 * heartbeat); over memory, reads recompute what is behind (recompute/Freshness.ts), as they do anyway.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ROUTER_CONFIG } from "@sitehealth/server/App"
import { magicLinkFor } from "@sitehealth/server/dashboard/Auth"
import { Signing } from "@sitehealth/server/dashboard/Links"
import { DemoProviders } from "@sitehealth/server/demo/Providers"
import { seedDemo } from "@sitehealth/server/demo/Seed"
import { CredentialsCipher } from "@sitehealth/server/integrations/Crypto"
import { ProviderHttp } from "@sitehealth/server/integrations/ProviderHttp"
import { appLayer, MemoryRepos } from "@sitehealth/server/Layers"
import { AppConfig, type AppConfigShape, readConfig } from "@sitehealth/server/platform/Config"
import { freePort } from "@sitehealth/server/test/support/Ports"
import { runSyncWorker } from "@sitehealth/server/worker/SyncRunner"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { HttpRouter } from "effect/http"
import * as Http from "node:http"

export interface DemoServer {
  readonly base: string
  /** The demo account's all-access /api/v1 token. */
  readonly token: string
  readonly websiteIds: ReadonlyArray<string>
  /** A one-time login link (works once). */
  readonly loginLink: string
  readonly close: () => Promise<void>
}

export const startDemoServer = async (): Promise<DemoServer> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const defaults = readConfig({
    SITEHEALTH_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    SITEHEALTH_SIGNING_KEY: "reports-browser-test-signing-key-0123456789"
  })
  const config: AppConfigShape = { ...defaults, host: "127.0.0.1", port, redisUrl: null }
  const ready = Deferred.makeUnsafe<Omit<DemoServer, "close" | "base">>()
  const program = Effect.gen(function*() {
    const context = yield* Layer.build(MemoryRepos)
    const withConfig = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provide(AppConfig.layer(config)), Effect.provideContext(context as any)) as Effect.Effect<A, E>
    // The demo's local providers for the server's life, as `npm start` runs them; the worker syncs from them.
    const demoServices = yield* Layer.build(
      Layer.mergeAll(
        DemoProviders.layer({ epoch: new Date(), broken: false }),
        CredentialsCipher.fromConfig,
        ProviderHttp.layer({ timeoutMs: 60_000 })
      ).pipe(
        Layer.provide(AppConfig.layer(config))
      )
    )
    const demo = yield* withConfig(seedDemo().pipe(Effect.provideContext(demoServices)))
    const loginLink = yield* withConfig(
      magicLinkFor(demo.account.id, "demo@sitehealth.local", base).pipe(Effect.provide(Signing.layer))
    )
    yield* Effect.forkScoped(withConfig(runSyncWorker))
    yield* Layer.build(
      HttpRouter.serve(appLayer(config, Layer.succeedContext(context)), {
        disableLogger: true,
        routerConfig: ROUTER_CONFIG
      }).pipe(
        Layer.provide(NodeHttpServer.layer(() => Http.createServer(), { port, host: "127.0.0.1" }))
      ) as unknown as Layer.Layer<never>
    )
    yield* Deferred.succeed(ready, { token: demo.secret, websiteIds: demo.projectIds, loginLink })
    return yield* Effect.never
  }).pipe(Effect.scoped)
  const fiber = Effect.runFork(program as Effect.Effect<never, unknown>)
  const seeded = await Effect.runPromise(Deferred.await(ready).pipe(Effect.raceFirst(Fiber.join(fiber))))
  return { ...seeded, base, close: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}
