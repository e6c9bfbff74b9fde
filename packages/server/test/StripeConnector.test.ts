/**
 * The Stripe connector against FakeStripe (a local node:http server with Stripe's paging), writing into
 * the in-memory repositories: the stored facts and the revenue figures of a hand-computed account
 * (fixtures/stripeFixtures.ts), paging, retries, failures that leave data intact, idempotence, a run
 * killed at a random point and resumed, and incremental runs from events equal to a full resync.
 */
import { afterEach, describe, expect, layer } from "@effect/vitest"
import {
  customer,
  type FakeStripe,
  fromArray,
  invoice,
  line,
  price,
  startFakeStripe,
  subscription,
  ts
} from "@sitehealth/fakes/FakeStripe"
import { Effect, Exit } from "effect"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import type { SyncContext, SyncOutcome } from "../src/integrations/Connector.ts"
import type { Connector } from "../src/integrations/Connector.ts"
import { makeProviderHttp, type ProviderError } from "../src/integrations/ProviderHttp.ts"
import { STRIPE_VERSION } from "../src/integrations/stripe/StripeApi.ts"
import { makeStripeConnector, stripeConnector } from "../src/integrations/stripe/StripeConnector.ts"
import { MemoryRepos } from "../src/Layers.ts"
import { MetricsRepo } from "../src/metrics/MetricsRepo.ts"
import { customerChurnRate, movementsIn, mrrAtEndOf, payingCustomersAtEndOf } from "../src/metrics/Revenue.ts"
import { PaymentsRepo } from "../src/payments/PaymentsRepo.ts"
import type { Charge, Customer, PaymentsData, Refund, SubscriptionVersion } from "../src/payments/Types.ts"
import {
  CONTACTS,
  EXPECTED_MRR,
  goldenStripe,
  goldenStripeChanged,
  LATER,
  NOW,
  RENAMED_B
} from "./fixtures/stripeFixtures.ts"

const KEY = "sk_test_fake"
const http = makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20, timeoutMs: 5_000, maxAttempts: 4 })

let fake: FakeStripe
/** Per successful sync: every fact it committed (PaymentsRepo.commit), in order. */
let writes: Array<Partial<PaymentsData>> = []
/** PaymentsRepo.rollUp calls: the only moment the figures the reports read change. */
let rollUps = 0

const newProject = () =>
  Effect.gen(function*() {
    const account = yield* createAccount({ name: "Stripe test" })
    return (yield* createProject({
      accountId: account.id,
      name: "Shop",
      domain: "shop.example",
      timezone: "UTC",
      currency: "USD"
    })).id
  })

const context = (projectId: string, extra: Partial<SyncContext> = {}): SyncContext => ({
  baseUrl: fake.url,
  credentials: { secret_key: KEY },
  http,
  projectId,
  timezone: "UTC",
  currency: "USD",
  now: new Date(NOW),
  mode: "full",
  state: null,
  ...extra
})

/**
 * The connector's sync, its commits recorded on the way to the real (memory) repository; `kill` interrupts
 * the run at its kill-th step (a provider call or a commit), as a killed worker would stop it.
 */
const sync = (
  projectId: string,
  extra: Partial<SyncContext> = {},
  connector: Connector<PaymentsRepo> = stripeConnector,
  kill: { at: number; steps: number } | null = null
) =>
  Effect.gen(function*() {
    const inner = yield* PaymentsRepo
    const payload = {
      customers: [] as Array<Customer>,
      subscriptionVersions: [] as Array<SubscriptionVersion>,
      charges: [] as Array<Charge>,
      refunds: [] as Array<Refund>
    }
    const step = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      kill === null ? self : Effect.suspend(() => (++kill.steps === kill.at ? Effect.interrupt : self))
    const spy = PaymentsRepo.of({
      ...inner,
      commit: (id, batch) =>
        step(Effect.suspend(() => {
          payload.customers.push(...(batch.facts?.customers ?? []))
          payload.subscriptionVersions.push(...(batch.facts?.subscriptionVersions ?? []))
          payload.charges.push(...(batch.facts?.charges ?? []))
          payload.refunds.push(...(batch.facts?.refunds ?? []))
          return inner.commit(id, batch)
        })),
      rollUp: (id) => step(Effect.suspend(() => (rollUps += 1, inner.rollUp(id))))
    })
    const base = context(projectId, extra)
    const ctx: SyncContext = { ...base, http: { request: (r) => step(base.http.request(r)) } }
    // Recorded whatever the outcome: a killed run's commits are part of what the project holds.
    return yield* connector.sync(ctx).pipe(
      Effect.provideService(PaymentsRepo, spy),
      Effect.onExit(() => Effect.sync(() => void writes.push(payload)))
    )
  })

const syncError = (projectId: string): Effect.Effect<ProviderError, never, PaymentsRepo> =>
  sync(projectId).pipe(Effect.flatMap(() => Effect.die(new Error("the sync succeeded"))), Effect.flip)

const revenueRows = (projectId: string) =>
  Effect.flatMap(MetricsRepo, (m) => m.loadProject(projectId, null)).pipe(Effect.map((p) => p!.series.revenue))

/**
 * A fake Stripe serving the golden account `maxPageSize` objects a page, a new project synced from it once, and its
 * revenue rows.
 */
const syncedOnce = (maxPageSize: number) =>
  Effect.gen(function*() {
    fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize }))
    const projectId = yield* newProject()
    yield* sync(projectId)
    return { projectId, before: yield* revenueRows(projectId) }
  })

afterEach(async () => {
  writes = []
  rollUps = 0
  await fake?.stop()
})

const versionsOf = (subscriptionId: string) =>
  (writes.at(-1)!.subscriptionVersions ?? []).filter((v) => v.subscriptionId === subscriptionId)
    .map((v) =>
      [
        v.validFrom.slice(0, 10),
        v.validTo?.slice(0, 10) ?? null,
        v.status,
        v.unitAmountMinor,
        v.quantity,
        v.interval,
        v.discountPercentOff,
        v.discountAmountOffMinor,
        v.cancelReason
      ] as const
    )

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
        expect(fake.requests.some((r) =>
          r.url.startsWith("/v1/invoices/in_d1/lines?") && r.url.includes("starting_after=il_setup_9")
        )).toBe(true)
        expect(fake.requests.every((r) =>
          r.version === STRIPE_VERSION
        )).toBe(true)
        expect(fake.requests.some((r) => r.url.startsWith("/v1/subscriptions?") && r.url.includes("status=all"))).toBe(
          true
        )

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
          ["ch_a1", "cus_a", 5000, "USD", "succeeded"],
          ["ch_b1", "cus_b", 6000, "USD", "succeeded"],
          ["ch_b3", "cus_b", 6000, "USD", "succeeded"],
          ["ch_b3_failed", "cus_b", 6000, "USD", "failed"],
          ["ch_guest", "", 1500, "USD", "succeeded"] // ch_pending waits until it settles
        ])
        expect(w.refunds).toEqual([{
          id: "re_b1",
          chargeId: "ch_b1",
          at: "2026-07-20T00:01:00.000Z",
          amountMinor: 2000,
          currency: "USD"
        }])
        // Each customer with its name and email as Stripe holds them (C has no name, E no email).
        expect(w.customers!.map((c) => [c.id, c.name, c.email]).sort()).toEqual(
          ["cus_a", "cus_b", "cus_c", "cus_d", "cus_e"].map((id) => [id, CONTACTS[id]!.name, CONTACTS[id]!.email])
        )

        const rows = yield* revenueRows(projectId)
        for (const [day, mrr, customers] of EXPECTED_MRR) {
          expect([day, mrrAtEndOf(rows, day), payingCustomersAtEndOf(rows, day)]).toEqual([day, mrr, customers])
        }
        const row = (day: string) => rows.find((r) => r.day === day)!
        expect(row("2026-08-15").expansionMrrMinor).toBe(5000)
        expect(row("2026-09-15").newMrrMinor).toBe(4000)
        expect([row("2026-10-10").churnedMrrMinor, row("2026-10-10").churnedCustomers]).toEqual([6000, 1])
        expect([row("2026-06-01").grossMinor, row("2026-07-20").refundsMinor, row("2026-10-05").grossMinor]).toEqual([
          5000,
          2000,
          1500
        ])
        // 09-10: the failed try (6 000) and the retry that succeeded (6 000).
        expect([row("2026-09-10").failedPayments, row("2026-09-10").failedMinor, row("2026-09-10").grossMinor]).toEqual(
          [1, 6000, 6000]
        )
        // October: MRR 30 000 at the start; +6 000 new (E), −6 000 churned (B) → 30 000; 1 of 4 customers lost.
        const october = { from: "2026-10-01", to: "2026-10-31" }
        expect(movementsIn(rows, october)).toMatchObject({
          start: 30000,
          new: 6000,
          expansion: 0,
          contraction: 0,
          churned: 6000,
          end: 30000
        })
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
        const subs = (
          cps: string
        ) => [
          ...Array.from({ length: data.subscriptions.size }, (_, i) => data.subscriptions.get(i)).filter((s) =>
            s.id !== "sub_a"
          ),
          subscription({
            id: "sub_a",
            customer: "cus_a",
            status: "active",
            created: ts("2026-06-01T00:00:00Z"),
            currentPeriodStart: ts(cps),
            items: [{ price: max }]
          })
        ]
        // Run 1: A moved to "max" (150.00) without proration; the 11-01 invoice still says pro (100.00).
        fake = yield* Effect.promise(() =>
          startFakeStripe({ ...data, subscriptions: fromArray(subs("2026-11-01T00:00:00Z")) })
        )
        const projectId = yield* newProject()
        yield* sync(projectId)
        expect(mrrAtEndOf(yield* revenueRows(projectId), "2026-11-19")).toBe(35000) // 30 000 − 10 000 + 15 000
        // Run 2, after the 12-01 renewal billed at max: November is pro again, max from 12-01 — nothing counted twice.
        const invoices = Array.from({ length: data.invoices.size }, (_, i) => data.invoices.get(i))
        fake.data = {
          ...data,
          subscriptions: fromArray(subs("2026-12-01T00:00:00Z")),
          invoices: fromArray([
            ...invoices,
            invoice("in_a7", "sub_a", ts("2026-12-01T00:00:00Z"), [
              line({
                id: "il_a7",
                subscription: "sub_a",
                price: max,
                start: ts("2026-12-01T00:00:00Z"),
                end: ts("2027-01-01T00:00:00Z")
              })
            ])
          ])
        }
        yield* sync(projectId, { now: new Date("2026-12-05T00:00:00Z") })
        const rows = yield* revenueRows(projectId)
        expect([mrrAtEndOf(rows, "2026-11-19"), mrrAtEndOf(rows, "2026-12-01")]).toEqual([30000, 35000])
        expect(versionsOf("sub_a").slice(-2).map((v) => [v[0], v[3]])).toEqual([["2026-11-01", 10000], [
          "2026-12-01",
          15000
        ]])
      }))
  })

  describe("paging and politeness", () => {
    it.effect("a subscription with 13 items: the 3 past the 10 Stripe embeds are paged from /v1/subscription_items and count", () =>
      Effect.gen(function*() {
        const data = goldenStripe()
        const item = price("price_seat", 1500)
        const subA = subscription({
          id: "sub_a",
          customer: "cus_a",
          status: "active",
          created: ts("2026-06-01T00:00:00Z"),
          currentPeriodStart: ts("2026-11-01T00:00:00Z"),
          items: Array.from({ length: 13 }, () => ({ price: item }))
        })
        const subs = [
          ...Array.from({ length: data.subscriptions.size }, (_, i) => data.subscriptions.get(i)).filter((s) =>
            s.id !== "sub_a"
          ),
          subA
        ]
        fake = yield* Effect.promise(() =>
          startFakeStripe({ ...data, subscriptions: fromArray(subs) }, { maxPageSize: 2 })
        )
        const projectId = yield* newProject()
        yield* sync(projectId)
        // A's current period: 13 × 15.00 instead of pro's 100.00 (the first 10 items alone would say 150.00).
        expect(mrrAtEndOf(yield* revenueRows(projectId), "2026-11-19")).toBe(30000 - 10000 + 13 * 1500)
        const itemPages = fake.requests.filter((r) => r.url.startsWith("/v1/subscription_items?"))
        expect(itemPages.map((r) => new URL(r.url, fake.url).searchParams.get("starting_after"))).toEqual([
          "si_sub_a_9",
          "si_sub_a_11"
        ])
        expect(itemPages.every((r) => new URL(r.url, fake.url).searchParams.get("subscription") === "sub_a")).toBe(true)
      }))

    it.effect("pages through 250 customers with limit=100 and starting_after (3 pages)", () =>
      Effect.gen(function*() {
        const many = Array.from({ length: 250 }, (_, i) =>
          customer(`cus_${String(i).padStart(3, "0")}`, 1_780_000_000 + i))
        fake = yield* Effect.promise(() =>
          startFakeStripe({ ...goldenStripe(), customers: fromArray(many) })
        )
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
    it.effect("a body that is not JSON fails the run as malformed; the figures stay as they were", () =>
      Effect.gen(function*() {
        const { before, projectId } = yield* syncedOnce(2)
        fake.data = { ...fake.data, subscriptions: fromArray([]) } // would drop every version if it were written
        fake.faults.push({ path: "/v1/invoices", status: 200, body: "{\"object\": \"list\", \"data\": [" })
        const error = yield* syncError(projectId)
        expect(error.kind).toBe("malformed")
        expect(rollUps).toBe(1) // the first sync's: the failed one never rolled up
        expect(yield* revenueRows(projectId)).toEqual(before)
      }))

    it.effect("a list page without has_more is malformed too (never a silent early stop)", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe()))
        fake.faults.push({ path: "/v1/charges", status: 200, body: JSON.stringify({ object: "list", data: [] }) })
        const projectId = yield* newProject()
        expect((yield* syncError(projectId)).kind).toBe("malformed")
        expect(rollUps).toBe(0)
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
        expect(rollUps).toBe(0)
      }))
  })

  describe("a run killed midway", () => {
    it.effect("resumes from its last committed batch: the same figures as an uninterrupted run, nothing counted twice or missed", () =>
      Effect.gen(function*() {
        // One page per batch, two subscriptions per rebuild batch: many commits to be killed between.
        const connector = makeStripeConnector({ batchPages: 1, deriveBatch: 2 })
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 }))
        const reference = yield* newProject()
        const counter = { at: Number.POSITIVE_INFINITY, steps: 0 }
        yield* sync(reference, {}, connector, counter)
        const steps = counter.steps
        const expected = { revenue: yield* revenueRows(reference), payload: writes.at(-1)! }
        expect(steps).toBeGreaterThan(40)
        const keys = (p: Partial<PaymentsData>) => ({
          customers: p.customers!.map((c) => c.id).sort(),
          charges: p.charges!.map((c) => c.id).sort(),
          refunds: p.refunds!.map((r) => r.id).sort(),
          versions: p.subscriptionVersions!.map((v) => `${v.subscriptionId}|${v.validFrom}`).sort()
        })
        const both = (a: Partial<PaymentsData>, b: Partial<PaymentsData>): Partial<PaymentsData> => ({
          customers: [...a.customers!, ...b.customers!],
          charges: [...a.charges!, ...b.charges!],
          refunds: [...a.refunds!, ...b.refunds!],
          subscriptionVersions: [...a.subscriptionVersions!, ...b.subscriptionVersions!]
        })
        // Three random kill points, and the rollup itself (the step before the last, which clears the progress).
        const points = [...Array.from({ length: 3 }, () => 1 + Math.floor(Math.random() * (steps - 2))), steps - 1]
        for (const at of points) {
          const projectId = yield* newProject()
          const requestsBefore = fake.requests.length
          const killed = yield* Effect.exit(sync(projectId, {}, connector, { at, steps: 0 }))
          expect(Exit.hasInterrupts(killed), `killed at step ${at} of ${steps}`).toBe(true)
          expect(yield* revenueRows(projectId), `nothing rolled up when killed at ${at}`).toEqual([])
          const killedRequests = fake.requests.length - requestsBefore
          const resumed = yield* sync(projectId, {}, connector)
          expect(yield* revenueRows(projectId), `killed at step ${at} of ${steps}`).toEqual(expected.revenue)
          // The resumed run did not start over: with what the killed one fetched, about one run's requests.
          expect(fake.requests.length - requestsBefore - killedRequests).toBeLessThanOrEqual(steps - at + 3)
          // What the killed run committed plus what the resumed one did is every row exactly once: nothing
          // redone (no duplicate), nothing skipped (no missing), and the counts add up across both attempts.
          const [killedPart, resumedPart] = writes.slice(-2) as [Partial<PaymentsData>, Partial<PaymentsData>]
          expect(keys(both(killedPart, resumedPart)), `killed at step ${at} of ${steps}`).toEqual(
            keys(expected.payload)
          )
          expect(resumed.counts).toMatchObject({
            customers: 5,
            subscriptions: 5,
            invoices: 16,
            invoiceLines: 18,
            charges: 5,
            refunds: 1
          })
        }
      }))
  })

  describe("incremental runs", () => {
    it.effect("the first run lists everything; the next reads only events, and ends where a full resync does (golden)", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe(), { maxPageSize: 3 }))
        const projectId = yield* newProject()
        const first = yield* sync(projectId, { mode: "incremental", state: null })
        const now = Date.parse(NOW) / 1000
        // No events yet: the cursor starts an hour back; the listing is the day's reconciliation.
        expect(first.state).toEqual({ eventsCursor: now - 3600, reconciledAt: now })

        fake.data = goldenStripeChanged()
        fake.requests.length = 0
        const second = yield* sync(projectId, { mode: "incremental", state: first.state, now: new Date(LATER) })
        const lists = fake.requests.filter((r) =>
          /^\/v1\/(customers|subscriptions|invoices|charges|refunds)\?/.test(r.url)
        )
        expect(lists).toEqual([]) // nothing listed
        const events = fake.requests.filter((r) => r.url.startsWith("/v1/events?"))
        expect(events.length).toBeGreaterThan(0)
        expect(
          events.every((r) =>
            r.url.includes(`created%5Bgte%5D=${now - 3600}`) && r.url.includes("types%5B%5D=invoice.paid")
          )
        ).toBe(true)
        // The snapshot in another API version was fetched again, in ours.
        expect(fake.requests.some((r) => r.url.startsWith("/v1/subscriptions/sub_a") && r.version === "2024-06-20"))
          .toBe(true)
        expect(second.counts).toMatchObject({
          events: 13,
          customers: 2, // F created, B updated
          subscriptions: 3,
          invoices: 1,
          charges: 2,
          refunds: 1
        })
        expect((second.state as { eventsCursor: number }).eventsCursor).toBe(ts("2026-11-20T12:10:00Z") + 500)

        // The same account, fully listed into a new project at the same moment.
        const fresh = yield* newProject()
        yield* sync(fresh, { mode: "full", now: new Date(LATER) })
        const rows = yield* revenueRows(projectId)
        expect(rows).toEqual(yield* revenueRows(fresh))
        const payments = yield* PaymentsRepo
        expect(yield* payments.churnEvents(projectId, "2026-01-01", "2026-12-31")).toEqual(
          yield* payments.churnEvents(fresh, "2026-01-01", "2026-12-31")
        )
        expect(yield* payments.cohort(projectId, "2026-10-01", "2026-11-20")).toEqual(
          yield* payments.cohort(fresh, "2026-10-01", "2026-11-20")
        )
        // customer.updated renamed B, customer.created brought F: the contacts a full listing reads.
        const ids = ["cus_a", "cus_b", "cus_c", "cus_d", "cus_e", "cus_f"]
        const contacts = yield* payments.contacts(projectId, ids)
        expect(contacts).toEqual(yield* payments.contacts(fresh, ids))
        expect(contacts.find((c) => c.customerId === "cus_b")).toEqual({ customerId: "cus_b", ...RENAMED_B })
        expect(contacts).toHaveLength(6)
        // And what changed shows: F new (4 000), C churned (missing_features), re_b1 no longer refunded, re_a1 is.
        expect(mrrAtEndOf(rows, "2026-11-20")).toBe(30000 + 4000 - 4000)
        expect(rows.find((r) => r.day === "2026-07-20")?.refundsMinor ?? 0).toBe(0)
        expect(rows.find((r) => r.day === "2026-11-20")!.refundsMinor).toBe(1000)
        expect((yield* payments.churnEvents(projectId, "2026-11-20", "2026-11-20")).map((e) => e.reason)).toEqual([
          "missing_features"
        ])
      }))

    it.effect("a cursor older than Stripe's 30-day event retention, or a day since the last listing, means a full listing", () =>
      Effect.gen(function*() {
        fake = yield* Effect.promise(() => startFakeStripe(goldenStripe()))
        const projectId = yield* newProject()
        const now = Date.parse(NOW) / 1000
        const listed = () => fake.requests.some((r) => r.url.startsWith("/v1/invoices?"))
        yield* sync(projectId, {
          mode: "incremental",
          state: { eventsCursor: now - 31 * 86_400, reconciledAt: now - 3600 }
        })
        expect(listed()).toBe(true)
        fake.requests.length = 0
        yield* sync(projectId, { mode: "incremental", state: { eventsCursor: now - 3600, reconciledAt: now - 86_400 } })
        expect(listed()).toBe(true)
        fake.requests.length = 0
        yield* sync(projectId, { mode: "incremental", state: { eventsCursor: now - 3600, reconciledAt: now - 86_000 } })
        expect(listed()).toBe(false)
      }))
  })
})
