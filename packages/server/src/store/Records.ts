/** What the repositories store and return; the HTTP layer turns these into the contract's shapes. */
import type { AnnotationCategory } from "@sitehealth/domain/Annotations"
import type { AccountId, AnnotationId, ExpenseId, ProjectId, TokenId } from "@sitehealth/domain/Common"
import type { Permission } from "@sitehealth/domain/Permissions"
import type { ProjectSeries } from "./Series.ts"

export type SubscriptionStatus = "none" | "active" | "past_due" | "canceled"

export interface AccountRecord {
  readonly id: AccountId
  readonly name: string
  readonly trialEndsAt: Date
  readonly subscriptionStatus: SubscriptionStatus
  readonly subscriptionUntil: Date | null
  readonly createdAt: Date
}

export interface ProjectRecord {
  readonly id: ProjectId
  readonly accountId: AccountId
  readonly name: string
  readonly domain: string
  readonly timezone: string
  readonly currency: string
  readonly createdAt: Date
}

export interface TokenRecord {
  readonly id: TokenId
  readonly accountId: AccountId
  readonly name: string
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  readonly secretSha256: string
  readonly last4: string
  readonly projects: ReadonlyArray<ProjectId> | null
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
  readonly id: ExpenseId
  readonly projectId: ProjectId
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

/** A day of a project marked with a note (annotations/AnnotationsRepo.ts). */
export interface AnnotationRecord {
  readonly id: AnnotationId
  readonly projectId: ProjectId
  readonly date: string
  readonly note: string
  readonly category: AnnotationCategory
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly deletedAt: Date | null
}

export interface IntegrationRecord {
  readonly projectId: string
  readonly provider: string
  readonly status: "connected" | "error"
  readonly connectedAt: Date
  /** End of the last SUCCESSFUL sync (column last_success_at); the integration_stale signal reads it. */
  readonly lastSyncedAt: Date | null
  readonly lastError: string | null
  /** Per-integration API base URL override (tests, sandboxes); null = environment or provider default. */
  readonly baseUrl?: string | null
  /** Minutes between scheduled syncs; null = the provider's cadence (integrations/Schedule.ts). */
  readonly syncIntervalMinutes?: number | null
  /** When the next scheduled sync is due; null = at its first slot after connectedAt (integrations/Schedule.ts). */
  readonly nextSyncAt?: Date | null
  /** Runs in a row that failed (0 after a success): the back-off grows with it. */
  readonly failures?: number
}

/** One sync run of one integration (table sync_runs). */
export interface SyncRunRecord {
  readonly id: string
  readonly projectId: string
  readonly provider: string
  readonly mode: "incremental" | "full"
  readonly status: "queued" | "running" | "succeeded" | "failed"
  readonly requestedAt: Date
  readonly startedAt: Date | null
  readonly finishedAt: Date | null
  /** While running: the worker holds the run until then (renewed while it works); a later claim may take it over. */
  readonly leaseUntil: Date | null
  /** How many times a worker has taken the run. */
  readonly attempts: number
  readonly counts: Readonly<Record<string, number>> | null
  readonly error: string | null
  readonly requestedBy: string | null
}

/** @deprecated the old name of SyncRunRecord. */
export type SyncRequestRecord = SyncRunRecord

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

/** One stored answer, as the fast path serves it. */
export interface StoredAnswer {
  /** The project's local day it was computed on. */
  readonly day: string
  readonly dataVersion: string
  readonly computedAt: Date
  /** JSON of the endpoint's success `data`, as the contract encodes it. */
  readonly encoded: string
  /**
   * The whole response body (the success envelope around `encoded`, UTF-8) gzipped, served to a client that
   * accepts gzip (access/StoredAnswers.ts); null for a small answer, or one kept before 0020.
   */
  readonly gzip?: Uint8Array | null
}
