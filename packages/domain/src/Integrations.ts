/** Integrations: the providers a project's data comes from, and sync requests. */
import { Schema } from "effect"
import { ProjectId, Timestamp } from "./Common.ts"

export const PROVIDERS = ["stripe", "plausible", "google_search_console"] as const
export const Provider = Schema.Literals(PROVIDERS).annotate({ identifier: "Provider" })
export type Provider = typeof Provider.Type

export const SyncRequest = Schema.Struct({
  id: Schema.String.annotate({ description: "`syn_…`" }),
  provider: Provider,
  mode: Schema.Literals(["incremental", "full"]),
  status: Schema.Literals(["queued", "running", "succeeded", "failed"]),
  requestedAt: Timestamp,
  finishedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "SyncRequest" })
export type SyncRequest = typeof SyncRequest.Type

export const Integration = Schema.Struct({
  provider: Provider,
  kind: Schema.Literals(["payments", "analytics", "search"]),
  status: Schema.Literals(["connected", "error", "not_connected"]).annotate({
    description: "not_connected until connected in the dashboard"
  }),
  connectedAt: Schema.NullOr(Timestamp),
  lastSyncedAt: Schema.NullOr(Timestamp),
  lastError: Schema.NullOr(Schema.String),
  pendingSync: Schema.NullOr(SyncRequest).annotate({ description: "A queued or running sync, if any" })
}).annotate({ identifier: "Integration" })
export type Integration = typeof Integration.Type

export const IntegrationList = Schema.Struct({ projectId: ProjectId, integrations: Schema.Array(Integration) })

export const SyncPayload = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["incremental", "full"]).annotate({ description: "Default incremental" }))
}).annotate({ identifier: "SyncRequestBody" })

export const SyncResult = Schema.Struct({
  sync: SyncRequest,
  alreadyQueued: Schema.Boolean.annotate({ description: "True when a sync was already queued or running; that one is returned" })
}).annotate({ identifier: "SyncResult" })
