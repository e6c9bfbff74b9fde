/**
 * What the payments repository offers (PaymentsRepo.ts), apart from its implementations so that each job's
 * module — facts (PaymentsFacts.ts), sync staging and progress (PaymentsStaging.ts), report reads
 * (PaymentsReads.ts), the memory twin (PaymentsMemory.ts) — is written against the one interface.
 */
import type * as Effect from "effect/Effect"
import type { CohortRow, CustomerContact, FailedCharge } from "../store/Series.ts"
import type { ChurnEvent, UnconvertedDay } from "./Rollup.ts"
import type { PaymentsData } from "./Types.ts"

/**
 * A provider object kept between runs for a later rebuild (StagingMigration.ts): `groupId` = what it is
 * rebuilt with (a subscription), `parentId` = what replaces it as a whole (an invoice). `data` is the
 * provider's compact JSON; its writer decodes it again when reading it back.
 */
export interface StagedDoc {
  readonly kind: string
  readonly id: string
  readonly parentId: string
  readonly groupId: string
  readonly data: unknown
}

/** The staged docs of one group (kind, then id order). */
export interface StagedGroup {
  readonly groupId: string
  readonly docs: ReadonlyArray<StagedDoc>
}

/** One batch of a streaming sync, committed atomically (PaymentsRepo.commit). */
export interface PaymentsBatch {
  readonly facts?: Partial<PaymentsData>
  /** Refunds that no longer count (failed or canceled since they were stored): deleted. */
  readonly removeRefunds?: ReadonlyArray<string>
  /** Subscriptions whose stored versions are REPLACED by the ones in `facts` (deleted first). */
  readonly replaceVersionsOf?: ReadonlyArray<string>
  /** Staged docs of these parents (per kind) are removed before `staged` is upserted. */
  readonly unstageParents?: ReadonlyArray<{ readonly kind: string; readonly parentId: string }>
  readonly staged?: ReadonlyArray<StagedDoc>
  /**
   * Record what this batch changes (the customers whose versions change, the local days whose charges or
   * refunds change) for an INCREMENTAL rollUp. A batch that changes facts without it makes the next rollUp a
   * full one (a full listing: everything changes anyway). The rule: DirtyTracking.ts.
   */
  readonly trackChanges?: boolean
  /** The sync's progress after this batch: a value, null to clear it, absent to leave it. */
  readonly progress?: { readonly provider: string; readonly value: unknown }
}

export interface PaymentsRepoShape {
  /**
   * Upserts the given raw facts by provider id (customers and charges and refunds by id, subscription
   * versions by (subscriptionId, validFrom)), re-runs the rollup for the project and stores its output,
   * bumping data_version — one transaction.
   */
  readonly write: (projectId: string, data: Partial<PaymentsData>) => Effect.Effect<void>
  /** Re-runs the whole rollup without new facts (after FX rates change). */
  readonly rebuild: (projectId: string) => Effect.Effect<void>
  /**
   * Commits one batch of a streaming sync in one transaction WITHOUT rolling up or bumping data_version.
   * Returns the groups of the staged docs `unstageParents` removed (they need rebuilding too).
   */
  readonly commit: (projectId: string, batch: PaymentsBatch) => Effect.Effect<ReadonlyArray<string>>
  /** The progress the provider's last committed batch saved (null: none). */
  readonly progress: (projectId: string, provider: string) => Effect.Effect<unknown>
  /** Staged docs, by group: the next `limit` groups after `after` (null: from the first), in group order. */
  readonly stagedAfter: (
    projectId: string,
    after: string | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StagedGroup>>
  /** Staged docs of these groups (groups without docs are left out). */
  readonly stagedOf: (projectId: string, groups: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StagedGroup>>
  /**
   * The rollup, derived rows replaced and data_version bumped: one transaction. Incremental (only the parts the
   * commits since the last rollup marked, `trackChanges`) when it can be, else over everything stored; both
   * give the same rows (SqlRollup.ts).
   */
  readonly rollUp: (projectId: string) => Effect.Effect<void>
  /** Projects with a subscription or charge in any of these currencies: the ones a new FX rate affects. */
  readonly projectsWithPaymentsIn: (currencies: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** Customers with MRR > 0 at the end of `startDay`, with their MRR at the end of `startDay` and of `endDay`. */
  readonly cohort: (projectId: string, startDay: string, endDay: string) => Effect.Effect<ReadonlyArray<CohortRow>>
  /** Churn events with fromDay ≤ day ≤ toDay, by day then customer. */
  readonly churnEvents: (projectId: string, fromDay: string, toDay: string) => Effect.Effect<ReadonlyArray<ChurnEvent>>
  /** The stored name and email of these customers (ids not stored are left out), by id. */
  readonly contacts: (
    projectId: string,
    customerIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<CustomerContact>>
  /**
   * The newest `limit` failed charges whose local day (in `timezone`) is within [fromDay, toDay], newest first
   * (same instant: the greater charge id first), each with its customer's stored name and email.
   */
  readonly failedCharges: (
    projectId: string,
    window: { readonly fromDay: string; readonly toDay: string; readonly timezone: string },
    limit: number
  ) => Effect.Effect<ReadonlyArray<FailedCharge>>
  /** Unconverted rows with day ≤ toDay that are on or after fromDay, or the last one before it per currency. */
  readonly unconverted: (
    projectId: string,
    fromDay: string,
    toDay: string
  ) => Effect.Effect<ReadonlyArray<UnconvertedDay>>
}

/** Staged docs (sorted by group) as groups. */
export const groupDocs = (docs: ReadonlyArray<StagedDoc>): Array<StagedGroup> => {
  const out: Array<{ groupId: string; docs: Array<StagedDoc> }> = []
  for (const d of docs) {
    const last = out.at(-1)
    if (last !== undefined && last.groupId === d.groupId) last.docs.push(d)
    else out.push({ groupId: d.groupId, docs: [d] })
  }
  return out
}
