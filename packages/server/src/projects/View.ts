/**
 * A website's own fields as every answer writes them — `GET /projects` (computed and stored), the dashboard's
 * websites — in the order of the contract's `Project` / `Website`, so the stored list's bytes match the
 * computed encoding (ListAnswer.ts).
 */
import type { ProjectRecord } from "../store/Records.ts"

export const projectView = (p: ProjectRecord) => ({
  id: p.id,
  name: p.name,
  domain: p.domain,
  timezone: p.timezone,
  currency: p.currency,
  createdAt: p.createdAt.toISOString()
})
