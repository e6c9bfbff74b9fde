/**
 * The demo account a fresh embedded database starts with: three projects (see Profiles.ts for what is
 * planted in each), each connected to the demo's local Stripe, Plausible and Search Console
 * (Providers.ts) like any project — credentials stored encrypted, per-connection base URLs — and filled
 * by a first full sync of each connection through the real connectors (a year of history); expenses in
 * two currencies, demo EUR/USD rates, and an all-access token whose secret is printed once and written to
 * $SITEHEALTH_DATA_DIR/demo-token. From then on the normal schedule syncs the connections (Schedule.ts),
 * and every new day brings new data: the demo never goes stale.
 */
import { type Provider, PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { createAccount, createProject, mintToken } from "../accounts/Provisioning.ts"
import { ExpensesRepo } from "../expenses/ExpensesRepo.ts"
import { FxRepo } from "../fx/FxRepo.ts"
import { CredentialsCipher } from "../integrations/Crypto.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { ProviderHttp } from "../integrations/ProviderHttp.ts"
import { connectorFor } from "../integrations/Registry.ts"
import { SyncQueue } from "../integrations/SyncQueue.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { PaymentsRepo } from "../payments/PaymentsRepo.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { backfillHealth } from "../recompute/Recompute.ts"
import { newId } from "../store/Ids.ts"
import type { ProjectRecord } from "../store/Records.ts"
import { runNextSync } from "../worker/SyncRunner.ts"
import { DEMO_HISTORY_DAYS, demoFxRates } from "./Generate.ts"
import { DEMO_PROJECTS } from "./Profiles.ts"
import { type DemoConnection, DemoProviders } from "./Providers.ts"

export { DEMO_HISTORY_DAYS }

/** The demo account's name: how a restart finds it (main.ts). */
export const DEMO_ACCOUNT_NAME = "Demo account"

const HEALTH_TREND_DAYS = 30

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * The start-up line of a connection the demo breaks on purpose (Profiles.ts, `breaksAfterFirstSync`): info, not a
 * warning, saying it is planted and why the sync failed. A planted failure that did not happen is a fault of the
 * demo: a warning.
 */
const plantedFailure = (projectName: string, projectId: string, provider: Provider) =>
  Effect.gen(function*() {
    const connection = yield* (yield* IntegrationsRepo).connection(projectId, provider)
    const name = `the ${PROVIDER_NAMES[provider]} sync of ${projectName}`
    if (connection?.integration.status === "error") {
      return yield* Effect.logInfo(
        `demo: ${name} fails on purpose, planted so the demo shows a failing integration ` +
          `(its grant is revoked after the first sync; the sync said: ${connection.integration.lastError})`
      )
    }
    return yield* Effect.logWarning(`demo: ${name} was planted to fail, but it did not`)
  })

/**
 * Connects a demo project to one of the demo's providers: its first full sync through the provider's
 * connector (real HTTP to the local server), then the connection stored with that sync as its last success,
 * so the schedule carries on incrementally from there.
 */
const connectAndSync = (project: ProjectRecord, connection: DemoConnection) =>
  Effect.gen(function*() {
    const connector = connectorFor(connection.provider)
    if (connector === undefined) return yield* Effect.die(`no connector for ${connection.provider}`)
    const now = yield* nowDate
    const outcome = yield* connector.sync({
      projectId: project.id,
      timezone: project.timezone,
      currency: project.currency,
      now,
      mode: "full",
      state: null,
      baseUrl: connection.baseUrl,
      credentials: connection.credentials,
      http: yield* ProviderHttp
    }).pipe(Effect.catch((e) => Effect.die(`the demo's first ${connection.provider} sync failed: ${e.message}`)))
    const finished = yield* nowDate
    yield* (yield* IntegrationsRepo).connect({
      projectId: project.id,
      provider: connection.provider,
      credentials: (yield* CredentialsCipher).encrypt(connection.credentials),
      baseUrl: connection.baseUrl,
      syncIntervalMinutes: null,
      now,
      synced: { at: finished, state: outcome.state }
    })
    yield* Effect.logDebug(
      `demo: first ${connection.provider} sync of ${project.name} in ${finished.getTime() - now.getTime()} ms`,
      outcome.counts
    )
  })

/**
 * Needs the demo's providers running (DemoProviders, whose epoch is now), the credentials cipher of the
 * server and the provider HTTP client.
 */
export const seedDemo = (options: { readonly trialDays?: number } = {}) =>
  Effect.gen(function*() {
    const providers = yield* DemoProviders
    const expenses = yield* ExpensesRepo
    const now = yield* nowDate
    yield* (yield* FxRepo).put(demoFxRates(now, providers.epoch))
    const account = yield* createAccount({ name: DEMO_ACCOUNT_NAME, trialDays: options.trialDays ?? 14 })
    const projects: Array<ProjectRecord> = []
    for (const spec of DEMO_PROJECTS) {
      const project = yield* createProject({
        accountId: account.id,
        name: spec.name,
        domain: spec.domain,
        timezone: spec.timezone,
        currency: spec.currency
      })
      projects.push(project)
      const epochDay = todayIn(spec.timezone, providers.epoch)
      for (const [i, e] of spec.expenses.entries()) {
        yield* expenses.insert({
          id: newId("exp"),
          projectId: project.id,
          amountMinor: e.amountMinor,
          currency: e.currency ?? spec.currency,
          category: e.category,
          description: e.description,
          vendor: e.vendor,
          incurredOn: addDays(epochDay, -e.daysAgo),
          recurrence: e.recurrence,
          createdAt: new Date(now.getTime() + i),
          deletedAt: null
        })
      }
    }
    // The first syncs, the projects side by side (each project's providers one after the other).
    yield* Effect.forEach(DEMO_PROJECTS, (spec, i) =>
      Effect.forEach(providers.connectionsOf(spec.key), (connection) =>
        connectAndSync(projects[i], connection), { discard: true }), {
      concurrency: DEMO_PROJECTS.length,
      discard: true
    })
    // The grants that break after the first sync (Calm Notes' Search Console) break now, and their next sync
    // runs at once: it fails as every later one will, and the integration shows why.
    providers.breakFailingConnections()
    const queue = yield* SyncQueue
    for (const [i, spec] of DEMO_PROJECTS.entries()) {
      for (const integration of spec.integrations) {
        if (integration.breaksAfterFirstSync !== true) {
          continue
        }
        yield* queue.request({
          projectId: projects[i].id,
          provider: integration.provider,
          mode: "incremental",
          requestedBy: "demo",
          now: yield* nowDate
        })
        // This project's run only: on a database with other work queued (a shared test database), the oldest
        // run may be anyone's. Its failure is planted, not a fault: the sync's own warning is left out and
        // plantedFailure says what happened, at info level.
        yield* runNextSync({ projectIds: [projects[i].id] }).pipe(
          Effect.provideService(References.MinimumLogLevel, "Error")
        )
        yield* plantedFailure(spec.name, projects[i].id, integration.provider)
      }
    }
    // A month of daily health snapshots, so the projects list shows a trend from the first start.
    for (const project of projects) {
      yield* backfillHealth(project.id, HEALTH_TREND_DAYS)
    }
    const { secret, token } = yield* mintToken({ accountId: account.id, name: "Demo token (all access)" })
    return {
      account,
      projectIds: projects.map((p) =>
        p.id
      ),
      token,
      secret
    }
  })

/**
 * A server start with the demo account already there: its connections point at this start's providers
 * (new ports, new keys; cursors and schedules kept), the demo rates reach today, and a project without its
 * connections (a demo made before the demo providers, whose `demo` integration 0017_demo_live removed) gets
 * them with a first full sync. Returns the providers (re)connected that way.
 */
export const attachDemo = (accountId: string) =>
  Effect.gen(function*() {
    const providers = yield* DemoProviders
    const integrations = yield* IntegrationsRepo
    const cipher = yield* CredentialsCipher
    const now = yield* nowDate
    yield* (yield* FxRepo).put(demoFxRates(now, providers.epoch))
    const projects = (yield* (yield* ProjectsRepo).list(accountId, null, { limit: 100, after: null })).items
    const connected: Array<string> = []
    for (const spec of DEMO_PROJECTS) {
      const project = projects.find((p) => p.domain === spec.domain)
      if (project === undefined) continue
      const existing = new Set((yield* integrations.all(project.id)).map((i) => i.provider))
      let synced = false
      for (const connection of providers.connectionsOf(spec.key)) {
        if (existing.has(connection.provider)) {
          yield* integrations.repoint({
            projectId: project.id,
            provider: connection.provider,
            credentials: cipher.encrypt(connection.credentials),
            baseUrl: connection.baseUrl
          })
        } else {
          yield* connectAndSync(project, connection)
          connected.push(`${spec.name}: ${connection.provider}`)
          synced = true
        }
      }
      if (synced) yield* (yield* PaymentsRepo).rebuild(project.id)
    }
    return connected
  })
/** Writes the demo secret where the README says it is, readable by its owner only. */
export const writeDemoToken = (dataDir: string, secret: string) => {
  Fs.mkdirSync(dataDir, { recursive: true })
  const file = Path.join(dataDir, "demo-token")
  Fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  Fs.chmodSync(file, 0o600)
  return file
}
