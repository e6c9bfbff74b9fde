/**
 * The events, where the changes happen, written to the outbox in the change's own transaction (on both stores):
 * briefing.ready and signal.opened by a recomputation (a new owner's Stripe sync landing a churn crisis),
 * health.changed by the threshold, integration.failed / recovered by a sync run's end, token.revoked by a
 * revocation (once, for each website the token reached); and on PostgreSQL, an event whose change rolls back
 * is not sent.
 */
import { expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { startFakeStripe, ts } from "@sitehealth/fakes/FakeStripe"
import { CRISIS, generatedAccount } from "@sitehealth/fakes/StripeAccounts"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import { emitAfter } from "../../src/recompute/Events.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { drainSyncs } from "../../src/worker/SyncRunner.ts"
import { runnerLayer, TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const NOW = "2026-11-20T12:00:30Z"

/** A website whose endpoint takes `events`; answers the website, its root token and the endpoint's id. */
const website = (events: ReadonlyArray<string>, projects = 1) =>
  Effect.gen(function*() {
    const { account, projects: sites, secret } = yield* h.newAccount({ projects })
    const created = yield* h.raw("POST", `/api/v1/projects/${sites[0].id}/webhooks`, {
      token: secret,
      body: { url: "https://hooks.example.com/in", events, confirm: true }
    })
    expect(created.status, created.text).toBe(201)
    return {
      accountId: account.id,
      projectId: sites[0].id,
      sites,
      token: secret,
      webhook: created.json.data.webhook.id
    }
  })

/** The bodies of the endpoint's queued events, oldest first. */
const events = (webhookId: string) =>
  h.run(Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const page = yield* repo.listDeliveries(webhookId, { limit: 100, after: null })
    return page.items.map((d) => d.type).reverse()
  }))

const connectStripe = (projectId: string, baseUrl: string) =>
  h.run(Effect.gen(function*() {
    const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
    return yield* (yield* IntegrationsRepo).connect({
      projectId,
      provider: "stripe",
      credentials: cipher.encrypt({ secret_key: "sk_test_fake" }),
      baseUrl,
      syncIntervalMinutes: null,
      now: new Date(yield* h.now)
    })
  }))

layer(TestApp.layer({ secretKey: SECRET_KEY }))("Webhook events", (it) => {
  it.effect("a recomputation writes briefing.ready for the morning edition and signal.opened for each new signal", () =>
    Effect.scoped(Effect.gen(function*() {
      const { projectId, token, webhook } = yield* website(["briefing.ready", "signal.opened", "signal.resolved"])
      // The morning's first read writes the day's briefing: briefing.ready, once.
      expect((yield* h.raw("GET", `/api/v1/projects/${projectId}/briefing`, { token })).status).toBe(200)
      expect(yield* events(webhook)).toEqual(["briefing.ready"])
      // Stripe's first sync lands a churn crisis: its signals open, each one event.
      const fake = yield* scopedFake(() => startFakeStripe(generatedAccount({ ...CRISIS, now: ts(NOW) })))
      yield* connectStripe(projectId, fake.url)
      yield* h.api.integrations.syncIntegration({ params: { id: projectId, provider: "stripe" }, payload: null }, {
        token
      })
      yield* h.run(
        drainSyncs({ connectors: (p) => (p === "stripe" ? stripeConnector : undefined), projectIds: [projectId] })
          .pipe(Effect.provide(runnerLayer()))
      )
      const signals = (yield* h.raw("GET", `/api/v1/projects/${projectId}/signals?active=true`, { token })).json.data
        .signals
      expect(signals.length).toBeGreaterThan(0)
      const queued = yield* events(webhook)
      expect(queued.filter((t) => t === "briefing.ready")).toHaveLength(1)
      expect(queued.filter((t) => t === "signal.opened")).toHaveLength(signals.length)
      // Read again: nothing new happened, nothing more is written.
      yield* h.raw("GET", `/api/v1/projects/${projectId}/health`, { token })
      expect((yield* events(webhook)).length).toBe(queued.length)
    })))

  it.effect("health.changed only when the score moved by 5 points or more", () =>
    Effect.gen(function*() {
      const { projectId, webhook } = yield* website(["health.changed"])
      const now = new Date(yield* h.now)
      const health = (score: number) => ({ score, computedAt: now.toISOString() }) as any
      const before = (score: number) => ({ kinds: new Set(["health.changed"] as const), signals: [], score })
      yield* h.run(emitAfter(before(80), { projectId, now, health: health(76), morning: null }))
      expect(yield* events(webhook)).toEqual([])
      yield* h.run(emitAfter(before(80), { projectId, now, health: health(75), morning: null }))
      yield* h.run(emitAfter(before(60), { projectId, now, health: health(66), morning: null }))
      expect(yield* events(webhook)).toEqual(["health.changed", "health.changed"])
    }))

  it.effect("integration.failed when a connected integration's run fails for good; recovered when one succeeds", () =>
    Effect.gen(function*() {
      const { projectId, webhook } = yield* website(["integration.failed", "integration.recovered"])
      yield* connectStripe(projectId, "http://127.0.0.1:9")
      // A second apart, so the events' order is their time's.
      const run = (end: "fail" | "retry" | "succeed") =>
        Effect.andThen(
          TestClock.adjust("1 second"),
          h.run(Effect.gen(function*() {
            const queue = yield* SyncQueue
            const now = new Date(yield* h.now)
            yield* queue.request({ projectId, provider: "stripe", mode: "incremental", requestedBy: null, now })
            const claimed = (yield* queue.claim(now, 60_000, [projectId]))!
            const next = new Date(now.getTime() + 3_600_000)
            if (end === "succeed") {
              return yield* queue.succeed({
                run: claimed,
                counts: {},
                state: null,
                now,
                nextSyncAt: next,
                historyPending: false
              })
            }
            return yield* queue.fail({
              run: claimed,
              error: "Stripe answered 401",
              now,
              retryAt: end === "retry" ? next : null,
              nextSyncAt: next
            })
          }))
        )
      expect(yield* run("fail")).toBe(true)
      expect(yield* events(webhook)).toEqual(["integration.failed"])
      // Failing again while in error: no second event.
      expect(yield* run("fail")).toBe(true)
      expect(yield* events(webhook)).toEqual(["integration.failed"])
      expect(yield* run("succeed")).toBe(true)
      expect(yield* events(webhook)).toEqual(["integration.failed", "integration.recovered"])
    }))

  it.effect("token.revoked once, for each website the token reached", () =>
    Effect.gen(function*() {
      const { accountId, sites, token, webhook } = yield* website(["token.revoked"], 2)
      const other = (yield* h.mint(accountId, { projects: [sites[1].id], permissions: ["projects:read"] })).token.id
      const mine = (yield* h.mint(accountId, { projects: [sites[0].id], permissions: ["projects:read"] })).token.id
      const revoke = (id: string) => h.raw("DELETE", `/api/v1/tokens/${id}`, { token, body: { confirm: true } })
      expect((yield* revoke(other)).status).toBe(200)
      expect(yield* events(webhook)).toEqual([])
      // A preview revokes nothing and writes nothing.
      expect((yield* h.raw("DELETE", `/api/v1/tokens/${mine}`, { token })).json.data.preview).toBe(true)
      expect(yield* events(webhook)).toEqual([])
      expect((yield* revoke(mine)).status).toBe(200)
      expect((yield* revoke(mine)).status).toBe(200)
      expect(yield* events(webhook)).toEqual(["token.revoked"])
    }))

  it.effect.skipIf(h.store !== "postgres")(
    "an event whose change rolls back is not written",
    () =>
      Effect.gen(function*() {
        const { projectId, webhook } = yield* website(["webhook.test"])
        const now = new Date(yield* h.now)
        const attempt = h.run(Effect.flatMap(WebhooksRepo, (repo) =>
          repo.transaction(
            emit(repo)(
              "webhook.test",
              projectId,
              { projectId: projectId as any, webhookId: webhook, message: "x" },
              now
            )
              .pipe(Effect.andThen(Effect.fail("the change failed")))
          )))
        expect(yield* Effect.flip(attempt)).toBe("the change failed")
        expect(yield* events(webhook)).toEqual([])
      })
  )
})
