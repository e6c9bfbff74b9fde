/** What the repositories store and return; the HTTP layer turns these into the contract's shapes. */
import type { Permission } from "../../../domain/src/Permissions.ts"
import type { ProjectSeries } from "../metrics/Rows.ts"

export type SubscriptionStatus = "none" | "active" | "canceled"

export interface AccountRecord {
  readonly id: string
  readonly name: string
  readonly trialEndsAt: Date
  readonly subscriptionStatus: SubscriptionStatus
  readonly subscriptionUntil: Date | null
  readonly createdAt: Date
}

export interface ProjectRecord {
  readonly id: string
  readonly accountId: string
  readonly name: string
  readonly domain: string
  readonly timezone: string
  readonly currency: string
  readonly createdAt: Date
}

export interface TokenRecord {
  readonly id: string
  readonly accountId: string
  readonly name: string
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  readonly secretSha256: string
  readonly last4: string
  readonly projects: ReadonlyArray<string> | null
  readonly permissions: ReadonlyArray<Permission>
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
  readonly expiresAt: Date | null
  readonly revokedAt: Date | null
}

/** A token together with what entitlement needs of its account: the auth middleware's one lookup. */
export interface TokenWithAccount {
  readonly token: TokenRecord
  readonly account: Pick<AccountRecord, "trialEndsAt" | "subscriptionStatus" | "subscriptionUntil">
}

export interface ExpenseRecord {
  readonly id: string
  readonly projectId: string
  readonly amountMinor: number
  readonly currency: string
  readonly category: string
  readonly description: string
  readonly vendor: string | null
  readonly incurredOn: string
  readonly recurrence: "one_off" | "monthly" | "yearly"
  readonly createdAt: Date
  readonly deletedAt: Date | null
}

export interface IntegrationRecord {
  readonly projectId: string
  readonly provider: string
  readonly status: "connected" | "error"
  readonly connectedAt: Date
  readonly lastSyncedAt: Date | null
  readonly lastError: string | null
}

export interface SyncRequestRecord {
  readonly id: string
  readonly projectId: string
  readonly provider: string
  readonly mode: "incremental" | "full"
  readonly status: "queued" | "running" | "succeeded" | "failed"
  readonly requestedAt: Date
  readonly finishedAt: Date | null
  readonly requestedBy: string | null
}

export interface ProjectWithSeries {
  readonly project: ProjectRecord
  readonly series: ProjectSeries
}

/** A page of a keyset-paginated list. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export interface PageRequest {
  readonly limit: number
  /** Decoded cursor: the (createdAt, id) of the last item of the previous page. */
  readonly after: { readonly createdAt: Date; readonly id: string } | null
}
