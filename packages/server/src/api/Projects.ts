/**
 * Handlers of the projects group: list (with each project's stored health snapshot and trend), health,
 * briefing, signals; deletion is dashboard-only. Every read serves STORED results, made current first
 * (recompute/Freshness.ts) when they are behind the data — never stale, never computed twice at once.
 */
import { ANNOTATION_LIST_MAX } from "@sitehealth/domain/Annotations"
import { ProjectsApi, SiteHealthApi } from "@sitehealth/domain/Api"
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { DEFAULT_PAGE_SIZE } from "@sitehealth/domain/Common"
import { successText } from "@sitehealth/domain/Envelope"
import { Forbidden } from "@sitehealth/domain/Errors"
import {
  Briefing,
  type HealthSnapshot,
  type HealthTrend,
  type Project,
  type Signal,
  SignalList
} from "@sitehealth/domain/Projects"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { RequestAccess, RequestProject } from "../access/AccessRepo.ts"
import { encodeEntry, servedList } from "../access/ListAnswer.ts"
import { servedStoredWith } from "../access/StoredAnswers.ts"
import { AnnotationsRepo } from "../annotations/AnnotationsRepo.ts"
import { causeRange, likelyCauseOf, withCauses } from "../annotations/Causes.ts"
import { AnswersRepo, PROJECT_LIST_ENTRY, type StoredAnswer } from "../answers/AnswersRepo.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { snapshot } from "../metrics/Health.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { projectView } from "../projects/View.ts"
import { Freshness, type FreshnessShape } from "../recompute/Freshness.ts"
import { JobsRepo } from "../recompute/JobsRepo.ts"
import { CSV_PAGE_SIZE, csvRequestOf, csvResponse } from "../reports/Csv.ts"
import { projectsTable, signalsTable } from "../reports/CsvTables.ts"
import { decodeSignalCursor, type SignalKey, SignalsRepo } from "../snapshots/SignalsRepo.ts"
import { SnapshotsRepo, type TrendRow } from "../snapshots/SnapshotsRepo.ts"
import { decodeCursor } from "../store/Cursor.ts"
import type { Page, PageRequest } from "../store/Records.ts"

export const dashboardOnly = (what: string) =>
  Effect.fail(
    new Forbidden({
      message: `${what} is only available in the dashboard, not through the API`,
      type: "dashboard_only"
    })
  )

/** Days of stored snapshots a trend shows. */
export const TREND_DAYS = 30

/**
 * The trend of a project from its stored snapshots (oldest first) and today's score: score now minus
 * the score of the latest snapshot at least 7 (30) days older; null when there is none or a score is null.
 */
export const trendOf = (
  rows: ReadonlyArray<{ readonly day: string; readonly score: number | null }>,
  today: string,
  score: number | null
): HealthTrend => {
  const points = rows.filter((r) => r.day <= today).map((r) => ({ date: r.day, score: r.score }))
  const change = (days: number): number | null => {
    const cutoff = addDays(today, -days)
    const base = [...points].reverse().find((p) => p.date <= cutoff)
    return base === undefined || base.score === null || score === null ? null : score - base.score
  }
  return { scoreChange7d: change(7), scoreChange30d: change(TREND_DAYS), points }
}

/**
 * Today's stored health of the project as the authentication lookup read it (access/AccessRepo.ts), when it
 * is current: same data_version as the project, same local day, younger than MAX_AGE_MS.
 */
const prefetchedFreshHealth = (
  freshness: FreshnessShape,
  project: { readonly id: string; readonly timezone: string }
) =>
  Effect.gen(function*() {
    const prefetched = yield* RequestProject
    if (prefetched === null || prefetched.id !== project.id) return undefined
    const now = new Date(yield* Clock.currentTimeMillis)
    const today = todayIn(project.timezone, now)
    const stored = prefetched.health.find((h) => h.day === today)
    return stored !== undefined && freshness.isFresh(stored, prefetched.dataVersion, now) ? stored : undefined
  })

type Query<Name extends keyof typeof ProjectsApi.endpoints> = (typeof ProjectsApi.endpoints)[Name]["~Query"]["Type"]
interface ById {
  readonly params: { readonly id: string }
}

/**
 * The group's operations, by endpoint name: /api/v1's handlers (ProjectsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions, so both answer the same figures. What the hot path
 * reads with the token for each (the page of the list, today's snapshot, a stored answer) is its endpoint's
 * `FastPath` annotation in the contract (@sitehealth/domain/ApiProjects).
 */
export const projectsOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const snapshots = yield* SnapshotsRepo
  const signals = yield* SignalsRepo
  const annotations = yield* AnnotationsRepo
  const jobs = yield* JobsRepo
  const freshness = yield* Freshness
  const answers = yield* AnswersRepo
  const requireProject = requireProjectWith(projects)
  const servedStored = servedStoredWith(freshness, answers)
  // Known by the contract's endpoint objects, whose FastPath annotations key their stored answers.
  const storedBriefing = servedStored(ProjectsApi.endpoints.getBriefing, Briefing)
  const storedSignals = servedStored(ProjectsApi.endpoints.listSignals, SignalList)
  const csvSignals = csvRequestOf(ProjectsApi.endpoints.listSignals)
  /** The owner's annotations that changes on `days` may follow (docs/metrics.md): none read when no day. */
  const causesFor = Effect.fn("Projects.causesFor")(function*(projectId: string, days: ReadonlyArray<string | null>) {
    const range = causeRange(days)
    return range === null ? [] : yield* annotations.list(projectId, { ...range, limit: ANNOTATION_LIST_MAX })
  })
  /** The briefing's priorities each with the annotation its signal's day may follow. */
  const briefingWithCauses = Effect.fn("Projects.briefingWithCauses")(function*(projectId: string, briefing: Briefing) {
    if (briefing.priorities.length === 0) return briefing
    const dayOf = new Map((yield* signals.active(projectId)).map((s) => [s.id, s.day] as const))
    const days = briefing.priorities.map((p) => dayOf.get(p.signalId) ?? null)
    const found = yield* causesFor(projectId, days)
    if (found.length === 0) return briefing
    return {
      ...briefing,
      priorities: briefing.priorities.map((p, i) => {
        const cause = likelyCauseOf(found, days[i]!)
        return cause === null ? p : { ...p, likelyCause: cause }
      })
    }
  })
  const csvProjects = csvRequestOf(ProjectsApi.endpoints.listProjects)
  /** One page of the caller's projects, computed (each project's list entry kept for the hot path). */
  const projectsPage = Effect.fn("Projects.page")(function*(
    principal: Principal,
    limit: number,
    after: PageRequest["after"],
    now: Date
  ) {
    // One query: the page of projects with every stored snapshot in the trend range and their data versions.
    const fromDay = addDays(now.toISOString().slice(0, 10), -(TREND_DAYS + 1))
    const { page, rows, versions } = yield* snapshots.pageWithTrends(principal.accountId, principal.projects, {
      limit,
      after
    }, fromDay)
    const byProject = new Map<string, Array<TrendRow>>()
    for (const r of rows) byProject.set(r.projectId, [...(byProject.get(r.projectId) ?? []), r])
    const out = []
    const entries: Array<{ readonly projectId: string; readonly answer: StoredAnswer }> = []
    for (const p of page.items) {
      const today = todayIn(p.timezone, now)
      const own = byProject.get(p.id) ?? []
      const latest = own.find((r) => r.day === today) ?? null
      const version = versions.get(p.id) ?? (yield* jobs.dataVersion(p.id))
      let current: HealthSnapshot
      // The snapshot the entry is built from, by its computation (what the lookup matches it on).
      let from: { readonly dataVersion: string; readonly computedAt: Date }
      if (
        latest !== null &&
        freshness.isFresh(
          { dataVersion: latest.dataVersion, computedAt: new Date(latest.snapshot.computedAt) },
          version,
          now
        )
      ) {
        current = latest.snapshot
        from = { dataVersion: latest.dataVersion, computedAt: new Date(latest.snapshot.computedAt) }
      } else {
        // Missing or behind: compute and store now (the only per-project work the list ever does).
        const stored = yield* freshness.ensureHealth(p)
        current = snapshot(stored.health)
        from = stored
      }
      const points = [...own.filter((r) => r.day !== today).map((r) => ({ day: r.day, score: r.snapshot.score })), {
        day: today,
        score: current.score
      }]
      const item = {
        ...projectView(p),
        health: current,
        trend: trendOf(points.filter((x) => x.day >= addDays(today, -TREND_DAYS)), today, current.score)
      }
      out.push(item)
      entries.push({
        projectId: p.id,
        answer: {
          day: today,
          dataVersion: from.dataVersion,
          computedAt: from.computedAt,
          encoded: encodeEntry(item)
        }
      })
    }
    // Kept for the next read (ListAnswer.ts); keeping is an optimisation: the answer stands without it.
    yield* Effect.forEach(entries, (e) => answers.keep(e.projectId, PROJECT_LIST_ENTRY, e.answer), {
      discard: true
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not keep the projects list's entries", cause))
    )
    return { projects: out, nextCursor: page.nextCursor }
  })
  return {
    listProjects: ({ query }: { readonly query: Query<"listProjects"> }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const after = yield* decodeCursor(query.cursor)
        const now = new Date(yield* Clock.currentTimeMillis)
        const limit = query.limit ?? DEFAULT_PAGE_SIZE
        if ((yield* csvProjects) !== null) {
          // Every project in the caller's reach, not a page (never the prefetched page, which is JSON).
          const all: Array<Project> = []
          let next: PageRequest["after"] = null
          do {
            const page: { readonly projects: ReadonlyArray<Project>; readonly nextCursor: string | null } =
              yield* projectsPage(principal, CSV_PAGE_SIZE, next, now)
            all.push(...page.projects)
            next = page.nextCursor === null ? null : yield* decodeCursor(page.nextCursor)
          } while (next !== null)
          return csvResponse(projectsTable(all), "projects")
        }
        // Hot path: the page came with the token lookup, each project with its kept entry (ListAnswer.ts).
        const prefetched = (yield* RequestAccess)?.list ?? null
        if (prefetched !== null && prefetched.limit === limit && prefetched.cursor === (query.cursor ?? null)) {
          const served = servedList(prefetched, freshness, now)
          if (served !== null) return served
        }
        return yield* projectsPage(principal, limit, after, now)
      }),
    getHealth: ({ params }: ById) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        // Hot path: today's snapshot came with the token lookup; when it is as new as the data it is
        // served as stored — already the contract's encoding — with no further query and no encoding.
        const stored = yield* prefetchedFreshHealth(freshness, project)
        if (stored !== undefined) {
          return HttpServerResponse.text(successText(stored.encoded), { contentType: "application/json" })
        }
        const fresh = yield* freshness.ensureHealth(project)
        // A current snapshot without its stored text (kept only since migration 0008/0011): keep it now.
        if (fresh.encoded === undefined) yield* snapshots.keepEncoded(fresh)
        return fresh.health
      }),
    getBriefing: ({ params }: ById) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        return yield* storedBriefing(
          project,
          Effect.flatMap(freshness.ensureBriefing(project), (b) => briefingWithCauses(project.id, b))
        )
      }),
    listSignals: ({ params, query }: ById & { readonly query: Query<"listSignals"> }) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const after = yield* decodeSignalCursor(query.cursor)
        const filter = {
          dimension: query.dimension,
          severity: query.severity,
          active: query.active === undefined ? undefined : query.active === "true"
        }
        const fresh = Effect.gen(function*() {
          // Signals are stored with the snapshot: fresh when the snapshot read with the token is.
          if ((yield* prefetchedFreshHealth(freshness, project)) === undefined) yield* freshness.ensureHealth(project)
          return new Date(yield* Clock.currentTimeMillis)
        })
        if ((yield* csvSignals) !== null) {
          // A CSV holds every signal of the filter, not a page (never the stored answer, which is JSON).
          const now = yield* fresh
          const all: Array<Signal> = []
          let next: SignalKey | null = null
          do {
            const page: Page<Signal> = yield* signals.list(
              project.id,
              filter,
              { limit: CSV_PAGE_SIZE, after: next },
              now
            )
            all.push(...page.items)
            next = page.nextCursor === null ? null : yield* decodeSignalCursor(page.nextCursor)
          } while (next !== null)
          return csvResponse(signalsTable(all), "signals")
        }
        const list = Effect.gen(function*() {
          const now = yield* fresh
          const page = yield* signals.list(project.id, filter, { limit: query.limit ?? DEFAULT_PAGE_SIZE, after }, now)
          const found = yield* causesFor(project.id, page.items.map((x) => x.day))
          return {
            signals: found.length === 0 ? page.items : withCauses(page.items, found),
            nextCursor: page.nextCursor
          }
        })
        // The first page of each filter is kept as a stored answer, as the reports are.
        return yield* storedSignals(project, list)
      }),
    deleteProject: () => dashboardOnly("Deleting a website")
  }
})

export const ProjectsHttp = Layer.unwrap(
  Effect.map(
    projectsOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "projects", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
