/**
 * Each destination's rules (docs/alerts.md, Rules), applied where an event fans out to the endpoints: a revenue
 * movement below an endpoint's minimum money is never delivered to it, a signal below its minimum severity neither,
 * kinds it does not take neither; kinds without an amount pass the money rule. PATCH edits the rules; a Slack
 * endpoint starts at €50. On both stores.
 */
import { expect, layer } from "@effect/vitest"
import type { EventData, EventKind } from "@sitehealth/domain/Events"
import type { Severity } from "@sitehealth/domain/Projects"
import { Effect, Redacted } from "effect"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))

const now = Effect.map(h.now, (ms) => new Date(ms))

/** Writes the event and answers the endpoints it was fanned out to. */
const fanOut = <K extends EventKind>(kind: K, projectId: string, data: EventData<K>) =>
  Effect.gen(function*() {
    const at = yield* now
    const deliveries = yield* h.run(Effect.flatMap(WebhooksRepo, (repo) => emit(repo)(kind, projectId, data, at)))
    return deliveries.map((d) => d.webhookId).sort()
  })

const movement = (projectId: string, amount: number): EventData<"revenue.movement"> => ({
  projectId: projectId as any,
  customer: "cus_rules",
  kind: amount >= 0 ? "expansion" : "contraction",
  mrrChange: { amount, currency: "EUR" },
  day: "2026-03-02" as any
})

const signal = (projectId: string, severity: Severity, money: number | null): EventData<"signal.opened"> => ({
  projectId: projectId as any,
  signal: {
    id: `sig_${severity}${money ?? "none"}`,
    dimension: "revenue",
    severity,
    kind: "mrr_decline",
    subject: null,
    title: "MRR fell",
    detail: "MRR fell below its expected range",
    metric: "mrr",
    day: "2026-03-02",
    actual: 900,
    expected: null,
    change: null,
    moneyAtStake: money === null ? null : { amount: money, currency: "EUR" },
    detectedAt: "2026-03-02T08:00:00.000Z",
    lastSeenAt: "2026-03-02T08:00:00.000Z",
    active: true,
    resolvedAt: null
  } as any
})

layer(TestApp.layer({ secretKey: SECRET_KEY, webhooksAllowPrivate: true }))("Webhook rules", (it) => {
  it.effect("money, severity and kinds: a filtered event is never fanned out to the endpoint", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const path = `/api/v1/projects/${projectId}/webhooks`
      const create = (body: Record<string, unknown>) =>
        Effect.map(
          h.raw("POST", path, { token: secret, body: { url: "https://hooks.example.com/in", confirm: true, ...body } }),
          (r) => {
            expect(r.status, r.text).toBe(201)
            return r.json.data.webhook as { id: string; minMoneyAtStake: number | null; minSeverity: string | null }
          }
        )
      const all = yield* create({ events: ["revenue.movement", "signal.opened", "integration.failed"] })
      const fifty = yield* create({
        events: ["revenue.movement", "signal.opened", "integration.failed"],
        minMoneyAtStake: 5000
      })
      const critical = yield* create({ events: ["signal.opened", "revenue.movement"], minSeverity: "critical" })
      const signalsOnly = yield* create({ events: ["signal.opened"] })
      expect(all).toMatchObject({ minMoneyAtStake: null, minSeverity: null })
      expect(fifty).toMatchObject({ minMoneyAtStake: 5000, minSeverity: null })
      const ids = (...ws: ReadonlyArray<{ id: string }>) => ws.map((w) => w.id).sort()

      // A €30 movement: not to the €50 endpoint; a €50 loss (contraction, counted by its size) goes there.
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, 3000))).toEqual(ids(all, critical))
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, -5000))).toEqual(
        ids(all, fifty, critical)
      )
      // Severity: a warning signal (€80 at stake) does not reach the critical-only endpoint.
      expect(yield* fanOut("signal.opened", projectId, signal(projectId, "warning", 8000))).toEqual(
        ids(all, fifty, signalsOnly)
      )
      expect(yield* fanOut("signal.opened", projectId, signal(projectId, "critical", 12000))).toEqual(
        ids(all, fifty, critical, signalsOnly)
      )
      // A signal without an estimate counts as nothing at stake.
      expect(yield* fanOut("signal.opened", projectId, signal(projectId, "critical", null))).toEqual(
        ids(all, critical, signalsOnly)
      )
      // A kind without an amount passes the money rule; kinds an endpoint does not take never reach it.
      const failed = yield* fanOut("integration.failed", projectId, {
        projectId: projectId as any,
        provider: "stripe",
        error: "401",
        at: (yield* now).toISOString()
      })
      expect(failed).toEqual(ids(all, fifty))
    }))

  it.effect("PATCH edits the rules (and clears them with null); a Slack endpoint starts at €50", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const path = `/api/v1/projects/${projectId}/webhooks`
      const slack = yield* h.raw("POST", path, {
        token: secret,
        body: { url: "https://hooks.slack.com/services/T0/B0/x", format: "slack", events: ["revenue.movement"] }
      })
      expect(slack.json.data.webhook).toMatchObject({ minMoneyAtStake: 5000, minSeverity: null })
      const created = yield* h.raw("POST", path, {
        token: secret,
        body: { url: "https://hooks.example.com/in", events: ["revenue.movement"], confirm: true }
      })
      const id: string = created.json.data.webhook.id
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, 3000))).toEqual([id])

      const patched = yield* h.raw("PATCH", `${path}/${id}`, {
        token: secret,
        body: { minMoneyAtStake: 5000, minSeverity: "warning" }
      })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.json.data.webhook).toMatchObject({ minMoneyAtStake: 5000, minSeverity: "warning" })
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, 3000))).toEqual([])
      const read = yield* h.raw("GET", `${path}/${id}`, { token: secret })
      expect(read.json.data).toMatchObject({ minMoneyAtStake: 5000, minSeverity: "warning" })

      const cleared = yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { minMoneyAtStake: null } })
      expect(cleared.json.data.webhook).toMatchObject({ minMoneyAtStake: null, minSeverity: "warning" })
      expect(yield* fanOut("revenue.movement", projectId, movement(projectId, 3000))).toEqual([id])

      const bad = yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { minMoneyAtStake: -1 } })
      expect(bad.status).toBe(400)
      const badSeverity = yield* h.raw("PATCH", `${path}/${id}`, { token: secret, body: { minSeverity: "loud" } })
      expect(badSeverity.status).toBe(400)
    }))
})
