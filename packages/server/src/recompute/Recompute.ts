/**
 * Recomputing one project: health snapshot of the local day, signals (reconciled with the stored ones),
 * and the local date's briefing once the morning has come. Always runs inside the project's job lock
 * (JobsRepo), so a worker and a request never compute one project at the same time. Readers call
 * `ensureFresh` before answering: they never serve a snapshot older than the data.
 */
import { ProjectsApi } from "@sitehealth/domain/ApiProjects"
import type { Briefing, Signal } from "@sitehealth/domain/Projects"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { FxRepo } from "../fx/FxRepo.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { briefing, recomposeReason } from "../metrics/Briefing.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { health } from "../metrics/Health.ts"
import { MetricsRepo } from "../metrics/MetricsRepo.ts"
import { detectSignals, RANKING_DAYS } from "../metrics/Signals.ts"
import { dataSources } from "../metrics/Sources.ts"
import { SearchRepo } from "../search/SearchRepo.ts"
import { SignalsRepo } from "../snapshots/SignalsRepo.ts"
import { SnapshotsRepo, type StoredHealth } from "../snapshots/SnapshotsRepo.ts"
import type { SearchQueryDay } from "../store/Series.ts"
import { type Before, emitAfter, readBefore } from "./Events.ts"
import { JobsRepo, type JobState } from "./JobsRepo.ts"

/** Days of rows loaded: the 60-day comparison ending yesterday, 8 weeks of weekday baseline, a margin. */
export const LOOKBACK_DAYS = 75
/** The stored answer of the briefing read (access/StoredAnswers.ts keys it by its endpoint's name). */
const BRIEFING_ANSWER = ProjectsApi.endpoints.getBriefing.identifier
/** Local hour from which the worker writes the day's briefing. */
export const BRIEFING_HOUR = 6
/** A stored computation older than this is redone even if the data did not change (clock-driven rules). */
export const MAX_AGE_MS = 3_600_000

const hourFormats = new Map<string, Intl.DateTimeFormat>()
/** Local hour and minute of `now` in `timezone`. */
export const localTime = (timezone: string, now: Date): { hour: number; minute: number } => {
  let f = hourFormats.get(timezone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
    hourFormats.set(timezone, f)
  }
  const parts = f.formatToParts(now)
  return {
    hour: Number(parts.find((p) => p.type === "hour")?.value ?? 0),
    minute: Number(parts.find((p) => p.type === "minute")?.value ?? 0)
  }
}

/** When the project is next due: the next local 00:00 or 06:00, and at most MAX_AGE_MS from now. */
export const nextDue = (timezone: string, now: Date): Date => {
  const { hour, minute } = localTime(timezone, now)
  const m = hour * 60 + minute
  const untilBoundary = (m < BRIEFING_HOUR * 60 ? BRIEFING_HOUR * 60 - m : 1440 - m) * 60_000
  return new Date(now.getTime() + Math.min(untilBoundary, MAX_AGE_MS))
}

/** Whether what is stored for the project is current: same data version, same local day, recent enough. */
export const isFresh = (
  stored: { readonly dataVersion: string; readonly computedAt: Date } | null,
  version: string | null,
  now: Date
) => stored !== null && stored.dataVersion === version && now.getTime() - stored.computedAt.getTime() < MAX_AGE_MS

export interface Recomputed {
  readonly projectId: string
  readonly day: string
  readonly version: string
  readonly signals: number
  readonly briefing: boolean
}

/**
 * Computes and stores everything for the project. Call ONLY inside JobsRepo.withProjectLock/claimNext.
 * The data version is read before the rows: a write landing in between leaves newer rows under the older
 * version, so the next check recomputes once more — never the other way round.
 */
export const recomputeLocked = (
  projectId: string,
  options: {
    readonly forceBriefing?: boolean
    /** What its events are measured against, when read earlier (rebuildHistory, before its replay). */
    readonly before?: Before
  } = {}
) =>
  Effect.gen(function*() {
    const jobs = yield* JobsRepo
    const metrics = yield* MetricsRepo
    const snapshots = yield* SnapshotsRepo
    const signalsRepo = yield* SignalsRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const version = yield* jobs.dataVersion(projectId)
    if (version === null) return null
    const loaded = yield* metrics.loadProject(projectId, addDays(now.toISOString().slice(0, 10), -(LOOKBACK_DAYS + 1)))
    if (loaded === null) return null
    const { project, series } = loaded
    const today = todayIn(project.timezone, now)
    const rates = yield* (yield* FxRepo).all()
    const integrations = (yield* (yield* IntegrationsRepo).list(projectId)).integrations
    const queries = yield* (yield* SearchRepo).loadQueryDays(
      projectId,
      addDays(today, -(2 * RANKING_DAYS + 6)),
      addDays(today, -1)
    )

    const h = health({
      projectId: project.id,
      today,
      now: now.toISOString(),
      series,
      currency: project.currency,
      rates
    })
    // The events this recomputation causes (recompute/Events.ts) are measured against what is stored now.
    const before = options.before ?? (yield* readBefore(projectId, today))
    yield* snapshots.putHealth({ projectId, day: today, dataVersion: version, computedAt: now, health: h })
    const candidates = detectSignals({ today, now, currency: project.currency, series, integrations, queries, rates })
    yield* signalsRepo.reconcile(projectId, project.currency, candidates, now)

    let wroteBriefing = false
    let morningEdition: Briefing | null = null
    const morning = localTime(project.timezone, now).hour >= BRIEFING_HOUR
    const sources = dataSources(series, integrations)
    const compose = (signals: ReadonlyArray<Signal>, edition?: { generatedAt: string; updatedAt: string }) =>
      briefing({
        projectId: project.id,
        today,
        now: now.toISOString(),
        currency: project.currency,
        series,
        health: h,
        signals,
        sources,
        ...(edition === undefined ? {} : { edition })
      })
    const existing = yield* snapshots.briefingOf(projectId, today)
    if (existing === null) {
      if (morning || options.forceBriefing === true) {
        morningEdition = yield* snapshots.insertBriefing(
          projectId,
          today,
          compose(yield* signalsRepo.active(projectId))
        )
        wroteBriefing = true
      }
    } else {
      // The briefing follows its data: written before the data landed, or blind to a critical signal that opened
      // since, it is recomposed (the morning edition is kept as it was sent). The active signals are read only
      // when a critical one may be among them.
      const critical = candidates.some((c) => c.severity === "critical")
      const active = critical ? yield* signalsRepo.active(projectId) : []
      const reason = recomposeReason(existing, { health: h, sources, signals: active })
      if (reason !== null) {
        const signals = critical ? active : yield* signalsRepo.active(projectId)
        const edition = { generatedAt: existing.generatedAt, updatedAt: now.toISOString() }
        yield* snapshots.replaceBriefing(projectId, today, compose(signals, edition), BRIEFING_ANSWER)
        yield* Effect.logDebug(`briefing of ${projectId} recomposed: ${reason}`)
        wroteBriefing = true
      }
    }
    yield* emitAfter(before, { projectId, now, health: h, morning: morningEdition })
    yield* jobs.markComputed(projectId, version, today, now, nextDue(project.timezone, now))
    return { projectId, day: today, version, signals: candidates.length, briefing: wroteBriefing } satisfies Recomputed
  }).pipe(
    // A child of the request that needed it (ensureFresh) or of nothing (the worker's own rounds).
    Effect.withSpan("Recompute.project", { attributes: { "sitehealth.project_id": projectId } })
  )

/**
 * The project's stored health for its local today, recomputed first (under the lock, waiting for a
 * worker that holds it) when missing, behind the data, or older than MAX_AGE_MS.
 */
export const ensureFresh = (projectId: string, timezone: string) =>
  Effect.gen(function*() {
    const jobs = yield* JobsRepo
    const snapshots = yield* SnapshotsRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const today = todayIn(timezone, now)
    const stored = yield* snapshots.healthOf(projectId, today)
    if (isFresh(stored, yield* jobs.dataVersion(projectId), now)) return stored!
    return yield* jobs.withProjectLock(projectId, (_job: JobState) =>
      Effect.gen(function*() {
        // Whoever held the lock before us may have just done it.
        const again = yield* snapshots.healthOf(projectId, today)
        if (isFresh(again, yield* jobs.dataVersion(projectId), now)) return again!
        yield* recomputeLocked(projectId)
        return (yield* snapshots.healthOf(projectId, today)) as StoredHealth
      }))
  })

/**
 * The briefing of the project's local date: the stored one, or generated now (once) and stored. The project is
 * made fresh first, so a briefing whose data moved (a sync landed since) is recomposed before it is read: the
 * briefing and the health read beside it come from the same computation.
 */
export const ensureBriefing = (projectId: string, timezone: string) =>
  Effect.gen(function*() {
    const snapshots = yield* SnapshotsRepo
    yield* ensureFresh(projectId, timezone)
    const now = new Date(yield* Clock.currentTimeMillis)
    const today = todayIn(timezone, now)
    const stored = yield* snapshots.briefingOf(projectId, today)
    if (stored !== null) return stored
    return yield* (yield* JobsRepo).withProjectLock(projectId, () =>
      Effect.gen(function*() {
        const again = yield* snapshots.briefingOf(projectId, today)
        if (again !== null) return again
        yield* recomputeLocked(projectId, { forceBriefing: true })
        return (yield* snapshots.briefingOf(projectId, today)) as Briefing
      }))
  })

/**
 * Health of the `days` local days before today, computed from the stored data as it stood on each day
 * (health's windows end the day before the day it is computed for, so later rows play no part), and stored
 * as those days' snapshots — so that a project with history (the demo, a first full sync) shows a trend
 * from the start instead of a single point. Days that already have a snapshot are left as they are.
 */
export const backfillHealth = (projectId: string, days: number) =>
  Effect.gen(function*() {
    const jobs = yield* JobsRepo
    const metrics = yield* MetricsRepo
    const snapshots = yield* SnapshotsRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const version = yield* jobs.dataVersion(projectId)
    const loaded = yield* metrics.loadProject(
      projectId,
      addDays(now.toISOString().slice(0, 10), -(LOOKBACK_DAYS + days + 1))
    )
    if (version === null || loaded === null) return 0
    const { project, series } = loaded
    const rates = yield* (yield* FxRepo).all()
    const today = todayIn(project.timezone, now)
    let stored = 0
    for (let back = days; back >= 1; back--) {
      const day = addDays(today, -back)
      if ((yield* snapshots.healthOf(projectId, day)) !== null) continue
      // Stamped at the end of that local day's morning: when the worker would have computed it.
      const computedAt = new Date(Date.parse(`${day}T12:00:00Z`))
      const h = health({
        projectId: project.id,
        today: day,
        now: computedAt.toISOString(),
        series,
        currency: project.currency,
        rates
      })
      yield* snapshots.putHealth({ projectId, day, dataVersion: version, computedAt, health: h })
      stored++
    }
    return stored
  })

/** The longest span rebuildHistory replays: a year of days before today. */
export const HISTORY_MAX_DAYS = 365
/** Days of the replay whose search queries are loaded at once. */
const HISTORY_CHUNK_DAYS = 28

type DayRow = { readonly day: string }
/** Whether a stored day says anything: some figure of it is not 0 (connectors write zeros for empty days). */
const hasFigures = (r: DayRow): boolean => Object.values(r).some((v) => typeof v === "number" && v !== 0)

/**
 * The first day with any figure in the series, or null. Days of zeros before it do not count: Plausible
 * answers a range with zeros for the days before the site existed, and they are no history to replay.
 */
const firstDataDay = (
  series: {
    readonly traffic: ReadonlyArray<DayRow>
    readonly revenue: ReadonlyArray<DayRow>
    readonly search: ReadonlyArray<DayRow>
  }
): string | null => {
  let first: string | null = null
  for (const rows of [series.traffic, series.revenue, series.search]) {
    for (const r of rows) if ((first === null || r.day < first) && hasFigures(r)) first = r.day
  }
  return first
}

/**
 * After a connection's first full sync brought its history: the project's health snapshots, signals and
 * briefings are rebuilt for every day of that history (from the day after the first day with a figure that
 * is not 0, at most
 * HISTORY_MAX_DAYS back, up to yesterday), as if the worker had computed each day on that day — so the
 * health trend, the signals (opened and resolved on the days they would have been) and the briefings are
 * there on day one. Then today is recomputed as usual. All of it inside the project's lock: requests that
 * need the project wait for the rebuild instead of interleaving with it. Only when the project's history is
 * pending (integrations.history_pending, set by the sync's success): null otherwise.
 *
 * Each day is computed at its noon (UTC) from the rows stored now: health and the signal rules read windows
 * that end the day before, so rows of later days play no part. The integration rules (failing, stale) are
 * about the present and are left to today's computation. Health snapshots of those days are replaced;
 * briefings are written only for days that have none (a briefing someone may have read stays as it was).
 */
export const rebuildHistory = (projectId: string, options: { readonly maxDays?: number } = {}) =>
  Effect.gen(function*() {
    const jobs = yield* JobsRepo
    const metrics = yield* MetricsRepo
    const snapshots = yield* SnapshotsRepo
    const signalsRepo = yield* SignalsRepo
    const search = yield* SearchRepo
    const maxDays = options.maxDays ?? HISTORY_MAX_DAYS
    const integrations = yield* IntegrationsRepo
    return yield* jobs.withProjectLock(projectId, () =>
      Effect.gen(function*() {
        // Pending (a sync brought history) and not done by another worker meanwhile; cleared in this
        // transaction, so a rebuild that dies leaves it pending for the next round.
        if (!(yield* integrations.takeHistoryPending(projectId))) return null
        const now = new Date(yield* Clock.currentTimeMillis)
        const version = yield* jobs.dataVersion(projectId)
        const loaded = yield* metrics.loadProject(
          projectId,
          addDays(now.toISOString().slice(0, 10), -(LOOKBACK_DAYS + maxDays + 1))
        )
        if (version === null || loaded === null) return null
        const { project, series } = loaded
        const today = todayIn(project.timezone, now)
        const first = firstDataDay(series)
        const to = addDays(today, -1)
        const from = first === null ? null : [addDays(first, 1), addDays(today, -maxDays)].sort()[1]
        if (from === null || from > to) {
          yield* recomputeLocked(projectId)
          return { from: null, to: null, days: 0 }
        }
        const rates = yield* (yield* FxRepo).all()
        // Past days' briefings show the kinds of data the project has now (the history the sync brought).
        const sources = dataSources(series, (yield* integrations.list(projectId)).integrations)
        // The replay's signals are history: only what differs at its end from before it is an event.
        const before = yield* readBefore(projectId, today)
        yield* signalsRepo.rewind(projectId, new Date(Date.parse(`${from}T00:00:00Z`)))
        let days = 0
        // Search queries of the ranking window of each day, loaded a chunk of days at a time (bounded memory,
        // one query per chunk instead of one per day).
        const queryWindow = 2 * RANKING_DAYS + 6
        let chunk: { readonly from: string; readonly to: string; readonly rows: ReadonlyArray<SearchQueryDay> } | null =
          null
        for (let day = from; day <= to; day = addDays(day, 1)) {
          const at = new Date(Date.parse(`${day}T12:00:00Z`))
          const h = health({
            projectId: project.id,
            today: day,
            now: at.toISOString(),
            series,
            currency: project.currency,
            rates
          })
          yield* snapshots.putHealth({ projectId, day, dataVersion: version, computedAt: at, health: h })
          if (chunk === null || day > chunk.to) {
            const chunkTo = [addDays(day, HISTORY_CHUNK_DAYS - 1), to].sort()[0]
            chunk = {
              from: day,
              to: chunkTo,
              rows: yield* search.loadQueryDays(projectId, addDays(day, -queryWindow), addDays(chunkTo, -1))
            }
          }
          const windowFrom = addDays(day, -queryWindow)
          const queries = chunk.rows.filter((q) => q.day >= windowFrom && q.day < day)
          const candidates = detectSignals({
            today: day,
            now: at,
            currency: project.currency,
            series,
            integrations: [],
            queries,
            rates
          })
          yield* signalsRepo.reconcile(projectId, project.currency, candidates, at)
          if ((yield* snapshots.briefingOf(projectId, day)) === null) {
            const active = yield* signalsRepo.active(projectId)
            yield* snapshots.insertBriefing(
              projectId,
              day,
              briefing({
                projectId: project.id,
                today: day,
                now: at.toISOString(),
                currency: project.currency,
                series,
                health: h,
                signals: active,
                sources
              })
            )
          }
          days++
        }
        yield* recomputeLocked(projectId, { before })
        return { from, to, days }
      }))
  }).pipe(Effect.withSpan("Recompute.rebuildHistory", { attributes: { "sitehealth.project_id": projectId } }))
