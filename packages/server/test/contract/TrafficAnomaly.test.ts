/**
 * Hourly traffic anomalies (docs/alerts.md, `traffic.anomaly`), on both stores: a Monday 14:00 with 30 visitors
 * against 100 on the previous eight Mondays at 14:00 is written once — two workers in the same minute, then a later
 * round (a restart) — with its likely cause (Google's share of the day fell from half to 5%) and the money at stake
 * (70 lost visitors × 50 cents of revenue per visitor); the hours in their range are not; delivered signed.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { eachDay } from "../../src/metrics/Dates.ts"
import { MetricsRepo } from "../../src/metrics/MetricsRepo.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import type { TrafficHour } from "../../src/store/Series.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"
import { checkTrafficAnomalies } from "../../src/worker/TrafficAnomalies.ts"
import { deliverDue } from "../../src/worker/WebhookDelivery.ts"
import { revenue, traffic } from "../fixtures/signals.ts"
import { receiver } from "../support/Receiver.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))
const CONFIG = { ...readConfig({}), secretKey: SECRET_KEY, webhooksAllowPrivate: true }
const WEEK_MS = 7 * 86_400_000

const hourRow = (hour: number, visitors: number): TrafficHour => ({
  hour: new Date(hour).toISOString(),
  visitors,
  pageviews: 2 * visitors,
  sessions: visitors,
  bounces: 0,
  durationSeconds: 0
})

layer(TestApp.layer({ secretKey: SECRET_KEY, webhooksAllowPrivate: true }))("Traffic anomalies", (it) => {
  it.effect("a drop below the website's usual hour is written once, with its cause and money at stake", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-02T15:20:00Z")) // a Monday; hours 12, 13, 14 are checked
      const r = yield* receiver
      const { projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const check = () => h.run(checkTrafficAnomalies({ projectIds: [projectId] }))
      // No endpoint takes traffic.anomaly yet: nothing is checked.
      expect(yield* check()).toEqual([])
      const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
        token: secret,
        body: { url: `${r.url}/anomalies`, events: ["traffic.anomaly"], confirm: true }
      })
      expect(created.status, created.text).toBe(201)
      const webhookId: string = created.json.data.webhook.id

      // 100 visitors at 12:00, 13:00 and 14:00 UTC on the eight previous Mondays; today 100, 104, then 30.
      const hours: Array<TrafficHour> = []
      for (const [at, today] of [[12, 100], [13, 104], [14, 30]] as const) {
        const t = Date.parse(`2026-03-02T${at}:00:00Z`)
        for (let w = 1; w <= 8; w++) hours.push(hourRow(t - w * WEEK_MS, 100))
        hours.push(hourRow(t, today))
      }
      const before = eachDay("2026-02-02", "2026-03-01")
      yield* h.run(Effect.flatMap(TrafficRepo, (repo) =>
        repo.write(projectId, {
          hours,
          sources: [
            ...before.flatMap((day) => [
              { day, source: "google", visitors: 500, sessions: 500 },
              { day, source: "direct", visitors: 500, sessions: 500 }
            ]),
            { day: "2026-03-02", source: "google", visitors: 15, sessions: 15 },
            { day: "2026-03-02", source: "direct", visitors: 285, sessions: 285 }
          ]
        })))
      // 30 days of 1,000 visitors and €500 of net revenue: 50 cents a visitor.
      yield* h.run(Effect.flatMap(MetricsRepo, (repo) =>
        repo.writeDays(projectId, {
          traffic: eachDay("2026-01-30", "2026-03-01").map((day) => traffic(day, 1000)),
          revenue: eachDay("2026-01-30", "2026-03-01").map((day) => revenue(day, { grossMinor: 50_000 }))
        })))

      const both = yield* Effect.all([check(), check()], { concurrency: 2 })
      expect(both.flat()).toEqual([`${projectId}/2026-03-02T14:00:00.000Z`])
      // A later round (another worker, a restart) writes it no more.
      yield* TestClock.setTime(Date.parse("2026-03-02T16:05:00Z"))
      expect(yield* check()).toEqual([])

      expect(
        yield* h.run(
          deliverDue({ webhookIds: [webhookId], random: () => 0.5 }).pipe(
            Effect.provideService(AppConfig, CONFIG)
          )
        )
      ).toBe(1)
      expect(r.received).toHaveLength(1)
      const body = JSON.parse(r.received[0]!.body)
      expect(body).toEqual({
        type: "traffic.anomaly",
        timestamp: "2026-03-02T15:20:00.000Z",
        data: {
          projectId,
          hour: "2026-03-02T14:00:00.000Z",
          localHour: "2026-03-02 14:00",
          direction: "drop",
          metric: "visitors",
          severity: "critical",
          expected: 100,
          actual: 30,
          range: { low: 65, high: 135 },
          weeks: 8,
          cause: { kind: "source", name: "google", change: -0.45 },
          moneyAtStake: { amount: 3500, currency: projects[0].currency },
          link: `/websites/${projectId}/analytics?period=today&metric=visitors`
        }
      })
    }))
})
