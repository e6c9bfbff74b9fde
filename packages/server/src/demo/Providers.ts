/**
 * The demo's providers: for each demo project, a local Stripe, Plausible and Google (OAuth token endpoint +
 * Search Console API) — the fakes of @sitehealth/fakes the tests use — fed with the demo's data of the
 * current hour (Feeds.ts). The demo projects' stripe, plausible and google-search-console integrations are
 * ordinary connections to these servers: per-connection base URLs (and, for Google, the credentials' own
 * token_uri), so nothing about where real accounts' connections go changes.
 *
 * Security: the servers listen on 127.0.0.1 only, on ports the system picks, and only while a server that
 * holds the demo account runs (main.ts starts them for an embedded database with a demo account). Their
 * keys are random per start and reach the database only encrypted, like any credentials; a key of an
 * earlier start is refused.
 */
import { startFakeGsc } from "@sitehealth/fakes/FakeGsc"
import { startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { fromArray, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import type { Credentials } from "../integrations/Connector.ts"
import { demoSiteUrl, makeDemoFeed } from "./Feeds.ts"
import { DEMO_PROJECTS, type DemoProjectSpec, type DemoProvider } from "./Profiles.ts"

/** One demo project's connection to one of its local providers. */
export interface DemoConnection {
  readonly provider: DemoProvider
  readonly baseUrl: string
  readonly credentials: Credentials
}

export interface DemoProvidersShape {
  /** When the demo account was created: its history and planted events count from this instant. */
  readonly epoch: Date
  /** The project's connections, in the order of its profile. */
  readonly connectionsOf: (key: DemoProjectSpec["key"]) => ReadonlyArray<DemoConnection>
  /** Revokes the grants the profiles say break after the first sync (Calm Notes' Search Console). */
  readonly breakFailingConnections: () => void
}

export class DemoProviders extends Context.Service<DemoProviders, DemoProvidersShape>()("sitehealth/DemoProviders") {
  /**
   * The servers for the life of the layer. `now` is the clock they serve data for (the Effect Clock of
   * the layer's construction by default, so a TestClock moves them too). `broken`: start with the failing
   * grants already revoked (a restart: they broke after the first sync, long ago).
   */
  static readonly layer = (options: { readonly epoch: Date; readonly broken: boolean; readonly now?: () => number }) =>
    Layer.effect(DemoProviders, startDemoProviders(options))
}

// What the servers are started with; every request reads the feed instead (nothing is generated at start).
const EMPTY_STRIPE = {
  customers: fromArray([]),
  subscriptions: fromArray([]),
  invoices: fromArray([]),
  charges: fromArray([]),
  refunds: fromArray([])
}
const EMPTY_PLAUSIBLE = { days: {}, hours: {}, pages: [], sources: [], uniques: {} }

const secret = (prefix: string) => `${prefix}${randomBytes(18).toString("base64url")}`

const acquire = <F extends { readonly close: () => Promise<void> }>(start: () => Promise<F>) =>
  Effect.acquireRelease(Effect.promise(start), (fake) => Effect.promise(() => fake.close()))

export const startDemoProviders = (
  options: { readonly epoch: Date; readonly broken: boolean; readonly now?: () => number }
) =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const now = options.now ?? (() => clock.currentTimeMillisUnsafe())
    const byProject = new Map<DemoProjectSpec["key"], Array<DemoConnection>>()
    const breakers: Array<() => void> = []
    for (const spec of DEMO_PROJECTS) {
      const feed = makeDemoFeed(spec, options.epoch)
      const connections: Array<DemoConnection> = []
      for (const integration of spec.integrations) {
        switch (integration.provider) {
          case "stripe": {
            const key = secret("sk_test_demo_")
            const stripe = yield* acquire(async () => {
              const fake = await startFakeStripe(EMPTY_STRIPE, { keys: [key] })
              // Read per request: the data of the current hour.
              Object.defineProperty(fake, "data", { get: () => feed.stripe(now()), set: () => {} })
              return { fake, close: fake.stop }
            })
            connections.push({ provider: "stripe", baseUrl: stripe.fake.url, credentials: { secret_key: key } })
            break
          }
          case "plausible": {
            const apiKey = secret("demo-")
            const plausible = yield* acquire(() =>
              startFakePlausible({
                apiKey,
                siteId: spec.domain,
                siteTimezone: spec.timezone,
                data: EMPTY_PLAUSIBLE,
                source: () => feed.plausible(now())
              })
            )
            connections.push({
              provider: "plausible",
              baseUrl: plausible.url,
              credentials: { api_key: apiKey, site_id: spec.domain }
            })
            break
          }
          case "google-search-console": {
            const grant = {
              clientId: secret("demo-client-"),
              clientSecret: secret("demo-secret-"),
              refreshToken: secret("1//demo-")
            }
            const siteUrl = demoSiteUrl(spec)
            const gsc = yield* acquire(() =>
              startFakeGsc({
                ...grant,
                siteUrl,
                get rows() {
                  return feed.gsc(now()).rows
                },
                get totals() {
                  return feed.gsc(now()).totals
                }
              })
            )
            if (integration.breaksAfterFirstSync === true) {
              if (options.broken) gsc.revoke()
              else breakers.push(() => gsc.revoke())
            }
            connections.push({
              provider: "google-search-console",
              baseUrl: gsc.url,
              credentials: {
                client_id: grant.clientId,
                client_secret: grant.clientSecret,
                refresh_token: grant.refreshToken,
                site_url: siteUrl,
                token_uri: gsc.tokenUrl
              }
            })
            break
          }
        }
      }
      byProject.set(spec.key, connections)
    }
    return DemoProviders.of({
      epoch: options.epoch,
      connectionsOf: (key) => byProject.get(key) ?? [],
      breakFailingConnections: () => {
        for (const b of breakers.splice(0)) b()
      }
    })
  })
