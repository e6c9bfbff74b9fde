/** Once the trial or subscription has ended, every endpoint answers 402 trial_expired instead of data. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { allEndpoints, h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("entitlement", (it) => {
  it.effect("402 on every endpoint once the trial ends", () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* h.newAccount()
      yield* h.endTrial(account.id)
      for (const [method, path] of allEndpoints(projects[0].id)) {
        const r = yield* h.raw(method, path, {
          token: secret,
          ...(method === "GET" ? {} : { body: { confirm: true } })
        })
        expect(r.status, `${method} ${path}`).toBe(402)
        expect(r.json).toEqual({
          status: "error",
          error: { code: "trial_expired", message: expect.any(String), type: "trial_expired" }
        })
        expect(r.text).not.toContain(projects[0].name)
      }
    }))

  it.effect("a 14-day trial is live on day 13 and ended on day 15", () =>
    Effect.gen(function*() {
      const { secret } = yield* h.newAccount({ trialDays: 14 })
      yield* TestClock.adjust(13 * 86_400_000)
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(200)
      yield* TestClock.adjust(2 * 86_400_000)
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(402)
    }))

  it.effect("an active subscription keeps it live after the trial; canceled stays live until its end", () =>
    Effect.gen(function*() {
      const { account, secret } = yield* h.newAccount()
      yield* h.endTrial(account.id)
      yield* h.setSubscription(account.id, "active", null)
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(200)
      yield* h.setSubscription(account.id, "canceled", new Date((yield* h.now) + 60_000))
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(200)
      yield* h.setSubscription(account.id, "canceled", new Date((yield* h.now) - 1))
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(402)
      yield* h.setSubscription(account.id, "none", null)
      expect((yield* h.api.projects.listProjects({ query: {} }, { token: secret })).status).toBe(402)
    }))

  it.effect("nothing changes while ended: a confirmed mint is refused and no token appears", () =>
    Effect.gen(function*() {
      const { account, secret } = yield* h.newAccount()
      yield* h.endTrial(account.id)
      expect((yield* h.api.tokens.createToken({ payload: { confirm: true } }, { token: secret })).status).toBe(402)
      yield* h.setSubscription(account.id, "active", null)
      const list = yield* h.api.tokens.listTokens({ query: {} }, { token: secret })
      expect(list.json.data.tokens).toHaveLength(1)
    }))
})
