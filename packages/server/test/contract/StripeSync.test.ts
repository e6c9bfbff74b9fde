/**
 * The Stripe connector end to end on both stores: FakeStripe (fixtures/stripeFixtures.ts, hand-computed)
 * → stripeConnector.sync → PaymentsRepo (SQL or memory) → GET /revenue and /churn through the real router.
 * Today is 2026-11-20 (harness clock). On Postgres, the second run must leave the raw rows as they were; a
 * run killed at a random page and resumed, and an incremental run from events, must leave exactly the rows
 * (and figures) of an uninterrupted full sync.
 */
import { expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import {
  charge,
  event,
  type FakeStripe,
  type FakeStripeData,
  fromArray,
  invoice,
  line,
  type ListSource,
  type Obj,
  price,
  startFakeStripe,
  subscription,
  ts
} from "@sitehealth/fakes/FakeStripe"
import { Context, Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { SyncContext } from "../../src/integrations/Connector.ts"
import { makeProviderHttp } from "../../src/integrations/ProviderHttp.ts"
import { makeStripeConnector, stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import { PaymentsRepo } from "../../src/payments/PaymentsRepo.ts"
import { MemoryDb } from "../../src/store/MemoryDb.ts"
import { goldenStripe, goldenStripeChanged, LATER, NOW } from "../fixtures/stripeFixtures.ts"
import { h, TestApp } from "../support/TestApp.ts"

/** The fake Stripe account, up for the whole file. */
class Stripe extends Context.Service<Stripe, FakeStripe>()("test/FakeStripe") {}
const StripeLive = Layer.effect(Stripe, scopedFake(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 })))
/** A second fake whose account the tests below change. */
class Changing extends Context.Service<Changing, FakeStripe>()("test/ChangingStripe") {}
const ChangingLive = Layer.effect(Changing, scopedFake(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 })))

const usd = (amount: number) => ({ amount, currency: "USD" })
const sync = (projectId: string) =>
  Effect.flatMap(Stripe, (fake) =>
    h.run(stripeConnector.sync({
      baseUrl: fake.url,
      credentials: { secret_key: "sk_test_fake" },
      http: makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20 }),
      projectId,
      timezone: "UTC",
      currency: "USD",
      now: new Date(NOW),
      mode: "full",
      state: null
    })))
const get = (path: string, token: string) =>
  Effect.gen(function*() {
    const r = yield* h.raw("GET", path, { token })
    expect(r.status, r.text).toBe(200)
    return r.json.data
  })
/** Every raw row a Stripe sync leaves for the project (Postgres), in a stable order, the project id left out. */
const allRawRows = (projectId: string) =>
  h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all({
      customers: sql`SELECT id, created_at, name, email FROM customers WHERE project_id = ${projectId} ORDER BY id`,
      versions:
        sql`SELECT subscription_id, customer_id, valid_from, valid_to, status, currency, unit_amount_minor, quantity, interval,
        interval_count, discount_percent_off, discount_amount_off_minor, cancel_reason
        FROM subscription_versions WHERE project_id = ${projectId} ORDER BY subscription_id, valid_from`,
      charges:
        sql`SELECT id, customer_id, at, amount_minor, currency, status FROM charges WHERE project_id = ${projectId} ORDER BY id`,
      refunds:
        sql`SELECT id, charge_id, at, amount_minor, currency FROM refunds WHERE project_id = ${projectId} ORDER BY id`,
      staged:
        sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId} ORDER BY kind, id`,
      revenue: sql`SELECT * FROM revenue_daily WHERE project_id = ${projectId} ORDER BY day`,
      progress: sql`SELECT provider FROM payments_sync_progress WHERE project_id = ${projectId}`
    }))).pipe(Effect.map((r) => ({ ...r, revenue: r.revenue.map(({ project_id: _, ...row }) => row) })))

/**
 * Every derived row of the project — revenue days, MRR spans, churn events, unconverted days — and on
 * Postgres the rollup's stored parts too, in a stable order: each table ordered by its whole key.
 */
const derivedRows = (projectId: string) =>
  h.store === "postgres"
    ? h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all({
        revenue: sql`SELECT * FROM revenue_daily WHERE project_id = ${projectId} ORDER BY day`,
        spans: sql`SELECT * FROM customer_mrr WHERE project_id = ${projectId} ORDER BY customer_id, from_day`,
        churn: sql`SELECT * FROM churn_events WHERE project_id = ${projectId} ORDER BY day, customer_id`,
        unconverted:
          sql`SELECT * FROM revenue_unconverted_daily WHERE project_id = ${projectId} ORDER BY currency, day`,
        moves: sql`SELECT * FROM payments_customer_moves WHERE project_id = ${projectId} ORDER BY customer_id, day`,
        unconvertedMoves:
          sql`SELECT * FROM payments_customer_unconverted WHERE project_id = ${projectId} ORDER BY customer_id, currency, day`,
        // By every key column: a day's charges and refunds rows come in heap order otherwise, which the table's
        // other writers (another suite on the same database) change.
        flows: sql`SELECT * FROM payments_flow_days WHERE project_id = ${projectId} ORDER BY day, source`,
        unconvertedFlows:
          sql`SELECT * FROM payments_flow_unconverted WHERE project_id = ${projectId} ORDER BY currency, day, source`
      })))
    : h.run(Effect.gen(function*() {
      const repo = yield* PaymentsRepo
      const db = yield* MemoryDb
      const revenue = [...(db.revenue.get(projectId)?.values() ?? [])].sort((a, b) => (a.day < b.day ? -1 : 1))
      const cohorts = []
      for (const d of revenue) cohorts.push(yield* repo.cohort(projectId, d.day, revenue.at(-1)!.day))
      return {
        revenue,
        cohorts,
        churn: yield* repo.churnEvents(projectId, "0001-01-01", "9999-12-31"),
        unconverted: yield* repo.unconverted(projectId, "0001-01-01", "9999-12-31")
      }
    }))

const rawRows = (projectId: string) =>
  h.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`SELECT subscription_id, valid_from, valid_to, status, unit_amount_minor, quantity, discount_percent_off, cancel_reason
        FROM subscription_versions WHERE project_id = ${projectId} ORDER BY subscription_id, valid_from`)
  )

layer(Layer.mergeAll(TestApp.layer(), StripeLive))("Stripe sync → revenue and churn", (it) => {
  it.effect("serves the hand-computed figures, and a second run changes nothing", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      yield* sync(id)
      const revenue = yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)
      // A 10 000 + C 4 000 + D 10 000 + E 6 000 (B churned on 10-10): see fixtures/stripeFixtures.ts.
      expect(revenue.mrr).toEqual(usd(30000))
      const churn = yield* get(`/api/v1/projects/${id}/churn?period=3m`, secret)
      expect(churn.churned).toEqual([{
        customerId: "cus_b",
        name: "Bruno Okafor",
        email: "bruno@okafor.example",
        date: "2026-10-10",
        mrrLost: usd(6000),
        reason: "too_expensive"
      }])

      const before = h.store === "postgres" ? (yield* rawRows(id)) : null
      if (before !== null) expect(before).toHaveLength(18) // A 7, B 4, C 4, D 1, E 2 versions
      yield* sync(id)
      expect(yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)).toEqual(revenue)
      expect(yield* get(`/api/v1/projects/${id}/churn?period=3m`, secret)).toEqual(churn)
      if (before !== null) expect(yield* rawRows(id)).toEqual(before)
    }))
})

layer(Layer.mergeAll(TestApp.layer(), ChangingLive))("Stripe sync: killed and resumed, incremental (golden)", (it) => {
  const connector = makeStripeConnector({ batchPages: 1, deriveBatch: 2 })
  const ctxOf = (fake: FakeStripe, projectId: string, extra: Partial<SyncContext> = {}): SyncContext => ({
    baseUrl: fake.url,
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

  it.effect("a sync killed at a random page resumes to exactly the rows of an uninterrupted one; an incremental run from events to those of a full resync", () =>
    Effect.gen(function*() {
      const fake = yield* Changing
      const reference = (yield* h.newAccount()).projects[0].id
      const synced = yield* h.run(connector.sync(ctxOf(fake, reference)))
      const pages = fake.requests.length
      const killed = (yield* h.newAccount()).projects[0].id
      const at = 1 + Math.floor(Math.random() * (pages - 1))
      let seen = 0
      const dying = ctxOf(fake, killed)
      const exit = yield* Effect.exit(h.run(connector.sync({
        ...dying,
        http: { request: (r) => (++seen === at ? Effect.interrupt : dying.http.request(r)) }
      })))
      expect(Exit.hasInterrupts(exit), `killed at request ${at} of ${pages}`).toBe(true)
      yield* h.run(connector.sync(ctxOf(fake, killed)))
      if (h.store === "postgres") {
        const expected = yield* allRawRows(reference)
        expect(expected.progress).toEqual([])
        expect(yield* allRawRows(killed), `killed at request ${at} of ${pages}`).toEqual(expected)
      }

      // An hour later the account has changed; the reference project reads the events, a new one lists everything.
      fake.data = goldenStripeChanged()
      fake.requests.length = 0
      yield* h.run(
        connector.sync(ctxOf(fake, reference, { mode: "incremental", now: new Date(LATER), state: synced.state }))
      )
      expect(fake.requests.some((r) => r.url.startsWith("/v1/invoices?"))).toBe(false)
      const fresh = (yield* h.newAccount()).projects[0].id
      yield* h.run(connector.sync(ctxOf(fake, fresh, { now: new Date(LATER) })))
      if (h.store === "postgres") expect(yield* allRawRows(reference)).toEqual(yield* allRawRows(fresh))
    }))

  it.effect("an incremental rollup after events leaves exactly the derived rows of a full rollup of the same data", () =>
    Effect.gen(function*() {
      const fake = yield* scopedFake(() => startFakeStripe(goldenStripe(), { maxPageSize: 2 }))
      const id = (yield* h.newAccount()).projects[0].id
      const synced = yield* h.run(connector.sync(ctxOf(fake, id)))
      const before = yield* derivedRows(id)
      fake.data = goldenStripeChanged()
      yield* h.run(connector.sync(ctxOf(fake, id, { mode: "incremental", now: new Date(LATER), state: synced.state })))
      const incremental = yield* derivedRows(id)
      // The events changed figures (a sign-up, a churn, refunds), so the rollup did recompute something.
      expect(incremental.revenue).not.toEqual(before.revenue)
      expect(incremental.churn).not.toEqual(before.churn)
      yield* h.run(Effect.flatMap(PaymentsRepo, (repo) => repo.rebuild(id)))
      expect(yield* derivedRows(id)).toEqual(incremental)
    }))
})

/**
 * The golden account an hour later: E renews now at a new price (team+ 90.00, its 25 % coupon kept: a new
 * invoice, its charge, the subscription's new current period) — or, with `samePrice`, at its price of now
 * (team 80.00) — and the day's other events only re-deliver objects as they are stored (A's customer,
 * subscription, last invoice and first charge; B's refund).
 */
const goldenStripeRenewed = (options: { readonly samePrice?: boolean } = {}): FakeStripeData => {
  const base = goldenStripe()
  const all = (source: ListSource): Array<Obj> => Array.from({ length: source.size }, (_, i) => source.get(i))
  const find = (source: ListSource, id: string) => all(source).find((o) => o.id === id)!
  const t = ts("2026-11-20T12:10:00Z")
  const teamPlus = options.samePrice === true ? price("price_team", 8000) : price("price_team_plus", 9000)
  const unit = options.samePrice === true ? 8000 : 9000
  const subE = subscription({
    id: "sub_e",
    customer: "cus_e",
    status: "active",
    created: ts("2026-10-01T00:00:00Z"),
    currentPeriodStart: t,
    items: [{ price: teamPlus }],
    coupon: { percent_off: 25 }
  })
  const inE3 = invoice("in_e3", "sub_e", t, [
    line({ id: "il_e3", subscription: "sub_e", price: teamPlus, start: t, end: t + 30 * 86_400, discount: unit / 4 })
  ])
  const chE3 = charge("ch_e3", "cus_e", t + 60, unit * 0.75)
  return {
    customers: base.customers,
    subscriptions: fromArray([...all(base.subscriptions).filter((o) => o.id !== "sub_e"), subE]),
    invoices: fromArray([...all(base.invoices), inE3]),
    charges: fromArray([...all(base.charges), chE3]),
    refunds: base.refunds,
    events: fromArray([
      event("evt_r1", "customer.updated", t - 60, find(base.customers, "cus_a")),
      event("evt_r2", "customer.subscription.updated", t - 50, find(base.subscriptions, "sub_a")),
      event("evt_r3", "invoice.updated", t - 40, find(base.invoices, "in_a6")),
      event("evt_r4", "charge.updated", t - 30, find(base.charges, "ch_a1")),
      event("evt_r5", "refund.updated", t - 20, find(base.refunds, "re_b1")),
      event("evt_e1", "invoice.paid", t, inE3),
      event("evt_e2", "charge.succeeded", t + 60, chE3),
      event("evt_e3", "customer.subscription.updated", t + 70, subE)
    ])
  }
}

layer(TestApp.layer())("Stripe sync: an incremental run writes only what changed", (it) => {
  const connector = makeStripeConnector({ batchPages: 1, deriveBatch: 2 })
  /** Each stored row's transaction id (xmin): a row rewritten gets the writer's. Postgres only. */
  const rowVersions = (projectId: string) =>
    h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all({
        versions:
          sql`SELECT subscription_id, valid_from, valid_to, xmin::text AS x FROM subscription_versions WHERE project_id = ${projectId}
          ORDER BY subscription_id, valid_from`,
        staged:
          sql`SELECT kind, id, xmin::text AS x FROM payments_staged WHERE project_id = ${projectId} ORDER BY kind, id`,
        charges: sql`SELECT id, xmin::text AS x FROM charges WHERE project_id = ${projectId} ORDER BY id`,
        refunds: sql`SELECT id, xmin::text AS x FROM refunds WHERE project_id = ${projectId} ORDER BY id`,
        customers: sql`SELECT id, xmin::text AS x FROM customers WHERE project_id = ${projectId} ORDER BY id`
      })))
  type Rows = ReadonlyArray<Record<string, unknown>>
  const keyed = (rows: Rows, key: (r: Record<string, unknown>) => string) => new Map(rows.map((r) => [key(r), r.x]))
  /** The keys of the rows that are new or rewritten since `before`. */
  const rewritten = (before: Rows, after: Rows, key: (r: Record<string, unknown>) => string) => {
    const was = keyed(before, key)
    return after.filter((r) => was.get(key(r)) !== r.x).map(key)
  }

  /** A new account whose project has synced `account` from the fake Stripe (pages of 2) in full, at NOW. */
  const fullySynced = (account: Parameters<typeof startFakeStripe>[0]) =>
    Effect.gen(function*() {
      const fake = yield* scopedFake(() => startFakeStripe(account, { maxPageSize: 2 }))
      const { projects, secret } = yield* h.newAccount()
      const id = projects[0].id
      const ctx = (extra: Partial<SyncContext> = {}): SyncContext => ({
        baseUrl: fake.url,
        credentials: { secret_key: "sk_test_fake" },
        http: makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20 }),
        projectId: id,
        timezone: "UTC",
        currency: "USD",
        now: new Date(NOW),
        mode: "full",
        state: null,
        ...extra
      })
      const synced = yield* h.run(connector.sync(ctx()))
      return { fake, id, secret, ctx, synced }
    })

  it.effect("re-delivered objects leave their rows untouched; a renewal appends one version, ends the one before, and shows in MRR", () =>
    Effect.gen(function*() {
      const { fake, id, secret, ctx, synced } = yield* fullySynced(goldenStripe())
      expect((yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)).mrr).toEqual(usd(30000))
      const before = h.store === "postgres" ? yield* rowVersions(id) : null

      fake.data = goldenStripeRenewed()
      // What the commits marked for the rollup (Postgres), read just before it consumes the marks.
      let dirty: ReadonlyArray<unknown> = []
      const outcome = yield* h.run(Effect.gen(function*() {
        const inner = yield* PaymentsRepo
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        const spy = PaymentsRepo.of({
          ...inner,
          rollUp: (projectId) =>
            Effect.gen(function*() {
              if (h.store === "postgres" && Option.isSome(sql)) {
                dirty = yield* sql
                  .value`SELECT kind, key FROM payments_rollup_dirty WHERE project_id = ${projectId} ORDER BY kind, key`
                  .pipe(Effect.orDie)
              }
              return yield* inner.rollUp(projectId)
            })
        })
        return yield* connector.sync(ctx({ mode: "incremental", now: new Date(LATER), state: synced.state })).pipe(
          Effect.provideService(PaymentsRepo, spy)
        )
      }))
      expect(outcome.counts).toMatchObject({
        events: 8,
        customers: 1,
        subscriptions: 2,
        invoices: 2,
        charges: 2,
        refunds: 1
      })
      // E: 9 000 × 0.75 = 6 750 instead of 6 000.
      expect((yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)).mrr).toEqual(usd(30750))

      if (before !== null) {
        const after = yield* rowVersions(id)
        const version = (r: Record<string, unknown>) =>
          `${String(r.subscription_id)}@${new Date(String(r.valid_from)).toISOString()}`
        // Only E's versions changed: the one from 11-01 now ends at 12:10, a new one starts then.
        expect(rewritten(before.versions, after.versions, version)).toEqual([
          "sub_e@2026-11-01T00:00:00.000Z",
          "sub_e@2026-11-20T12:10:00.000Z"
        ])
        expect(after.versions.length).toBe(before.versions.length + 1)
        expect(rewritten(before.staged, after.staged, (r) => `${String(r.kind)}|${String(r.id)}`)).toEqual([
          "lines|in_e3|sub_e",
          "subscription|sub_e"
        ])
        expect(rewritten(before.charges, after.charges, (r) => String(r.id))).toEqual(["ch_e3"])
        expect(rewritten(before.refunds, after.refunds, (r) => String(r.id))).toEqual([])
        expect(rewritten(before.customers, after.customers, (r) => String(r.id))).toEqual([])
        // The rollup recomputed E and the new charge only.
        expect(dirty).toEqual([{ kind: "charge", key: "ch_e3" }, { kind: "customer", key: "cus_e" }])
      }
      // And the incremental rollup's rows are those of a full one.
      const incremental = yield* derivedRows(id)
      yield* h.run(Effect.flatMap(PaymentsRepo, (repo) => repo.rebuild(id)))
      expect(yield* derivedRows(id)).toEqual(incremental)
    }))

  it.effect("a renewal at an unchanged price leaves its customer's stored rollup parts as they are", () =>
    Effect.gen(function*() {
      const { fake, id, secret, ctx, synced } = yield* fullySynced(goldenStripe())
      /** Each stored part's transaction id (xmin), by its key. Postgres only. */
      const partVersions = () =>
        h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.all({
            spans:
              sql`SELECT customer_id || '@' || from_day::text AS k, xmin::text AS x FROM customer_mrr WHERE project_id = ${id} ORDER BY 1`,
            moves:
              sql`SELECT customer_id || '@' || day::text AS k, xmin::text AS x FROM payments_customer_moves WHERE project_id = ${id} ORDER BY 1`,
            churn:
              sql`SELECT customer_id || '@' || day::text AS k, xmin::text AS x FROM churn_events WHERE project_id = ${id} ORDER BY 1`
          })))
      const before = h.store === "postgres" ? yield* partVersions() : null
      const derivedBefore = yield* derivedRows(id)

      fake.data = goldenStripeRenewed({ samePrice: true })
      yield* h.run(connector.sync(ctx({ mode: "incremental", now: new Date(LATER), state: synced.state })))
      expect((yield* get(`/api/v1/projects/${id}/revenue?period=3m`, secret)).mrr).toEqual(usd(30000))
      if (before !== null) {
        const after = yield* partVersions()
        // E's versions changed (a new period), so E was recomputed — to the same parts: none of its rows rewritten.
        expect(rewritten(before.spans, after.spans, (r) => String(r.k))).toEqual([])
        expect(rewritten(before.moves, after.moves, (r) => String(r.k))).toEqual([])
        expect(rewritten(before.churn, after.churn, (r) => String(r.k))).toEqual([])
        expect(after.spans.map((r) => r.k)).toEqual(before.spans.map((r) => r.k))
        expect(after.moves.map((r) => r.k)).toEqual(before.moves.map((r) => r.k))
      }
      // The new charge counts; MRR, spans, moves and churn are as before — and as a full rollup's.
      const incremental = yield* derivedRows(id)
      expect(incremental.churn).toEqual(derivedBefore.churn)
      yield* h.run(Effect.flatMap(PaymentsRepo, (repo) => repo.rebuild(id)))
      expect(yield* derivedRows(id)).toEqual(incremental)
    }))

  it.effect("a stored charge that changes takes its old contribution away: the day's figures equal a full rollup's", () =>
    Effect.gen(function*() {
      const base = goldenStripe()
      const { fake, id, ctx, synced } = yield* fullySynced(base)
      const before = yield* derivedRows(id)
      // ch_a1 settles 10.00 lower (captured partially): its stored row changes, and its day's gross with it.
      const all = (source: ListSource): Array<Obj> => Array.from({ length: source.size }, (_, i) => source.get(i))
      const was = all(base.charges).find((o) => o.id === "ch_a1")!
      const lower = { ...was, amount: Number(was.amount) - 1000 }
      fake.data = {
        ...base,
        charges: fromArray(all(base.charges).map((o) => (o.id === "ch_a1" ? lower : o))),
        events: fromArray([event("evt_c1", "charge.updated", ts("2026-11-20T12:10:00Z"), lower)])
      }
      yield* h.run(connector.sync(ctx({ mode: "incremental", now: new Date(LATER), state: synced.state })))
      const incremental = yield* derivedRows(id)
      // Postgres rows say gross_minor, the memory store's days grossMinor.
      const gross = (rows: typeof before) =>
        rows.revenue.reduce(
          (sum: number, r: object) => sum + Number(Reflect.get(r, "gross_minor") ?? Reflect.get(r, "grossMinor")),
          0
        )
      expect(gross(incremental)).toBe(gross(before) - 1000)
      yield* h.run(Effect.flatMap(PaymentsRepo, (repo) => repo.rebuild(id)))
      expect(yield* derivedRows(id)).toEqual(incremental)
    }))
})
