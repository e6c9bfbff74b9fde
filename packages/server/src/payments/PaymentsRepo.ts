/**
 * Payments storage. Raw facts (customers, subscription versions, charges, refunds) are upserted by provider
 * id; the derived rows the reports read (revenue_daily, customer_mrr, churn_events, revenue_unconverted_daily)
 * are replaced by the rollup (Rollup.ts) in one transaction that also bumps projects.data_version. Reads only
 * touch derived rows, bounded by the window.
 *
 * Two ways to write:
 * - `write`: facts and rollup in ONE transaction (the demo, the seed, small callers).
 * - `commit` then `rollUp`: a streaming sync commits bounded batches of facts — each batch with the staged
 *   provider objects it needs later and its progress (where to resume), atomically — and rolls up once at
 *   the end. Until that rollUp the reports keep the previous derived rows and data_version: a sync that dies
 *   midway changes nothing anyone reads, and its next attempt continues from the saved progress.
 *
 * The SQL rollup streams the project's history through Rollup's pure functions (versions customer range by
 * customer range, charges and refunds by id ranges), so its memory does not grow with the history.
 *
 * This module holds the service and composes it; each job has its module:
 * - PaymentsShape.ts: the interface and the batch a sync commits;
 * - PaymentsFacts.ts: the facts and the rollup over them (SqlRollup.ts, SqlParts.ts), their writes and reads;
 * - PaymentsStaging.ts: a sync's staged objects and progress;
 * - PaymentsReads.ts: the report reads;
 * - DirtyTracking.ts: the incremental rollup's rule, which both stores follow (SqlDirty.ts on PostgreSQL);
 * - PaymentsMemory.ts: the in-memory twin, for tests.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { FxRepo } from "../fx/FxRepo.ts"
import { revenueColumns } from "../store/Rows.ts"
import type { CohortRow } from "../store/Series.ts"
import { dieOnSqlError } from "../store/Sql.ts"
import { commitFacts, makePaymentsFacts } from "./PaymentsFacts.ts"
import { makePaymentsMemory } from "./PaymentsMemory.ts"
import { makePaymentsReads } from "./PaymentsReads.ts"
import type { PaymentsBatch, PaymentsRepoShape } from "./PaymentsShape.ts"
import { commitStaging, makePaymentsStaging } from "./PaymentsStaging.ts"

export type { CohortRow }
export type { PaymentsBatch, PaymentsRepoShape, StagedDoc, StagedGroup } from "./PaymentsShape.ts"
export { revenueColumns }

export class PaymentsRepo extends Context.Service<PaymentsRepo, PaymentsRepoShape>()("sitehealth/PaymentsRepo") {
  static readonly sql = Layer.effect(
    PaymentsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const fx = yield* FxRepo
      return PaymentsRepo.of({
        ...makePaymentsFacts(sql, fx),
        ...makePaymentsStaging(sql),
        ...makePaymentsReads(sql),
        commit: Effect.fn("PaymentsRepo.commit")(function*(projectId: string, batch: PaymentsBatch) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            // A sync's batch does not wait for its WAL to reach the disk (a full listing commits ~1,500 of
            // them): a crash of Postgres may lose the last batches, never half of one (the batch and its
            // progress go together), and the rollup — what reports read — and the run's outcome saved after it
            // commit synchronously, which flushes every batch before them.
            yield* sql`SET LOCAL synchronous_commit = off`
            yield* commitFacts(sql, projectId, batch)
            return yield* commitStaging(sql, projectId, batch)
          }))
        }, dieOnSqlError)
      })
    })
  )

  /** Tests only: raw facts and derived rows in maps; revenue days go to MemoryDb, where MetricsRepo reads them. */
  static readonly memory = Layer.effect(PaymentsRepo, Effect.map(makePaymentsMemory, PaymentsRepo.of))
}
