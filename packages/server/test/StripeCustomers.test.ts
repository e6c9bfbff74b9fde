/**
 * Who a Stripe customer is: the connector keeps each customer's name and email as Stripe holds them — a text as it
 * is, null where Stripe holds none (the field null, blank, or absent from an older rendering) — and PaymentsRepo
 * gives them back by id (in-memory repositories; the contract suite runs the same on PostgreSQL).
 */
import { expect, layer } from "@effect/vitest"
import { customer, fromArray, startFakeStripe, ts } from "@sitehealth/fakes/FakeStripe"
import { Effect, Schema } from "effect"
import { createAccount, createProject } from "../src/accounts/Provisioning.ts"
import { makeProviderHttp } from "../src/integrations/ProviderHttp.ts"
import { stripeConnector } from "../src/integrations/stripe/StripeConnector.ts"
import { readCustomer, StripeCustomer } from "../src/integrations/stripe/StripeObjects.ts"
import { MemoryRepos } from "../src/Layers.ts"
import { PaymentsRepo } from "../src/payments/PaymentsRepo.ts"
import { goldenStripe, NOW } from "./fixtures/stripeFixtures.ts"

const created = ts("2026-03-01T00:00:00Z")

layer(MemoryRepos, { excludeTestServices: true })((it) => {
  it("reads name and email: text as it is, null when null, blank or absent", () => {
    const read = (o: object) => readCustomer(Schema.decodeUnknownSync(StripeCustomer)({ id: "cus_x", created, ...o }))
    expect(read({ name: "  Zoë Ødegaard ", email: "Zoe@Example.com" })).toMatchObject({
      name: "  Zoë Ødegaard ",
      email: "Zoe@Example.com"
    })
    expect(read({ name: " ", email: "" })).toMatchObject({ name: null, email: null })
    expect(read({ name: null, email: null })).toMatchObject({ name: null, email: null })
    expect(read({})).toMatchObject({ name: null, email: null })
  })

  it.effect("a full listing stores them; contacts gives back the stored ones by id", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startFakeStripe({
            ...goldenStripe(),
            customers: fromArray([
              customer("cus_named", created, { name: "Zoë Ødegaard", email: "zoe@example.com" }),
              customer("cus_mail", created, { email: "billing@example.com" }),
              customer("cus_blank", created, { name: " ", email: "" }),
              { id: "cus_bare", object: "customer", created } // an older rendering without the fields
            ])
          })
        ),
        (f) => Effect.promise(() => f.stop())
      )
      const account = yield* createAccount({ name: "Contacts" })
      const project = yield* createProject({
        accountId: account.id,
        name: "Shop",
        domain: "shop.example",
        timezone: "UTC",
        currency: "USD"
      })
      yield* stripeConnector.sync({
        baseUrl: fake.url,
        credentials: { secret_key: "sk_test_fake" },
        http: makeProviderHttp({ backoffBaseMs: 1, maxWaitMs: 20 }),
        projectId: project.id,
        timezone: "UTC",
        currency: "USD",
        now: new Date(NOW),
        mode: "full",
        state: null
      })
      const payments = yield* PaymentsRepo
      const ids = ["cus_named", "cus_mail", "cus_blank", "cus_bare", "cus_unknown", "cus_named"]
      expect(yield* payments.contacts(project.id, ids)).toEqual([
        { customerId: "cus_bare", name: null, email: null },
        { customerId: "cus_blank", name: null, email: null },
        { customerId: "cus_mail", name: null, email: "billing@example.com" },
        { customerId: "cus_named", name: "Zoë Ødegaard", email: "zoe@example.com" }
      ])
    }).pipe(Effect.scoped))
})
