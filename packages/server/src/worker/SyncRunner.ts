/**
 * Runs queued syncs: claim a run (SyncQueue.claim: short transaction, lease), invoke its connector OUTSIDE
 * any transaction while a background fiber renews the lease, then record the outcome in one transaction
 * (SyncQueue.succeed / fail). How a connector is invoked:
 *
 *   connector.sync({ projectId, timezone, currency, now, mode, state, baseUrl, credentials, http })
 *
 * with `state` = the cursor the last successful run returned (null on a full sync), `baseUrl` = the
 * integration's override > the connector's environment variable > its default, `credentials` decrypted
 * here (never logged, never in an error), `http` = the ProviderHttp service.
 *
 * Failures: a transient one (5xx, 429, timeout, network after ProviderHttp's own retries) puts the run
 * back in the queue for a later attempt; the third failed attempt — or any other failure (rejected or
 * undecryptable credentials, unknown site, malformed answer) — fails the run and puts the integration in
 * `error` with the message, which raises the integration_failing signal, counts one more failure in a row
 * and puts its next scheduled run after the back-off (Schedule.ts); a success resets both and schedules
 * the next slot. The first success of a connection (or a full resync) rebuilds the project's history
 * (recompute/Recompute.ts rebuildHistory), recorded as pending with the success so it is not lost.
 * A worker that dies mid-run leaves a lease that expires; the next claim takes the run over (and counts the attempt). A
 * worker that is
 * STOPPED mid-run (its fiber interrupted: SIGTERM) interrupts the connector and releases the run back to the
 * queue at once (SyncQueue.release), so another worker takes it within one poll, not after the lease.
 */
import { backoffMillis } from "@sitehealth/domain/RetryAfter"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { type Credentials, resolveBaseUrl } from "../integrations/Connector.ts"
import { CredentialsCipher } from "../integrations/Crypto.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { CurrentProvider, ProviderError, ProviderHttp } from "../integrations/ProviderHttp.ts"
import { connectorFor, type ConnectorLookup } from "../integrations/Registry.ts"
import { intervalMinutesOf, nextSyncAfter } from "../integrations/Schedule.ts"
import { SyncQueue } from "../integrations/SyncQueue.ts"
import { AppConfig } from "../platform/Config.ts"
import { countSyncRun } from "../platform/Metrics.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { rebuildHistory } from "../recompute/Recompute.ts"
import type { SyncRunRecord } from "../store/Records.ts"

/** How long a claim holds a run before another worker may take it over; renewed every third of it. */
export const LEASE_MS = 5 * 60_000
/** Attempts of one run before it fails for good (and the integration shows `error`). */
export const MAX_ATTEMPTS = 3
/** Wait before a failed attempt is retried: 1 min, then 2 min (the shared exponential backoff, no jitter). */
export const retryDelayMs = (attempt: number): number => backoffMillis({ backoffBaseMs: 60_000 }, attempt)
/** Pause between polls of the sync worker when nothing is queued. */
export const SYNC_POLL_INTERVAL = Duration.seconds(5)

const TRANSIENT = new Set<ProviderError["kind"]>(["server", "rate_limited", "timeout", "network"])

export interface RunnerOptions {
  /** Connector of a provider (tests pass their own); the registry by default. */
  readonly connectors?: ConnectorLookup
  /**
   * Only these projects' runs are claimed (SyncQueue.claim): a caller draining its own runs — the demo seed,
   * a test on a database other test files share — neither runs nor steals anyone else's. Every project's
   * when omitted (the worker).
   */
  readonly projectIds?: ReadonlyArray<string>
  readonly leaseMs?: number
  /**
   * What an interrupted run leaves behind: released back to the queue (default), or — false — the run left
   * `running` under its lease, as a crash would (tests use it to stand for a killed process).
   */
  readonly releaseOnInterrupt?: boolean
  /** Interval of integrations whose provider has no cadence of its own (Schedule.ts); 60 by default. */
  readonly defaultIntervalMinutes?: number
  /** The whole run's deadline (SITEHEALTH_SYNC_DEADLINE_MINUTES); DEFAULT_DEADLINE_MINUTES by default. */
  readonly deadlineMinutes?: number
}

/** The default of SITEHEALTH_SYNC_DEADLINE_MINUTES (platform/Config.ts). */
export const DEFAULT_DEADLINE_MINUTES = 60

/**
 * A connector's run under the whole run's deadline (each provider call has its own timeout in ProviderHttp):
 * past it the run is interrupted — a write in flight rolls back with its transaction — and fails as a
 * transient `timeout`, so it is retried (a Stripe listing continues from its last committed batch).
 */
export const withDeadline = <A, R>(
  run: Effect.Effect<A, ProviderError, R>,
  minutes: number
): Effect.Effect<A, ProviderError, R> =>
  run.pipe(
    Effect.timeoutOrElse({
      duration: Duration.minutes(minutes),
      orElse: () =>
        Effect.fail(
          new ProviderError({
            kind: "timeout",
            status: null,
            message:
              `the sync ran past its deadline of ${minutes} min (SITEHEALTH_SYNC_DEADLINE_MINUTES) and was stopped; ` +
              `what it committed stays, and the next attempt continues from there`
          })
        )
    })
  )

/** The default of SITEHEALTH_SYNC_INTERVAL_MINUTES (platform/Config.ts). */
export const DEFAULT_INTERVAL_MINUTES = 60

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** Why a connector failed, for the run and the integration: the ProviderError's message, or a generic one. */
const failureOf = (
  cause: Cause.Cause<unknown>,
  provider: string
): { readonly message: string; readonly transient: boolean } => {
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  if (error instanceof ProviderError) return { message: error.message, transient: TRANSIENT.has(error.kind) }
  if (error !== undefined && typeof (error as { message?: unknown }).message === "string") {
    return { message: (error as { message: string }).message, transient: false }
  }
  return { message: `internal error in the ${provider} connector (see the worker's log)`, transient: false }
}

/**
 * Claims one run and carries it to its end. Returns the run as recorded afterwards, or null when no run
 * was waiting. Never fails: a failure of the run is recorded on it. Only the connector call can be
 * interrupted; the claim and the bookkeeping around it are short statements that run to their end, so an
 * interruption never leaves a run claimed without anyone knowing it (until its lease ran out).
 */
export const runNextSync = (options: RunnerOptions = {}) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const queue = yield* SyncQueue
      const leaseMs = options.leaseMs ?? LEASE_MS
      const lookup = options.connectors ?? connectorFor
      // Untraced: an idle poll is not a trace; a claimed run gets its own (SyncRunner.run below).
      const claimed = yield* queue.claim(yield* nowDate, leaseMs, options.projectIds).pipe(
        Effect.withTracerEnabled(false)
      )
      if (claimed === null) return null
      const run = claimed

      return yield* Effect.gen(function*() {
        // Inside the run's span (below), as everything after the claim: the run's trace names its lookups.
        const connection = yield* (yield* IntegrationsRepo).connection(run.projectId, run.provider)
        const intervalMinutes = intervalMinutesOf(
          run.provider,
          connection?.integration.syncIntervalMinutes,
          options.defaultIntervalMinutes ?? DEFAULT_INTERVAL_MINUTES
        )
        const nextAfter = (now: Date, failures: number) =>
          nextSyncAfter({ projectId: run.projectId, provider: run.provider, intervalMinutes, now, failures })
        const finishFailed = (message: string, transient: boolean) =>
          Effect.gen(function*() {
            const now = yield* nowDate
            const retry = transient && run.attempts < MAX_ATTEMPTS
            const recorded = yield* queue.fail({
              run,
              error: message,
              now,
              retryAt: retry ? new Date(now.getTime() + retryDelayMs(run.attempts)) : null,
              // The run failed for good: one more failure in a row, and the back-off that goes with it.
              nextSyncAt: nextAfter(now, (connection?.integration.failures ?? 0) + 1)
            })
            yield* countSyncRun(run.provider, retry ? "retry" : "failed")
            // The ids stay in this one message as well as in the annotations: it is the line operators search for.
            yield* Effect.logWarning(
              `sync ${run.id} (${run.provider} of ${run.projectId}) attempt ${run.attempts} failed${
                retry ? ", will retry" : ""
              }: ${message}${recorded ? "" : " (the run was taken over meanwhile)"}`
            )
          })

        if (run.attempts > MAX_ATTEMPTS) {
          return yield* finishFailed(`the worker stopped during this sync ${MAX_ATTEMPTS} times; giving up`, false)
        }
        if (connection === null) return yield* finishFailed(`${run.provider} is no longer connected`, false)
        const connector = lookup(run.provider)
        if (connector === undefined) {
          return yield* finishFailed(`no connector for provider ${run.provider} in this server`, false)
        }
        const project = yield* (yield* ProjectsRepo).find(run.projectId)
        if (project === null) {
          return yield* finishFailed("the project no longer exists", false)
        }
        let credentials: Credentials = {}
        if (connection.credentials !== null) {
          const decrypted = yield* Effect.result((yield* CredentialsCipher).decrypt(connection.credentials))
          if (decrypted._tag === "Failure") return yield* finishFailed(decrypted.failure.message, false)
          credentials = decrypted.success
        } else if (connector.credentialFields.length > 0) {
          return yield* finishFailed(
            `no credentials are stored for ${run.provider}; connect it again in the dashboard`,
            false
          )
        }
        const baseUrl = yield* Effect.result(resolveBaseUrl(connector, connection.integration.baseUrl ?? null))
        if (baseUrl._tag === "Failure") return yield* finishFailed(baseUrl.failure, false)
        const http = yield* ProviderHttp
        const now = yield* nowDate
        const renew = Effect.gen(function*() {
          for (;;) {
            yield* Effect.sleep(Duration.millis(Math.max(1, Math.floor(leaseMs / 3))))
            const held = yield* queue.renew(run, new Date((yield* nowDate).getTime() + leaseMs))
            if (!held) return yield* Effect.logWarning("sync lease lost (another worker took the run over)")
          }
        })
        const exit = yield* Effect.scoped(Effect.gen(function*() {
          yield* Effect.forkScoped(renew)
          return yield* Effect.exit(restore(withDeadline(
            connector.sync({
              projectId: project.id,
              timezone: project.timezone,
              currency: project.currency,
              now,
              mode: run.mode,
              state: run.mode === "full" ? null : connection.state,
              baseUrl: baseUrl.success,
              credentials,
              http
            }),
            options.deadlineMinutes ?? DEFAULT_DEADLINE_MINUTES
          )))
        }))
        if (Exit.isSuccess(exit)) {
          const finished = yield* nowDate
          // The first successful sync of a connection (or a full resync) brought history.
          const historyPending = connection.integration.lastSyncedAt === null || run.mode === "full"
          const recorded = yield* queue.succeed({
            run,
            counts: exit.value.counts,
            state: exit.value.state,
            now: finished,
            nextSyncAt: nextAfter(finished, 0),
            historyPending
          })
          yield* countSyncRun(run.provider, "succeeded")
          if (!recorded) {
            return yield* Effect.logWarning(
              "sync finished after its lease was taken over; the other attempt records the outcome"
            )
          }
          // The health history, signals and briefings of those days are rebuilt now, so trends and signals work
          // from day one. A failure here is logged and the history stays pending (rebuildPendingHistories
          // retries it); the sync itself stands.
          if (historyPending) yield* rebuildLogged(run.projectId)
          return
        }
        if (Cause.hasInterruptsOnly(exit.cause)) {
          if (options.releaseOnInterrupt !== false) {
            const released = yield* queue.release(run)
            yield* Effect.logInfo(
              released
                ? "sync: worker stopping, run released back to the queue"
                : "sync: worker stopping, run was already taken over or finished"
            )
          }
          yield* Effect.annotateCurrentSpan("sitehealth.sync.outcome", "released")
          return yield* Effect.failCause(exit.cause)
        }
        const failure = failureOf(exit.cause, run.provider)
        if (Option.isNone(Cause.findErrorOption(exit.cause))) {
          yield* Effect.logError("sync connector died", Cause.pretty(exit.cause))
        }
        return yield* finishFailed(failure.message, failure.transient)
      }).pipe(
        Effect.andThen(queue.find(run.id)),
        Effect.tap((recorded) => Effect.annotateCurrentSpan("sitehealth.sync.outcome", outcomeOf(recorded))),
        // The connector's provider calls (ProviderHttp) name the provider in their spans.
        Effect.provideService(CurrentProvider, run.provider),
        // Every line of the run carries which run it is, and how long the run had been going.
        Effect.withLogSpan("sync"),
        Effect.annotateLogs({
          syncId: run.id,
          provider: run.provider,
          projectId: run.projectId,
          attempt: run.attempts
        }),
        // One trace per run: the provider calls and the SQL of the run are its children.
        Effect.withSpan("SyncRunner.run", {
          root: true,
          attributes: {
            "sitehealth.provider": run.provider,
            "sitehealth.project_id": run.projectId,
            "sitehealth.sync.id": run.id,
            "sitehealth.sync.mode": run.mode,
            "sitehealth.sync.attempt": run.attempts
          }
        })
      )
    })
  )

/** The run's outcome as recorded: retry = back in the queue after a transient failure. */
const outcomeOf = (recorded: SyncRunRecord | null): string =>
  recorded === null ?
    "unknown"
    : recorded.status === "queued" ?
    "retry"
    : recorded.status === "running" ?
    "taken_over"
    : recorded.status

/** rebuildHistory, its outcome logged; never fails (a failed rebuild stays pending). */
const rebuildLogged = (projectId: string) =>
  rebuildHistory(projectId).pipe(
    Effect.tap((rebuilt) =>
      rebuilt === null || rebuilt.days === 0 ?
        Effect.void
        : Effect.logInfo(
          `sync: history of ${projectId} rebuilt for ${rebuilt.days} days (${rebuilt.from} to ${rebuilt.to})`
        )
    ),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`sync: rebuilding the history of ${projectId} failed; it stays pending`, Cause.pretty(cause))
    )
  )

/**
 * Rebuilds the histories still pending (a worker died between a sync's success and its rebuild, or the
 * rebuild failed): a few projects per round. Another worker doing one at the same moment waits for the
 * project's lock and then finds it done.
 */
export const rebuildPendingHistories = (limit = 10) =>
  Effect.gen(function*() {
    // Untraced: polled every round, and mostly empty; a rebuild is traced as its own (Recompute.rebuildHistory).
    const pending = yield* (yield* IntegrationsRepo).historyPending(limit).pipe(Effect.withTracerEnabled(false))
    for (const projectId of pending) yield* rebuildLogged(projectId)
    return pending
  })

/** Runs queued syncs until none is waiting (or `max` ran); returns them as recorded. */
export const drainSyncs = (options: RunnerOptions & { readonly max?: number } = {}) =>
  Effect.gen(function*() {
    const done: Array<SyncRunRecord> = []
    const max = options.max ?? 100
    while (done.length < max) {
      const run = yield* runNextSync(options)
      if (run === null) break
      done.push(run)
    }
    return done
  })

/**
 * Queues the scheduled syncs that are due (see SyncQueue.schedule and Schedule.ts); `projectIds` as in
 * RunnerOptions: only these projects' integrations, every project's when omitted (the worker).
 */
export const scheduleSyncs = (
  options: { readonly defaultIntervalMinutes: number; readonly projectIds?: ReadonlyArray<string> }
) =>
  Effect.gen(function*() {
    return yield* (yield* SyncQueue).schedule({
      now: yield* nowDate,
      defaultIntervalMinutes: options.defaultIntervalMinutes,
      ...(options.projectIds === undefined ? {} : { projectIds: options.projectIds })
    })
  })

/**
 * Forever: queue the due scheduled syncs, run every waiting sync, wait SYNC_POLL_INTERVAL. Needs AppConfig
 * (the default interval, the credentials key); provides the ProviderHttp client and the cipher itself, and
 * fails at once with a SecretKeyError when there is no usable key.
 */
export const runSyncWorker = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* Effect.logInfo(
    `sitehealth: sync worker started (scheduled syncs at each provider's cadence; ${config.syncIntervalMinutes} min ` +
      `for a provider without one)`
  )
  return yield* scheduleSyncs({ defaultIntervalMinutes: config.syncIntervalMinutes }).pipe(
    Effect.withTracerEnabled(false), // every 5 s, and nothing to see unless it queued a run (traced when run)
    Effect.andThen(
      drainSyncs({ defaultIntervalMinutes: config.syncIntervalMinutes, deadlineMinutes: config.syncDeadlineMinutes })
    ),
    Effect.andThen(rebuildPendingHistories()),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError("sync round failed", Cause.pretty(cause))
    ),
    Effect.andThen(Effect.sleep(SYNC_POLL_INTERVAL)),
    Effect.forever,
    Effect.annotateLogs("worker", "sync")
  )
}).pipe(Effect.provide([CredentialsCipher.fromConfig, ProviderHttp.layer()]))
