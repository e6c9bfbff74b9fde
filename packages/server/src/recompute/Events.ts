/**
 * The events a recomputation causes (docs/alerts.md): `signal.opened` / `signal.resolved` as the open signals
 * change, `health.changed` when the score moved by at least HEALTH_CHANGE_THRESHOLD points from the last stored
 * score, `briefing.ready` when the day's morning edition is written. Written to the webhooks' outbox inside the
 * recomputation's transaction (the project's lock), so they commit with the change or not at all. A project whose
 * endpoints take none of them costs one small query and writes nothing.
 */
import { type EventKind, HEALTH_CHANGE_THRESHOLD } from "@sitehealth/domain/Events"
import type { Briefing, Health, Signal } from "@sitehealth/domain/Projects"
import * as Effect from "effect/Effect"
import { addDays } from "../metrics/Dates.ts"
import { SignalsRepo } from "../snapshots/SignalsRepo.ts"
import { SnapshotsRepo } from "../snapshots/SnapshotsRepo.ts"
import { emit } from "../webhooks/Outbox.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"

export interface Before {
  readonly kinds: ReadonlySet<EventKind>
  readonly signals: ReadonlyArray<Signal>
  readonly score: number | null
}

/** What the events are measured against, read before the recomputation writes. */
export const readBefore = (projectId: string, today: string) =>
  Effect.gen(function*() {
    const kinds = yield* (yield* WebhooksRepo).subscribed(projectId)
    const signals = kinds.has("signal.opened") || kinds.has("signal.resolved")
      ? yield* (yield* SignalsRepo).active(projectId)
      : []
    let score: number | null = null
    if (kinds.has("health.changed")) {
      const snapshots = yield* SnapshotsRepo
      const last = (yield* snapshots.healthOf(projectId, today)) ??
        (yield* snapshots.healthOf(projectId, addDays(today, -1)))
      score = last?.health.score ?? null
    }
    return { kinds, signals, score } satisfies Before
  })

/** After the recomputation's writes, in its transaction: the events it caused. */
export const emitAfter = (
  before: Before,
  after: { readonly projectId: string; readonly now: Date; readonly health: Health; readonly morning: Briefing | null }
) =>
  Effect.gen(function*() {
    const { kinds } = before
    if (kinds.size === 0) return
    const webhooks = yield* WebhooksRepo
    const send = emit(webhooks)
    const { now, projectId } = after
    const project = projectId as Health["projectId"]
    if (kinds.has("signal.opened") || kinds.has("signal.resolved")) {
      const active = yield* (yield* SignalsRepo).active(projectId)
      const was = new Set(before.signals.map((s) => s.id))
      const is = new Set(active.map((s) => s.id))
      for (const signal of active) {
        if (!was.has(signal.id)) yield* send("signal.opened", projectId, { projectId: project, signal }, now)
      }
      for (const signal of before.signals) {
        if (is.has(signal.id)) continue
        const resolved = { ...signal, active: false, resolvedAt: now.toISOString() }
        yield* send("signal.resolved", projectId, { projectId: project, signal: resolved }, now)
      }
    }
    const score = after.health.score
    if (kinds.has("health.changed") && score !== null && before.score !== null) {
      const change = score - before.score
      if (Math.abs(change) >= HEALTH_CHANGE_THRESHOLD) {
        yield* send("health.changed", projectId, {
          projectId: project,
          score,
          previousScore: before.score,
          change,
          computedAt: after.health.computedAt
        }, now)
      }
    }
    if (kinds.has("briefing.ready") && after.morning !== null) {
      yield* send("briefing.ready", projectId, {
        projectId: project,
        day: after.morning.date,
        score,
        priorities: after.morning.priorities.map((p) => ({
          rank: p.rank,
          severity: p.severity,
          title: p.title,
          moneyAtStake: p.moneyAtStake
        }))
      }, now)
    }
  })
