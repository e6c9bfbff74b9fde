/**
 * The payments rollup on PostgreSQL (PaymentsRepo.sql), full or incremental (migration 0019,
 * IncrementalMigration.ts).
 *
 * The derived rows are built from stored PARTS (SqlParts.ts): each customer's (its spans, churn events, MRR
 * moves per day, unconverted MRR moves — Rollup.customerRollup) and each local day's charges and refunds
 * (Rollup.flowsAccumulator). revenue_daily and revenue_unconverted_daily are then re-assembled from the parts
 * summed per day in SQL (Rollup.assembleDays, a few hundred rows). A full rollup recomputes every part
 * (streaming the history in bounded batches); an incremental one only the parts its commits marked
 * (DirtyTracking.ts, SqlDirty.ts) — the same functions on the same rows, so both give the same figures.
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { FxRate } from "../fx/Fx.ts"
import { CHUNK, chunks } from "../store/Chunks.ts"
import { revenueColumns } from "../store/Rows.ts"
import { bulkRowsOf, Day, firstOf, rowsOf, Wide } from "../store/Sql.ts"
import { applyFlowMarks, basisOf, isFullRollup } from "./DirtyTracking.ts"
import { customerRollup, flowsAccumulator, type RollupOptions } from "./Rollup.ts"
import {
  assembleDays,
  type CustomerMove,
  type FlowDay,
  type UnconvertedFlow,
  type UnconvertedMove
} from "./RollupParts.ts"
import { saveBasis, storedBasis, storedCharges, storedRefunds, takeMarks } from "./SqlDirty.ts"
import { addFlows, deleteParts, partsCollector, type PartsSink, partsWriter, replacePartsOf } from "./SqlParts.ts"
import {
  chargeOf,
  decodeCharges,
  decodeRefunds,
  decodeVersions,
  refundOf,
  versionOf,
  type VersionRow
} from "./SqlRows.ts"
import type { SubscriptionVersion } from "./Types.ts"

/** How many customers' versions, or charges or refunds, the rollup reads at a time. */
const ROLLUP_CUSTOMERS = 1000
const ROLLUP_FLOWS = 5_000

const decodeCustomerIds = rowsOf("subscription_versions", Schema.Struct({ customer_id: Schema.String }))
const decodeProject = firstOf("projects", Schema.Struct({ timezone: Schema.String, currency: Schema.String }))
const decodeMoveSums = bulkRowsOf(
  "payments_customer_moves",
  Schema.Struct({
    day: Day,
    mrr_delta: Wide,
    customers_delta: Wide,
    new_mrr_minor: Wide,
    expansion_mrr_minor: Wide,
    contraction_mrr_minor: Wide,
    churned_mrr_minor: Wide,
    reactivation_mrr_minor: Wide,
    new_customers: Wide,
    churned_customers: Wide,
    reactivated_customers: Wide
  })
)
const Source = Schema.Literals(["charges", "refunds"])
const decodeFlowDays = bulkRowsOf(
  "payments_flow_days",
  Schema.Struct({
    source: Source,
    day: Day,
    gross_minor: Wide,
    refunds_minor: Wide,
    failed_payments: Wide,
    failed_minor: Wide,
    items: Wide
  })
)
const decodeUnconvertedSums = bulkRowsOf(
  "payments_customer_unconverted",
  Schema.Struct({ currency: Schema.String, day: Day, delta: Wide })
)
const decodeFlowUnconverted = bulkRowsOf(
  "payments_flow_unconverted",
  Schema.Struct({
    source: Source,
    currency: Schema.String,
    day: Day,
    gross_minor: Wide,
    refunds_minor: Wide,
    failed_minor: Wide,
    items: Wide
  })
)

/** Versions read in the order the parts are computed from (customer, subscription, start), customer by customer. */
const partsOfRows = (rows: ReadonlyArray<VersionRow>, part: ReturnType<typeof customerRollup>, out: PartsSink) => {
  let i = 0
  while (i < rows.length) {
    const customerId = rows[i]!.customer_id
    const versions: Array<SubscriptionVersion> = []
    for (; i < rows.length && rows[i]!.customer_id === customerId; i++) versions.push(versionOf(rows[i]!))
    out.add(customerId, part(customerId, versions))
  }
}

/** Every customer's part recomputed from its versions, ROLLUP_CUSTOMERS customers at a time. */
const allCustomerParts = Effect.fnUntraced(
  function*(sql: SqlClient.SqlClient, projectId: string, options: RollupOptions) {
    const part = customerRollup(options)
    const out = partsWriter(sql, projectId)
    let after: string | null = null
    for (;;) {
      const ids: ReadonlyArray<{ readonly customer_id: string }> = yield* (after === null
        ? sql`SELECT DISTINCT customer_id FROM subscription_versions WHERE project_id = ${projectId}
            ORDER BY customer_id LIMIT ${ROLLUP_CUSTOMERS}`
        : sql`SELECT DISTINCT customer_id FROM subscription_versions WHERE project_id = ${projectId}
            AND customer_id > ${after} ORDER BY customer_id LIMIT ${ROLLUP_CUSTOMERS}`).pipe(
          Effect.flatMap(decodeCustomerIds)
        )
      const last: string | undefined = ids.at(-1)?.customer_id
      if (last === undefined) break
      const rows = yield* (after === null
        ? sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND customer_id <= ${last}
            ORDER BY customer_id, subscription_id, valid_from`
        : sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND customer_id > ${after}
            AND customer_id <= ${last} ORDER BY customer_id, subscription_id, valid_from`).pipe(
          Effect.flatMap(decodeVersions)
        )
      partsOfRows(rows, part, out)
      yield* out.flush(false)
      after = last
    }
    yield* out.flush(true)
  }
)

/** Every charge's and refund's flows, ROLLUP_FLOWS rows at a time. */
const allFlows = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, projectId: string, options: RollupOptions) {
  const flows = flowsAccumulator(options)
  let chargeAfter = ""
  for (;;) {
    const rows = yield* sql`SELECT * FROM charges WHERE project_id = ${projectId} AND id > ${chargeAfter}
        ORDER BY id LIMIT ${ROLLUP_FLOWS}`.pipe(Effect.flatMap(decodeCharges))
    for (const r of rows) flows.charge(chargeOf(r))
    if (rows.length < ROLLUP_FLOWS) break
    chargeAfter = rows.at(-1)!.id
  }
  let refundAfter = ""
  for (;;) {
    const rows = yield* sql`SELECT * FROM refunds WHERE project_id = ${projectId} AND id > ${refundAfter}
        ORDER BY id LIMIT ${ROLLUP_FLOWS}`.pipe(Effect.flatMap(decodeRefunds))
    for (const r of rows) flows.refund(refundOf(r))
    if (rows.length < ROLLUP_FLOWS) break
    refundAfter = rows.at(-1)!.id
  }
  const f = flows.finish()
  yield* addFlows(sql, projectId, f.days, f.unconverted)
})

/** A full rollup: every part deleted (the marks with them) and recomputed from the whole history. */
const allParts = Effect.fn("SqlRollup.allParts")(
  function*(sql: SqlClient.SqlClient, projectId: string, options: RollupOptions) {
    yield* deleteParts(sql, projectId)
    yield* allCustomerParts(sql, projectId, options)
    yield* allFlows(sql, projectId, options)
  }
)

/** An incremental rollup: the parts the commits since the last rollup marked, recomputed (DirtyTracking rule 3). */
const dirtyParts = Effect.fn("SqlRollup.dirtyParts")(
  function*(sql: SqlClient.SqlClient, projectId: string, options: RollupOptions) {
    const marks = yield* takeMarks(sql, projectId)
    const part = customerRollup(options)
    for (const ids of chunks(marks.customers, ROLLUP_CUSTOMERS)) {
      const rows = yield* sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId}
          AND customer_id = ANY(${ids}) ORDER BY customer_id, subscription_id, valid_from`.pipe(
        Effect.flatMap(decodeVersions)
      )
      const out = partsCollector()
      partsOfRows(rows, part, out) // a marked customer without versions adds no part: its stored rows go
      yield* replacePartsOf(sql, projectId, ids, out)
    }
    const flows = flowsAccumulator(options)
    const none = () => undefined
    for (const marked of chunks(marks.charges, CHUNK)) {
      const now = yield* storedCharges(sql, projectId, marked.map((m) => m.id))
      applyFlowMarks(flows, marked, [], { charge: (id) => now.get(id), refund: none })
    }
    for (const marked of chunks(marks.refunds, CHUNK)) {
      const now = yield* storedRefunds(sql, projectId, marked.map((m) => m.id))
      applyFlowMarks(flows, [], marked, { charge: none, refund: (id) => now.get(id) })
    }
    const f = flows.finish()
    yield* addFlows(sql, projectId, f.days, f.unconverted)
  }
)

/** revenue_daily and revenue_unconverted_daily re-assembled from the stored parts. */
const writeDays = Effect.fn("SqlRollup.writeDays")(function*(sql: SqlClient.SqlClient, projectId: string) {
  const moves = yield* sql`SELECT day, sum(mrr_delta) AS mrr_delta, sum(customers_delta) AS customers_delta,
        sum(new_mrr_minor) AS new_mrr_minor, sum(expansion_mrr_minor) AS expansion_mrr_minor,
        sum(contraction_mrr_minor) AS contraction_mrr_minor, sum(churned_mrr_minor) AS churned_mrr_minor,
        sum(reactivation_mrr_minor) AS reactivation_mrr_minor, sum(new_customers) AS new_customers,
        sum(churned_customers) AS churned_customers, sum(reactivated_customers) AS reactivated_customers
      FROM payments_customer_moves WHERE project_id = ${projectId} GROUP BY day`.pipe(Effect.flatMap(decodeMoveSums))
  const flows = yield* sql`SELECT source, day, gross_minor, refunds_minor, failed_payments, failed_minor, items
      FROM payments_flow_days WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeFlowDays))
  const unconvertedMoves = yield* sql`SELECT currency, day, sum(delta) AS delta FROM payments_customer_unconverted
      WHERE project_id = ${projectId} GROUP BY currency, day`.pipe(Effect.flatMap(decodeUnconvertedSums))
  const unconvertedFlows = yield* sql`SELECT source, currency, day, gross_minor, refunds_minor, failed_minor, items
      FROM payments_flow_unconverted WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeFlowUnconverted))
  const out = assembleDays(
    moves.map((m): CustomerMove => ({
      day: m.day,
      mrrDelta: Number(m.mrr_delta),
      customersDelta: Number(m.customers_delta),
      newMrrMinor: Number(m.new_mrr_minor),
      expansionMrrMinor: Number(m.expansion_mrr_minor),
      contractionMrrMinor: Number(m.contraction_mrr_minor),
      churnedMrrMinor: Number(m.churned_mrr_minor),
      reactivationMrrMinor: Number(m.reactivation_mrr_minor),
      newCustomers: Number(m.new_customers),
      churnedCustomers: Number(m.churned_customers),
      reactivatedCustomers: Number(m.reactivated_customers)
    })),
    flows.map((f): FlowDay => ({
      source: f.source,
      day: f.day,
      grossMinor: Number(f.gross_minor),
      refundsMinor: Number(f.refunds_minor),
      failedPayments: Number(f.failed_payments),
      failedMinor: Number(f.failed_minor),
      items: Number(f.items)
    })),
    unconvertedMoves.map((u): UnconvertedMove => ({ currency: u.currency, day: u.day, delta: Number(u.delta) })),
    unconvertedFlows.map((f): UnconvertedFlow => ({
      source: f.source,
      currency: f.currency,
      day: f.day,
      grossMinor: Number(f.gross_minor),
      refundsMinor: Number(f.refunds_minor),
      failedMinor: Number(f.failed_minor),
      items: Number(f.items)
    }))
  )
  yield* sql`DELETE FROM revenue_daily WHERE project_id = ${projectId}`
  yield* sql`DELETE FROM revenue_unconverted_daily WHERE project_id = ${projectId}`
  for (const rows of chunks(out.revenueDays)) {
    yield* sql`INSERT INTO revenue_daily ${sql.insert(Arr.map(rows, (r) => revenueColumns(projectId, r)))}`
  }
  for (const rows of chunks(out.unconverted)) {
    yield* sql`INSERT INTO revenue_unconverted_daily ${
      sql.insert(Arr.map(rows, (u) => ({
        project_id: projectId,
        currency: u.currency,
        day: u.day,
        mrr_minor: u.mrrMinor,
        gross_minor: u.grossMinor,
        refunds_minor: u.refundsMinor,
        failed_minor: u.failedMinor
      })))
    }`
  }
})

/**
 * The rollup, inside the caller's transaction: data_version bumped first (its row lock serialises concurrent
 * writes of the project, so each rollup sees every fact committed before it), parts recomputed — all of
 * them when `full` or when the stored basis differs, else the marked ones — and the day rows re-assembled.
 */
export const rollUpIn = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  projectId: string,
  rates: ReadonlyArray<FxRate>,
  full: boolean
) {
  const project = yield* sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}
      RETURNING timezone, currency`.pipe(Effect.flatMap(decodeProject))
  // Callers write payments of a project they just found (sync, seed): its absence is a bug.
  if (project === null) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
  const options: RollupOptions = { timezone: project.timezone, currency: project.currency, rates }
  const basis = basisOf(project.timezone, project.currency, rates)
  if (isFullRollup(full, full ? null : yield* storedBasis(sql, projectId), basis)) {
    yield* allParts(sql, projectId, options)
    yield* saveBasis(sql, projectId, basis)
  } else {
    yield* dirtyParts(sql, projectId, options)
  }
  yield* writeDays(sql, projectId)
})
