/**
 * Recap cadences (docs/alerts.md, Cadence), on both stores: a daily destination gets no live delivery; from 08:00
 * local the next day, one `recap.ready` listing the period's largest gains and losses among the events its rules
 * take (MRR movements summed by customer; a €20 movement below its €50 minimum left out), written once with two
 * workers in the same minute and never again that period; delivered signed like any event. The weekly and monthly
 * periods; the cadence edited over PATCH.
 */
import { expect, layer } from "@effect/vitest"
import type { EventData, EventKind } from "@sitehealth/domain/Events"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { duePeriod } from "../../src/webhooks/Recap.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { writeDueRecaps } from "../../src/worker/Recaps.ts"
import { deliverDue } from "../../src/worker/WebhookDelivery.ts"
import { expectError } from "../support/Expect.ts"
import { receiver } from "../support/Receiver.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const CONFIG = { ...readConfig({}), secretKey: SECRET_KEY, webhooksAllowPrivate: true }

const deliver = (webhookId: string) =>
  h.run(deliverDue({ webhookIds: [webhookId], random: () => 0.5 }).pipe(Effect.provideService(AppConfig, CONFIG)))
const recaps = (webhookId: string) => h.run(writeDueRecaps({ webhookIds: [webhookId] }))

const fanOut = <K extends EventKind>(kind: K, projectId: string, data: EventData<K>) =>
  Effect.gen(function*() {
    const at = new Date(yield* h.now)
    return yield* h.run(Effect.flatMap(WebhooksRepo, (repo) => emit(repo)(kind, projectId, data, at)))
  })

const movement = (projectId: string, customer: string, amount: number): EventData<"revenue.movement"> => ({
  projectId: projectId as any,
  customer,
  kind: amount >= 0 ? "expansion" : "churn",
  mrrChange: { amount, currency: "EUR" },
  day: "2026-03-02" as any
})

const signal = (projectId: string, money: number): EventData<"signal.opened"> => ({
  projectId: projectId as any,
  signal: {
    id: "sig_recap",
    dimension: "traffic",
    severity: "critical",
    kind: "anomaly_drop",
    subject: null,
    title: "Visitors fell 40%",
    detail: "Visitors fell below their expected range",
    metric: "visitors",
    day: "2026-03-02",
    actual: 600,
    expected: null,
    change: null,
    moneyAtStake: { amount: money, currency: "EUR" },
    detectedAt: "2026-03-02T09:00:00.000Z",
    lastSeenAt: "2026-03-02T09:00:00.000Z",
    active: true,
    resolvedAt: null
  } as any
})

layer(TestApp.layer({ secretKey: SECRET_KEY, webhooksAllowPrivate: true }))("Webhook recaps", (it) => {
  it.effect("a daily recap: the largest gains and losses, once with two workers, delivered signed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-02T09:00:00Z"))
      const r = yield* receiver
      const { projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
        token: secret,
        body: {
          url: `${r.url}/recaps`,
          events: ["revenue.movement", "signal.opened"],
          minMoneyAtStake: 5000,
          cadence: "daily",
          confirm: true
        }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.json.data.webhook).toMatchObject({ cadence: "daily", minMoneyAtStake: 5000 })
      const id: string = created.json.data.webhook.id
      const whsec: string = created.json.data.secret

      // No live delivery for a recap destination.
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, "cus_a", 8000))).toEqual([])
      yield* TestClock.adjust("1 hour")
      yield* fanOut("revenue.movement", projectId, movement(projectId, "cus_a", 6000))
      yield* fanOut("revenue.movement", projectId, movement(projectId, "cus_b", -12000))
      yield* fanOut("revenue.movement", projectId, movement(projectId, "cus_c", 2000)) // below €50: left out
      yield* fanOut("signal.opened", projectId, signal(projectId, 30000))
      expect(yield* deliver(id)).toBe(0)

      // Not before 08:00 local (UTC) the next day; then once, whatever the workers.
      yield* TestClock.setTime(Date.parse("2026-03-03T07:59:00Z"))
      expect(yield* recaps(id)).toEqual([])
      yield* TestClock.setTime(Date.parse("2026-03-03T08:00:00Z"))
      const both = yield* Effect.all([recaps(id), recaps(id)], { concurrency: 2 })
      expect(both.flat()).toEqual([id])
      yield* TestClock.setTime(Date.parse("2026-03-03T15:00:00Z"))
      expect(yield* recaps(id)).toEqual([])

      expect(yield* deliver(id)).toBe(1)
      expect(r.received).toHaveLength(1)
      // Signed as any event (the TestClock's 2026 instant is too old for verify's tolerance: compare signatures).
      const got = r.received[0]!
      const signature = new Webhook(whsec).sign(
        got.headers["webhook-id"]!,
        new Date(Number(got.headers["webhook-timestamp"]) * 1000),
        got.body
      )
      expect(got.headers["webhook-signature"]!.split(" ")).toContain(signature)
      const body = JSON.parse(got.body)
      expect(body).toMatchObject({
        type: "recap.ready",
        data: { projectId, cadence: "daily", from: "2026-03-02", to: "2026-03-02", eventCount: 4 }
      })
      expect(body.data.gains.map((g: any) => [g.title, g.amount?.amount])).toEqual([
        ["cus_a: MRR +140.00 EUR (expansion)", 14000]
      ])
      expect(body.data.losses.map((l: any) => [l.title, l.amount?.amount])).toEqual([
        ["Visitors fell 40%", 30000],
        ["cus_b: MRR −120.00 EUR (churn)", -12000]
      ])

      // The next day: an empty period sends nothing.
      yield* TestClock.setTime(Date.parse("2026-03-04T08:00:00Z"))
      expect(yield* recaps(id)).toEqual([])
    }))

  it.effect("weekly and monthly periods; the cadence edited over PATCH", () =>
    Effect.gen(function*() {
      // Wednesday 4 March 2026: last week is Monday 23 Feb – Sunday 1 March; last month is February.
      expect(duePeriod("weekly", "2026-03-04")).toEqual({ from: "2026-02-23", to: "2026-03-01" })
      expect(duePeriod("weekly", "2026-03-02")).toEqual({ from: "2026-02-23", to: "2026-03-01" })
      expect(duePeriod("weekly", "2026-03-01")).toEqual({ from: "2026-02-16", to: "2026-02-22" })
      expect(duePeriod("monthly", "2026-03-04")).toEqual({ from: "2026-02-01", to: "2026-02-28" })
      expect(duePeriod("daily", "2026-03-01")).toEqual({ from: "2026-02-28", to: "2026-02-28" })

      const { projects, secret } = yield* h.newAccount()
      const path = `/api/v1/projects/${projects[0].id}/webhooks`
      const created = yield* h.raw("POST", path, {
        token: secret,
        body: { url: "https://hooks.example.com/in", events: ["revenue.movement"], confirm: true }
      })
      expect(created.json.data.webhook.cadence).toBe("live")
      const id: string = created.json.data.webhook.id
      const weekly = yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { cadence: "weekly" } })
      expect(weekly.json.data.webhook.cadence).toBe("weekly")
      expect(yield* fanOut("revenue.movement", projects[0].id, movement(projects[0].id, "cus_w", 9000))).toEqual([])
      expectError(yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { cadence: "hourly" } }), 400)
      const live = yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { cadence: "live" } })
      expect(live.json.data.webhook.cadence).toBe("live")
      expect(yield* fanOut("revenue.movement", projects[0].id, movement(projects[0].id, "cus_w", 9000))).toHaveLength(1)
    }))
})
