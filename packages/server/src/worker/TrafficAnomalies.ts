/**
 * Hourly traffic anomalies (docs/alerts.md, `traffic.anomaly`): every ROUND_MS, each website with an endpoint taking
 * `traffic.anomaly` has its last CHECKED_HOURS complete UTC hours checked against its own expected range for that
 * local hour and weekday (metrics/HourlyAnomaly.ts); an hour outside it is written to the outbox with its likely
 * cause and the money at stake, in the same transaction as the claim of its (website, hour) row — two workers, or
 * a restart, write it once, and never more than one per website and hour. Checking the last three hours, not only
 * the last, lets a provider's late hour still be checked when it arrives.
 */
import type { ProjectId } from "@sitehealth/domain/Common"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { addDays, todayIn } from "../metrics/Dates.ts"
import {
  detectHour,
  type HourAnomaly,
  HOURLY_BASELINE_WEEKS,
  hourlyMoneyAtStake,
  hoursToCheck,
  likelyCause
} from "../metrics/HourlyAnomaly.ts"
import { MetricsRepo } from "../metrics/MetricsRepo.ts"
import { money } from "../metrics/Numbers.ts"
import { RANKING_DAYS, rankingSignals, revenuePerVisitor } from "../metrics/Signals.ts"
import { SearchRepo } from "../search/SearchRepo.ts"
import type { ProjectSeries } from "../store/Series.ts"
import { TrafficRepo } from "../traffic/TrafficRepo.ts"
import { emit } from "../webhooks/Outbox.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"

/** The last complete hours checked each round (oldest first). */
export const CHECKED_HOURS = 3
/** Days of usual shares the likely cause compares the hour's day with. */
export const CAUSE_USUAL_DAYS = 28
const CAUSE_TOP = 25
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000

const analyticsLink = (projectId: string, today: string, anomaly: HourAnomaly): string =>
  `/websites/${encodeURIComponent(projectId)}/analytics?period=${
    anomaly.localDay === today ? "today" : anomaly.localDay === addDays(today, -1) ? "yesterday" : "7d"
  }&metric=${anomaly.metric}`

/** The likely cause of an hour's anomaly from the stored tops of its local day and the search rankings. */
const causeOf = (
  projectId: string,
  anomaly: HourAnomaly,
  context: { readonly today: string; readonly now: Date; readonly currency: string; readonly series: ProjectSeries }
) =>
  Effect.gen(function*() {
    const traffic = yield* TrafficRepo
    const day = anomaly.localDay
    const none = { hoursFrom: anomaly.hour, hoursTo: anomaly.hour, top: CAUSE_TOP }
    const ofDay = yield* traffic.read(projectId, { ...none, from: day, to: day, topFrom: day, topTo: day })
    const usualFrom = addDays(day, -CAUSE_USUAL_DAYS)
    const usualTo = addDays(day, -1)
    const usual = yield* traffic.read(projectId, {
      ...none,
      from: usualFrom,
      to: usualTo,
      topFrom: usualFrom,
      topTo: usualTo
    })
    const rankings = anomaly.direction === "drop"
      ? rankingSignals({
        ...context,
        integrations: [],
        queries: yield* (yield* SearchRepo).loadQueryDays(
          projectId,
          addDays(context.today, -(2 * RANKING_DAYS + 6)),
          addDays(context.today, -1)
        )
      }).map((s) => ({ query: s.subject ?? "", placesLost: s.change ?? 0 }))
      : []
    const sources = (rows: typeof ofDay.sources) => rows.map((r) => ({ name: r.source, visitors: r.visitors }))
    const pages = (rows: typeof ofDay.pages) => rows.map((r) => ({ name: r.path, visitors: r.visitors }))
    return likelyCause({
      direction: anomaly.direction,
      sources: { day: sources(ofDay.sources), usual: sources(usual.sources) },
      pages: { day: pages(ofDay.pages), usual: pages(usual.pages) },
      rankings
    })
  })

/** One round; answers the `projectId/hour` keys an anomaly was written for. `projectIds` limits it (tests). */
export const checkTrafficAnomalies = (options: { readonly projectIds?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const metrics = yield* MetricsRepo
    const traffic = yield* TrafficRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const hours = hoursToCheck(now.getTime(), CHECKED_HOURS)
    const written: Array<string> = []
    for (const projectId of yield* repo.anomalyProjects(options.projectIds)) {
      const loaded = yield* metrics.loadProject(projectId, addDays(now.toISOString().slice(0, 10), -32))
      if (loaded === null) continue
      const { project, series } = loaded
      const today = todayIn(project.timezone, now)
      // The baseline reaches 8 weeks (and a DST hour) before the first checked hour.
      const from = new Date(Date.parse(hours[0]) - (HOURLY_BASELINE_WEEKS * 7 + 1) * DAY_MS).toISOString()
      const to = new Date(Date.parse(hours[hours.length - 1]) + HOUR_MS).toISOString()
      const day = todayIn(project.timezone, new Date(Date.parse(hours[0])))
      const window = yield* traffic.read(projectId, {
        hoursFrom: from,
        hoursTo: to,
        from: day,
        to: day,
        topFrom: day,
        topTo: day,
        top: 0
      })
      for (const hour of hours) {
        const anomaly = detectHour(window.hours, hour, project.timezone)
        if (anomaly === null) continue
        const context = { today, now, currency: project.currency, series }
        const cause = yield* causeOf(projectId, anomaly, context)
        const stake = hourlyMoneyAtStake(anomaly, revenuePerVisitor(series, addDays(today, -1)))
        const wrote = yield* repo.transaction(Effect.gen(function*() {
          if (!(yield* repo.claimAnomaly(projectId, new Date(hour), now))) return false
          yield* emit(repo)(
            "traffic.anomaly",
            projectId,
            {
              projectId: projectId as ProjectId,
              hour,
              localHour: anomaly.localHour,
              direction: anomaly.direction,
              metric: anomaly.metric,
              severity: anomaly.severity,
              expected: anomaly.expected,
              actual: anomaly.actual,
              range: { low: anomaly.low, high: anomaly.high },
              weeks: anomaly.weeks,
              cause,
              moneyAtStake: stake === null ? null : money(stake, project.currency),
              link: analyticsLink(projectId, today, anomaly)
            },
            now
          )
          return true
        }))
        if (wrote) written.push(`${projectId}/${hour}`)
      }
    }
    return written
  }).pipe(Effect.withSpan("TrafficAnomalies.round"))

const ROUND_MS = 10 * 60_000

/** The loop: a round every 10 minutes, so each hour is checked within minutes of its end. */
export const runTrafficAnomalies = Effect.gen(function*() {
  yield* Effect.logInfo("sitehealth: traffic anomalies started")
  return yield* checkTrafficAnomalies().pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(Effect.logError("traffic anomaly round failed", Cause.pretty(cause)), [])
    ),
    Effect.andThen(Effect.sleep(ROUND_MS)),
    Effect.forever,
    Effect.withTracerEnabled(false),
    Effect.annotateLogs("worker", "traffic-anomalies")
  )
})
