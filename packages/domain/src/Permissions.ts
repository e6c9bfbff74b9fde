/**
 * Permissions, and the shape of the `Operation` each endpoint of the contract is annotated with: which
 * permission it needs and whether it reads, writes, destroys or is dashboard-only.
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

export const PERMISSIONS = [
  "projects:read",
  "analytics:read",
  "revenue:read",
  "seo:read",
  "integrations:read",
  "integrations:sync",
  "expenses:read",
  "expenses:write",
  "annotations:read",
  "annotations:write",
  "tokens:read",
  "tokens:write",
  "webhooks:read",
  "webhooks:write"
] as const
export type Permission = (typeof PERMISSIONS)[number]
export const Permission = Schema.Literals(PERMISSIONS).annotate({ identifier: "Permission" })

export const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  "projects:read": "List projects; read health, briefing and signals",
  "analytics:read": "Read analytics",
  "revenue:read": "Read revenue and churn",
  "seo:read": "Read the search (SEO) report",
  "integrations:read": "List a project's integrations",
  "integrations:sync": "Trigger a sync of an integration",
  "expenses:read": "List expenses",
  "expenses:write": "Create and delete expenses",
  "annotations:read": "List a project's annotations (days marked with a note)",
  "annotations:write": "Add, change and delete annotations",
  "tokens:read": "List token metadata",
  "tokens:write": "Mint and revoke tokens (within the caller's own projects and permissions)",
  "webhooks:read": "List a project's webhook endpoints and their deliveries (never a secret)",
  "webhooks:write": "Add, change, test, delete webhook endpoints and redeliver"
}

/** The `Operation.permission` of an endpoint that any valid token may call, whatever its permissions. */
export const AUTHENTICATED = "authenticated" as const

export type OperationKind = "read" | "write" | "destructive" | "dashboard_only"

/** What an endpoint is, beyond its schemas: declared on the endpoint in Api.ts as its `Operation` annotation. */
export interface Operation {
  /**
   * The permission the endpoint needs; `"authenticated"` when any valid token may call it (the caller's own
   * metadata, `GET /tokens/current`); null for dashboard-only endpoints (always 403).
   */
  readonly permission: Permission | typeof AUTHENTICATED | null
  readonly kind: OperationKind
  /** True when the endpoint changes nothing without `confirm: true` and answers a preview instead. */
  readonly confirmGate: boolean
  /** True when the path names a project (`/projects/:id/…`): access is checked against the token's scope. */
  readonly project: boolean
  readonly summary: string
  /** The CLI command that calls it (`["projects", "list"]`), or null when the CLI has none. */
  readonly cli: ReadonlyArray<string> | null
  /** The MCP tool that calls it (`get_health`), or null when MCP exposes none (dashboard-only endpoints). */
  readonly mcp: string | null
  /**
   * True when repeating the call with the same input has no further effect (MCP's `idempotentHint`). Reads
   * always are; absent means false for the rest. A second revoke answers the revoked token again; a second
   * delete of an expense answers 404 but changes nothing more.
   */
  readonly idempotent?: boolean
  /** True when the call reaches beyond sitehealth, to an external provider (MCP's `openWorldHint`). */
  readonly openWorld?: boolean
}

/**
 * The annotation key of an endpoint's `Operation`. The server's middleware enforces it, the OpenAPI document
 * shows it (`x-permission`, `x-kind`, `x-confirm-gate`), the CLI and MCP derive their commands and tools
 * from it. Absent on an endpoint = refused (403 `operation_not_allowed`); a test checks none is absent.
 */
export class OperationAnnotation extends Context.Service<OperationAnnotation, Operation>()("sitehealth/Operation") {}
