/**
 * Freshness of derived data: what the read endpoints serve is the STORED health, signals and briefing,
 * made current first when it is behind the data (or too old for the clock-driven rules). Handlers depend on
 * this service, not on the worker: the live layer recomputes through recompute/Recompute.ts under the
 * project's lock; a test layer can answer from anything.
 */
import type { Briefing } from "@sitehealth/domain/Projects"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoredHealth } from "../snapshots/SnapshotsRepo.ts"
import { ensureBriefing, ensureFresh, isFresh } from "./Recompute.ts"

export interface FreshProject {
  readonly id: string
  readonly timezone: string
}

export interface FreshnessShape {
  /** Whether a stored computation is current: same data version, same local day, recent enough. Pure. */
  readonly isFresh: (
    stored: { readonly dataVersion: string; readonly computedAt: Date } | null,
    dataVersion: string | null,
    now: Date
  ) => boolean
  /** The project's stored health for its local today, recomputed first when it is not fresh. */
  readonly ensureHealth: (project: FreshProject) => Effect.Effect<StoredHealth>
  /** The briefing of the project's local date: the stored one, or generated now (once) and stored. */
  readonly ensureBriefing: (project: FreshProject) => Effect.Effect<Briefing>
}

export class Freshness extends Context.Service<Freshness, FreshnessShape>()("sitehealth/Freshness") {
  /** Over the repositories in context when the layer is built (the worker's recomputation needs them). */
  static readonly live = Layer.effect(
    Freshness,
    Effect.gen(function*() {
      const context = yield* Effect.context<Effect.Services<ReturnType<typeof ensureBriefing>>>()
      return Freshness.of({
        isFresh,
        ensureHealth: Effect.fn("Freshness.ensureHealth")(function*(project) {
          return yield* Effect.provideContext(ensureFresh(project.id, project.timezone), context)
        }),
        ensureBriefing: Effect.fn("Freshness.ensureBriefing")(function*(project) {
          return yield* Effect.provideContext(ensureBriefing(project.id, project.timezone), context)
        })
      })
    })
  )

  /** Tests: the given implementation, with the live freshness rule unless it brings its own. */
  static readonly test = (implementation: Omit<FreshnessShape, "isFresh"> & Partial<Pick<FreshnessShape, "isFresh">>) =>
    Layer.succeed(Freshness, Freshness.of({ isFresh, ...implementation }))
}
