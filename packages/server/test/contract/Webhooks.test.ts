/**
 * Webhook endpoints over the API, and their deliveries by the worker to a local receiver (private targets allowed,
 * as SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE=1 does): the secret answered once and stored sealed, signatures verified
 * with the `standardwebhooks` package, one webhook-id across retries, the backoff schedule on the TestClock,
 * redelivery, rotation, disabling after 3 days, two workers and a killed one. On both stores.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { GIVE_UP_AFTER_MS } from "../../src/webhooks/Retry.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { deliverDue, LEASE_MS } from "../../src/worker/WebhookDelivery.ts"
import { expectError } from "../support/Expect.ts"
import { type Receiver, receiver } from "../support/Receiver.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, makeTestApp, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const CONFIG = { ...readConfig({}), secretKey: SECRET_KEY, webhooksAllowPrivate: true }

/** One round of the worker, for these endpoints only (other files share the database). */
const deliver = (webhookId: string) =>
  h.run(deliverDue({ webhookIds: [webhookId], random: () => 0.5 }).pipe(Effect.provideService(AppConfig, CONFIG)))

const now = Effect.map(h.now, (ms) => new Date(ms))

/** A health.changed event of the project, written to the outbox. */
const healthChanged = (projectId: string) =>
  Effect.gen(function*() {
    const at = yield* now
    return yield* h.run(Effect.flatMap(WebhooksRepo, (repo) =>
      emit(repo)("health.changed", projectId, {
        projectId: projectId as any,
        score: 61,
        previousScore: 74,
        change: -13,
        computedAt: at.toISOString()
      }, at)))
  })

/** A website with an endpoint at the receiver taking `events`; answers its id and secret. */
const withEndpoint = (r: Receiver, events: ReadonlyArray<string> = ["health.changed"]) =>
  Effect.gen(function*() {
    const { projects, secret } = yield* h.newAccount()
    const projectId = projects[0].id
    const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
      token: secret,
      body: { url: `${r.url}/hooks`, events, confirm: true }
    })
    expect(created.status, created.text).toBe(201)
    return { projectId, token: secret, id: created.json.data.webhook.id as string, whsec: created.json.data.secret }
  })

/** The webhook-id, timestamp and signature a receiver got, checked against what standardwebhooks computes. */
const signedBy = (whsec: string, got: { headers: Record<string, string>; body: string }) => {
  const ts = Number(got.headers["webhook-timestamp"])
  const expected = new Webhook(whsec).sign(got.headers["webhook-id"]!, new Date(ts * 1000), got.body)
  return got.headers["webhook-signature"]!.split(" ").includes(expected)
}

layer(TestApp.layer({ secretKey: SECRET_KEY, webhooksAllowPrivate: true }))("Webhooks", (it) => {
  it.effect("create: a preview stores nothing; confirmed, the secret is answered once and stored sealed", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const path = `/api/v1/projects/${projects[0].id}/webhooks`
      const body = { url: "https://hooks.example.com/in", events: ["signal.opened", "signal.opened"] }
      const preview = yield* h.raw("POST", path, { token: secret, body })
      expect(preview.status, preview.text).toBe(200)
      expect(preview.json.data).toMatchObject({ preview: true, webhook: { events: ["signal.opened"] } })
      expect((yield* h.raw("GET", path, { token: secret })).json.data.webhooks).toEqual([])

      const key = { "idempotency-key": `create-${projects[0].id}` }
      const created = yield* h.raw("POST", path, { token: secret, body: { ...body, confirm: true }, headers: key })
      expect(created.status, created.text).toBe(201)
      const whsec: string = created.json.data.secret
      expect(whsec).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      const id: string = created.json.data.webhook.id
      expect(created.json.data.webhook).toMatchObject({ id: expect.stringMatching(/^whk_/), status: "enabled" })
      // Never again: not in a read, not in a replay of the same request.
      const reads = [
        yield* h.raw("GET", path, { token: secret }),
        yield* h.raw("GET", `${path}/${id}`, { token: secret })
      ]
      for (const read of reads) {
        expect(read.status).toBe(200)
        expect(read.text).not.toContain(whsec.slice(6, 30))
      }
      const replay = yield* h.raw("POST", path, { token: secret, body: { ...body, confirm: true }, headers: key })
      expect(replay.json.data).toMatchObject({ secret: null, secretRedacted: true })
      // Stored sealed: neither the secret nor its key bytes are in the row.
      const stored = (yield* h.run(Effect.flatMap(WebhooksRepo, (repo) => repo.find(projects[0].id, id))))!
      const bytes = Buffer.from(stored.secretEnc)
      expect(bytes.includes(Buffer.from(whsec))).toBe(false)
      expect(bytes.includes(Buffer.from(whsec.slice(6), "base64"))).toBe(false)
    }))

  it.effect("refuses loopback, private and link-local targets and plain http unless allowed", () =>
    Effect.gen(function*() {
      const strict = yield* makeTestApp({ secretKey: SECRET_KEY })
      const { projects, secret } = yield* strict.newAccount()
      const path = `/api/v1/projects/${projects[0].id}/webhooks`
      for (
        const url of [
          "http://hooks.example.com/in",
          "https://127.0.0.1/in",
          "https://10.0.0.8/in",
          "https://169.254.169.254/latest",
          "https://[::1]/in",
          "https://localhost/in"
        ]
      ) {
        const r = yield* strict.raw("POST", path, { token: secret, body: { url, events: ["webhook.test"] } })
        expectError(r, 400, "invalid_webhook_url")
      }
      const ok = yield* strict.raw("POST", path, {
        token: secret,
        body: { url: "https://hooks.example.com/in", events: ["webhook.test"] }
      })
      expect(ok.status, ok.text).toBe(200)
      // An unknown event kind is the contract's 400.
      const bad = yield* strict.raw("POST", path, {
        token: secret,
        body: { url: "https://hooks.example.com/in", events: ["signal.exploded"] }
      })
      expectError(bad, 400)
    }))

  it.effect("sends signed events that standardwebhooks verifies; the test endpoint sends one now", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const r = yield* receiver
      const { id, projectId, token, whsec } = yield* withEndpoint(r)
      const tested = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks/${id}/test`, { token })
      expect(tested.status, tested.text).toBe(200)
      expect(tested.json.data.delivery).toMatchObject({
        type: "webhook.test",
        status: "succeeded",
        attempts: 1,
        responseStatus: 200,
        responseExcerpt: "ok"
      })
      expect(r.received).toHaveLength(1)
      expect(new Webhook(whsec).verify(r.received[0]!.body, r.received[0]!.headers)).toMatchObject({
        type: "webhook.test",
        data: { projectId, webhookId: id }
      })
      // Held from the worker: it does not send the test again.
      expect(yield* deliver(id)).toBe(0)

      const [queued] = yield* healthChanged(projectId)
      expect(yield* deliver(id)).toBe(1)
      expect(r.received).toHaveLength(2)
      const got = r.received[1]!
      expect(got.headers["webhook-id"]).toBe(queued!.eventId)
      expect(new Webhook(whsec).verify(got.body, got.headers)).toMatchObject({
        type: "health.changed",
        data: { projectId, score: 61, previousScore: 74, change: -13 }
      })
      const log = yield* h.raw("GET", `/api/v1/projects/${projectId}/webhooks/${id}/deliveries`, { token })
      // Both at the same instant of the test clock: the log's order is then by id, so compare as a set.
      expect(log.json.data.deliveries.map((d: any) => `${d.type} ${d.status}`).sort()).toEqual([
        "health.changed succeeded",
        "webhook.test succeeded"
      ])
      // An event of a kind the endpoint does not take goes nowhere.
      const at = yield* now
      const none = yield* h.run(
        Effect.flatMap(
          WebhooksRepo,
          (repo) =>
            emit(repo)("webhook.test", projectId, { projectId: projectId as any, webhookId: id, message: "x" }, at)
        )
      )
      expect(none).toEqual([])
    }))

  it.effect("retries with backoff under one webhook-id, gives up after 3 days, disables the endpoint; redelivery", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-20T12:00:00Z"))
      const r = yield* receiver
      r.status = 500
      const { id, projectId, token, whsec } = yield* withEndpoint(r)
      const [queued] = yield* healthChanged(projectId)
      const first = yield* now
      const deliveryPath = `/api/v1/projects/${projectId}/webhooks/${id}/deliveries`
      const delivery = () => Effect.map(h.raw("GET", deliveryPath, { token }), (x) => x.json.data.deliveries[0])

      expect(yield* deliver(id)).toBe(1)
      let d = yield* delivery()
      expect(d).toMatchObject({ status: "pending", attempts: 1, responseStatus: 500 })
      expect(Date.parse(d.nextAttemptAt) - first.getTime()).toBe(5_000)
      // Not due yet: nothing is sent.
      yield* TestClock.adjust("4 seconds")
      expect(yield* deliver(id)).toBe(0)
      yield* TestClock.adjust("1 second")
      expect(yield* deliver(id)).toBe(1)
      d = yield* delivery()
      expect(Date.parse(d.nextAttemptAt) - Date.parse(d.lastAttemptAt)).toBe(20_000)
      yield* TestClock.setTime(Date.parse(d.nextAttemptAt))
      expect(yield* deliver(id)).toBe(1)
      // The first two retries within two minutes of the first attempt.
      expect((yield* h.now) - first.getTime()).toBeLessThan(120_000)

      // Then every retry when due, until it is given up.
      for (let i = 0; i < 40; i++) {
        d = yield* delivery()
        if (d.status !== "pending") break
        yield* TestClock.setTime(Date.parse(d.nextAttemptAt))
        expect(yield* deliver(id)).toBe(1)
      }
      expect(d.status).toBe("failed")
      expect(Date.parse(d.lastAttemptAt) - first.getTime()).toBeLessThanOrEqual(GIVE_UP_AFTER_MS)
      expect(Date.parse(d.lastAttemptAt) - first.getTime()).toBeGreaterThan(GIVE_UP_AFTER_MS - 12 * 3_600_000 * 1.2)
      expect(r.received.length).toBe(d.attempts)
      expect(new Set(r.received.map((x) => x.headers["webhook-id"]))).toEqual(new Set([queued!.eventId]))
      for (const got of r.received) expect(signedBy(whsec, got)).toBe(true)
      const endpoint = (yield* h.raw("GET", `/api/v1/projects/${projectId}/webhooks/${id}`, { token })).json.data
      expect(endpoint).toMatchObject({ status: "disabled", disabledReason: expect.stringContaining("3 days") })
      // Disabled: new events are not even queued for it, and a test is refused.
      expect(yield* healthChanged(projectId)).toEqual([])
      expectError(
        yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks/${id}/test`, { token }),
        409,
        "webhook_disabled"
      )

      // Fixed and enabled again: a manual redelivery sends the same event, under the same webhook-id.
      r.status = 204
      const enabled = yield* h.raw("PATCH", `/api/v1/projects/${projectId}/webhooks/${id}`, {
        token,
        body: { enabled: true }
      })
      expect(enabled.json.data.webhook).toMatchObject({ status: "enabled", disabledReason: null, failingSince: null })
      const again = yield* h.raw("POST", `${deliveryPath}/${d.id}/redeliver`, { token })
      expect(again.json.data.delivery).toMatchObject({ id: d.id, status: "pending" })
      expect(yield* deliver(id)).toBe(1)
      expect(yield* delivery()).toMatchObject({ id: d.id, status: "succeeded", responseStatus: 204 })
      expect(r.received.at(-1)!.headers["webhook-id"]).toBe(queued!.eventId)
      expectError(yield* h.raw("POST", `${deliveryPath}/whd_nope/redeliver`, { token }), 404)
    }))

  it.effect("rotation: both secrets sign for 24 hours, then only the new one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const r = yield* receiver
      const { id, projectId, token, whsec } = yield* withEndpoint(r)
      const rotated = yield* h.raw("PATCH", `/api/v1/projects/${projectId}/webhooks/${id}`, {
        token,
        body: { rotateSecret: true }
      })
      expect(rotated.status, rotated.text).toBe(200)
      const fresh: string = rotated.json.data.secret
      expect(fresh).not.toBe(whsec)
      expect(rotated.json.data.webhook.previousSecretExpiresAt).toBe(
        new Date((yield* h.now) + 86_400_000).toISOString()
      )
      yield* healthChanged(projectId)
      yield* deliver(id)
      for (const secret of [whsec, fresh]) {
        expect(new Webhook(secret).verify(r.received[0]!.body, r.received[0]!.headers))
      }
      yield* TestClock.adjust("25 hours")
      yield* healthChanged(projectId)
      yield* deliver(id)
      expect(signedBy(fresh, r.received[1]!)).toBe(true)
      expect(signedBy(whsec, r.received[1]!)).toBe(false)
      expect(r.received[1]!.headers["webhook-signature"]!.split(" ")).toHaveLength(1)
    }))

  it.effect("two workers never send one delivery twice; a worker killed mid-delivery loses nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const r = yield* receiver
      const { id, projectId } = yield* withEndpoint(r)
      const ids: Array<string> = []
      for (let i = 0; i < 30; i++) ids.push((yield* healthChanged(projectId))[0]!.eventId)
      const counts = yield* Effect.all([deliver(id), deliver(id), deliver(id)], { concurrency: 3 })
      expect(counts.reduce((a, b) => a + b, 0)).toBe(30)
      expect(r.received.map((x) => x.headers["webhook-id"]).sort()).toEqual([...ids].sort())

      // A worker takes a delivery and dies before recording anything: its lease runs out, another sends it.
      const [lost] = yield* healthChanged(projectId)
      const taken = yield* h.run(
        Effect.flatMap(WebhooksRepo, (repo) => Effect.flatMap(now, (at) => repo.claim(at, LEASE_MS, 10, [id])))
      )
      expect(taken.map((c) => c.delivery.id)).toEqual([lost!.id])
      expect(yield* deliver(id)).toBe(0)
      yield* TestClock.adjust(LEASE_MS)
      expect(yield* deliver(id)).toBe(1)
      expect(r.received.filter((x) => x.headers["webhook-id"] === lost!.eventId)).toHaveLength(1)
    }))

  it.effect("a Slack endpoint gets Block Kit messages linking to the website's page", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const r = yield* receiver
      const { projects, secret: token } = yield* h.newAccount()
      const projectId = projects[0].id
      const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
        token,
        body: { url: `${r.url}/services/T000/B000/xyz`, events: ["health.changed"], format: "slack", confirm: true }
      })
      expect(created.json.data.webhook.format).toBe("slack")
      const id = created.json.data.webhook.id
      yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks/${id}/test`, { token })
      yield* healthChanged(projectId)
      expect(yield* deliver(id)).toBe(1)
      const [test, changed] = r.received.map((x) => JSON.parse(x.body))
      expect(test.text).toBe("A test event from sitehealth")
      expect(changed.text).toBe("Health score 74 → 61 (-13)")
      const button = changed.blocks.find((b: any) => b.type === "actions").elements[0]
      expect(button.url).toMatch(new RegExp(`/websites/${projectId}$`))
    }))

  it.effect("another account's or an unknown endpoint is 404; a read-only token cannot add one", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      const { id, projectId } = yield* withEndpoint(r)
      const stranger = yield* h.newAccount()
      for (const path of [`/webhooks/${id}`, `/webhooks/${id}/deliveries`, `/webhooks`]) {
        expectError(yield* h.raw("GET", `/api/v1/projects/${projectId}${path}`, { token: stranger.secret }), 404)
      }
      const own = stranger.projects[0].id
      expectError(yield* h.raw("GET", `/api/v1/projects/${own}/webhooks/${id}`, { token: stranger.secret }), 404)
      expectError(yield* h.raw("DELETE", `/api/v1/projects/${own}/webhooks/${id}`, { token: stranger.secret }), 404)
      const reader = yield* h.mint(stranger.account.id, { permissions: ["webhooks:read"] })
      expectError(
        yield* h.raw("POST", `/api/v1/projects/${own}/webhooks`, {
          token: reader.secret,
          body: { url: "https://hooks.example.com/in", events: ["webhook.test"] }
        }),
        403,
        "missing_permission"
      )
    }))
})
