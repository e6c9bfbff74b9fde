/**
 * The worker's batched rounds (worker/WebhookDelivery.ts): a round's outcomes recorded at once
 * (WebhooksRepo.recordMany) as recording each in turn would — every delivery its own outcome, each endpoint's
 * failing streak and disabling —, concurrent workers with small rounds never sending one delivery twice, and a worker
 * killed mid-round losing nothing. On both stores: the memory twin records in turn, so the SQL's one-go answer is
 * checked against it.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import type { AttemptOutcome, AttemptRecord } from "../../src/webhooks/Records.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { deliverDue, LEASE_MS } from "../../src/worker/WebhookDelivery.ts"
import { receiver } from "../support/Receiver.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const CONFIG = { ...readConfig({}), secretKey: SECRET_KEY, webhooksAllowPrivate: true }

const round = (webhookIds: ReadonlyArray<string>, limit?: number) =>
  h.run(
    deliverDue({ webhookIds, random: () => 0.5, ...(limit === undefined ? {} : { limit }) }).pipe(
      Effect.provideService(AppConfig, CONFIG)
    )
  )

const now = Effect.map(h.now, (ms) => new Date(ms))

/** `n` health.changed events of the project; answers their deliveries. */
const events = (projectId: string, n: number) =>
  Effect.gen(function*() {
    const at = yield* now
    const out = []
    const repo = yield* h.run(Effect.service(WebhooksRepo))
    const body = {
      projectId: projectId as any,
      score: 61,
      previousScore: 74,
      change: -13,
      computedAt: at.toISOString()
    }
    for (let i = 0; i < n; i++) out.push(...(yield* h.run(emit(repo)("health.changed", projectId, body, at))))
    return out
  })

/** An endpoint of the project at the receiver; answers its id. */
const endpoint = (projectId: string, token: string, r: { readonly url: string }, path: string) =>
  Effect.gen(function*() {
    const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
      token,
      body: { url: `${r.url}/${path}`, events: ["health.changed"], confirm: true }
    })
    expect(created.status, created.text).toBe(201)
    return created.json.data.webhook.id as string
  })

/** Real time passes until `done` (the TestClock holds Effect.sleep). */
const until = (done: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() =>
    done() ? Effect.void : Effect.andThen(Effect.promise(() => new Promise((r) => setTimeout(r, 5))), until(done))
  )

/** A receiver that never answers its first request (a round then waits for it), and answers 204 after. */
const stalling = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ url: string; ids: Array<string>; server: Http.Server }>((resolve) => {
      const ids: Array<string> = []
      const server = Http.createServer((req, res) => {
        ids.push(String(req.headers["webhook-id"]))
        req.resume()
        if (ids.length > 1) res.writeHead(204).end()
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ids, server }))
    })
  ),
  (r) =>
    Effect.promise(() =>
      new Promise<void>((done) => {
        r.server.closeAllConnections()
        r.server.close(() => done())
      })
    )
)

const findWebhook = (projectId: string, id: string) =>
  h.run(Effect.flatMap(WebhooksRepo, (repo) => repo.find(projectId, id)))

const findDelivery = (webhookId: string, id: string) =>
  h.run(Effect.flatMap(WebhooksRepo, (repo) => repo.findDelivery(webhookId, id)))

const attempt = (ok: boolean, at: Date, extra: Partial<AttemptRecord> = {}): AttemptRecord => ({
  ok,
  status: ok ? 204 : 500,
  latencyMs: 3,
  excerpt: ok ? "" : "receiver says no",
  at,
  next: ok ? "succeeded" : "pending",
  nextAttemptAt: ok ? null : new Date(at.getTime() + 5_000),
  disable: false,
  ...extra
})

layer(TestApp.layer({ secretKey: SECRET_KEY, webhooksAllowPrivate: true }))("Webhook batches", (it) => {
  it.effect("one round with successes and failures records each delivery and each endpoint's streak", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-20T12:00:00Z"))
      const good = yield* receiver
      const bad = yield* receiver
      bad.status = 500
      const { projects, secret: token } = yield* h.newAccount()
      const projectId = projects[0].id
      const ok = yield* endpoint(projectId, token, good, "ok")
      const failing = yield* endpoint(projectId, token, bad, "no")
      const queued = yield* events(projectId, 6)
      expect(queued).toHaveLength(12)
      const first = yield* now

      expect(yield* round([ok, failing])).toBe(12)
      expect(good.received).toHaveLength(6)
      expect(bad.received).toHaveLength(6)
      for (const d of queued) {
        const recorded = yield* findDelivery(d.webhookId, d.id)
        expect(recorded).toMatchObject(
          d.webhookId === ok
            ? { status: "succeeded", attempts: 1, responseStatus: 200, nextAttemptAt: null }
            : { status: "pending", attempts: 1, responseStatus: 500, responseExcerpt: "receiver says no" }
        )
        if (d.webhookId === failing) expect(recorded!.nextAttemptAt!.getTime() - first.getTime()).toBe(5_000)
      }
      expect((yield* findWebhook(projectId, ok))!.failingSince).toBeNull()
      expect((yield* findWebhook(projectId, failing))!.failingSince).toEqual(first)

      // The retries, due in 5 s, go out in the next round under the same webhook-ids; the streak keeps its start.
      bad.status = 204
      expect(yield* round([ok, failing])).toBe(0)
      yield* TestClock.adjust("5 seconds")
      expect(yield* round([ok, failing])).toBe(6)
      expect(bad.received.slice(6).map((x) => x.headers["webhook-id"]).sort()).toEqual(
        bad.received.slice(0, 6).map((x) => x.headers["webhook-id"]).sort()
      )
      expect((yield* findWebhook(projectId, failing))!.failingSince).toBeNull()
    }))

  it.effect("recordMany is recording each outcome in turn: the streak restarts after a success; disabling stays", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-20T12:00:00Z"))
      const r = yield* receiver
      const { projects, secret: token } = yield* h.newAccount()
      const projectId = projects[0].id
      const id = yield* endpoint(projectId, token, r, "in")
      const queued = yield* events(projectId, 6)
      const t0 = yield* now
      const at = (s: number) => new Date(t0.getTime() + s * 1000)
      const repo = yield* h.run(Effect.service(WebhooksRepo))
      yield* h.run(repo.claim(t0, LEASE_MS, 10, [id]))
      const outcome = (i: number, a: AttemptRecord): AttemptOutcome => ({
        deliveryId: queued[i]!.id,
        webhookId: id,
        attempt: a
      })

      // Failed, succeeded, failed, failed: the streak starts at the first failure after the success.
      expect(
        yield* h.run(repo.recordMany([
          outcome(0, attempt(false, at(1))),
          outcome(1, attempt(true, at(2))),
          outcome(2, attempt(false, at(3))),
          outcome(3, attempt(false, at(4), { next: "failed", nextAttemptAt: null }))
        ]))
      ).toBe(4)
      expect((yield* findWebhook(projectId, id))!.failingSince).toEqual(at(3))
      expect(yield* findDelivery(id, queued[0]!.id)).toMatchObject({ status: "pending", attempts: 1 })
      expect(yield* findDelivery(id, queued[1]!.id)).toMatchObject({ status: "succeeded", responseStatus: 204 })
      expect(yield* findDelivery(id, queued[3]!.id)).toMatchObject({ status: "failed", nextAttemptAt: null })

      // More failures: the streak keeps its start. A delivery unknown to the store is not counted.
      expect(
        yield* h.run(repo.recordMany([
          outcome(0, attempt(false, at(9))),
          { deliveryId: "whd_gone", webhookId: id, attempt: attempt(false, at(9)) }
        ]))
      ).toBe(1)
      expect((yield* findWebhook(projectId, id))!.failingSince).toEqual(at(3))
      expect(yield* findDelivery(id, queued[0]!.id)).toMatchObject({ attempts: 2, firstAttemptAt: at(1) })

      // A disabling failure then a success: the endpoint is disabled all the same, its streak cleared.
      yield* h.run(repo.recordMany([
        outcome(4, attempt(false, at(20), { disable: true, next: "failed", nextAttemptAt: null })),
        outcome(5, attempt(true, at(21)))
      ]))
      expect(yield* findWebhook(projectId, id)).toMatchObject({
        enabled: false,
        failingSince: null,
        disabledReason: expect.stringContaining("3 days")
      })
      expect(yield* h.run(repo.recordMany([]))).toBe(0)
    }))

  it.effect("three workers taking small rounds at once send every delivery exactly once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const r = yield* receiver
      const { projects, secret: token } = yield* h.newAccount()
      const projectId = projects[0].id
      const id = yield* endpoint(projectId, token, r, "in")
      const queued = yield* events(projectId, 60)
      const worker = Effect.gen(function*() {
        let sent = 0
        for (let n = -1; n !== 0;) sent += n = yield* round([id], 7)
        return sent
      })
      const counts = yield* Effect.all([worker, worker, worker], { concurrency: 3 })
      expect(counts.reduce((a, b) => a + b, 0)).toBe(60)
      expect(r.received.map((x) => x.headers["webhook-id"]).sort()).toEqual(queued.map((d) => d.eventId).sort())
      for (const d of queued) expect(yield* findDelivery(id, d.id)).toMatchObject({ status: "succeeded", attempts: 1 })
    }))

  it.effect("a worker killed mid-round loses nothing: the round is sent again under the same webhook-ids", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const fast = yield* receiver
      const slow = yield* stalling
      const { projects, secret: token } = yield* h.newAccount()
      const projectId = projects[0].id
      const quick = yield* endpoint(projectId, token, fast, "in")
      const stuck = yield* endpoint(projectId, token, slow, "in")
      const queued = yield* events(projectId, 1)
      expect(queued).toHaveLength(2)

      // The round sends both; the quick one is answered, the other never is, and the worker dies.
      const worker = yield* Effect.forkChild(round([quick, stuck]))
      yield* until(() => fast.received.length === 1 && slow.ids.length === 1)
      yield* Fiber.interrupt(worker)
      for (const d of queued) {
        expect(yield* findDelivery(d.webhookId, d.id)).toMatchObject({ status: "pending", attempts: 0 })
      }
      // Nobody takes them while the leases hold; after, the round is sent again, same webhook-ids, and recorded.
      expect(yield* round([quick, stuck])).toBe(0)
      yield* TestClock.adjust(LEASE_MS)
      expect(yield* round([quick, stuck])).toBe(2)
      expect(fast.received.map((x) => x.headers["webhook-id"])).toEqual([queued[0]!.eventId, queued[0]!.eventId])
      expect(slow.ids).toEqual([queued[0]!.eventId, queued[0]!.eventId])
      for (const d of queued) {
        expect(yield* findDelivery(d.webhookId, d.id)).toMatchObject({ status: "succeeded", attempts: 1 })
      }
    }))
})
