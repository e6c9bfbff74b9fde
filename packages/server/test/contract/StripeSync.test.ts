/**
 * The Stripe connector end to end on both stores: FakeStripe (fixtures/stripeFixtures.ts, hand-computed)
 * → stripeConnector.sync → PaymentsRepo (SQL or memory) → GET /revenue and /churn through the real router.
 * Today is 2026-11-20 (harness clock). On Postgres, the second run must leave the raw rows as they were.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { makeProviderHttp } from "../../src/integrations/ProviderHttp.ts"
import { stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { type FakeStripe, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { goldenStripe, NOW } from "../fixtures/stripeFixtures.ts"
import { h, TestApp } from "../support/TestApp.ts"

/** The fake Stripe account, up for the whole file. */
class Stripe extends Context.Service<Stripe, FakeStripe>()("test/FakeStripe") {}
const StripeLive = Layer.effect(Stripe, scopedFake(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 })))

const usd = (amount: number) => ({ amount, currency: "USD" })
const sync = (projectId: string) => Effect.flatMap(Stripe, (fake) =>
  h.run(stripeConnector.sync({
    baseUrl: fake.url, credentials: { secret_key: "sk_test_fake" }, http: makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20 }),
    projectId, timezone: "UTC", currency: "USD", now: new Date(NOW), mode: "full", state: null
  })))
const get = (path: string, token: string) => Effect.gen(function*() {
  const r = yield* h.raw("GET", path, { token })
  expect(r.status, r.text).toBe(200)
  return r.json.data
})
const rawRows = (projectId: string) =>
  h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT subscription_id, valid_from, valid_to, status, unit_amount_minor, quantity, discount_percent_off, cancel_reason
        FROM subscription_versions WHERE project_id = ${projectId} ORDER BY subscription_id, valid_from`))

layer(Layer.mergeAll(TestApp.layer(), StripeLive))("Stripe sync → revenue and churn", (it) => {
  it.effect("serves the hand-computed figures, and a second run changes nothing", () => Effect.gen(function*() {
    const { projects, secret } = yield* h.newAccount()
    const id = projects[0].id
    yield* sync(id)
    const revenue = yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)
    // A 10 000 + C 4 000 + D 10 000 + E 6 000 (B churned on 10-10): see fixtures/stripeFixtures.ts.
    expect(revenue.mrr).toEqual(usd(30000))
    const churn = yield* get(`/api/v1/projects/${id}/churn?period=3m`, secret)
    expect(churn.churned).toEqual([{ customerId: "cus_b", date: "2026-10-10", mrrLost: usd(6000), reason: "too_expensive" }])

    const before = h.store === "postgres" ? (yield* rawRows(id)) : null
    if (before !== null) expect(before).toHaveLength(18) // A 7, B 4, C 4, D 1, E 2 versions
    yield* sync(id)
    expect(yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)).toEqual(revenue)
    expect(yield* get(`/api/v1/projects/${id}/churn?period=3m`, secret)).toEqual(churn)
    if (before !== null) expect(yield* rawRows(id)).toEqual(before)
  }))
})
