/**
 * The demo account a fresh embedded database starts with: three projects with six months of plausible
 * daily history (a growing, a declining and a steady business), connected integrations, a few expenses,
 * and an all-access token whose secret is printed once and written to $SITEHEALTH_DATA_DIR/demo-token.
 */
import { Clock, Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { createAccount, createProject, mintToken } from "../accounts/Provisioning.ts"
import { ExpensesRepo } from "../expenses/ExpensesRepo.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { MetricsRepo } from "../metrics/MetricsRepo.ts"
import { newId } from "../store/Ids.ts"
import { generateDemoSeries, type DemoProfile } from "./Generate.ts"

export const DEMO_HISTORY_DAYS = 180

const DEMO_PROJECTS: ReadonlyArray<{
  name: string
  domain: string
  timezone: string
  currency: string
  profile: DemoProfile
  seed: number
}> = [
  { name: "Acme Analytics", domain: "acme-analytics.example", timezone: "Europe/Berlin", currency: "EUR", profile: "growing", seed: 11 },
  { name: "Bolt Recipes", domain: "boltrecipes.example", timezone: "America/New_York", currency: "USD", profile: "declining", seed: 23 },
  { name: "Calm Notes", domain: "calmnotes.example", timezone: "UTC", currency: "USD", profile: "steady", seed: 37 }
]

export const seedDemo = (options: { readonly trialDays?: number } = {}) =>
  Effect.gen(function*() {
    const metrics = yield* MetricsRepo
    const integrations = yield* IntegrationsRepo
    const expenses = yield* ExpensesRepo
    const now = new Date(yield* Clock.currentTimeMillis)
    const account = yield* createAccount({ name: "Demo account", trialDays: options.trialDays ?? 14 })
    const projectIds: Array<string> = []
    for (const spec of DEMO_PROJECTS) {
      const project = yield* createProject({ accountId: account.id, ...spec })
      projectIds.push(project.id)
      const today = todayIn(spec.timezone, now)
      const series = generateDemoSeries({ seed: spec.seed, days: DEMO_HISTORY_DAYS, today, profile: spec.profile })
      yield* metrics.writeDays(project.id, series)
      for (const provider of ["stripe", "plausible", "google_search_console"]) {
        yield* integrations.upsert({
          projectId: project.id,
          provider,
          status: "connected",
          connectedAt: new Date(`${addDays(today, -DEMO_HISTORY_DAYS)}T09:00:00Z`),
          lastSyncedAt: now,
          lastError: null
        })
      }
      const demoExpenses = [
        { amountMinor: 4_900, category: "hosting", description: "Cloud hosting", vendor: "Hetzner", recurrence: "monthly" as const, daysAgo: DEMO_HISTORY_DAYS },
        { amountMinor: 1_900, category: "software", description: "Email delivery", vendor: "Postmark", recurrence: "monthly" as const, daysAgo: 120 },
        { amountMinor: 25_000, category: "advertising", description: "Launch campaign", vendor: null, recurrence: "one_off" as const, daysAgo: 20 },
        { amountMinor: 1_500, category: "domains", description: "Domain renewal", vendor: "Namecheap", recurrence: "yearly" as const, daysAgo: 90 }
      ]
      for (const [i, e] of demoExpenses.entries()) {
        yield* expenses.insert({
          id: newId("exp"),
          projectId: project.id,
          amountMinor: e.amountMinor,
          currency: spec.currency,
          category: e.category,
          description: e.description,
          vendor: e.vendor,
          incurredOn: addDays(today, -e.daysAgo),
          recurrence: e.recurrence,
          createdAt: new Date(now.getTime() + i),
          deletedAt: null
        })
      }
    }
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
