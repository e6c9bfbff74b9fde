/**
 * GET /projects/{id}/seo?period=…: the window ends at the last day with search data (Search Console lags
 * 2–3 days). Reads: the project (access check), its dataThrough (three index max lookups), then the totals
 * of both windows and the top queries and pages aggregated in the store — bounded by the window's days and
 * SEO_TOP_ROWS, whatever the history behind them.
 */
import type { Period } from "@sitehealth/domain/Common"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { todayIn } from "../metrics/Dates.ts"
import { seo, SEO_TOP_ROWS, seoWindows } from "../metrics/Seo.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { SearchRepo } from "../search/SearchRepo.ts"

/** First stored day for period "all": the earliest totals row; only read for that period. */
const firstDayOf = (search: typeof SearchRepo.Service, projectId: string, dataThrough: string | null) =>
  dataThrough === null
    ? Effect.succeed(null)
    : Effect.map(search.loadTotals(projectId, "0001-01-01", dataThrough), (rows) => rows[0]?.day ?? null)

export const makeGetSeo = Effect.gen(function*() {
  const search = yield* SearchRepo
  const requireProject = requireProjectWith(yield* ProjectsRepo)
  return (projectId: string, period: Period) =>
    Effect.gen(function*() {
      const project = yield* requireProject(projectId)
      const today = todayIn(project.timezone, new Date(yield* Clock.currentTimeMillis))
      const dataThrough = yield* search.dataThrough(project.id)
      const firstDay = period === "all" ? yield* firstDayOf(search, project.id, dataThrough) : null
      const { window, previous } = seoWindows(period, today, dataThrough, firstDay)
      const [totals, queries, pages] = yield* Effect.all([
        search.loadTotals(project.id, previous.from, window.to),
        search.loadTopQueries(project.id, window, previous, SEO_TOP_ROWS),
        search.loadTopPages(project.id, window, previous, SEO_TOP_ROWS)
      ], { concurrency: "unbounded" })
      return seo({ projectId: project.id, period, today, dataThrough, firstDay, totals, queries, pages })
    })
})
