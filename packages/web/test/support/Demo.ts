/**
 * The report pages' test server: the real sitehealth server (every layer of `npm start`, over the in-memory
 * repositories) holding the demo account exactly as `npm start` seeds it (demo/Seed.ts: three websites with a
 * year of traffic, payments and search data), the one-time login link `npm start` prints, and an /api/v1 token
 * minted for the test (read permissions only) to compare the pages' figures with the API's.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { mintToken } from "@sitehealth/server/accounts/Provisioning"
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
import { Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter } from "effect/http"
import * as Http from "node:http"

export const startDemoServer = async () => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const defaults = readConfig({
    SITEHEALTH_SECRET_KEY: Buffer.alloc(32, 9).toString("base64"),
    SITEHEALTH_SIGNING_KEY: "report-pages-test-signing-key-0123456789"
  })
  const config: AppConfigShape = { ...defaults, host: "127.0.0.1", port, redisUrl: null, publicUrl: base }
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(MemoryRepos, scope))
  // The demo's local providers for the server's life, as `npm start` runs them.
  const demoServices = await Effect.runPromise(Layer.buildWithScope(
    Layer.mergeAll(
      DemoProviders.layer({ epoch: new Date(), broken: false }),
      CredentialsCipher.fromConfig,
      ProviderHttp.layer({ timeoutMs: 60_000 })
    ).pipe(
      Layer.provide(AppConfig.layer(config))
    ),
    scope
  ))
  const seeded = await Effect.runPromise(
    Effect.gen(function*() {
      const demo = yield* seedDemo().pipe(Effect.provideContext(demoServices))
      const link = yield* magicLinkFor(demo.account.id, "demo@sitehealth.local", base)
      const minted = yield* mintToken({
        accountId: demo.account.id,
        name: "report pages test",
        permissions: ["projects:read", "analytics:read", "revenue:read", "seo:read"]
      })
      return { projectIds: demo.projectIds, link, secret: minted.secret }
    }).pipe(Effect.provide(Signing.layer), Effect.provide(AppConfig.layer(config)), Effect.provideContext(context))
  )
  const server = HttpRouter.serve(appLayer(config, Layer.succeedContext(context)), {
    disableLogger: true,
    routerConfig: ROUTER_CONFIG
  }).pipe(
    Layer.provide(NodeHttpServer.layer(() => Http.createServer(), { port, host: "127.0.0.1" }))
  )
  // The app's layer is typed with the whole context it is built in (`any`); the repositories are all there.
  await Effect.runPromise(Layer.buildWithScope(server as unknown as Layer.Layer<never, unknown>, scope))
  /** GET /api/v1…'s `data` with the test's token. */
  const api = async (path: string): Promise<any> => {
    const response = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${seeded.secret}` } })
    const body = (await response.json()) as any
    if (response.status !== 200) throw new Error(`GET /api/v1${path}: ${response.status} ${JSON.stringify(body)}`)
    return body.data
  }
  return { base, ...seeded, api, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
