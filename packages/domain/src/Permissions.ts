/**
 * Permissions and the operation table. The table is the one place that says, per endpoint, which
 * permission it needs and whether it reads, writes, destroys or is dashboard-only; the server's auth
 * middleware enforces it, and the CLI and MCP server derive their commands and tools from it.
 */
import { Schema } from "effect"

export const PERMISSIONS = [
  "projects:read",
  "analytics:read",
  "revenue:read",
  "seo:read",
  "integrations:read",
  "integrations:sync",
  "expenses:read",
  "expenses:write",
  "tokens:read",
  "tokens:write"
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
  "tokens:read": "List token metadata",
  "tokens:write": "Mint and revoke tokens (within the caller's own projects and permissions)"
}

export type OperationKind = "read" | "write" | "destructive" | "dashboard_only"

export interface Operation {
  /** The permission the endpoint needs; null for dashboard-only endpoints (always 403). */
  readonly permission: Permission | null
  readonly kind: OperationKind
  /** True when the endpoint changes nothing without `confirm: true` and answers a preview instead. */
  readonly confirmGate: boolean
  /** True when the path names a project (`/projects/:id/…`): access is checked against the token's scope. */
  readonly project: boolean
  readonly summary: string
}

/** Keyed by endpoint name, as declared in the contract. */
export const OPERATIONS = {
  listProjects: { permission: "projects:read", kind: "read", project: false, confirmGate: false, summary: "Projects in the token's scope, each with a health snapshot" },
  getHealth: { permission: "projects:read", kind: "read", project: true, confirmGate: false, summary: "Health score, confidence and dimensions of a project" },
  getBriefing: { permission: "projects:read", kind: "read", project: true, confirmGate: false, summary: "Morning briefing with priorities" },
  listSignals: { permission: "projects:read", kind: "read", project: true, confirmGate: false, summary: "Signals, optionally filtered by dimension and severity" },
  deleteProject: { permission: null, kind: "dashboard_only", project: true, confirmGate: false, summary: "Dashboard-only: always 403" },
  getAnalytics: { permission: "analytics:read", kind: "read", project: true, confirmGate: false, summary: "Traffic analytics for a period" },
  getRevenue: { permission: "revenue:read", kind: "read", project: true, confirmGate: false, summary: "Revenue report" },
  getChurn: { permission: "revenue:read", kind: "read", project: true, confirmGate: false, summary: "Churn report" },
  getSeo: { permission: "seo:read", kind: "read", project: true, confirmGate: false, summary: "Search (SEO) report" },
  listIntegrations: { permission: "integrations:read", kind: "read", project: true, confirmGate: false, summary: "Integrations of a project" },
  syncIntegration: { permission: "integrations:sync", kind: "write", project: true, confirmGate: false, summary: "Queue a sync of one integration" },
  connectIntegration: { permission: null, kind: "dashboard_only", project: true, confirmGate: false, summary: "Dashboard-only: always 403" },
  disconnectIntegration: { permission: null, kind: "dashboard_only", project: true, confirmGate: false, summary: "Dashboard-only: always 403" },
  listExpenses: { permission: "expenses:read", kind: "read", project: true, confirmGate: false, summary: "Expenses of a project" },
  createExpense: { permission: "expenses:write", kind: "write", project: true, confirmGate: false, summary: "Record an expense" },
  deleteExpense: { permission: "expenses:write", kind: "destructive", project: true, confirmGate: false, summary: "Delete an expense (kept, marked deleted)" },
  listTokens: { permission: "tokens:read", kind: "read", project: false, confirmGate: false, summary: "Token metadata, never a secret" },
  createToken: { permission: "tokens:write", kind: "write", project: false, confirmGate: true, summary: "Mint a token (preview unless confirm: true)" },
  revokeToken: { permission: "tokens:write", kind: "destructive", project: false, confirmGate: true, summary: "Revoke a token (preview unless confirmed)" }
} as const satisfies Record<string, Operation>

export type OperationName = keyof typeof OPERATIONS

export const operationOf = (endpointName: string): Operation | undefined =>
  (OPERATIONS as Record<string, Operation>)[endpointName]
