/**
 * Handlers of the integrations group: list (status, last success, last run, last error — never a
 * credential), queue a sync (202 with the run; the pending one when there is one); connecting and
 * disconnecting are dashboard-only (403; operators use `admin integrations connect|disconnect`).
 */
import { IntegrationsApi, SiteHealthApi } from "@sitehealth/domain/Api"
import { CurrentPrincipal } from "@sitehealth/domain/Authentication"
import { notFound } from "@sitehealth/domain/Errors"
import {
  type Integration,
  LISTED_PROVIDERS,
  type Provider,
  PROVIDERS,
  type SyncRun
} from "@sitehealth/domain/Integrations"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { intervalMinutesOf, nextSlot } from "../integrations/Schedule.ts"
import { SyncQueue } from "../integrations/SyncQueue.ts"
import { AppConfig } from "../platform/Config.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { isoOrNull } from "../store/Present.ts"
import type { IntegrationRecord, SyncRunRecord } from "../store/Records.ts"
import { dashboardOnly } from "./Projects.ts"

export const PROVIDER_KIND: Record<Provider, Integration["kind"]> = {
  stripe: "payments",
  plausible: "analytics",
  "google-search-console": "search"
}

export const presentRun = (s: SyncRunRecord): SyncRun => ({
  id: s.id,
  provider: s.provider as Provider,
  mode: s.mode,
  status: s.status,
  requestedAt: s.requestedAt.toISOString(),
  startedAt: isoOrNull(s.startedAt),
  finishedAt: isoOrNull(s.finishedAt),
  counts: s.status === "succeeded" ? (s.counts ?? {}) : null,
  error: s.error
})

export const isProvider = (p: string): p is Provider => (PROVIDERS as ReadonlyArray<string>).includes(p)

/** One provider's entry of the list: its row (if connected) and its latest run (if any). */
export const presentIntegration = (
  provider: Provider,
  row: IntegrationRecord | undefined,
  lastRun: SyncRunRecord | undefined,
  defaultIntervalMinutes: number
): Integration => ({
  provider,
  kind: PROVIDER_KIND[provider],
  status: row ? row.status : "not_connected",
  connectedAt: row ? row.connectedAt.toISOString() : null,
  lastSuccessAt: isoOrNull(row?.lastSyncedAt ?? null),
  lastRun: lastRun ? presentRun(lastRun) : null,
  lastError: row?.lastError ?? null,
  syncIntervalMinutes: row ? intervalMinutesOf(provider, row.syncIntervalMinutes, defaultIntervalMinutes) : null,
  nextSyncAt: row ? nextScheduledSync(row, defaultIntervalMinutes).toISOString() : null,
  consecutiveFailures: row?.failures ?? 0
})

/** The stored next_sync_at, or — not scheduled yet — the first slot after the connection (Schedule.ts). */
const nextScheduledSync = (row: IntegrationRecord, defaultIntervalMinutes: number): Date =>
  row.nextSyncAt ??
    nextSlot(
      row.projectId,
      row.provider,
      intervalMinutesOf(row.provider, row.syncIntervalMinutes, defaultIntervalMinutes),
      row.connectedAt
    )

type Payload<Name extends keyof typeof IntegrationsApi.endpoints> =
  (typeof IntegrationsApi.endpoints)[Name]["~Payload"]["Type"]

/**
 * The group's operations, by endpoint name: /api/v1's handlers (IntegrationsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions.
 */
export const integrationsOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const integrations = yield* IntegrationsRepo
  const queue = yield* SyncQueue
  const config = yield* AppConfig
  const requireProject = requireProjectWith(projects)

  return {
    listIntegrations: ({ params }: { readonly params: { readonly id: string } }) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const { integrations: rows, lastRuns } = yield* integrations.list(project.id)
        const listed: Array<Provider> = [...LISTED_PROVIDERS]
        for (const r of rows) if (isProvider(r.provider) && !listed.includes(r.provider)) listed.push(r.provider)
        return {
          projectId: project.id,
          integrations: listed.map((provider) =>
            presentIntegration(
              provider,
              rows.find((r) => r.provider === provider),
              lastRuns.find((r) => r.provider === provider),
              config.syncIntervalMinutes
            )
          )
        }
      }),
    syncIntegration: ({ params, payload }: {
      readonly params: { readonly id: string; readonly provider: string }
      readonly payload: Payload<"syncIntegration">
    }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const project = yield* requireProject(params.id)
        if (!isProvider(params.provider)) {
          return yield* Effect.fail(notFound(`Integration "${params.provider}" (known: ${PROVIDERS.join(", ")})`))
        }
        const connection = yield* integrations.connection(project.id, params.provider)
        if (connection === null) {
          return yield* Effect.fail(notFound(
            `Integration "${params.provider}" of this project (it is not connected; the owner connects it in the ` +
              `dashboard, under the website's integrations)`
          ))
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        const result = yield* queue.request({
          projectId: project.id,
          provider: params.provider,
          mode: payload?.mode ?? "incremental",
          requestedBy: principal.tokenId,
          now
        })
        return { sync: presentRun(result.sync), alreadyQueued: result.alreadyQueued }
      }),
    connectIntegration: () => dashboardOnly("Connecting an integration"),
    disconnectIntegration: () => dashboardOnly("Disconnecting an integration")
  }
})

export const IntegrationsHttp = Layer.unwrap(
  Effect.map(
    integrationsOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "integrations", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
