/** Integrations: the providers a project's data comes from, and the sync runs that pull it. */
import * as Schema from "effect/Schema"
import { ProjectId, Timestamp } from "./Common.ts"

/** Provider ids as they appear in paths: /projects/{id}/integrations/{provider}/sync. */
export const PROVIDERS = ["stripe", "plausible", "google-search-console"] as const
export const Provider = Schema.Literals(PROVIDERS).annotate({ identifier: "Provider" })
export type Provider = typeof Provider.Type

/** What the dashboard, its connections and the overview call each provider (the one place it is written). */
export const PROVIDER_NAMES: Record<Provider, string> = {
  stripe: "Stripe",
  plausible: "Plausible",
  "google-search-console": "Google Search Console"
}

/**
 * What a provider is called where a person reads it (signals, the briefing, the dashboard): "Google Search
 * Console" for `google-search-console`; an id this version does not know, as it is.
 */
export const providerName = (provider: string): string =>
  (PROVIDERS as ReadonlyArray<string>).includes(provider) ? PROVIDER_NAMES[provider as Provider] : provider

/** The providers every project's list shows (connected or not). */
export const LISTED_PROVIDERS = ["stripe", "plausible", "google-search-console"] as const

export const SYNC_MODES = ["incremental", "full"] as const
export const SYNC_STATUSES = ["queued", "running", "succeeded", "failed"] as const

export const SyncRun = Schema.Struct({
  id: Schema.String.annotate({ description: "`syn_…`" }),
  provider: Provider,
  mode: Schema.Literals(SYNC_MODES),
  status: Schema.Literals(SYNC_STATUSES),
  requestedAt: Timestamp,
  startedAt: Schema.NullOr(Timestamp).annotate({
    description: "When a worker took the run (its latest attempt); null while queued"
  }),
  finishedAt: Schema.NullOr(Timestamp),
  counts: Schema.NullOr(Schema.Record(Schema.String, Schema.Finite)).annotate({
    description: "What a succeeded run fetched and wrote, by kind (e.g. customers, invoices, days); null otherwise"
  }),
  error: Schema.NullOr(Schema.String).annotate({ description: "Why a failed run failed (never a credential)" })
}).annotate({ identifier: "SyncRun" })
export type SyncRun = typeof SyncRun.Type

/** The kind of data an integration's provider gives. */
export const IntegrationKind = Schema.Literals(["payments", "analytics", "search"])
/** An integration's state, in /api/v1's integration list and the dashboard's connections alike. */
export const IntegrationStatus = Schema.Literals(["connected", "error", "not_connected"])

export const Integration = Schema.Struct({
  provider: Provider,
  kind: IntegrationKind,
  status: IntegrationStatus.annotate({
    description: "not_connected until an operator connects it; error after a failed sync, until one succeeds"
  }),
  connectedAt: Schema.NullOr(Timestamp),
  lastSuccessAt: Schema.NullOr(Timestamp).annotate({ description: "End of the last successful sync" }),
  lastRun: Schema.NullOr(SyncRun).annotate({ description: "The most recent sync run (queued, running or finished)" }),
  lastError: Schema.NullOr(Schema.String),
  syncIntervalMinutes: Schema.NullOr(Schema.Finite).annotate({
    description:
      "Minutes between scheduled syncs (the integration's own, else its provider's cadence: Stripe and Plausible 60, " +
      "Search Console 1440); null when not connected"
  }),
  nextSyncAt: Schema.NullOr(Timestamp).annotate({
    description:
      "When the next scheduled sync is due (its slot in the interval, or later while backing off after failures); " +
      "null when not connected"
  }),
  consecutiveFailures: Schema.Finite.annotate({
    description: "Sync runs in a row that failed (0 after a success; 0 when not connected): the back-off grows with it"
  })
}).annotate({ identifier: "Integration" })
export type Integration = typeof Integration.Type

export const IntegrationList = Schema.Struct({ projectId: ProjectId, integrations: Schema.Array(Integration) })

export const SyncPayload = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(SYNC_MODES).annotate({ description: "Default incremental" }))
}).annotate({ identifier: "SyncRequestBody" })

export const SyncResult = Schema.Struct({
  sync: SyncRun,
  alreadyQueued: Schema.Boolean.annotate({
    description: "True when a sync was already queued or running; that one is returned"
  })
}).annotate({ identifier: "SyncResult" })
