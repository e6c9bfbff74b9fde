/** GET /projects/{id}/seo. */
import { Effect } from "effect"
import * as Compute from "../metrics/Compute.ts"
import { loadProject } from "../projects/Policy.ts"

export const getSeo = (projectId: string) =>
  Effect.map(loadProject(projectId, 60), (p) =>
    Compute.seo({ projectId: p.project.id, today: p.today, search: p.series.search }))
