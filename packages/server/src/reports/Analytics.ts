/** GET /projects/{id}/analytics: traffic for a period, from the traffic aggregates in one read. */
import { Clock, Effect } from "effect"
import type { Period } from "../../../domain/src/Common.ts"
import { CurrentPrincipal } from "../../../domain/src/Authentication.ts"
import { analytics, planAnalytics } from "../metrics/Analytics.ts"
import { checkProjectAccess } from "../projects/Policy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { TrafficRepo } from "../traffic/TrafficRepo.ts"

export const getAnalytics = (projectId: string, period: Period) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const project = yield* checkProjectAccess(principal, yield* (yield* ProjectsRepo).find(projectId))
    const now = yield* Clock.currentTimeMillis
    const plan = planAnalytics(period, project.timezone, now)
    const data = yield* (yield* TrafficRepo).read(project.id, plan.query)
    return analytics({ projectId: project.id, plan, now, data })
  })
