/** Handlers of the projects group: list, health, briefing, signals; deletion is dashboard-only. */
import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SiteHealthApi } from "../../../domain/src/Api.ts"
import { CurrentPrincipal } from "../../../domain/src/Authentication.ts"
import { DEFAULT_PAGE_SIZE } from "../../../domain/src/Common.ts"
import { badRequest, Forbidden } from "../../../domain/src/Errors.ts"
import * as Compute from "../metrics/Compute.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { MetricsRepo } from "../metrics/MetricsRepo.ts"
import { decodeCursor } from "../store/Cursor.ts"
import { ProjectsRepo } from "./ProjectsRepo.ts"
import { HEALTH_LOOKBACK_DAYS, loadProject, type LoadedProject } from "./Policy.ts"

export const dashboardOnly = (what: string) =>
  Effect.fail(
    new Forbidden({
      message: `${what} is only available in the dashboard, not through the API`,
      type: "dashboard_only"
    })
  )

export const healthInput = (p: LoadedProject): Compute.HealthInput => ({
  projectId: p.project.id,
  today: p.today,
  now: p.now.toISOString(),
  series: p.series,
  currency: p.project.currency
})

export const ProjectsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "projects",
  Effect.fn(function*(handlers) {
    const projects = yield* ProjectsRepo
    const metrics = yield* MetricsRepo
    return handlers.handleAll({
      listProjects: ({ query }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const after = yield* decodeCursor(query.cursor)
          const page = yield* projects.list(principal.accountId, principal.projects, {
            limit: query.limit ?? DEFAULT_PAGE_SIZE,
            after
          })
          const now = new Date(yield* Clock.currentTimeMillis)
          const series = yield* metrics.loadSeries(
            page.items.map((p) => p.id),
            addDays(now.toISOString().slice(0, 10), -(HEALTH_LOOKBACK_DAYS + 1))
          )
          return {
            projects: page.items.map((p) => ({
              id: p.id,
              name: p.name,
              domain: p.domain,
              timezone: p.timezone,
              currency: p.currency,
              createdAt: p.createdAt.toISOString(),
              health: Compute.snapshot(
                Compute.health({
                  projectId: p.id,
                  today: todayIn(p.timezone, now),
                  now: now.toISOString(),
                  series: series.get(p.id) ?? { traffic: [], revenue: [], search: [], expenses: [] },
                  currency: p.currency
                })
              )
            })),
            nextCursor: page.nextCursor
          }
        }),
      getHealth: ({ params }) =>
        Effect.map(loadProject(params.id, HEALTH_LOOKBACK_DAYS), (p) => Compute.health(healthInput(p))),
      getBriefing: ({ params }) =>
        Effect.map(loadProject(params.id, HEALTH_LOOKBACK_DAYS), (p) => {
          const input = healthInput(p)
          return Compute.briefing({ ...input, signals: Compute.signals(input) })
        }),
      listSignals: ({ params, query }) =>
        Effect.gen(function*() {
          const p = yield* loadProject(params.id, HEALTH_LOOKBACK_DAYS)
          const all = Compute.signals(healthInput(p)).filter(
            (s) =>
              (query.dimension === undefined || s.dimension === query.dimension) &&
              (query.severity === undefined || s.severity === query.severity)
          )
          // Signals are computed, not stored: the cursor is the offset into today's ordered list.
          const offset = query.cursor === undefined ? 0 : Number.parseInt(query.cursor, 10)
          if (!Number.isSafeInteger(offset) || offset < 0 || String(offset) !== (query.cursor ?? "0")) {
            return yield* Effect.fail(badRequest("cursor is not a cursor this API returned", "invalid_cursor"))
          }
          const limit = query.limit ?? DEFAULT_PAGE_SIZE
          const signals = all.slice(offset, offset + limit)
          return { signals, nextCursor: offset + limit < all.length ? String(offset + limit) : null }
        }),
      deleteProject: () => dashboardOnly("Deleting a website")
    })
  })
)
