/**
 * People, not ids, on both stores: after a full Stripe sync, the churn report's churned customers and the revenue
 * report's recent failed payments carry each customer's name and email as Stripe holds them; after an incremental
 * run that reads `customer.updated` events, they carry the new ones — also where the reports were read (and their
 * answers kept) before. FakeStripe serves the golden account (fixtures/stripeFixtures.ts, CONTACTS) with three
 * failed charges added in the last 30 days. Today is 2026-11-20 (harness clock).
 */
import { expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import {
  charge,
  customer,
  event,
  type FakeStripeData,
  fromArray,
  type ListSource,
  type Obj,
  startFakeStripe,
  ts
} from "@sitehealth/fakes/FakeStripe"
import { Effect } from "effect"
import type { SyncContext } from "../../src/integrations/Connector.ts"
import { makeProviderHttp } from "../../src/integrations/ProviderHttp.ts"
import { stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import type { StripeSyncState } from "../../src/integrations/stripe/StripeSync.ts"
import { CONTACTS, goldenStripe, LATER, NOW } from "../fixtures/stripeFixtures.ts"
import { h, TestApp } from "../support/TestApp.ts"

const all = (source: ListSource): Array<Obj> => Array.from({ length: source.size }, (_, i) => source.get(i))
const d = (day: string) => ts(`${day}T00:00:00Z`)
const usd = (amount: number) => ({ amount, currency: "USD" })

/**
 * The golden account with three failed attempts in the last 30 days: E's (a name only), C's (an email only), a
 * guest's.
 */
const withFailures = (): FakeStripeData => {
  const base = goldenStripe()
  return {
    ...base,
    charges: fromArray([
      ...all(base.charges),
      charge("ch_e_failed", "cus_e", d("2026-11-12") + 60, 6000, "failed"),
      charge("ch_guest_failed", null, d("2026-11-15") + 60, 1500, "failed"),
      charge("ch_c_failed", "cus_c", d("2026-11-18") + 60, 4000, "failed")
    ])
  }
}

/** An hour later: B renamed with a new address, E gives an address — each a customer.updated event. */
const renamed = {
  b: { name: "Bruno Okafor-Lind", email: "accounts@okafor-lind.example" },
  e: { name: "Emil Haas", email: "emil@haas.example" }
}
const withUpdates = (): FakeStripeData => {
  const base = withFailures()
  const t = ts("2026-11-20T12:10:00Z")
  const cusB = customer("cus_b", d("2026-07-10"), renamed.b)
  const cusE = customer("cus_e", d("2026-10-01"), renamed.e)
  return {
    ...base,
    customers: fromArray(all(base.customers).map((o) => (o.id === "cus_b" ? cusB : o.id === "cus_e" ? cusE : o))),
    events: fromArray([event("evt_cb", "customer.updated", t, cusB), event("evt_ce", "customer.updated", t + 5, cusE)])
  }
}

const context = (url: string, projectId: string, extra: Partial<SyncContext>): SyncContext => ({
  baseUrl: url,
  credentials: { secret_key: "sk_test_fake" },
  http: makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20 }),
  projectId,
  timezone: "UTC",
  currency: "USD",
  now: new Date(NOW),
  mode: "full",
  state: null,
  ...extra
})

layer(TestApp.layer())("Stripe sync: customers' names and emails in the reports", (it) => {
  it.effect("churned customers and failed payments carry the name and email after a full sync and after customer.updated", () =>
    Effect.gen(function*() {
      const fake = yield* scopedFake(() => startFakeStripe(withFailures(), { maxPageSize: 2 }))
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      const reports = Effect.gen(function*() {
        const churn = yield* h.api.reports.getChurn({ params: { id }, query: { period: "3m" } }, { token: secret })
        const revenue = yield* h.api.reports.getRevenue({ params: { id }, query: {} }, { token: secret })
        expect([churn.status, revenue.status]).toEqual([200, 200])
        return { churned: churn.json.data.churned, failed: revenue.json.data.failedPayments }
      })
      const synced = yield* h.run(stripeConnector.sync(context(fake.url, id, {})))

      const full = yield* reports
      expect(full.churned).toEqual([{
        customerId: "cus_b",
        name: CONTACTS.cus_b!.name,
        email: CONTACTS.cus_b!.email,
        date: "2026-10-10",
        mrrLost: usd(6000),
        reason: "too_expensive"
      }])
      const failed = (chargeId: string, customerId: string | null, contact: object, amount: number, day: string) => ({
        chargeId,
        customerId,
        ...contact,
        amount: usd(amount),
        day
      })
      const none = { name: null, email: null }
      expect(full.failed).toEqual({
        count: 3,
        amount: usd(11500),
        recent: [
          failed("ch_c_failed", "cus_c", { name: null, email: "billing@c-studio.example" }, 4000, "2026-11-18"),
          failed("ch_guest_failed", null, none, 1500, "2026-11-15"),
          failed("ch_e_failed", "cus_e", { name: "Emil Haas", email: null }, 6000, "2026-11-12")
        ]
      })

      // The events: an incremental run reads them (no listing) and the kept answers give way to the new names.
      fake.data = withUpdates()
      fake.requests.length = 0
      const state = synced.state as StripeSyncState
      const outcome = yield* h.run(
        stripeConnector.sync(context(fake.url, id, { mode: "incremental", now: new Date(LATER), state }))
      )
      expect(fake.requests.some((r) => r.url.startsWith("/v1/customers?"))).toBe(false)
      expect(outcome.counts).toMatchObject({ events: 2, customers: 2 })
      const updated = yield* reports
      expect(updated.churned).toEqual([{ ...full.churned[0], ...renamed.b }])
      expect(updated.failed).toEqual({
        ...full.failed,
        recent: [full.failed.recent[0], full.failed.recent[1], { ...full.failed.recent[2], ...renamed.e }]
      })
    }))
})
