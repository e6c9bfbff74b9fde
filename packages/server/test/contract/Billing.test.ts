/**
 * Subscriptions through Stripe (docs/billing.md), against the local fake Stripe (packages/fakes
 * FakeStripeBilling.ts) and its signed webhooks: the trial's end → 402 → Checkout → webhooks → 200; every
 * transition (past_due and its grace, cancel at period end, cancel now, resubscribe); duplicate and out-of-order
 * events; bad, missing and stale signatures changing nothing; Stripe unreachable storing nothing; no billing keys
 * (operator-managed); and, on PostgreSQL, a webhook landing on instance A seen by instance B at once.
 */
import { describe, expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { type FakeStripeBilling, startFakeStripeBilling } from "@sitehealth/fakes/FakeStripeBilling"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { BillingRepo } from "../../src/accounts/BillingRepo.ts"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import type { AppConfigShape } from "../../src/platform/Config.ts"
import { h, makeTestApp, store, TestApp, type TestAppShape } from "../support/TestApp.ts"

class Fake extends Context.Service<Fake, FakeStripeBilling>()("test/FakeStripeBilling") {
  static readonly layer = Layer.effect(Fake, scopedFake(() => startFakeStripeBilling()))
}

const billingOf = (fake: FakeStripeBilling): AppConfigShape["billing"] => ({
  secretKey: Redacted.make(fake.secretKey),
  webhookSecret: Redacted.make(fake.webhookSecret),
  priceId: fake.prices.monthly,
  priceIdYearly: fake.prices.yearly,
  apiBase: fake.url
})

// Sessions outlive the weeks the tests move the clock by (a grace period, a billing period).
const LONG_SESSIONS = { sessionIdleMinutes: 100 * 24 * 60, sessionMaxHours: 100 * 24 }
const BillingApp = Layer.unwrap(
  Effect.map(Fake, (fake) => TestApp.layer({ billing: billingOf(fake), ...LONG_SESSIONS }))
)
  .pipe(Layer.provideMerge(Fake.layer))

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
const DAY = 86_400_000
let counter = 0

/** Webhook answers, in order: each delivery's status and outcome. */
const deliveries: Array<{ status: number; outcome: string | undefined; type: string }> = []

/** The fake's clock is the test's; its deliveries go to `app`'s /billing/webhook. */
const wire = (app: TestAppShape) =>
  Effect.gen(function*() {
    const fake = yield* Fake
    const clock = yield* Clock.Clock
    fake.now = () => clock.currentTimeMillisUnsafe()
    fake.deliver = (body, signature) =>
      Effect.runPromise(
        app.raw("POST", "/billing/webhook", { token: null, rawBody: body, headers: { "stripe-signature": signature } })
      ).then((r) => {
        deliveries.push({ status: r.status, outcome: r.json?.data?.outcome, type: JSON.parse(body).type })
        return r.status
      })
    return fake
  })

/** A verified dashboard user of a fresh account, logged in on `app`, with an API token; its trial over. */
const owner = (app: TestAppShape) =>
  Effect.gen(function*() {
    const email = `billing-${Date.now().toString(36)}-${counter++}@example.test`
    const passwordHash = yield* hashPassword(PASSWORD)
    const account = yield* app.run(Effect.gen(function*() {
      const account = yield* createAccount({ name: email })
      yield* (yield* AuthRepo).createUser({
        id: newUserId(),
        accountId: account.id,
        email,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      })
      return account
    }))
    yield* TestClock.adjust("1 minute") // a fresh log-in throttle window
    const login = yield* app.raw("POST", "/app/api/auth/login", {
      token: null,
      headers: ORIGIN,
      body: { email, password: PASSWORD }
    })
    expect(login.status, login.text).toBe(200)
    const cookie = /sitehealth_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")![1]
    const headers = { ...ORIGIN, cookie: `sitehealth_session=${cookie}`, "x-csrf-token": login.json.data.csrfToken }
    const { secret } = yield* app.mint(account.id)
    yield* app.endTrial(account.id)
    const dash = (method: string, path: string, body?: unknown) =>
      app.raw(method, `/app/api${path}`, { token: null, headers, ...(body === undefined ? {} : { body }) })
    const apiStatus = Effect.map(app.api.projects.listProjects({ query: {} }, { token: secret }), (r) => r.status)
    const billing = Effect.map(dash("GET", "/account"), (r) => r.json.data.billing)
    return { account, dash, apiStatus, billing }
  })

type Owner = Effect.Success<ReturnType<typeof owner>>

/** Subscribe → the fake's Checkout page "paid" → its signed events delivered; answers the subscription. */
const subscribe = (fake: FakeStripeBilling, o: Owner, plan: "monthly" | "yearly" = "monthly") =>
  Effect.gen(function*() {
    const checkout = yield* o.dash("POST", "/account/checkout", { plan })
    expect(checkout.status, checkout.text).toBe(200)
    const url: string = checkout.json.data.url
    expect(url.startsWith(`${fake.url}/checkout/`)).toBe(true)
    return yield* Effect.promise(() => fake.completeCheckout(url.split("/").pop()!))
  })

layer(BillingApp)("billing through Stripe", (it) => {
  it.effect("trial over → 402 → Checkout → signed webhooks → active → 200, and the account page says so", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      expect(yield* o.apiStatus).toBe(402)
      expect(yield* o.billing).toMatchObject({ managedBy: "stripe", state: "ended", canSubscribe: true })
      const before = fake.calls.length
      const sub = yield* subscribe(fake, o, "yearly")
      const calls = fake.calls.slice(before).map((c) => `${c.method} ${c.path}`)
      expect(calls.slice(0, 2)).toEqual(["POST /v1/customers", "POST /v1/checkout/sessions"])
      const session = fake.calls.find((c) => c.path === "/v1/checkout/sessions" && c.form.customer === sub.customer)!
      expect(session.form).toMatchObject({
        mode: "subscription",
        client_reference_id: o.account.id,
        "line_items[0][price]": fake.prices.yearly,
        success_url: expect.stringMatching(/^http:\/\/[^/]+\/account\?checkout=success$/),
        cancel_url: expect.stringMatching(/^http:\/\/[^/]+\/account\?checkout=canceled$/)
      })
      // The trial is over: nothing to carry into Stripe.
      expect(session.form["subscription_data[trial_end]"]).toBeUndefined()
      expect(deliveries.slice(-3).map((d) => [d.type, d.status, d.outcome])).toEqual([
        ["checkout.session.completed", 200, "processed"],
        ["customer.subscription.created", 200, "processed"],
        ["invoice.paid", 200, "processed"]
      ])
      expect(yield* o.apiStatus).toBe(200)
      const billing = yield* o.billing
      expect(billing).toMatchObject({ state: "active", plan: "yearly", canSubscribe: false, canManage: true })
      expect(billing.periodEnd).toBe(new Date(sub.current_period_end * 1000).toISOString())
      // One customer per account: a second Subscribe is refused, and makes no customer.
      const again = yield* o.dash("POST", "/account/checkout", { plan: "monthly" })
      expect([again.status, again.json.error.type]).toEqual([409, "already_subscribed"])
      expect(fake.calls.filter((c) => c.path === "/v1/customers" && c.form["metadata[account_id]"] === o.account.id))
        .toHaveLength(1)
      // The portal: a session for the account's customer, back to the account page.
      const portal = yield* o.dash("POST", "/account/billing-portal")
      expect(portal.status, portal.text).toBe(200)
      expect(portal.json.data.url.startsWith(`${fake.url}/portal/`)).toBe(true)
      expect(fake.calls.at(-1)!.form).toEqual({
        customer: sub.customer,
        return_url: expect.stringMatching(/^http:\/\/[^/]+\/account$/)
      })
    }))

  it.effect("subscribing during the trial carries its rest into Stripe (no charge before it ends)", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const trialEnd = new Date((yield* h.now) + 10 * DAY)
      yield* h.run(Effect.flatMap(AccountsRepo, (a) => a.setTrial(o.account.id, trialEnd)))
      expect((yield* o.billing).state).toBe("trialing")
      const sub = yield* subscribe(fake, o)
      expect(sub.status).toBe("trialing")
      expect(sub.current_period_end).toBe(Math.floor(trialEnd.getTime() / 1000))
      expect((yield* o.billing).state).toBe("active")
      expect(yield* o.apiStatus).toBe(200)
    }))

  it.effect("a missing, wrong or stale signature → 400 and nothing changes; the right one then applies", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const fake = yield* wire(app)
      const o = yield* owner(app)
      // Pay, but hold the deliveries back.
      const held: Array<string> = []
      const deliver = fake.deliver
      fake.deliver = async (body) => (held.push(body), 200)
      yield* subscribe(fake, o)
      fake.deliver = deliver
      const created = held.find((b) => JSON.parse(b).type === "customer.subscription.created")!
      const post = (signature: string | null) =>
        app.raw("POST", "/billing/webhook", {
          token: null,
          rawBody: created,
          headers: signature === null ? {} : { "stripe-signature": signature }
        })
      const now = Math.floor((yield* h.now) / 1000)
      for (
        const [signature, type] of [
          [null, "invalid_signature"],
          [fake.sign(created, now, "whsec_not_the_secret"), "invalid_signature"],
          [fake.sign(created, now - 301), "invalid_signature"],
          [fake.sign(`${created} `, now), "invalid_signature"],
          ["t=1,v1=zz", "invalid_signature"]
        ] as const
      ) {
        const r = yield* post(signature)
        expect([r.status, r.json.error.type], String(signature)).toEqual([400, type])
        expect(r.text).not.toContain(fake.webhookSecret)
      }
      expect(yield* o.apiStatus).toBe(402)
      expect(yield* h.run(Effect.flatMap(BillingRepo, (b) => b.seen(JSON.parse(created).id)))).toBe(false)
      // Signed but not an event: 400 too.
      const junk = yield* app.raw("POST", "/billing/webhook", {
        token: null,
        rawBody: "{\"nope\":1}",
        headers: { "stripe-signature": fake.sign("{\"nope\":1}", now) }
      })
      expect([junk.status, junk.json.error.type]).toEqual([400, "invalid_event"])
      const good = yield* post(fake.sign(created, now))
      expect([good.status, good.json.data.outcome]).toEqual([200, "processed"])
      expect(yield* o.apiStatus).toBe(200)
    }))

  it.effect("each event once: a duplicate delivery changes nothing and reads nothing from Stripe", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const sub = yield* subscribe(fake, o)
      const created = fake.events.find((e) =>
        e.type === "customer.subscription.created" && e.data.object.id === sub.id
      )!
      yield* Effect.promise(() => fake.cancelNow(sub.id))
      expect(yield* o.apiStatus).toBe(402)
      const reads = fake.calls.filter((c) => c.method === "GET").length
      const again = yield* Effect.promise(() => fake.redeliver(created.id))
      expect(again.status).toBe(200)
      expect(deliveries.at(-1)!.outcome).toBe("duplicate")
      expect(fake.calls.filter((c) => c.method === "GET").length).toBe(reads)
      expect(yield* o.apiStatus).toBe(402)
    }))

  it.effect("out of order: the state is Stripe's current one, whatever order the events arrive in", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      // The checkout's events arrive after the cancellation's: the subscription is canceled, so 402 stays.
      const held: Array<[string, string]> = []
      const deliver = fake.deliver
      fake.deliver = async (body, signature) => (held.push([body, signature]), 200)
      const sub = yield* subscribe(fake, o)
      yield* Effect.promise(() => fake.cancelNow(sub.id))
      fake.deliver = deliver
      for (const [body] of held.reverse()) {
        expect(yield* Effect.promise(() => fake.deliver(body, fake.sign(body)))).toBe(200)
      }
      expect(deliveries.slice(-4).map((d) => d.outcome)).toEqual(["processed", "processed", "processed", "processed"])
      expect(yield* o.apiStatus).toBe(402)
      expect((yield* o.billing).state).toBe("ended")
      // A new event carrying an old snapshot (active) is read again from Stripe: still ended.
      yield* Effect.promise(() => fake.send("customer.subscription.updated", { ...sub, status: "active" }))
      expect(yield* o.apiStatus).toBe(402)
    }))

  it.effect("past_due: the API stays live for the 7-day grace with a banner's date, then 402; paid: live again", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const sub = yield* subscribe(fake, o)
      const failedAt = yield* h.now
      yield* Effect.promise(() => fake.update(sub.id, { status: "past_due" }))
      yield* Effect.promise(() =>
        fake.send("invoice.payment_failed", { id: "in_failed", customer: sub.customer, subscription: sub.id })
      )
      expect(yield* o.apiStatus).toBe(200)
      const billing = yield* o.billing
      expect(billing.state).toBe("past_due")
      expect(billing.graceEndsAt).toBe(new Date(failedAt + 7 * DAY).toISOString())
      // A retry's failure 3 days on does not extend the grace.
      yield* TestClock.adjust(3 * DAY)
      yield* Effect.promise(() => fake.update(sub.id, { status: "past_due" }))
      expect((yield* o.billing).graceEndsAt).toBe(new Date(failedAt + 7 * DAY).toISOString())
      yield* TestClock.adjust(4 * DAY)
      expect(yield* o.apiStatus).toBe(402)
      expect((yield* o.billing).state).toBe("ended")
      yield* Effect.promise(() => fake.update(sub.id, { status: "active" }))
      expect(yield* o.apiStatus).toBe(200)
      expect((yield* o.billing).state).toBe("active")
    }))

  it.effect("cancel at period end: live and 'canceling' until the period ends, then 402; resume before: active", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const sub = yield* subscribe(fake, o)
      yield* Effect.promise(() => fake.update(sub.id, { cancel_at_period_end: true }))
      expect(yield* o.apiStatus).toBe(200)
      expect(yield* o.billing).toMatchObject({
        state: "canceling",
        periodEnd: new Date(sub.current_period_end * 1000).toISOString()
      })
      yield* Effect.promise(() => fake.update(sub.id, { cancel_at_period_end: false }))
      expect((yield* o.billing).state).toBe("active")
      yield* Effect.promise(() => fake.update(sub.id, { cancel_at_period_end: true }))
      yield* TestClock.adjust(sub.current_period_end * 1000 - (yield* h.now))
      expect(yield* o.apiStatus).toBe(402)
    }))

  it.effect("resubscribe after the end; a late event of the old subscription does not undo the new one", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const old = yield* subscribe(fake, o)
      yield* Effect.promise(() => fake.cancelNow(old.id))
      expect(yield* o.apiStatus).toBe(402)
      expect((yield* o.billing).canSubscribe).toBe(true)
      const renewed = yield* subscribe(fake, o)
      expect(renewed.id).not.toBe(old.id)
      expect(renewed.customer).toBe(old.customer)
      expect(yield* o.apiStatus).toBe(200)
      yield* Effect.promise(() => fake.send("customer.subscription.deleted", fake.subscriptions.get(old.id)!))
      expect(deliveries.at(-1)!.outcome).toBe("ignored")
      expect(yield* o.apiStatus).toBe(200)
    }))

  it.effect("Stripe unreachable: 503, nothing stored; Stripe's retry then applies it", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const o = yield* owner(yield* TestApp)
      const held: Array<string> = []
      const deliver = fake.deliver
      fake.deliver = async (body) => (held.push(body), 200)
      const sub = yield* subscribe(fake, o)
      fake.deliver = deliver
      const stored = fake.subscriptions.get(sub.id)!
      fake.subscriptions.delete(sub.id) // GET /v1/subscriptions/{id} → 404
      const body = held.find((b) => JSON.parse(b).type === "customer.subscription.created")!
      expect(yield* Effect.promise(() => fake.deliver(body, fake.sign(body)))).toBe(503)
      expect(yield* o.apiStatus).toBe(402)
      fake.subscriptions.set(sub.id, stored)
      expect(yield* Effect.promise(() => fake.deliver(body, fake.sign(body)))).toBe(200)
      expect(deliveries.at(-1)!.outcome).toBe("processed")
      expect(yield* o.apiStatus).toBe(200)
    }))

  it.effect("events not ours (unknown customer, one-off invoice, other kinds) are stored and ignored", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      for (
        const [type, object] of [
          ["customer.subscription.updated", { id: "sub_elsewhere", customer: "cus_elsewhere" }],
          ["invoice.paid", { id: "in_1", customer: "cus_elsewhere", subscription: null }],
          ["charge.refunded", { id: "ch_1" }]
        ] as const
      ) {
        const r = yield* Effect.promise(() => fake.send(type, object))
        expect([r.status, deliveries.at(-1)!.outcome], type).toEqual([200, "ignored"])
      }
    }))

  it.effect("refusals in the envelope: no yearly price 400, Stripe down 503, the portal before any checkout 409", () =>
    Effect.gen(function*() {
      const fake = yield* wire(yield* TestApp)
      const fresh = yield* owner(yield* TestApp)
      const portal = yield* fresh.dash("POST", "/account/billing-portal")
      expect([portal.status, portal.json.error.type]).toEqual([409, "no_customer"])
      const down = yield* makeTestApp({
        billing: { ...billingOf(fake)!, priceIdYearly: null, apiBase: "http://127.0.0.1:9" },
        ...LONG_SESSIONS
      })
      const o = yield* owner(down)
      expect(yield* o.billing).toMatchObject({ yearlyAvailable: false, canSubscribe: true })
      const yearly = yield* o.dash("POST", "/account/checkout", { plan: "yearly" })
      expect([yearly.status, yearly.json.error.type]).toEqual([400, "plan_unavailable"])
      const monthly = yield* o.dash("POST", "/account/checkout", { plan: "monthly" })
      expect([monthly.status, monthly.json.error.type]).toEqual([503, "billing_unavailable"])
      expect(monthly.text).not.toContain(fake.secretKey)
      const bad = yield* o.dash("POST", "/account/checkout", { plan: "weekly" })
      expect(bad.status).toBe(400)
      expect(yield* o.apiStatus).toBe(402)
    }))

  describe.skipIf(store !== "postgres")("two instances on one PostgreSQL", () => {
    it.effect("a webhook landing on instance A: instance B answers 200, then 402, on its very next request", () =>
      Effect.gen(function*() {
        const a = yield* TestApp
        const fake = yield* wire(a)
        const b = yield* makeTestApp({ billing: billingOf(fake), ...LONG_SESSIONS })
        const o = yield* owner(a)
        const { secret } = yield* b.mint(o.account.id)
        const onB = Effect.map(b.api.projects.listProjects({ query: {} }, { token: secret }), (r) => r.status)
        expect(yield* onB).toBe(402)
        const sub = yield* subscribe(fake, o)
        expect(yield* onB).toBe(200)
        yield* Effect.promise(() => fake.cancelNow(sub.id))
        expect(yield* onB).toBe(402)
      }))
  })
})

layer(TestApp.layer())("billing off (no keys): operator-managed", (it) => {
  it.effect("the account page says operator; Subscribe and Manage billing answer 409; the webhook 404", () =>
    Effect.gen(function*() {
      const o = yield* owner(yield* TestApp)
      expect(yield* o.billing).toMatchObject({ managedBy: "operator", canSubscribe: false, canManage: false })
      for (const path of ["/account/checkout", "/account/billing-portal"]) {
        const r = yield* o.dash("POST", path, path.endsWith("checkout") ? { plan: "monthly" } : undefined)
        expect([r.status, r.json.error.type], path).toEqual([409, "billing_not_configured"])
      }
      const hook = yield* h.raw("POST", "/billing/webhook", { token: null, rawBody: "{}" })
      expect([hook.status, hook.json.error.type]).toEqual([404, "billing_not_configured"])
      // The admin CLI's way still works: an operator's subscription is live, and shown as active.
      yield* h.setSubscription(o.account.id, "active", null)
      expect(yield* o.apiStatus).toBe(200)
      expect((yield* o.billing).state).toBe("active")
    }))
})
