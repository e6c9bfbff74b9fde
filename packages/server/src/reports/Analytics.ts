/** GET /projects/{id}/analytics: traffic for a period, from the traffic aggregates in one read. */
import type { Period } from "@sitehealth/domain/Common"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { prefetchedDataVersion, requireProjectWith } from "../http/ProjectPolicy.ts"
import { analytics, planAnalytics } from "../metrics/Analytics.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { TrafficRepo } from "../traffic/TrafficRepo.ts"

export const makeGetAnalytics = Effect.gen(function*() {
  const traffic = yield* TrafficRepo
  const requireProject = requireProjectWith(yield* ProjectsRepo)
  return (projectId: string, period: Period) =>
    Effect.gen(function*() {
      const project = yield* requireProject(projectId)
      const now = yield* Clock.currentTimeMillis
      const plan = planAnalytics(period, project.timezone, now)
      const data = yield* traffic.read(project.id, plan.query, yield* prefetchedDataVersion(project.id))
      return analytics({ projectId: project.id, plan, now, data })
    })
})
