/** Handlers of the integrations group: list, queue a sync; connecting and disconnecting are dashboard-only. */
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SiteHealthApi } from "../../../domain/src/Api.ts"
import { CurrentPrincipal } from "../../../domain/src/Authentication.ts"
import { Conflict, notFound } from "../../../domain/src/Errors.ts"
import { type Integration, PROVIDERS, type Provider, type SyncRequest } from "../../../domain/src/Integrations.ts"
import { requireProjectWith } from "../projects/Policy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { dashboardOnly } from "../projects/Http.ts"
import { isoOrNull } from "../store/Present.ts"
import type { SyncRequestRecord } from "../store/Records.ts"
import { IntegrationsRepo } from "./IntegrationsRepo.ts"

const KIND: Record<Provider, Integration["kind"]> = {
  stripe: "payments",
  plausible: "analytics",
  google_search_console: "search"
}

const syncRequest = (s: SyncRequestRecord): SyncRequest => ({
  id: s.id,
  provider: s.provider as Provider,
  mode: s.mode,
  status: s.status,
  requestedAt: s.requestedAt.toISOString(),
  finishedAt: isoOrNull(s.finishedAt)
})

const isProvider = (p: string): p is Provider => (PROVIDERS as ReadonlyArray<string>).includes(p)

export const IntegrationsHttp = HttpApiBuilder.group(
  SiteHealthApi,
  "integrations",
  Effect.fn(function*(handlers) {
    const projects = yield* ProjectsRepo
    const integrations = yield* IntegrationsRepo
    const requireProject = requireProjectWith(projects)

    return handlers.handleAll({
      listIntegrations: ({ params }) =>
        Effect.gen(function*() {
          const project = yield* requireProject(params.id)
          const { integrations: connected, pending } = yield* integrations.list(project.id)
          return {
            projectId: project.id,
            integrations: PROVIDERS.map((provider): Integration => {
              const i = connected.find((c) => c.provider === provider)
              const p = pending.find((s) => s.provider === provider)
              return {
                provider,
                kind: KIND[provider],
                status: i ? i.status : "not_connected",
                connectedAt: i ? i.connectedAt.toISOString() : null,
                lastSyncedAt: isoOrNull(i?.lastSyncedAt ?? null),
                lastError: i?.lastError ?? null,
                pendingSync: p ? syncRequest(p) : null
              }
            })
          }
        }),
      syncIntegration: ({ params, payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const project = yield* requireProject(params.id)
          if (!isProvider(params.provider)) {
            return yield* Effect.fail(notFound(`Integration "${params.provider}" (known: ${PROVIDERS.join(", ")})`))
          }
          const { integrations: connected } = yield* integrations.list(project.id)
          if (!connected.some((c) => c.provider === params.provider)) {
            return yield* Effect.fail(
              new Conflict({
                message: `${params.provider} is not connected to this project; connect it in the dashboard first`,
                type: "not_connected"
              })
            )
          }
          const now = new Date(yield* Clock.currentTimeMillis)
          const result = yield* integrations.requestSync({
            projectId: project.id,
            provider: params.provider,
            mode: payload?.mode ?? "incremental",
            requestedBy: principal.tokenId,
            now
          })
          return { sync: syncRequest(result.sync), alreadyQueued: result.alreadyQueued }
        }),
      connectIntegration: () => dashboardOnly("Connecting an integration"),
      disconnectIntegration: () => dashboardOnly("Disconnecting an integration")
    })
  })
)
