/**
 * The demo account a fresh embedded database starts with: three projects with a year of provider data
 * (see Profiles.ts for what is planted in each), their integrations, expenses in two currencies, demo
 * EUR/USD rates, and an all-access token whose secret is printed once and written to
 * $SITEHEALTH_DATA_DIR/demo-token. Everything goes through the same repositories a provider sync uses,
 * so the rollups and reports run exactly as they would on real data.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { createAccount, createProject, mintToken } from "../accounts/Provisioning.ts"
import { ExpensesRepo } from "../expenses/ExpensesRepo.ts"
import { FxRepo } from "../fx/FxRepo.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { addDays } from "../metrics/Dates.ts"
import { PaymentsRepo } from "../payments/PaymentsRepo.ts"
import { SearchRepo } from "../search/SearchRepo.ts"
import { newId } from "../store/Ids.ts"
import { TrafficRepo } from "../traffic/TrafficRepo.ts"
import { backfillHealth } from "../worker/Recompute.ts"
import { DEMO_HISTORY_DAYS, demoFxRates, generateDemoProject } from "./Generate.ts"
import { DEMO_PROJECTS } from "./Profiles.ts"

export { DEMO_HISTORY_DAYS }

const MS_PER_DAY = 86_400_000
const HEALTH_TREND_DAYS = 30

export const seedDemo = (options: { readonly trialDays?: number } = {}) =>
  Effect.gen(function*() {
    const traffic = yield* TrafficRepo
    const payments = yield* PaymentsRepo
    const search = yield* SearchRepo
    const fx = yield* FxRepo
    const integrations = yield* IntegrationsRepo
    const expenses = yield* ExpensesRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    yield* fx.put(demoFxRates(now))
    const account = yield* createAccount({ name: "Demo account", trialDays: options.trialDays ?? 14 })
    const projectIds: Array<string> = []
    for (const spec of DEMO_PROJECTS) {
      const project = yield* createProject({
        accountId: account.id, name: spec.name, domain: spec.domain, timezone: spec.timezone, currency: spec.currency
      })
      projectIds.push(project.id)
      const data = generateDemoProject(spec, now)
      yield* traffic.write(project.id, data.traffic)
      yield* search.write(project.id, data.search)
      yield* payments.write(project.id, data.payments)
      const connectedAt = new Date(`${addDays(data.today, -DEMO_HISTORY_DAYS)}T09:00:00Z`)
      for (const integration of spec.integrations) {
        const failing = integration.failingForDays
        const lastSyncedAt = new Date(now.getTime() - (failing ?? 0) * MS_PER_DAY - 20 * 60_000)
        if (integration.provider === "demo") {
          // The demo provider syncs for real (no credentials): the data above counts as its sync up to today.
          yield* integrations.connect({
            projectId: project.id, provider: "demo", credentials: null, baseUrl: null, syncIntervalMinutes: null,
            now: connectedAt, synced: { at: lastSyncedAt, state: { lastDay: data.today } }
          })
          continue
        }
        yield* integrations.upsert({
          projectId: project.id,
          provider: integration.provider,
          status: failing === undefined ? "connected" : "error",
          connectedAt,
          lastSyncedAt,
          lastError: failing === undefined ? null : integration.error ?? "sync failed"
        })
      }
      for (const [i, e] of spec.expenses.entries()) {
        yield* expenses.insert({
          id: newId("exp"),
          projectId: project.id,
          amountMinor: e.amountMinor,
          currency: e.currency ?? spec.currency,
          category: e.category,
          description: e.description,
          vendor: e.vendor,
          incurredOn: addDays(data.today, -e.daysAgo),
          recurrence: e.recurrence,
          createdAt: new Date(now.getTime() + i),
          deletedAt: null
        })
      }
    }
    // A month of daily health snapshots, so the projects list shows a trend from the first start.
    for (const projectId of projectIds) yield* backfillHealth(projectId, HEALTH_TREND_DAYS)
    const { secret, token } = yield* mintToken({ accountId: account.id, name: "Demo token (all access)" })
    return { account, projectIds, token, secret }
  })

/** Writes the demo secret where the README says it is, readable by its owner only. */
export const writeDemoToken = (dataDir: string, secret: string) => {
  Fs.mkdirSync(dataDir, { recursive: true })
  const file = Path.join(dataDir, "demo-token")
  Fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  Fs.chmodSync(file, 0o600)
  return file
}
