/**
 * The payments rollup on PostgreSQL (PaymentsRepo.sql), full or incremental (migration 0019,
 * IncrementalMigration.ts).
 *
 * The derived rows are built from stored PARTS: each customer's (its spans, churn events, MRR moves per day,
 * unconverted MRR moves — Rollup.customerRollup) and each local day's charges and refunds (Rollup.flowsAccumulator).
 * revenue_daily and revenue_unconverted_daily are then re-assembled from the parts summed per day in SQL
 * (Rollup.assembleDays, a few hundred rows). A full rollup recomputes every part (streaming the history in
 * bounded batches); an incremental one only the parts its commits marked dirty (payments_rollup_dirty) —
 * the same functions on the same rows, so both give the same figures. The parts are valid for one time zone,
 * reporting currency and set of FX rates (payments_rollup_basis): any change of these, or a commit that did
 * not record what it changed, makes the next rollup a full one.
 */
import { createHash } from "node:crypto"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { FxRate } from "../fx/Fx.ts"
import { revenueColumns } from "../store/Rows.ts"
import { bulkRowsOf, CorruptRow, Day, firstOf, rowsOf, Wide } from "../store/Sql.ts"
import {
  assembleDays,
  type ChurnEvent,
  type CustomerMove,
  customerRollup,
  type CustomerMrrSpan,
  type CustomerRollup,
  type FlowDay,
  flowsAccumulator,
  type RollupOptions,
  type UnconvertedFlow,
  type UnconvertedMove
} from "./Rollup.ts"
import type { Charge, PaymentsData, Refund, SubscriptionVersion } from "./Types.ts"

const CHUNK = 1000 // rows per INSERT, well under Postgres's 65 535 parameters
/** How many customers' versions, charges or refunds the rollup reads at a time. */
const ROLLUP_CUSTOMERS = 1000
const ROLLUP_FLOWS = 5_000

const chunks = <A>(rows: ReadonlyArray<A>): Array<Arr.NonEmptyReadonlyArray<A>> => {
  const out: Array<Arr.NonEmptyReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const slice = rows.slice(i, i + CHUNK)
    if (Arr.isReadonlyArrayNonEmpty(slice)) out.push(slice)
  }
  return out
}

/** What the parts were computed with: the same basis → the stored parts are still right. */
export const basisOf = (timezone: string, currency: string, rates: ReadonlyArray<FxRate>) => ({
  timezone,
  currency: currency.toUpperCase(),
  rates: createHash("sha256").update(JSON.stringify(rates)).digest("hex")
})

const VersionRow = Schema.Struct({
  subscription_id: Schema.String,
  customer_id: Schema.String,
  valid_from: Schema.Date,
  valid_to: Schema.NullOr(Schema.Date),
  status: Schema.Literals(["trialing", "active", "past_due", "unpaid", "canceled", "incomplete"]),
  currency: Schema.String,
  unit_amount_minor: Wide,
  quantity: Wide,
  interval: Schema.Literals(["day", "week", "month", "year"]),
  interval_count: Wide,
  discount_percent_off: Schema.NullOr(Wide),
  discount_amount_off_minor: Schema.NullOr(Wide),
  cancel_reason: Schema.NullOr(Schema.String)
})
const ChargeRow = Schema.Struct({
  id: Schema.String,
  customer_id: Schema.String,
  at: Schema.Date,
  amount_minor: Wide,
  currency: Schema.String,
  status: Schema.Literals(["succeeded", "failed"])
})
const RefundRow = Schema.Struct({ id: Schema.String, charge_id: Schema.String, at: Schema.Date, amount_minor: Wide, currency: Schema.String })
export const decodeVersions = bulkRowsOf("subscription_versions", VersionRow)
const decodeCharges = bulkRowsOf("charges", ChargeRow)
const decodeRefunds = bulkRowsOf("refunds", RefundRow)
const decodeCustomerIds = rowsOf("subscription_versions", Schema.Struct({ customer_id: Schema.String }))
const decodeProject = firstOf("projects", Schema.Struct({ timezone: Schema.String, currency: Schema.String }))
const decodeBasis = firstOf("payments_rollup_basis", Schema.Struct({ timezone: Schema.String, currency: Schema.String, rates: Schema.String }))
const decodeDirty = bulkRowsOf("payments_rollup_dirty", Schema.Struct({
  kind: Schema.Literals(["customer", "charge", "refund"]), key: Schema.String, old: Schema.Unknown
}))
/** A dirty charge's or refund's row as it was at the last rollup (jsonb_build_object below). */
const OldFlow = Schema.Struct({
  at: Schema.String, amount_minor: Schema.Number, currency: Schema.String, status: Schema.optional(Schema.Literals(["succeeded", "failed"]))
})
const decodeOldFlow = Schema.decodeUnknownResult(OldFlow)
const decodeMoveSums = bulkRowsOf("payments_customer_moves", Schema.Struct({
  day: Day, mrr_delta: Wide, customers_delta: Wide, new_mrr_minor: Wide, expansion_mrr_minor: Wide, contraction_mrr_minor: Wide,
  churned_mrr_minor: Wide, reactivation_mrr_minor: Wide, new_customers: Wide, churned_customers: Wide, reactivated_customers: Wide
}))
const Source = Schema.Literals(["charges", "refunds"])
const decodeFlowDays = bulkRowsOf("payments_flow_days", Schema.Struct({
  source: Source, day: Day, gross_minor: Wide, refunds_minor: Wide, failed_payments: Wide, failed_minor: Wide, items: Wide
}))
const decodeUnconvertedSums = bulkRowsOf("payments_customer_unconverted", Schema.Struct({ currency: Schema.String, day: Day, delta: Wide }))
const decodeFlowUnconverted = bulkRowsOf("payments_flow_unconverted", Schema.Struct({
  source: Source, currency: Schema.String, day: Day, gross_minor: Wide, refunds_minor: Wide, failed_minor: Wide, items: Wide
}))

const numOrNull = (value: number | bigint | string | null): number | null => (value === null ? null : Number(value))
export const versionOf = (r: typeof VersionRow.Type): SubscriptionVersion => ({
  subscriptionId: r.subscription_id, customerId: r.customer_id, validFrom: r.valid_from.toISOString(),
  validTo: r.valid_to === null ? null : r.valid_to.toISOString(), status: r.status, currency: r.currency,
  unitAmountMinor: Number(r.unit_amount_minor), quantity: Number(r.quantity), interval: r.interval,
  intervalCount: Number(r.interval_count), discountPercentOff: numOrNull(r.discount_percent_off),
  discountAmountOffMinor: numOrNull(r.discount_amount_off_minor), cancelReason: r.cancel_reason
})
const chargeOf = (r: typeof ChargeRow.Type): Charge => ({
  id: r.id, customerId: r.customer_id, at: r.at.toISOString(), amountMinor: Number(r.amount_minor), currency: r.currency, status: r.status
})
const refundOf = (r: typeof RefundRow.Type): Refund => ({
  id: r.id, chargeId: r.charge_id, at: r.at.toISOString(), amountMinor: Number(r.amount_minor), currency: r.currency
})

export const makeSqlRollup = (sql: SqlClient.SqlClient) => {
  const insertRows = <A>(rows: Arr.NonEmptyReadonlyArray<A>, toRow: (a: A) => Record<string, unknown>) => sql.insert(Arr.map(rows, toRow))

  /**
   * Customer parts kept until CHUNK rows of one kind are waiting, then inserted CHUNK rows at a time (the rest
   * waits for the next flush), the rows as ONE JSON parameter (jsonb_to_recordset, as PaymentsRepo's upserts):
   * one statement text per table, and no parameter per value.
   */
  const partsWriter = (projectId: string) => {
    const spans: Array<CustomerMrrSpan> = []
    const churn: Array<ChurnEvent> = []
    const moves: Array<CustomerMove & { readonly customerId: string }> = []
    const unconverted: Array<UnconvertedMove & { readonly customerId: string }> = []
    const take = <A>(rows: Array<A>, all: boolean): Array<Arr.NonEmptyReadonlyArray<A>> => {
      const n = all ? rows.length : rows.length - (rows.length % CHUNK)
      return n === 0 ? [] : chunks(rows.splice(0, n))
    }
    const flush = (all: boolean) =>
      Effect.gen(function*() {
        for (const rows of take(spans, all)) {
          yield* sql`INSERT INTO customer_mrr (project_id, customer_id, from_day, to_day, mrr_minor)
              SELECT ${projectId}, u.c, u.f, u.t, u.m FROM jsonb_to_recordset(${JSON.stringify(rows.map((x) => ({
                c: x.customerId, f: x.fromDay, t: x.toDay, m: x.mrrMinor
              })))}::jsonb) AS u(c text, f date, t date, m bigint)`
        }
        for (const rows of take(churn, all)) {
          yield* sql`INSERT INTO churn_events (project_id, customer_id, day, mrr_lost_minor, reason)
              SELECT ${projectId}, u.c, u.d, u.m, u.r FROM jsonb_to_recordset(${JSON.stringify(rows.map((e) => ({
                c: e.customerId, d: e.day, m: e.mrrLostMinor, r: e.reason
              })))}::jsonb) AS u(c text, d date, m bigint, r text)`
        }
        for (const rows of take(moves, all)) {
          yield* sql`INSERT INTO payments_customer_moves (project_id, customer_id, day, mrr_delta, customers_delta, new_mrr_minor,
                expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor, reactivation_mrr_minor, new_customers, churned_customers,
                reactivated_customers)
              SELECT ${projectId}, u.c, u.d, u.mrr, u.cust, u.nw, u.ex, u.co, u.ch, u.re, u.nc, u.cc, u.rc
              FROM jsonb_to_recordset(${JSON.stringify(rows.map((m) => ({
                c: m.customerId, d: m.day, mrr: m.mrrDelta, cust: m.customersDelta, nw: m.newMrrMinor, ex: m.expansionMrrMinor,
                co: m.contractionMrrMinor, ch: m.churnedMrrMinor, re: m.reactivationMrrMinor, nc: m.newCustomers, cc: m.churnedCustomers,
                rc: m.reactivatedCustomers
              })))}::jsonb) AS u(c text, d date, mrr bigint, cust integer, nw bigint, ex bigint, co bigint, ch bigint, re bigint,
                nc integer, cc integer, rc integer)`
        }
        for (const rows of take(unconverted, all)) {
          yield* sql`INSERT INTO payments_customer_unconverted (project_id, customer_id, currency, day, delta)
              SELECT ${projectId}, u.c, u.cur, u.d, u.delta FROM jsonb_to_recordset(${JSON.stringify(rows.map((x) => ({
                c: x.customerId, cur: x.currency, d: x.day, delta: x.delta
              })))}::jsonb) AS u(c text, cur text, d date, delta bigint)`
        }
      })
    const add = (customerId: string, part: CustomerRollup) => {
      for (const x of part.spans) spans.push(x)
      for (const e of part.churnEvents) churn.push(e)
      for (const m of part.moves) moves.push({ ...m, customerId })
      for (const u of part.unconvertedMoves) unconverted.push({ ...u, customerId })
    }
    return { add, flush }
  }

  /** Some customers' parts, all of them in memory (an incremental rollup's chunk of ROLLUP_CUSTOMERS customers). */
  const partsCollector = () => {
    const spans: Array<CustomerMrrSpan> = []
    const churn: Array<ChurnEvent> = []
    const moves: Array<CustomerMove & { readonly customerId: string }> = []
    const unconverted: Array<UnconvertedMove & { readonly customerId: string }> = []
    const add = (customerId: string, part: CustomerRollup) => {
      for (const x of part.spans) spans.push(x)
      for (const e of part.churnEvents) churn.push(e)
      for (const m of part.moves) moves.push({ ...m, customerId })
      for (const u of part.unconvertedMoves) unconverted.push({ ...u, customerId })
    }
    return { add, spans, churn, moves, unconverted }
  }

  /**
   * The stored parts of these customers become exactly `parts`, BY DIFFERENCE, one statement per table: a stored
   * row whose key is not among the new rows is deleted, a new row is inserted, a changed one updated, and a row
   * stored as it comes again is not written at all (a renewal at an unchanged price leaves its customer's spans
   * and moves as they are). The delete and the upsert touch disjoint keys.
   */
  const replacePartsOf = (projectId: string, ids: ReadonlyArray<string>, parts: ReturnType<typeof partsCollector>) =>
    Effect.gen(function*() {
      yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(parts.spans.map((x) => ({
            c: x.customerId, f: x.fromDay, t: x.toDay, m: x.mrrMinor
          })))}::jsonb) AS u(c text, f date, t date, m bigint)),
          gone AS (DELETE FROM customer_mrr s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
            AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.f = s.from_day))
        INSERT INTO customer_mrr (project_id, customer_id, from_day, to_day, mrr_minor)
        SELECT ${projectId}, u.c, u.f, u.t, u.m FROM u
        ON CONFLICT (project_id, customer_id, from_day) DO UPDATE SET to_day = EXCLUDED.to_day, mrr_minor = EXCLUDED.mrr_minor
        WHERE (customer_mrr.to_day, customer_mrr.mrr_minor) IS DISTINCT FROM (EXCLUDED.to_day, EXCLUDED.mrr_minor)`
      yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(parts.churn.map((e) => ({
            c: e.customerId, d: e.day, m: e.mrrLostMinor, r: e.reason
          })))}::jsonb) AS u(c text, d date, m bigint, r text)),
          gone AS (DELETE FROM churn_events s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
            AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.d = s.day))
        INSERT INTO churn_events (project_id, customer_id, day, mrr_lost_minor, reason)
        SELECT ${projectId}, u.c, u.d, u.m, u.r FROM u
        ON CONFLICT (project_id, day, customer_id) DO UPDATE SET mrr_lost_minor = EXCLUDED.mrr_lost_minor, reason = EXCLUDED.reason
        WHERE (churn_events.mrr_lost_minor, churn_events.reason) IS DISTINCT FROM (EXCLUDED.mrr_lost_minor, EXCLUDED.reason)`
      yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(parts.moves.map((m) => ({
            c: m.customerId, d: m.day, mrr: m.mrrDelta, cust: m.customersDelta, nw: m.newMrrMinor, ex: m.expansionMrrMinor,
            co: m.contractionMrrMinor, ch: m.churnedMrrMinor, re: m.reactivationMrrMinor, nc: m.newCustomers, cc: m.churnedCustomers,
            rc: m.reactivatedCustomers
          })))}::jsonb) AS u(c text, d date, mrr bigint, cust integer, nw bigint, ex bigint, co bigint, ch bigint, re bigint,
            nc integer, cc integer, rc integer)),
          gone AS (DELETE FROM payments_customer_moves s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
            AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.d = s.day))
        INSERT INTO payments_customer_moves (project_id, customer_id, day, mrr_delta, customers_delta, new_mrr_minor,
          expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor, reactivation_mrr_minor, new_customers, churned_customers,
          reactivated_customers)
        SELECT ${projectId}, u.c, u.d, u.mrr, u.cust, u.nw, u.ex, u.co, u.ch, u.re, u.nc, u.cc, u.rc FROM u
        ON CONFLICT (project_id, customer_id, day) DO UPDATE SET mrr_delta = EXCLUDED.mrr_delta, customers_delta = EXCLUDED.customers_delta,
          new_mrr_minor = EXCLUDED.new_mrr_minor, expansion_mrr_minor = EXCLUDED.expansion_mrr_minor,
          contraction_mrr_minor = EXCLUDED.contraction_mrr_minor, churned_mrr_minor = EXCLUDED.churned_mrr_minor,
          reactivation_mrr_minor = EXCLUDED.reactivation_mrr_minor, new_customers = EXCLUDED.new_customers,
          churned_customers = EXCLUDED.churned_customers, reactivated_customers = EXCLUDED.reactivated_customers
        WHERE (payments_customer_moves.mrr_delta, payments_customer_moves.customers_delta, payments_customer_moves.new_mrr_minor,
            payments_customer_moves.expansion_mrr_minor, payments_customer_moves.contraction_mrr_minor,
            payments_customer_moves.churned_mrr_minor, payments_customer_moves.reactivation_mrr_minor,
            payments_customer_moves.new_customers, payments_customer_moves.churned_customers, payments_customer_moves.reactivated_customers)
          IS DISTINCT FROM (EXCLUDED.mrr_delta, EXCLUDED.customers_delta, EXCLUDED.new_mrr_minor, EXCLUDED.expansion_mrr_minor,
            EXCLUDED.contraction_mrr_minor, EXCLUDED.churned_mrr_minor, EXCLUDED.reactivation_mrr_minor, EXCLUDED.new_customers,
            EXCLUDED.churned_customers, EXCLUDED.reactivated_customers)`
      yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(parts.unconverted.map((x) => ({
            c: x.customerId, cur: x.currency, d: x.day, delta: x.delta
          })))}::jsonb) AS u(c text, cur text, d date, delta bigint)),
          gone AS (DELETE FROM payments_customer_unconverted s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
            AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.cur = s.currency AND u.d = s.day))
        INSERT INTO payments_customer_unconverted (project_id, customer_id, currency, day, delta)
        SELECT ${projectId}, u.c, u.cur, u.d, u.delta FROM u
        ON CONFLICT (project_id, customer_id, currency, day) DO UPDATE SET delta = EXCLUDED.delta
        WHERE payments_customer_unconverted.delta IS DISTINCT FROM EXCLUDED.delta`
    })

  /** Versions read in the order the parts are computed from (customer, subscription, start). */
  const partsOfRows = (
    rows: ReadonlyArray<typeof VersionRow.Type>,
    part: ReturnType<typeof customerRollup>,
    out: { readonly add: (customerId: string, part: CustomerRollup) => void }
  ) => {
    let i = 0
    while (i < rows.length) {
      const customerId = rows[i]!.customer_id
      const versions: Array<SubscriptionVersion> = []
      for (; i < rows.length && rows[i]!.customer_id === customerId; i++) versions.push(versionOf(rows[i]!))
      out.add(customerId, part(customerId, versions))
    }
  }

  /**
   * Flows ADDED to the stored ones (a full rollup adds to nothing; an incremental one adds differences); rows
   * that no longer sum any charge or refund go.
   */
  const addFlows = (projectId: string, days: ReadonlyArray<FlowDay>, unconverted: ReadonlyArray<UnconvertedFlow>) =>
    Effect.gen(function*() {
      for (const rows of chunks(days)) {
        yield* sql`INSERT INTO payments_flow_days (project_id, source, day, gross_minor, refunds_minor, failed_payments, failed_minor, items)
            SELECT ${projectId}, u.source, u.day, u.gross, u.refunds, u.failed_payments, u.failed, u.items
            FROM jsonb_to_recordset(${JSON.stringify(rows.map((f) => ({
              source: f.source, day: f.day, gross: f.grossMinor, refunds: f.refundsMinor, failed_payments: f.failedPayments,
              failed: f.failedMinor, items: f.items
            })))}::jsonb) AS u(source text, day date, gross bigint, refunds bigint, failed_payments integer, failed bigint, items integer)
            ON CONFLICT (project_id, source, day) DO UPDATE SET gross_minor = payments_flow_days.gross_minor + EXCLUDED.gross_minor,
              refunds_minor = payments_flow_days.refunds_minor + EXCLUDED.refunds_minor,
              failed_payments = payments_flow_days.failed_payments + EXCLUDED.failed_payments,
              failed_minor = payments_flow_days.failed_minor + EXCLUDED.failed_minor, items = payments_flow_days.items + EXCLUDED.items`
      }
      for (const rows of chunks(unconverted)) {
        yield* sql`INSERT INTO payments_flow_unconverted (project_id, source, currency, day, gross_minor, refunds_minor, failed_minor, items)
            SELECT ${projectId}, u.source, u.currency, u.day, u.gross, u.refunds, u.failed, u.items
            FROM jsonb_to_recordset(${JSON.stringify(rows.map((f) => ({
              source: f.source, currency: f.currency, day: f.day, gross: f.grossMinor, refunds: f.refundsMinor, failed: f.failedMinor, items: f.items
            })))}::jsonb) AS u(source text, currency text, day date, gross bigint, refunds bigint, failed bigint, items integer)
            ON CONFLICT (project_id, source, currency, day) DO UPDATE SET
              gross_minor = payments_flow_unconverted.gross_minor + EXCLUDED.gross_minor,
              refunds_minor = payments_flow_unconverted.refunds_minor + EXCLUDED.refunds_minor,
              failed_minor = payments_flow_unconverted.failed_minor + EXCLUDED.failed_minor, items = payments_flow_unconverted.items + EXCLUDED.items`
      }
      yield* sql`DELETE FROM payments_flow_days WHERE project_id = ${projectId} AND items = 0`
      yield* sql`DELETE FROM payments_flow_unconverted WHERE project_id = ${projectId} AND items = 0`
    })

  const PART_TABLES = [
    "customer_mrr", "churn_events", "payments_customer_moves", "payments_customer_unconverted", "payments_flow_days",
    "payments_flow_unconverted", "payments_rollup_dirty"
  ] as const

  /** Every part recomputed from the whole history, in bounded batches. */
  const allParts = (projectId: string, options: RollupOptions) =>
    Effect.gen(function*() {
      for (const table of PART_TABLES) yield* sql`DELETE FROM ${sql(table)} WHERE project_id = ${projectId}`
      const part = customerRollup(options)
      const out = partsWriter(projectId)
      let after: string | null = null
      for (;;) {
        const ids: ReadonlyArray<{ readonly customer_id: string }> = yield* (after === null
          ? sql`SELECT DISTINCT customer_id FROM subscription_versions WHERE project_id = ${projectId}
                ORDER BY customer_id LIMIT ${ROLLUP_CUSTOMERS}`
          : sql`SELECT DISTINCT customer_id FROM subscription_versions WHERE project_id = ${projectId}
                AND customer_id > ${after} ORDER BY customer_id LIMIT ${ROLLUP_CUSTOMERS}`).pipe(Effect.flatMap(decodeCustomerIds))
        const last: string | undefined = ids.at(-1)?.customer_id
        if (last === undefined) break
        const rows = yield* (after === null
          ? sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND customer_id <= ${last}
                ORDER BY customer_id, subscription_id, valid_from`
          : sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND customer_id > ${after}
                AND customer_id <= ${last} ORDER BY customer_id, subscription_id, valid_from`).pipe(Effect.flatMap(decodeVersions))
        partsOfRows(rows, part, out)
        yield* out.flush(false)
        after = last
      }
      yield* out.flush(true)
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
      yield* addFlows(projectId, f.days, f.unconverted)
    })

  /** The parts the commits since the last rollup marked dirty, recomputed. */
  const dirtyParts = (projectId: string, options: RollupOptions) =>
    Effect.gen(function*() {
      const dirty = yield* sql`DELETE FROM payments_rollup_dirty WHERE project_id = ${projectId} RETURNING kind, key, old`.pipe(
        Effect.flatMap(decodeDirty)
      )
      const customers = dirty.filter((d) => d.kind === "customer").map((d) => d.key).sort()
      const part = customerRollup(options)
      for (let i = 0; i < customers.length; i += ROLLUP_CUSTOMERS) {
        const ids = customers.slice(i, i + ROLLUP_CUSTOMERS)
        const rows = yield* sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND customer_id = ANY(${ids})
            ORDER BY customer_id, subscription_id, valid_from`.pipe(Effect.flatMap(decodeVersions))
        const out = partsCollector()
        partsOfRows(rows, part, out)
        yield* replacePartsOf(projectId, ids, out)
      }
      // Each dirty charge (refund): its contribution now added, the one it had at the last rollup taken away.
      const flows = flowsAccumulator(options)
      const charges = dirty.filter((d) => d.kind === "charge")
      for (let i = 0; i < charges.length; i += CHUNK) {
        const rows = yield* sql`SELECT * FROM charges WHERE project_id = ${projectId}
            AND id = ANY(${charges.slice(i, i + CHUNK).map((d) => d.key)})`.pipe(Effect.flatMap(decodeCharges))
        for (const r of rows) flows.charge(chargeOf(r))
      }
      const refunds = dirty.filter((d) => d.kind === "refund")
      for (let i = 0; i < refunds.length; i += CHUNK) {
        const rows = yield* sql`SELECT * FROM refunds WHERE project_id = ${projectId}
            AND id = ANY(${refunds.slice(i, i + CHUNK).map((d) => d.key)})`.pipe(Effect.flatMap(decodeRefunds))
        for (const r of rows) flows.refund(refundOf(r))
      }
      for (const d of [...charges, ...refunds]) {
        if (d.old === null) continue
        const decoded = decodeOldFlow(d.old)
        if (Result.isFailure(decoded)) return yield* Effect.die(new CorruptRow({ table: "payments_rollup_dirty", reason: decoded.failure.message }))
        const old = decoded.success
        const at = new Date(old.at).toISOString()
        if (d.kind === "charge") {
          flows.charge({ id: d.key, customerId: "", at, amountMinor: old.amount_minor, currency: old.currency, status: old.status ?? "succeeded" }, -1)
        } else flows.refund({ id: d.key, chargeId: "", at, amountMinor: old.amount_minor, currency: old.currency }, -1)
      }
      const f = flows.finish()
      yield* addFlows(projectId, f.days, f.unconverted)
    })

  /** revenue_daily and revenue_unconverted_daily re-assembled from the stored parts. */
  const writeDays = (projectId: string) =>
    Effect.gen(function*() {
      const moves = yield* sql`SELECT day, sum(mrr_delta) AS mrr_delta, sum(customers_delta) AS customers_delta,
            sum(new_mrr_minor) AS new_mrr_minor, sum(expansion_mrr_minor) AS expansion_mrr_minor,
            sum(contraction_mrr_minor) AS contraction_mrr_minor, sum(churned_mrr_minor) AS churned_mrr_minor,
            sum(reactivation_mrr_minor) AS reactivation_mrr_minor, sum(new_customers) AS new_customers,
            sum(churned_customers) AS churned_customers, sum(reactivated_customers) AS reactivated_customers
          FROM payments_customer_moves WHERE project_id = ${projectId} GROUP BY day`.pipe(Effect.flatMap(decodeMoveSums))
      const flows = yield* sql`SELECT source, day, gross_minor, refunds_minor, failed_payments, failed_minor, items FROM payments_flow_days
          WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeFlowDays))
      const unconvertedMoves = yield* sql`SELECT currency, day, sum(delta) AS delta FROM payments_customer_unconverted
          WHERE project_id = ${projectId} GROUP BY currency, day`.pipe(Effect.flatMap(decodeUnconvertedSums))
      const unconvertedFlows = yield* sql`SELECT source, currency, day, gross_minor, refunds_minor, failed_minor, items FROM payments_flow_unconverted
          WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeFlowUnconverted))
      const out = assembleDays(
        moves.map((m): CustomerMove => ({
          day: m.day, mrrDelta: Number(m.mrr_delta), customersDelta: Number(m.customers_delta), newMrrMinor: Number(m.new_mrr_minor),
          expansionMrrMinor: Number(m.expansion_mrr_minor), contractionMrrMinor: Number(m.contraction_mrr_minor),
          churnedMrrMinor: Number(m.churned_mrr_minor), reactivationMrrMinor: Number(m.reactivation_mrr_minor),
          newCustomers: Number(m.new_customers), churnedCustomers: Number(m.churned_customers), reactivatedCustomers: Number(m.reactivated_customers)
        })),
        flows.map((f): FlowDay => ({
          source: f.source, day: f.day, grossMinor: Number(f.gross_minor), refundsMinor: Number(f.refunds_minor), failedPayments: Number(f.failed_payments),
          failedMinor: Number(f.failed_minor), items: Number(f.items)
        })),
        unconvertedMoves.map((u): UnconvertedMove => ({ currency: u.currency, day: u.day, delta: Number(u.delta) })),
        unconvertedFlows.map((f): UnconvertedFlow => ({
          source: f.source, currency: f.currency, day: f.day, grossMinor: Number(f.gross_minor), refundsMinor: Number(f.refunds_minor),
          failedMinor: Number(f.failed_minor), items: Number(f.items)
        }))
      )
      yield* sql`DELETE FROM revenue_daily WHERE project_id = ${projectId}`
      yield* sql`DELETE FROM revenue_unconverted_daily WHERE project_id = ${projectId}`
      for (const rows of chunks(out.revenueDays)) {
        yield* sql`INSERT INTO revenue_daily ${insertRows(rows, (r) => revenueColumns(projectId, r))}`
      }
      for (const rows of chunks(out.unconverted)) {
        yield* sql`INSERT INTO revenue_unconverted_daily ${insertRows(rows, (u) => ({
          project_id: projectId, currency: u.currency, day: u.day, mrr_minor: u.mrrMinor, gross_minor: u.grossMinor,
          refunds_minor: u.refundsMinor, failed_minor: u.failedMinor
        }))}`
      }
    })

  /**
   * The rollup, inside the caller's transaction: data_version bumped first (its row lock serialises concurrent
   * writes of the project, so each rollup sees every fact committed before it), parts recomputed — all of
   * them when `full` or when the stored basis differs, else the dirty ones — and the day rows re-assembled.
   */
  const rollUpIn = (projectId: string, rates: ReadonlyArray<FxRate>, full: boolean) =>
    Effect.gen(function*() {
      const project = yield* sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}
          RETURNING timezone, currency`.pipe(Effect.flatMap(decodeProject))
      // Callers write payments of a project they just found (sync, seed): its absence is a bug.
      if (project === null) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
      const options: RollupOptions = { timezone: project.timezone, currency: project.currency, rates }
      const basis = basisOf(project.timezone, project.currency, rates)
      const stored = full ? null : yield* sql`SELECT timezone, currency, rates FROM payments_rollup_basis
          WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeBasis))
      if (stored !== null && stored.timezone === basis.timezone && stored.currency === basis.currency && stored.rates === basis.rates) {
        yield* dirtyParts(projectId, options)
      } else {
        yield* allParts(projectId, options)
        yield* sql`INSERT INTO payments_rollup_basis (project_id, timezone, currency, rates)
            VALUES (${projectId}, ${basis.timezone}, ${basis.currency}, ${basis.rates})
            ON CONFLICT (project_id) DO UPDATE SET timezone = EXCLUDED.timezone, currency = EXCLUDED.currency, rates = EXCLUDED.rates`
      }
      yield* writeDays(projectId)
    })

  /**
   * Inside a commit's transaction, BEFORE its facts are written: marks what they change for the next
   * incremental rollup — the customers of the versions upserted (before and after), the charges and refunds
   * upserted or removed with their rows as they are now (a charge already dirty keeps the row it had at the
   * last rollup: what the stored flows hold). A charge or refund stored exactly as it comes again is not
   * marked: the upsert leaves it as it is. (Versions replaced by difference mark their own customers:
   * PaymentsRepo's replaceVersions.)
   */
  const markDirty = (projectId: string, facts: Partial<PaymentsData>, removeRefunds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const subs = [...new Set((facts.subscriptionVersions ?? []).map((v) => v.subscriptionId))]
      for (let i = 0; i < subs.length; i += CHUNK) {
        yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key)
            SELECT DISTINCT ${projectId}, 'customer', customer_id FROM subscription_versions
            WHERE project_id = ${projectId} AND subscription_id = ANY(${subs.slice(i, i + CHUNK)})
            ON CONFLICT DO NOTHING`
      }
      const customers = [...new Set((facts.subscriptionVersions ?? []).map((v) => v.customerId))]
      for (let i = 0; i < customers.length; i += CHUNK) {
        yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key)
            SELECT ${projectId}, 'customer', u.id FROM unnest(${customers.slice(i, i + CHUNK)}::text[]) AS u(id)
            ON CONFLICT DO NOTHING`
      }
      for (const rows of chunks(facts.charges ?? [])) {
        yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key, old)
            SELECT ${projectId}, 'charge', u.id, CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object('at', c.at,
                'amount_minor', c.amount_minor, 'currency', c.currency, 'status', c.status) END
            FROM jsonb_to_recordset(${JSON.stringify(rows.map((c) => ({
              id: c.id, c: c.customerId, at: c.at, amt: c.amountMinor, cur: c.currency.toUpperCase(), st: c.status
            })))}::jsonb) AS u(id text, c text, at timestamptz, amt bigint, cur text, st text)
            LEFT JOIN charges c ON c.project_id = ${projectId} AND c.id = u.id
            WHERE c.id IS NULL OR (c.customer_id, c.at, c.amount_minor, c.currency, c.status) IS DISTINCT FROM (u.c, u.at, u.amt, u.cur, u.st)
            ON CONFLICT DO NOTHING`
      }
      for (const rows of chunks(facts.refunds ?? [])) {
        yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key, old)
            SELECT ${projectId}, 'refund', u.id, CASE WHEN r.id IS NULL THEN NULL ELSE jsonb_build_object('at', r.at,
                'amount_minor', r.amount_minor, 'currency', r.currency) END
            FROM jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({
              id: r.id, ch: r.chargeId, at: r.at, amt: r.amountMinor, cur: r.currency.toUpperCase()
            })))}::jsonb) AS u(id text, ch text, at timestamptz, amt bigint, cur text)
            LEFT JOIN refunds r ON r.project_id = ${projectId} AND r.id = u.id
            WHERE r.id IS NULL OR (r.charge_id, r.at, r.amount_minor, r.currency) IS DISTINCT FROM (u.ch, u.at, u.amt, u.cur)
            ON CONFLICT DO NOTHING`
      }
      // A removed refund that is not stored changes nothing.
      const gone = [...new Set(removeRefunds)]
      for (let i = 0; i < gone.length; i += CHUNK) {
        yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key, old)
            SELECT ${projectId}, 'refund', r.id, jsonb_build_object('at', r.at, 'amount_minor', r.amount_minor, 'currency', r.currency)
            FROM refunds r WHERE r.project_id = ${projectId} AND r.id = ANY(${gone.slice(i, i + CHUNK)})
            ON CONFLICT DO NOTHING`
      }
    })

  /** A commit that changes facts without marking them: the stored parts can no longer be trusted. */
  const forgetBasis = (projectId: string) => sql`DELETE FROM payments_rollup_basis WHERE project_id = ${projectId}`

  return { rollUpIn, markDirty, forgetBasis }
}
