/**
 * Provider payloads are decoded by schemas: a record of the wrong shape fails the sync run with a message
 * naming the provider, the record and the field (never a defect), and what was stored before stays as it
 * was. Each provider's fake serves one good run, then one malformed record.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { startFakeGsc } from "@sitehealth/fakes/FakeGsc"
import { startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { fromArray, type Obj, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { Effect, Exit, Result } from "effect"
import { createProject } from "../src/accounts/Provisioning.ts"
import type { SyncContext } from "../src/integrations/Connector.ts"
import { makeTokenSource } from "../src/integrations/gsc/GoogleToken.ts"
import { parseRows } from "../src/integrations/gsc/GscApi.ts"
import { makeGscConnector } from "../src/integrations/gsc/GscConnector.ts"
import { makePlausibleConnector } from "../src/integrations/plausible/PlausibleConnector.ts"
import { makeProviderHttp, type ProviderError } from "../src/integrations/ProviderHttp.ts"
import { stripeConnector } from "../src/integrations/stripe/StripeConnector.ts"
import { MetricsRepo } from "../src/metrics/MetricsRepo.ts"
import { SearchRepo } from "../src/search/SearchRepo.ts"
import { TrafficRepo } from "../src/traffic/TrafficRepo.ts"
import { GSC_CREDENTIALS, GSC_ROWS, GSC_TOTALS } from "./fixtures/gscFixtures.ts"
import { BERLIN, PLAUSIBLE_DATA, PLAUSIBLE_KEY, PLAUSIBLE_SITE } from "./fixtures/plausibleFixtures.ts"
import { goldenStripe, NOW } from "./fixtures/stripeFixtures.ts"
import { h, START, TestApp } from "./support/TestApp.ts"

const http = makeProviderHttp({ timeoutMs: 5_000, maxAttempts: 2, backoffBaseMs: 1, maxWaitMs: 20 })

/** A fake provider, stopped when the test ends. */
const started = <F>(start: () => Promise<F>, stop: (fake: F) => Promise<void>) =>
  Effect.acquireRelease(Effect.promise(start), (fake) => Effect.promise(() => stop(fake)))

const newProject = (timezone = "UTC") =>
  Effect.gen(function*() {
    const { account } = yield* h.newAccount({ projects: 0 })
    return (yield* h.run(createProject({ accountId: account.id, name: "Shop", domain: "shop.example", timezone }))).id
  })

const context = (projectId: string, over: Partial<SyncContext>): SyncContext => ({
  baseUrl: "",
  credentials: {},
  http,
  projectId,
  timezone: "UTC",
  currency: "USD",
  now: new Date(START),
  mode: "full",
  state: null,
  ...over
})

/** The run's typed failure: a defect (a crash) fails the test. */
const failureOf = <A, R>(sync: Effect.Effect<A, ProviderError, R>) =>
  Effect.gen(function*() {
    const exit = yield* h.run(Effect.exit(sync))
    if (Exit.isSuccess(exit)) throw new Error("the sync succeeded")
    const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
    if (failure === undefined) throw new Error(`not a typed failure: ${String(exit.cause)}`)
    return failure.error
  })

layer(TestApp.layer())("malformed provider payloads", (it) => {
  describe("Stripe", () => {
    it.effect("a subscription whose price has a unit_amount that is not a number: the run fails naming it, nothing written", () =>
      Effect.gen(function*() {
        const fake = yield* started(() => startFakeStripe(goldenStripe()), (f) => f.stop())
        const projectId = yield* newProject()
        const ctx = context(projectId, {
          baseUrl: fake.url,
          credentials: { secret_key: "sk_test_fake" },
          now: new Date(NOW)
        })
        yield* h.run(stripeConnector.sync(ctx))
        const revenue = h.run(Effect.flatMap(MetricsRepo, (m) => m.loadProject(projectId, null))).pipe(
          Effect.map((p) => p?.series.revenue)
        )
        const before = yield* revenue
        expect(before?.length).toBeGreaterThan(0)

        const subscriptions: Array<Obj> = []
        for (let i = 0; i < fake.data.subscriptions.size; i++) subscriptions.push(fake.data.subscriptions.get(i))
        const target = subscriptions[0]
        const broken = {
          ...target,
          items: {
            ...target.items,
            data: [{ ...target.items.data[0], price: { ...target.items.data[0].price, unit_amount: "abc" } }]
          }
        }
        // Without the broken one every other subscription would lose its versions, were anything written.
        fake.data = { ...fake.data, subscriptions: fromArray([broken]) }

        const error = yield* failureOf(stripeConnector.sync(ctx))
        expect(error.kind).toBe("malformed")
        expect(error.message).toBe(
          `stripe: subscription ${target.id}: items.data[0].price.unit_amount: expected number | null, got "abc"`
        )
        expect(yield* revenue).toEqual(before)
      }))

    it.effect("a charge without an amount, and a list page without has_more, are named too", () =>
      Effect.gen(function*() {
        const fake = yield* started(() => startFakeStripe(goldenStripe()), (f) => f.stop())
        const ctx = context(yield* newProject(), {
          baseUrl: fake.url,
          credentials: { secret_key: "sk_test_fake" },
          now: new Date(NOW)
        })
        fake.faults.push({
          path: "/v1/charges",
          status: 200,
          body: JSON.stringify({
            object: "list",
            data: [{ id: "ch_1", status: "succeeded", currency: "usd", created: 1 }],
            has_more: false
          })
        })
        expect((yield* failureOf(stripeConnector.sync(ctx))).message).toBe("stripe: charge ch_1: amount: missing")
        fake.faults.push({ path: "/v1/refunds", status: 200, body: JSON.stringify({ object: "list", data: [] }) })
        expect((yield* failureOf(stripeConnector.sync(ctx))).message).toBe(
          "stripe: list /v1/refunds: has_more: missing"
        )
      }))
  })

  describe("Plausible", () => {
    it.effect("a day whose visitors is a string: the run fails naming the day and the metric, stored traffic unchanged", () =>
      Effect.gen(function*() {
        const fake = yield* started(
          () => startFakePlausible({ apiKey: PLAUSIBLE_KEY, siteId: PLAUSIBLE_SITE, data: PLAUSIBLE_DATA() }),
          (f) => f.close()
        )
        const projectId = yield* newProject(BERLIN)
        const ctx = context(projectId, {
          baseUrl: fake.url,
          credentials: { api_key: PLAUSIBLE_KEY, site_id: PLAUSIBLE_SITE },
          timezone: BERLIN
        })
        const connector = makePlausibleConnector({ historyMonths: 1 })
        yield* h.run(connector.sync(ctx))
        const stored = h.run(Effect.flatMap(TrafficRepo, (t) =>
          t.read(projectId, {
            hoursFrom: "2026-09-30T00:00:00.000Z",
            hoursTo: "2026-11-21T00:00:00.000Z",
            from: "2026-09-01",
            to: "2026-11-30",
            topFrom: "2026-09-01",
            topTo: "2026-11-30",
            top: 1000
          })))
        const before = yield* stored

        fake.script.push({
          status: 200,
          body: JSON.stringify({ results: [{ dimensions: ["2026-11-20"], metrics: ["many", 1, 1, 0, 0] }] })
        })
        expect((yield* failureOf(connector.sync(ctx))).message).toBe(
          `plausible: row 2026-11-20: metrics[0]: expected number | null, got "many"`
        )
        fake.script.push({
          status: 200,
          body: JSON.stringify({ results: [{ dimensions: ["2026-11-20"], metrics: [1, 1, 1, 0] }] })
        })
        expect((yield* failureOf(connector.sync(ctx))).message).toBe(
          "plausible: row 2026-11-20: metrics: expected 5 values, got 4"
        )
        expect(yield* stored).toEqual(before)
      }))
  })

  describe("Search Console", () => {
    it.effect("a row whose clicks is a string, and a token answer without access_token: named, stored rows unchanged", () =>
      Effect.gen(function*() {
        const fake = yield* started(() =>
          startFakeGsc({
            clientId: GSC_CREDENTIALS.client_id,
            clientSecret: GSC_CREDENTIALS.client_secret,
            refreshToken: GSC_CREDENTIALS.refresh_token,
            siteUrl: GSC_CREDENTIALS.site_url,
            rows: GSC_ROWS(),
            totals: GSC_TOTALS()
          }), (f) => f.close())
        const projectId = yield* newProject()
        const ctx = context(projectId, { baseUrl: fake.url, credentials: GSC_CREDENTIALS })
        const connector = () =>
          makeGscConnector({ historyMonths: 1, tokens: makeTokenSource({ GOOGLE_TOKEN_URL: fake.tokenUrl }) })
        yield* h.run(connector().sync(ctx))
        const stored = h.run(Effect.flatMap(SearchRepo, (s) => s.loadTotals(projectId, "2026-01-01", "2026-12-31")))
        const before = yield* stored
        expect(before.length).toBeGreaterThan(0)

        fake.apiScript.push({
          status: 200,
          body: JSON.stringify({ rows: [{ keys: ["2026-11-17"], clicks: "7", impressions: 10, position: 2 }] })
        })
        expect((yield* failureOf(connector().sync(ctx))).message).toBe(
          `google-search-console: row 2026-11-17: clicks: expected number, got "7"`
        )
        fake.tokenScript.push({ status: 200, body: JSON.stringify({ token_type: "Bearer", expires_in: 3600 }) })
        expect((yield* failureOf(connector().sync(ctx))).message).toBe(
          "google-search-console: token endpoint: access_token: missing"
        )
        expect(yield* stored).toEqual(before)
      }))
  })
})

describe("a decode failure is a typed failure, not a defect", () => {
  it.effect("an answer whose rows is not an array", () =>
    Effect.gen(function*() {
      const result = yield* Effect.result(parseRows({ rows: "nope" }, 1))
      expect(Result.isFailure(result) && result.failure.message).toBe(
        "google-search-console: searchAnalytics/query: rows: expected array, got \"nope\""
      )
    }))
})
