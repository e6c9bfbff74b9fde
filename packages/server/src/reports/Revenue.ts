/** GET /projects/{id}/revenue and /churn. */
import { Effect } from "effect"
import * as Compute from "../metrics/Compute.ts"
import { loadProject } from "../projects/Policy.ts"

export const getRevenue = (projectId: string) =>
  Effect.map(loadProject(projectId, 400), (p) =>
    Compute.revenue({
      projectId: p.project.id,
      currency: p.project.currency,
      today: p.today,
      revenue: p.series.revenue
    }))

export const getChurn = (projectId: string) =>
  Effect.map(loadProject(projectId, 75), (p) =>
    Compute.churn({
      projectId: p.project.id,
      currency: p.project.currency,
      today: p.today,
      revenue: p.series.revenue
    }))
