/**
 * The demo stays alive: its projects' Stripe, Plausible and Search Console are ordinary connections (stored
 * encrypted, base URLs of the demo's local servers on 127.0.0.1) that the normal sync runner syncs; a day
 * later the same syncs bring that day's traffic, search data and payments, and a re-sync within the hour
 * changes nothing. There is no `demo` provider any more. Runs on both stores.
 */
import { expect, layer } from "@effect/vitest"
import { PROVIDERS } from "@sitehealth/domain/Integrations"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { resolveBaseUrl } from "../../src/integrations/Connector.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { CONNECTORS } from "../../src/integrations/Registry.ts"
import { stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import { addDays } from "../../src/metrics/Dates.ts"
import { drainSyncs } from "../../src/worker/SyncRunner.ts"
import { seedDemoIn } from "../support/DemoSeed.ts"
import { h, TestApp } from "../support/TestApp.ts"

class Demo extends Context.Service<Demo, Effect.Success<ReturnType<typeof seedDemoIn>>>()("test/DemoLive") {}
const DemoLive = Layer.effect(Demo, seedDemoIn(h.run)).pipe(Layer.provideMerge(TestApp.layer()))

const get = (path: string) =>
  Effect.gen(function*() {
    const { secret } = yield* Demo
    const r = yield* h.raw("GET", `/api/v1${path}`, { token: secret })
    expect(r.status, `${path}: ${r.text.slice(0, 300)}`).toBe(200)
    return r.json.data
  })

/**
 * Queues a sync of each of the project's providers and runs them all, as the worker does; returns the project's runs.
 */
const syncAll = (
  projectId: string,
  mode: "incremental" | "full" = "incremental",
  providers: ReadonlyArray<string> = ["stripe", "plausible", "google-search-console"]
) =>
  Effect.gen(function*() {
    const { services } = yield* Demo
    return yield* h.run(
      Effect.gen(function*() {
        const queue = yield* SyncQueue
        const now = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis))
        for (const provider of providers) {
          yield* queue.request({ projectId, provider, mode, requestedBy: "test", now })
        }
        // The database is shared with the other contract files: only this project's runs are claimed.
        return yield* drainSyncs({ projectIds: [projectId] })
      }).pipe(Effect.provide(services))
    )
  })

/**
 * Two rounds of a year's syncs of three providers, each rebuilding a year of health history: ~18 s alone on
 * PostgreSQL, over the project's 30 s when the whole suite shares two cores (seen: 34.5 s).
 */
const HEAVY_SYNC_TIMEOUT = 120_000

layer(DemoLive, { timeout: "240 seconds" })("the live demo", (it) => {
  it.effect("connects every demo project to stripe, plausible and Search Console on 127.0.0.1, credentials stored encrypted; no demo provider", () =>
    Effect.gen(function*() {
      const { projectIds, providers } = yield* Demo
      expect(PROVIDERS as ReadonlyArray<string>).not.toContain("demo")
      expect([...CONNECTORS.keys()]).not.toContain("demo")
      for (const [i, key] of (["acme", "bolt", "calm"] as const).entries()) {
        const stored = yield* h.run(Effect.flatMap(IntegrationsRepo, (r) => r.all(projectIds[i])))
        expect(stored.map((s) => s.provider)).toEqual(["google-search-console", "plausible", "stripe"])
        for (const connection of providers.connectionsOf(key)) {
          const row = yield* h.run(
            Effect.flatMap(IntegrationsRepo, (r) => r.connection(projectIds[i], connection.provider))
          )
          expect(row!.integration.baseUrl).toBe(connection.baseUrl)
          expect(new URL(connection.baseUrl).hostname).toBe("127.0.0.1")
          expect(row!.integration.lastSyncedAt).not.toBeNull()
          // Encrypted: no credential appears in the stored bytes.
          const bytes = Buffer.from(row!.credentials!).toString("latin1")
          for (const value of Object.values(connection.credentials)) expect(bytes).not.toContain(value)
        }
      }
      // Real accounts' connections still go to the providers: the demo's URLs are per connection, not global.
      expect(yield* resolveBaseUrl(stripeConnector, null)).toBe("https://api.stripe.com")
    }))

  it.effect("a day later the scheduled kind of sync brings the new day's traffic, search data and payments", () =>
    Effect.gen(function*() {
      const { projectIds } = yield* Demo
      const acme = projectIds[0]
      const before = {
        traffic: (yield* get(`/projects/${acme}/analytics?period=7d`)).series as Array<
          { label: string; visitors: number }
        >,
        seo: (yield* get(`/projects/${acme}/seo`)).dataThrough as string,
        revenue: (yield* get(`/projects/${acme}/revenue`)).dataThrough as string
      }
      const today = before.traffic.at(-1)!.label
      expect(before.seo).toBe(addDays(today, -3))

      yield* TestClock.adjust("1 day")
      const runs = yield* syncAll(acme)
      expect(runs.map((r) => `${r.provider} ${r.status}`).sort()).toEqual([
        "google-search-console succeeded",
        "plausible succeeded",
        "stripe succeeded"
      ])

      const traffic = (yield* get(`/projects/${acme}/analytics?period=7d`)).series as Array<
        { label: string; visitors: number }
      >
      expect(traffic.at(-1)!.label).toBe(addDays(today, 1))
      expect(traffic.at(-1)!.visitors).toBeGreaterThan(0)
      // Yesterday (today, before) is whole now: more visitors than its first half-day had.
      expect(traffic.at(-2)!.visitors).toBeGreaterThan(before.traffic.at(-1)!.visitors)
      expect((yield* get(`/projects/${acme}/seo`)).dataThrough).toBe(addDays(before.seo, 1))
      expect((yield* get(`/projects/${acme}/revenue`)).dataThrough > before.revenue).toBe(true)
    }))

  it.effect(
    "a full re-sync within the same hour changes nothing (the data of an hour is stable)",
    () =>
      Effect.gen(function*() {
        const { projectIds } = yield* Demo
        const bolt = projectIds[1]
        const reports = () =>
          Effect.all({
            revenue: get(`/projects/${bolt}/revenue`),
            churn: get(`/projects/${bolt}/churn?period=3m`),
            traffic: get(`/projects/${bolt}/analytics?period=30d`),
            seo: get(`/projects/${bolt}/seo`)
          })
        // Up to date first (the clock moved a day in the test above), then everything again from scratch.
        expect((yield* syncAll(bolt)).every((r) => r.status === "succeeded")).toBe(true)
        const before = yield* reports()
        const runs = yield* syncAll(bolt, "full")
        expect(runs.every((r) => r.status === "succeeded")).toBe(true)
        expect(yield* reports()).toEqual(before)
      }),
    HEAVY_SYNC_TIMEOUT
  )

  it.effect(
    "hours later an incremental Stripe sync reads the new payments from the account's events, and agrees with a full " +
      "listing",
    () =>
      Effect.gen(function*() {
        const { projectIds } = yield* Demo
        const acme = projectIds[0]
        expect((yield* syncAll(acme)).every((r) => r.status === "succeeded")).toBe(true)
        yield* TestClock.adjust("12 hours")
        const [incremental] = yield* syncAll(acme, "incremental", ["stripe"])
        expect(incremental.status, incremental.error ?? "").toBe("succeeded")
        expect(incremental.counts?.events ?? 0).toBeGreaterThan(0)
        const revenue = yield* get(`/projects/${acme}/revenue`)
        const churn = yield* get(`/projects/${acme}/churn?period=30d`)
        const [full] = yield* syncAll(acme, "full", ["stripe"])
        expect(full.status, full.error ?? "").toBe("succeeded")
        expect(yield* get(`/projects/${acme}/revenue`)).toEqual(revenue)
        expect(yield* get(`/projects/${acme}/churn?period=30d`)).toEqual(churn)
      }),
    HEAVY_SYNC_TIMEOUT
  )
})
