/**
 * The `demo` provider: the demo projects' data source, so a sync on the embedded default does real work.
 * A sync regenerates the project's demo data (demo/Generate.ts, the profile matched by the project's
 * domain in demo/Profiles.ts) for `now` and writes, through the same repositories a provider sync uses:
 *
 * - traffic and search rows of the days since the last synced day (that day included: it was incomplete
 *   then), or of the whole history on a full sync or the first one. These rows are keyed by day (and hour,
 *   page, source, query), so the same sync twice changes nothing.
 * - payments only when the project has none yet. The generator numbers its customers, subscriptions and
 *   charges from its history's first day, which moves with `now`: writing a later day's payments over the
 *   stored ones would add a second set of customers, not update them. Stored subscriptions stay in force,
 *   so MRR carries on from them.
 *
 * `state` = { lastDay }: the project's local day the last successful sync wrote up to.
 */
import * as Effect from "effect/Effect"
import { DEMO_HISTORY_DAYS, generateDemoProject } from "../../demo/Generate.ts"
import { DEMO_PROJECTS } from "../../demo/Profiles.ts"
import { daysBetween, isDay, todayIn } from "../../metrics/Dates.ts"
import { PaymentsRepo } from "../../payments/PaymentsRepo.ts"
import { ProjectsRepo } from "../../projects/ProjectsRepo.ts"
import { SearchRepo } from "../../search/SearchRepo.ts"
import { TrafficRepo } from "../../traffic/TrafficRepo.ts"
import type { Connector, SyncContext } from "../Connector.ts"
import { ProviderError } from "../ProviderHttp.ts"

export interface DemoState {
  readonly lastDay: string
}

const lastDayOf = (state: unknown): string | null => {
  const d = (state as { lastDay?: unknown } | null)?.lastDay
  return typeof d === "string" && isDay(d) ? d : null
}

export const demoSync = (ctx: SyncContext) =>
  Effect.gen(function*() {
    const project = yield* (yield* ProjectsRepo).find(ctx.projectId)
    const spec = DEMO_PROJECTS.find((s) => s.domain === project?.domain)
    if (project === null || spec === undefined) {
      return yield* Effect.fail(new ProviderError({
        kind: "not_found", status: null,
        message: `no demo profile for this project's domain (demo domains: ${DEMO_PROJECTS.map((s) => s.domain).join(", ")})`
      }))
    }
    const data = generateDemoProject(spec, ctx.now)
    const previous = ctx.mode === "full" ? null : lastDayOf(ctx.state)
    // Days before `from` are left as stored; a cursor older than the generated history means "all of it".
    const from = previous !== null && daysBetween(previous, data.today) < DEMO_HISTORY_DAYS ? previous : null
    const keep = (day: string) => from === null || day >= from
    const zone = project.timezone
    const traffic = {
      days: (data.traffic.days ?? []).filter((d) => keep(d.day)),
      hours: (data.traffic.hours ?? []).filter((h) => keep(todayIn(zone, new Date(h.hour)))),
      pages: (data.traffic.pages ?? []).filter((p) => keep(p.day)),
      sources: (data.traffic.sources ?? []).filter((s) => keep(s.day)),
      countries: (data.traffic.countries ?? []).filter((c) => keep(c.day)),
      uniques: (data.traffic.uniques ?? []).filter((u) => keep(u.to))
    }
    const search = {
      totals: (data.search.totals ?? []).filter((d) => keep(d.day)),
      queries: (data.search.queries ?? []).filter((q) => keep(q.day)),
      pages: (data.search.pages ?? []).filter((p) => keep(p.day))
    }
    const payments = yield* PaymentsRepo
    const currencies = [...new Set([spec.currency, ...data.payments.subscriptionVersions.map((v) => v.currency)])]
    const hasPayments = (yield* payments.projectsWithPaymentsIn(currencies)).includes(ctx.projectId)
    yield* (yield* TrafficRepo).write(ctx.projectId, traffic)
    yield* (yield* SearchRepo).write(ctx.projectId, search)
    if (!hasPayments) yield* payments.write(ctx.projectId, data.payments)
    const state: DemoState = { lastDay: data.today }
    return {
      counts: {
        trafficDays: traffic.days.length,
        trafficHours: traffic.hours.length,
        searchDays: search.totals.length,
        customers: hasPayments ? 0 : data.payments.customers.length,
        charges: hasPayments ? 0 : data.payments.charges.length
      },
      state
    }
  })

export const demoConnector: Connector<ProjectsRepo | TrafficRepo | SearchRepo | PaymentsRepo> = {
  provider: "demo",
  kind: "demo",
  defaultBaseUrl: "demo:",
  baseUrlEnv: null,
  credentialFields: [],
  // Nothing to check: the demo provider has no account and no credentials.
  validate: () => Effect.void,
  sync: demoSync
}
