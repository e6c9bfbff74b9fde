/**
 * The recompute worker: claims due projects one at a time (JobsRepo.claimNext: FOR UPDATE SKIP LOCKED, so
 * any number of workers share the queue and never compute one project twice at once) and recomputes
 * their snapshots, signals and briefing. A project is due when its data_version moved since its last
 * computation, or at its due_at (next local midnight or 06:00, at most an hour after the last run).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import type * as SqlClient from "effect/sql/SqlClient"
import { beat, beatIfDue, startHeartbeat } from "../platform/Heartbeat.ts"
import { JobsRepo } from "../recompute/JobsRepo.ts"
import { recomputeLocked } from "../recompute/Recompute.ts"
import { runBriefingMail } from "./BriefingMail.ts"
import { runEntitlementEnding } from "./EntitlementEnding.ts"
import { runRecaps } from "./Recaps.ts"
import { runSyncWorker } from "./SyncRunner.ts"
import { runTrafficAnomalies } from "./TrafficAnomalies.ts"
import { runWebhookWorker } from "./WebhookDelivery.ts"

/** Pause between polls when the queue is empty. */
export const POLL_INTERVAL = Duration.seconds(5)
/** After a failed computation, the project is retried this much later. */
export const RETRY_AFTER_MS = 5 * 60_000

/** Claims and recomputes due projects until none is left (or `max` were done); returns how many. */
export const drainOnce = (options: {
  readonly max?: number
  /** What to run on a claimed project (tests wrap it to observe overlap); recomputeLocked by default. */
  readonly compute?: (projectId: string) => ReturnType<typeof recomputeLocked>
  /** Run after each project (runWorker: the heartbeat, so a long round does not look like a dead worker). */
  readonly afterEach?: Effect.Effect<void, never, SqlClient.SqlClient>
  /** Only these projects (a test on a database shared with another suite); every due project by default. */
  readonly projectIds?: ReadonlyArray<string>
} = {}) =>
  Effect.gen(function*() {
    const jobs = yield* JobsRepo
    const start = new Date(yield* Clock.currentTimeMillis)
    yield* jobs.ensureJobs(start)
    const done: Array<string> = []
    const max = options.max ?? 1000
    while (done.length < max) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const claimed = yield* jobs.claimNext(now, (job) =>
        jobs.attempt((options.compute ?? recomputeLocked)(job.projectId)).pipe(
          Effect.asVoid,
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError(
              `recompute failed; retrying in ${RETRY_AFTER_MS / 60_000} min`,
              Cause.pretty(cause)
            ).pipe(Effect.andThen(jobs.postpone(job.projectId, new Date(now.getTime() + RETRY_AFTER_MS))))
          ),
          Effect.withLogSpan("recompute"),
          Effect.annotateLogs("projectId", job.projectId),
          Effect.tap(() =>
            Effect.sync(() => void done.push(job.projectId))
          )
        ), options.projectIds)
      if (!claimed) {
        break
      }
      if (options.afterEach !== undefined) {
        yield* options.afterEach
      }
    }
    return done
  })

/**
 * Forever: drain the queue, then wait POLL_INTERVAL. Failures of one round are logged, not fatal. The
 * integrations' sync worker (worker/SyncRunner.ts: scheduled syncs, then the queued runs) runs beside
 * it as a second fiber, the webhook deliveries (worker/WebhookDelivery.ts) as a third (then the morning email, the
 * recaps and the hourly traffic anomalies, worker/TrafficAnomalies.ts); the sync fiber stops the
 * whole worker only when it cannot start (no credentials key).
 *
 * Interrupting it (the process got SIGTERM) stops both fibers and returns only once they have ended: a
 * recompute in progress rolls back (its transaction is the project's lock, so the lock goes with it) and a
 * sync in progress is released back to the queue. Both need the database, so the caller must not close its
 * pool before this returns — hence the explicit interrupt-and-await here rather than child fibers, which
 * would be interrupted only when the whole calling fiber ends, after its scope (and pool) closed.
 */
export const runWorker = Effect.gen(function*() {
  yield* Effect.logInfo("sitehealth: recompute worker started")
  // Each poll beats (platform/Heartbeat.ts): /readyz reports the worker stale when the beats stop.
  yield* startHeartbeat
  // Each round's polling (heartbeat, claims) is untraced — every 5 s, it would bury the traces that matter —
  // and each recomputation is traced as its own trace (Recompute.project), as far as tracing is on at all.
  const tracing = yield* References.TracerEnabled
  const recompute = yield* Effect.forkChild(
    beat.pipe(
      Effect.andThen(drainOnce({
        afterEach: beatIfDue,
        compute: (projectId) => recomputeLocked(projectId).pipe(Effect.withTracerEnabled(tracing))
      })),
      Effect.withTracerEnabled(false),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError("recompute round failed", Cause.pretty(cause))
      ),
      Effect.andThen(Effect.sleep(POLL_INTERVAL)),
      Effect.forever,
      Effect.annotateLogs("worker", "recompute")
    )
  )
  const syncs = yield* Effect.forkChild(runSyncWorker)
  const webhooks = yield* Effect.forkChild(runWebhookWorker)
  const mail = yield* Effect.forkChild(runBriefingMail)
  const recaps = yield* Effect.forkChild(runRecaps)
  const anomalies = yield* Effect.forkChild(runTrafficAnomalies)
  const ending = yield* Effect.forkChild(runEntitlementEnding)
  return yield* Effect.raceFirst(
    Fiber.join(recompute),
    Effect.raceFirst(
      Fiber.join(syncs),
      Effect.raceFirst(
        Fiber.join(webhooks),
        Effect.raceFirst(
          Fiber.join(mail),
          Effect.raceFirst(Fiber.join(recaps), Effect.raceFirst(Fiber.join(anomalies), Fiber.join(ending)))
        )
      )
    )
  ).pipe(
    // Say why, or an in-process worker that could not start its syncs just stops (and /readyz goes stale).
    Effect.tapCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError("sitehealth: worker failed", Cause.pretty(cause))
    ),
    Effect.ensuring(Effect.andThen(
      Fiber.interruptAll([recompute, syncs, webhooks, mail, recaps, anomalies]),
      Effect.logInfo("sitehealth: worker stopped")
    ))
  )
})
