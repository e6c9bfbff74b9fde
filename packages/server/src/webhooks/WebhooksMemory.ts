/** The webhooks repository over maps (tests): the same answers as WebhooksRepo.sql. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { pageInMemory } from "../store/Cursor.ts"
import { randomBase62 } from "../store/Ids.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { AttemptRecord, DeliveryRecord, OutboxEvent, WebhookRecord } from "./Records.ts"
import { passesRules } from "./Rules.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

interface StoredDelivery extends DeliveryRecord {
  readonly lockedUntil: Date | null
}

export const WebhooksMemory = Layer.effect(
  WebhooksRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDb
    const webhooks = new Map<string, WebhookRecord>()
    const events = new Map<string, OutboxEvent>()
    const deliveries = new Map<string, StoredDelivery>()
    const recaps = new Set<string>()
    /** Owner notices of a disabled endpoint already claimed: `webhookId/failingSince`. */
    const notices = new Set<string>()
    const anomalyClaims = new Set<string>()
    const answer = ({ lockedUntil: _, ...d }: StoredDelivery): DeliveryRecord => d
    /** One attempt recorded: the delivery, and its endpoint's failing streak (and disabling). */
    const record = (deliveryId: string, a: AttemptRecord): DeliveryRecord | null => {
      const d = deliveries.get(deliveryId)
      if (d === undefined) return null
      const next: StoredDelivery = {
        ...d,
        status: a.next,
        attempts: d.attempts + 1,
        firstAttemptAt: d.firstAttemptAt ?? a.at,
        lastAttemptAt: a.at,
        nextAttemptAt: a.nextAttemptAt,
        lockedUntil: null,
        responseStatus: a.status,
        latencyMs: a.latencyMs,
        responseExcerpt: a.excerpt
      }
      deliveries.set(deliveryId, next)
      const w = webhooks.get(d.webhookId)
      if (w !== undefined) {
        webhooks.set(w.id, {
          ...w,
          failingSince: a.ok ? null : (w.failingSince ?? a.at),
          ...(a.disable
            ? {
              enabled: false,
              disabledReason: "every delivery failed for 3 days: enable it again when it is fixed"
            }
            : {})
        })
      }
      return answer(next)
    }
    const mine = (projectId: string, id: string) => {
      const w = webhooks.get(id)
      return w !== undefined && w.projectId === projectId ? w : null
    }
    return WebhooksRepo.of({
      insert: Effect.fn("WebhooksRepo.insert")((w) => Effect.sync(() => (webhooks.set(w.id, w), w))),
      list: Effect.fn("WebhooksRepo.list")((projectId) =>
        Effect.sync(() =>
          [...webhooks.values()].filter((w) => w.projectId === projectId).sort((a, b) =>
            a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)
          )
        )
      ),
      find: Effect.fn("WebhooksRepo.find")((projectId, id) => Effect.sync(() => mine(projectId, id))),
      update: Effect.fn("WebhooksRepo.update")((projectId, id, patch) =>
        Effect.sync(() => {
          const w = mine(projectId, id)
          if (w === null) return null
          const next = { ...w, ...patch }
          webhooks.set(id, next)
          return next
        })
      ),
      remove: Effect.fn("WebhooksRepo.remove")((projectId, id) =>
        Effect.sync(() => {
          const w = mine(projectId, id)
          if (w === null) return null
          webhooks.delete(id)
          for (const d of deliveries.values()) if (d.webhookId === id) deliveries.delete(d.id)
          return w
        })
      ),
      enqueue: Effect.fn("WebhooksRepo.enqueue")((event) =>
        Effect.sync(() => {
          const targets = [...webhooks.values()].filter((w) =>
            w.projectId === event.projectId && w.enabled &&
            (event.webhookId === undefined ? passesRules(w, event) : w.id === event.webhookId)
          )
          if (targets.length > 0) events.set(event.id, event)
          // A recap destination gets no delivery now: its period's recap sums the event up (worker/Recaps.ts).
          return targets.filter((w) => event.webhookId !== undefined || w.cadence === "live").map((w) => {
            const d: StoredDelivery = {
              id: `whd_${randomBase62(24)}`,
              webhookId: w.id,
              eventId: event.id,
              type: event.type,
              status: "pending",
              attempts: 0,
              responseStatus: null,
              latencyMs: null,
              responseExcerpt: null,
              createdAt: event.createdAt,
              firstAttemptAt: null,
              lastAttemptAt: null,
              nextAttemptAt: event.createdAt,
              lockedUntil: event.lockedUntil ?? null
            }
            deliveries.set(d.id, d)
            return answer(d)
          })
        })
      ),
      subscribed: Effect.fn("WebhooksRepo.subscribed")((projectId) =>
        Effect.sync(() =>
          new Set([...webhooks.values()].filter((w) => w.projectId === projectId && w.enabled).flatMap((w) => w.events))
        )
      ),
      listDeliveries: Effect.fn("WebhooksRepo.listDeliveries")((webhookId, page) =>
        Effect.sync(() => {
          const result = pageInMemory([...deliveries.values()].filter((d) => d.webhookId === webhookId), page, "desc")
          return { ...result, items: result.items.map(answer) }
        })
      ),
      findDelivery: Effect.fn("WebhooksRepo.findDelivery")((webhookId, id) =>
        Effect.sync(() => {
          const d = deliveries.get(id)
          return d !== undefined && d.webhookId === webhookId ? answer(d) : null
        })
      ),
      claim: Effect.fn("WebhooksRepo.claim")((now, leaseMs, limit, webhookIds) =>
        Effect.sync(() => {
          const due = [...deliveries.values()].filter((d) => {
            const w = webhooks.get(d.webhookId)
            return d.status === "pending" && d.nextAttemptAt !== null && d.nextAttemptAt <= now &&
              (d.lockedUntil === null || d.lockedUntil <= now) && w !== undefined && w.enabled &&
              (webhookIds === undefined || webhookIds.includes(d.webhookId))
          }).sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime() || (a.id < b.id ? -1 : 1))
            .slice(0, limit)
          return due.map((d) => {
            const held = { ...d, lockedUntil: new Date(now.getTime() + leaseMs) }
            deliveries.set(d.id, held)
            return { delivery: answer(held), body: events.get(d.eventId)!.body, webhook: webhooks.get(d.webhookId)! }
          })
        })
      ),
      record: Effect.fn("WebhooksRepo.record")((deliveryId, a) => Effect.sync(() => record(deliveryId, a))),
      // The reference: each outcome recorded in turn (the SQL twin does it in one go).
      recordMany: Effect.fn("WebhooksRepo.recordMany")((outcomes) =>
        Effect.sync(() => outcomes.filter((o) => record(o.deliveryId, o.attempt) !== null).length)
      ),
      redeliver: Effect.fn("WebhooksRepo.redeliver")((webhookId, id, now) =>
        Effect.sync(() => {
          const d = deliveries.get(id)
          if (d === undefined || d.webhookId !== webhookId) return null
          const next = { ...d, status: "pending" as const, nextAttemptAt: now, lockedUntil: null, firstAttemptAt: null }
          deliveries.set(id, next)
          return answer(next)
        })
      ),
      recapDestinations: Effect.fn("WebhooksRepo.recapDestinations")((webhookIds) =>
        Effect.sync(() =>
          [...webhooks.values()].filter((w) =>
            w.enabled && w.cadence !== "live" && (webhookIds === undefined || webhookIds.includes(w.id))
          ).flatMap((w) => {
            const project = db.projects.get(w.projectId)
            return project === undefined ? [] : [{ webhook: w, timezone: project.timezone }]
          })
        )
      ),
      eventsFor: Effect.fn("WebhooksRepo.eventsFor")((webhook, from, to) =>
        Effect.sync(() =>
          [...events.values()].filter((e) =>
            e.projectId === webhook.projectId && e.createdAt >= from && e.createdAt < to &&
            e.type !== "recap.ready" && e.type !== "webhook.test" && passesRules(webhook, e)
          ).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
            .map((e) => ({ type: e.type, body: e.body, createdAt: e.createdAt }))
        )
      ),
      claimDisabledNotice: Effect.fn("WebhooksRepo.claimDisabledNotice")((webhookId, failingSince) =>
        Effect.sync(() => {
          const key = `${webhookId}/${failingSince.toISOString()}`
          if (notices.has(key)) return false
          notices.add(key)
          return true
        })
      ),
      claimRecap: Effect.fn("WebhooksRepo.claimRecap")((webhookId, periodStart) =>
        Effect.sync(() => {
          const key = `${webhookId}/${periodStart}`
          if (recaps.has(key)) return false
          recaps.add(key)
          return true
        })
      ),
      anomalyProjects: Effect.fn("WebhooksRepo.anomalyProjects")((projectIds) =>
        Effect.sync(() =>
          [
            ...new Set(
              [...webhooks.values()].filter((w) =>
                w.enabled && w.events.includes("traffic.anomaly") &&
                (projectIds === undefined || projectIds.includes(w.projectId))
              ).map((w) => w.projectId)
            )
          ].sort()
        )
      ),
      claimAnomaly: Effect.fn("WebhooksRepo.claimAnomaly")((projectId, hour) =>
        Effect.sync(() => {
          const key = `${projectId}/${hour.toISOString()}`
          if (anomalyClaims.has(key)) return false
          anomalyClaims.add(key)
          return true
        })
      ),
      claimEntitlementEnding: Effect.fn("WebhooksRepo.claimEntitlementEnding")((accountId, endsAt) =>
        Effect.sync(() => {
          const key = `entitlement/${accountId}/${endsAt.toISOString()}`
          if (anomalyClaims.has(key)) return false
          anomalyClaims.add(key)
          return true
        })
      ),
      transaction: (effect) => effect
    })
  })
)
