/**
 * `entitlement.ending` (docs/alerts.md): 3 days before a trial (not followed by a subscription) or a canceled or
 * past-due subscription ends, each website of the account gets the event — once per account and end date, however
 * many rounds or workers; a subscription that renews, or an end further away, gets none. On both stores.
 */
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { endingSoon } from "../../src/accounts/Ending.ts"
import { entitlementRound } from "../../src/worker/EntitlementEnding.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const DAY = 86_400_000

describe("endingSoon", () => {
  const now = new Date("2026-03-01T12:00:00Z")
  const at = (days: number) => new Date(now.getTime() + days * DAY)
  plain("a trial ending within 3 days; a canceled or past-due subscription likewise; never one that renews", () => {
    expect(endingSoon({ trialEndsAt: at(2), subscriptionStatus: "none", subscriptionUntil: null }, now))
      .toEqual({ what: "trial", endsAt: at(2) })
    expect(endingSoon({ trialEndsAt: at(3), subscriptionStatus: "none", subscriptionUntil: null }, now)?.what)
      .toBe("trial")
    expect(endingSoon({ trialEndsAt: at(3.01), subscriptionStatus: "none", subscriptionUntil: null }, now)).toBeNull()
    expect(endingSoon({ trialEndsAt: at(-1), subscriptionStatus: "none", subscriptionUntil: null }, now)).toBeNull()
    expect(endingSoon({ trialEndsAt: at(2), subscriptionStatus: "active", subscriptionUntil: at(2) }, now)).toBeNull()
    expect(endingSoon({ trialEndsAt: at(-30), subscriptionStatus: "canceled", subscriptionUntil: at(1) }, now))
      .toEqual({ what: "subscription", endsAt: at(1) })
    expect(endingSoon({ trialEndsAt: at(-30), subscriptionStatus: "past_due", subscriptionUntil: at(2) }, now)?.what)
      .toBe("subscription")
    expect(endingSoon({ trialEndsAt: at(-30), subscriptionStatus: "canceled", subscriptionUntil: at(9) }, now))
      .toBeNull()
  })
})

layer(TestApp.layer({ secretKey: SECRET_KEY }))("entitlement.ending", (it) => {
  const hook = (projectId: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
        token,
        body: { url: "https://hooks.example.com/ending", events: ["entitlement.ending"], confirm: true }
      })
      expect(r.status, r.text).toBe(201)
      return r.json.data.webhook.id as string
    })
  const deliveries = (projectId: string, id: string, token: string) =>
    Effect.map(
      h.raw("GET", `/api/v1/projects/${projectId}/webhooks/${id}/deliveries`, { token }),
      (r) => r.json.data.deliveries as Array<{ type: string }>
    )

  it.effect("each website of an account whose trial ends in 2 days gets it, once; 10 days away: none", () =>
    Effect.gen(function*() {
      const ending = yield* h.newAccount({ projects: 2, trialDays: 2 })
      const later = yield* h.newAccount({ trialDays: 10 })
      const ids = [
        yield* hook(ending.projects[0].id, ending.secret),
        yield* hook(ending.projects[1].id, ending.secret),
        yield* hook(later.projects[0].id, later.secret)
      ]
      const round = () => h.run(entitlementRound([ending.account.id, later.account.id]))
      expect(yield* round()).toBe(1)
      expect(yield* round()).toBe(0)
      for (const [i, p] of ending.projects.entries()) {
        const got = yield* deliveries(p.id, ids[i]!, ending.secret)
        expect(got.map((d) => d.type)).toEqual(["entitlement.ending"])
      }
      expect(yield* deliveries(later.projects[0].id, ids[2]!, later.secret)).toEqual([])
    }))

  it.effect("a renewing subscription gets none; once canceled to end in a day, a subscription notice", () =>
    Effect.gen(function*() {
      const a = yield* h.newAccount({ trialDays: 1 })
      const id = yield* hook(a.projects[0].id, a.secret)
      const now = yield* h.now
      yield* h.setSubscription(a.account.id, "active", new Date(now + DAY))
      expect(yield* h.run(entitlementRound([a.account.id]))).toBe(0)
      yield* h.setSubscription(a.account.id, "canceled", new Date(now + DAY))
      expect(yield* h.run(entitlementRound([a.account.id]))).toBe(1)
      const got = yield* h.raw("GET", `/api/v1/projects/${a.projects[0].id}/webhooks/${id}/deliveries`, {
        token: a.secret
      })
      expect(got.json.data.deliveries.map((d: any) => d.type)).toEqual(["entitlement.ending"])
    }))
})
