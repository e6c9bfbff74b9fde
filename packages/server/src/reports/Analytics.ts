/** GET /projects/{id}/analytics: traffic for a period. */
import { Effect } from "effect"
import type { Period } from "../../../domain/src/Common.ts"
import * as Compute from "../metrics/Compute.ts"
import { loadProject } from "../projects/Policy.ts"

/** Days of rows a period needs: its window and the previous one of the same length, with margin. */
const LOOKBACK: Record<Period, number | null> = {
  today: 4,
  yesterday: 4,
  "7d": 16,
  "30d": 62,
  "3m": 190,
  "12m": 740,
  all: null
}

export const getAnalytics = (projectId: string, period: Period) =>
  Effect.map(loadProject(projectId, LOOKBACK[period]), (p) =>
    Compute.analytics({
      projectId: p.project.id,
      period,
      today: p.today,
      timezone: p.project.timezone,
      traffic: p.series.traffic,
      firstDay: p.series.traffic[0]?.day ?? null
    }))
