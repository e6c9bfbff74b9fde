/**
 * The demo account in a test app, as `npm start` makes it: the demo's providers (local Stripe, Plausible and
 * Search Console, demo/Providers.ts) started for the test's scope on the app's clock (a TestClock moves
 * the data they serve), and seedDemo run over the app's repositories. `services` is what a later sync of the
 * demo's connections needs besides the repositories (the providers, the cipher of the stored credentials,
 * the provider HTTP client).
 */
import { Clock, Effect, Layer } from "effect"
import { DemoProviders, startDemoProviders } from "../../src/demo/Providers.ts"
import { seedDemo } from "../../src/demo/Seed.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { ProviderHttp } from "../../src/integrations/ProviderHttp.ts"
import { TEST_KEY } from "./SyncFakes.ts"

export const seedDemoIn = <R>(
  run: <A, E>(effect: Effect.Effect<A, E, any>) => Effect.Effect<A, E, R>,
  options: { readonly trialDays?: number } = {}
) =>
  Effect.gen(function*() {
    const clock = yield* run(Clock.clockWith(Effect.succeed))
    const now = () => clock.currentTimeMillisUnsafe()
    const providers = yield* startDemoProviders({ epoch: new Date(now()), broken: false, now })
    // The first request of each hour builds that hour's data (a second or so for a year of it): no short timeout.
    const services = Layer.mergeAll(
      Layer.succeed(DemoProviders, providers),
      CredentialsCipher.layer(TEST_KEY),
      ProviderHttp.layer({ maxAttempts: 1, timeoutMs: 60_000 })
    )
    const demo = yield* run(seedDemo(options).pipe(Effect.provide(services)))
    return { ...demo, providers, services }
  })
