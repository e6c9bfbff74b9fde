/**
 * The Stripe connector against FakeStripe (a local node:http server with Stripe's paging), writing into
 * the in-memory repositories: the stored facts and the revenue figures of a hand-computed account
 * (fixtures/stripeFixtures.ts), paging, retries, failures that leave data intact, and idempotence.
 */
import { afterEach, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { MemoryRepos } from "../src/Layers.ts"
import { customerChurnRate, mrrAtEndOf, movementsIn, payingCustomersAtEndOf } from "../src/metrics/Revenue.ts"
import { MetricsRepo } from "../src/metrics/MetricsRepo.ts"
import { PaymentsRepo } from "../src/payments/PaymentsRepo.ts"
import type { PaymentsData } from "../src/payments/Types.ts"
import type { SyncContext, SyncOutcome } from "../src/integrations/Connector.ts"
import { makeProviderHttp, type ProviderError } from "../src/integrations/ProviderHttp.ts"
import { STRIPE_VERSION } from "../src/integrations/stripe/StripeApi.ts"
import { stripeConnector } from "../src/integrations/stripe/StripeConnector.ts"
import { customer, type FakeStripe, fromArray, invoice, line, price, startFakeStripe, subscription, ts } from "@sitehealth/fakes/FakeStripe"
import { EXPECTED_MRR, goldenStripe, NOW } from "./fixtures/stripeFixtures.ts"

const KEY = "sk_test_fake"
const http = makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20, timeoutMs: 5_000, maxAttempts: 4 })

let fake: FakeStripe
/** Every payload the connector handed to PaymentsRepo.write. */
let writes: Array<Partial<PaymentsData>> = []

const newProject = () =>
  Effect.gen(function*() {
    const account = yield* createAccount({ name: "Stripe test" })
    return (yield* createProject({ accountId: account.id, name: "Shop", domain: "shop.example", timezone: "UTC", currency: "USD" })).id
  })

const context = (projectId: string, extra: Partial<SyncContext> = {}): SyncContext => ({
  baseUrl: fake.url, credentials: { secret_key: KEY }, http, projectId, timezone: "UTC", currency: "USD",
  now: new Date(NOW), mode: "full", state: null, ...extra
})

/** The connector's sync, with PaymentsRepo.write recorded on the way to the real (memory) repository. */
const sync = (projectId: string, extra: Partial<SyncContext> = {}) =>
  Effect.gen(function*() {
    const inner = yield* PaymentsRepo
    const spy = PaymentsRepo.of({ ...inner, write: (id, data) => (writes.push(data), inner.write(id, data)) })
    return yield* stripeConnector.sync(context(projectId, extra)).pipe(Effect.provideService(PaymentsRepo, spy))
  })

const syncError = (projectId: string): Effect.Effect<ProviderError, never, PaymentsRepo> =>
  sync(projectId).pipe(Effect.flatMap(() => Effect.die(new Error("the sync succeeded"))), Effect.flip)

const revenueRows = (projectId: string) => Effect.flatMap(MetricsRepo, (m) => m.loadProject(projectId, null)).pipe(Effect.map((p) => p!.series.revenue))

/** A fake Stripe serving the golden account `maxPageSize` objects a page, a new project synced from it once, and its revenue rows. */
const syncedOnce = (maxPageSize: number) =>
  Effect.gen(function*() {
    fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize }))
    const projectId = yield* newProject()
    yield* sync(projectId)
    return { projectId, before: yield* revenueRows(projectId) }
  })

afterEach(async () => {
  writes = []
  await fake?.stop()
})

const versionsOf = (subscriptionId: string) =>
  (writes.at(-1)!.subscriptionVersions ?? []).filter((v) => v.subscriptionId === subscriptionId)
    .map((v) => [v.validFrom.slice(0, 10), v.validTo?.slice(0, 10) ?? null, v.status, v.unitAmountMinor, v.quantity, v.interval, v.discountPercentOff, v.discountAmountOffMinor, v.cancelReason] as const)

// One set of in-memory repositories for the file; the live clock, as ProviderHttp backs off and times out in real time.
layer(MemoryRepos, { excludeTestServices: true })((it) => {
  describe("a hand-computed account", () => {
    it.effect("stores every fact and yields the expected MRR, movements and churn", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 })) // several pages of every list
        const projectId = yield* newProject()
        const outcome: SyncOutcome = yield* sync(projectId)
        expect(outcome.counts).toMatchObject({ customers: 5, subscriptions: 5, invoices: 16, charges: 5, refunds: 1 })
        // 18 subscription lines: A 1+1+1+3+1+1 (two prorations on in_a4), B 3, C 4, D 1 (its 12th line, paged), E 2.
        expect(outcome.counts.invoiceLines).toBe(18)
        expect(fake.requests.some((r) => r.url.startsWith("/v1/invoices/in_d1/lines?") && r.url.includes("starting_after=il_setup_9"))).toBe(true)
        expect(fake.requests.every((r) => r.version === STRIPE_VERSION)).toBe(true)
        expect(fake.requests.some((r) => r.url.startsWith("/v1/subscriptions?") && r.url.includes("status=all"))).toBe(true)

        // One version per invoiced period, prorations and lifecycle instants; the latest from the live subscription.
        expect(versionsOf("sub_a")).toEqual([
          ["2026-06-01", "2026-07-01", "active", 5000, 1, "month", null, null, null],
          ["2026-07-01", "2026-08-01", "active", 5000, 1, "month", null, null, null],
          ["2026-08-01", "2026-08-15", "active", 5000, 1, "month", null, null, null],
          ["2026-08-15", "2026-09-01", "active", 10000, 1, "month", null, null, null], // the upgrade, from the proration
          ["2026-09-01", "2026-10-01", "active", 10000, 1, "month", null, null, null],
          ["2026-10-01", "2026-11-01", "active", 10000, 1, "month", null, null, null],
          ["2026-11-01", null, "active", 10000, 1, "month", null, null, null]
        ])
        expect(versionsOf("sub_b")).toEqual([
          ["2026-07-10", "2026-08-10", "active", 3000, 2, "month", null, null, null],
          ["2026-08-10", "2026-09-10", "active", 3000, 2, "month", null, null, null],
          ["2026-09-10", "2026-10-10", "active", 3000, 2, "month", null, null, null],
          ["2026-10-10", null, "canceled", 3000, 2, "month", null, null, "too_expensive"] // feedback over reason
        ])
        expect(versionsOf("sub_c")).toEqual([
          ["2026-09-01", "2026-09-15", "trialing", 4000, 1, "month", null, null, null],
          ["2026-09-15", "2026-10-15", "active", 4000, 1, "month", null, null, null],
          ["2026-10-15", "2026-11-15", "active", 4000, 1, "month", null, null, null],
          ["2026-11-15", null, "active", 4000, 1, "month", null, null, null]
        ])
        expect(versionsOf("sub_d")).toEqual([["2026-03-01", null, "active", 120000, 1, "year", null, null, null]])
        // The invoiced 2 000 off 8 000 is the live coupon's 25 %.
        expect(versionsOf("sub_e")).toEqual([
          ["2026-10-01", "2026-11-01", "active", 8000, 1, "month", 25, null, null],
          ["2026-11-01", null, "active", 8000, 1, "month", 25, null, null]
        ])
        const w = writes.at(-1)!
        expect(w.charges!.map((c) => [c.id, c.customerId, c.amountMinor, c.currency, c.status]).sort()).toEqual([
          ["ch_a1", "cus_a", 5000, "USD", "succeeded"], ["ch_b1", "cus_b", 6000, "USD", "succeeded"],
          ["ch_b3", "cus_b", 6000, "USD", "succeeded"], ["ch_b3_failed", "cus_b", 6000, "USD", "failed"],
          ["ch_guest", "", 1500, "USD", "succeeded"] // ch_pending waits until it settles
        ])
        expect(w.refunds).toEqual([{ id: "re_b1", chargeId: "ch_b1", at: "2026-07-20T00:01:00.000Z", amountMinor: 2000, currency: "USD" }])
        expect(w.customers!.map((c) => c.id).sort()).toEqual(["cus_a", "cus_b", "cus_c", "cus_d", "cus_e"])

        const rows = yield* revenueRows(projectId)
        for (const [day, mrr, customers] of EXPECTED_MRR) {
          expect([day, mrrAtEndOf(rows, day), payingCustomersAtEndOf(rows, day)]).toEqual([day, mrr, customers])
        }
        const row = (day: string) => rows.find((r) => r.day === day)!
        expect(row("2026-08-15").expansionMrrMinor).toBe(5000)
        expect(row("2026-09-15").newMrrMinor).toBe(4000)
        expect([row("2026-10-10").churnedMrrMinor, row("2026-10-10").churnedCustomers]).toEqual([6000, 1])
        expect([row("2026-06-01").grossMinor, row("2026-07-20").refundsMinor, row("2026-10-05").grossMinor]).toEqual([5000, 2000, 1500])
        // 09-10: the failed try (6 000) and the retry that succeeded (6 000).
        expect([row("2026-09-10").failedPayments, row("2026-09-10").failedMinor, row("2026-09-10").grossMinor]).toEqual([1, 6000, 6000])
        // October: MRR 30 000 at the start; +6 000 new (E), −6 000 churned (B) → 30 000; 1 of 4 customers lost.
        const october = { from: "2026-10-01", to: "2026-10-31" }
        expect(movementsIn(rows, october)).toMatchObject({ start: 30000, new: 6000, expansion: 0, contraction: 0, churned: 6000, end: 30000 })
        expect(customerChurnRate(rows, october)).toBe(0.25) // 1 / 4
        const churn = yield* Effect.flatMap(PaymentsRepo, (p) => p.churnEvents(projectId, "2026-01-01", "2026-11-20"))
        expect(churn).toEqual([{ customerId: "cus_b", day: "2026-10-10", mrrLostMinor: 6000, reason: "too_expensive" }])
      }))

    it.effect("running the sync twice writes the same data and leaves the figures unchanged", () =>
      Effect.gen(function*() {
        const { before, projectId } = yield* syncedOnce(3)
        yield* sync(projectId)
        expect(writes).toHaveLength(2)
        expect(writes[1]).toEqual(writes[0])
        expect(yield* revenueRows(projectId)).toEqual(before)
      }))
  })

  describe("a change not invoiced yet", () => {
    it.effect("counts from its period's start, and the next run rewrites that same version from the invoice (no stale row)", () =>
      Effect.gen(function*() {
        const data = goldenStripe()
        const max = price("price_max", 15000)
        const subs = (cps: string) => [...Array.from({ length: data.subscriptions.size }, (_, i) => data.subscriptions.get(i)).filter((s) => s.id !== "sub_a"),
          subscription({ id: "sub_a", customer: "cus_a", status: "active", created: ts("2026-06-01T00:00:00Z"), currentPeriodStart: ts(cps), items: [{ price: max }] })]
        // Run 1: A moved to "max" (150.00) without proration; the 11-01 invoice still says pro (100.00).
        fake = yield* Effect.promise(() => startFakeStripe({ ...data, subscriptions: fromArray(subs("2026-11-01T00:00:00Z")) }))
        const projectId = yield* newProject()
        yield* sync(projectId)
        expect(mrrAtEndOf(yield* revenueRows(projectId), "2026-11-19")).toBe(35000) // 30 000 − 10 000 + 15 000
        // Run 2, after the 12-01 renewal billed at max: November is pro again, max from 12-01 — nothing counted twice.
        const invoices = Array.from({ length: data.invoices.size }, (_, i) => data.invoices.get(i))
        fake.data = {
          ...data,
          subscriptions: fromArray(subs("2026-12-01T00:00:00Z")),
          invoices: fromArray([...invoices, invoice("in_a7", "sub_a", ts("2026-12-01T00:00:00Z"), [
            line({ id: "il_a7", subscription: "sub_a", price: max, start: ts("2026-12-01T00:00:00Z"), end: ts("2027-01-01T00:00:00Z") })
          ])])
        }
        yield* sync(projectId, { now: new Date("2026-12-05T00:00:00Z") })
        const rows = yield* revenueRows(projectId)
        expect([mrrAtEndOf(rows, "2026-11-19"), mrrAtEndOf(rows, "2026-12-01")]).toEqual([30000, 35000])
        expect(versionsOf("sub_a").slice(-2).map((v) => [v[0], v[3]])).toEqual([["2026-11-01", 10000], ["2026-12-01", 15000]])
      }))
  })

  describe("paging and politeness", () => {
    it.effect("pages through 250 customers with limit=100 and starting_after (3 pages)", () =>
      Effect.gen(function*() {
        const many = Array.from({ length: 250 }, (_, i) => customer(`cus_${String(i).padStart(3, "0")}`, 1_780_000_000 + i))
        fake = yield* Effect.promise(() => startFakeStripe({ ...goldenStripe(), customers: fromArray(many) }))
        const projectId = yield* newProject()
        const outcome = yield* sync(projectId)
        expect(outcome.counts.customers).toBe(250)
        const pages = fake.requests.filter((r) => r.url.startsWith("/v1/customers?"))
        expect(pages).toHaveLength(3)
        expect(pages.every((r) => r.url.includes("limit=100"))).toBe(true)
        expect(new Set(writes[0]!.customers!.map((c) => c.id)).size).toBe(250)
      }))

    it.effect("waits out a 429 with Retry-After and a 503, then succeeds with the same data", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 }))
        fake.faults.push({ path: "/v1/invoices", status: 429, headers: { "retry-after": "0" } })
        fake.faults.push({ path: "/v1/charges", status: 503 })
        const projectId = yield* newProject()
        yield* sync(projectId)
        expect(fake.faults).toHaveLength(0) // both were served
        const rows = yield* revenueRows(projectId)
        expect(mrrAtEndOf(rows, "2026-11-19")).toBe(30000)
      }))
  })

  describe("failures leave the data as it was", () => {
    it.effect("a body that is not JSON fails the run as malformed and writes nothing", () =>
      Effect.gen(function*() {
        const { before, projectId } = yield* syncedOnce(2)
        fake.data = { ...fake.data, subscriptions: fromArray([]) } // would drop every version if it were written
        fake.faults.push({ path: "/v1/invoices", status: 200, body: "{\"object\": \"list\", \"data\": [" })
        const error = yield* syncError(projectId)
        expect(error.kind).toBe("malformed")
        expect(writes).toHaveLength(1)
        expect(yield* revenueRows(projectId)).toEqual(before)
      }))

    it.effect("a list page without has_more is malformed too (never a silent early stop)", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe()))
        fake.faults.push({ path: "/v1/charges", status: 200, body: JSON.stringify({ object: "list", data: [] }) })
        const projectId = yield* newProject()
        expect((yield* syncError(projectId)).kind).toBe("malformed")
        expect(writes).toHaveLength(0)
      }))

    it.effect("a revoked key is unauthorized, for validate and for sync", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe()))
        const projectId = yield* newProject()
        yield* stripeConnector.validate(context(projectId))
        fake.keys.delete(KEY)
        const error = yield* Effect.flip(stripeConnector.validate(context(projectId)))
        expect([error.kind, error.status]).toEqual(["unauthorized", 401])
        expect(error.message).toContain("rejected the key")
        expect(error.message).not.toContain(KEY)
        expect((yield* syncError(projectId)).kind).toBe("unauthorized")
        expect(writes).toHaveLength(0)
      }))
  })

  describe("incremental runs", () => {
    it.effect("list customers, charges and refunds from the cursor minus the overlap, subscriptions and invoices in full", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe()))
        const projectId = yield* newProject()
        const first = yield* sync(projectId, { mode: "incremental", state: null })
        const cursor = (first.state as { createdCursor: number }).createdCursor
        expect(cursor).toBe(Date.parse("2026-11-19T00:00:00Z") / 1000) // ch_pending, the newest object
        fake.requests.length = 0
        const second = yield* sync(projectId, { mode: "incremental", state: first.state })
        const since = `created%5Bgte%5D=${cursor - 14 * 86_400}`
        expect(fake.requests.filter((r) => r.url.startsWith("/v1/charges?")).every((r) => r.url.includes(since))).toBe(true)
        expect(fake.requests.filter((r) => r.url.startsWith("/v1/invoices?")).some((r) => r.url.includes("created"))).toBe(false)
        expect(second.counts.charges).toBe(0) // nothing settled in the last 14 days but the pending one
        expect(second.state).toEqual(first.state)
        const rows = yield* revenueRows(projectId)
        expect(mrrAtEndOf(rows, "2026-11-19")).toBe(30000)
      }))
  })
})
