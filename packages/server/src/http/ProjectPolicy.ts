/**
 * Project access: a project of another account is 404 (as if it did not exist); a project of the
 * caller's account outside the token's project list is 403.
 */
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { Forbidden, notFound } from "@sitehealth/domain/Errors"
import type { NotFound } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { RequestProject } from "../access/AccessRepo.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import type { MetricsRepoShape } from "../metrics/MetricsRepo.ts"
import type { ProjectsRepoShape } from "../projects/ProjectsRepo.ts"
import type { ProjectRecord, ProjectWithSeries } from "../store/Records.ts"

export const inScope = (principal: Principal, projectId: string): boolean => {
  const scope: ReadonlyArray<string> | null = principal.projects
  return scope === null || scope.includes(projectId)
}

export const checkProjectAccess = (
  principal: Principal,
  project: ProjectRecord | null
): Effect.Effect<ProjectRecord, NotFound | Forbidden> => {
  if (project === null || project.accountId !== principal.accountId) return Effect.fail(notFound("Project"))
  if (!inScope(principal, project.id)) {
    return Effect.fail(
      new Forbidden({ message: "This token is not allowed to access this project", type: "project_out_of_scope" })
    )
  }
  return Effect.succeed(project)
}

export interface LoadedProject extends ProjectWithSeries {
  readonly principal: Principal
  /** Today in the project's time zone. */
  readonly today: string
  readonly now: Date
}

/**
 * The project with `lookbackDays` of daily rows (all rows when null), after the access check. The
 * range is counted back from the UTC day with a day's margin, so any time zone's "today" is covered.
 */
export const loadProjectWith = (metrics: MetricsRepoShape) => (projectId: string, lookbackDays: number | null) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const now = new Date(yield* Clock.currentTimeMillis)
    const utcToday = now.toISOString().slice(0, 10)
    const loaded = yield* metrics.loadProject(
      projectId,
      lookbackDays === null ? null : addDays(utcToday, -(lookbackDays + 1))
    )
    const project = yield* checkProjectAccess(principal, loaded?.project ?? null)
    return {
      project,
      series: loaded!.series,
      principal,
      now,
      today: todayIn(project.timezone, now)
    } satisfies LoadedProject
  })

/** Days of history the 30-day-over-30-day health comparison needs, plus the row before it. */
export const HEALTH_LOOKBACK_DAYS = 75

/**
 * The project (without its metrics) after the access check: the one the authentication lookup already
 * read in the same round trip as the token (access/AccessRepo.ts), else read now.
 */
export const requireProjectWith = (projects: ProjectsRepoShape) => (projectId: string) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const prefetched = yield* RequestProject
    const record = prefetched !== null && prefetched.id === projectId
      ? prefetched.project
      : yield* projects.find(projectId)
    return yield* checkProjectAccess(principal, record)
  })

/**
 * The project's data_version as the authentication lookup read it (before anything the handler reads, so
 * a cache tagged with it can never hold rows newer than the tag says); null when the request has none.
 */
export const prefetchedDataVersion = (projectId: string) =>
  Effect.gen(function*() {
    const prefetched = yield* RequestProject
    return prefetched !== null && prefetched.id === projectId ? prefetched.dataVersion : null
  })
