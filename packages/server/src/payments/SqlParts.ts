/**
 * The stored parts of the payments rollup on PostgreSQL (IncrementalMigration.ts): each customer's
 * (customer_mrr, churn_events, payments_customer_moves, payments_customer_unconverted) and each local day's
 * flows (payments_flow_days, payments_flow_unconverted). A full rollup streams every customer's part through
 * `partsWriter`; an incremental one replaces some customers' parts by difference (`replacePartsOf`); both add
 * flows (`addFlows`). SqlRollup.ts decides which.
 *
 * Rows travel as ONE JSON parameter per statement (jsonb_to_recordset, as PaymentsFacts.ts's upserts): one
 * statement text per table, and no parameter per value.
 */
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { CHUNK, chunks } from "../store/Chunks.ts"
import type { ChurnEvent } from "../store/Series.ts"
import type {
  CustomerMove,
  CustomerMrrSpan,
  CustomerRollup,
  FlowDay,
  UnconvertedFlow,
  UnconvertedMove
} from "./RollupParts.ts"

/** Receives customers' parts as they are computed. */
export interface PartsSink {
  readonly add: (customerId: string, part: CustomerRollup) => void
}

type Moved<A> = A & { readonly customerId: string }

/** Customers' parts, row by row per table. */
interface PartRows extends PartsSink {
  readonly spans: Array<CustomerMrrSpan>
  readonly churn: Array<ChurnEvent>
  readonly moves: Array<Moved<CustomerMove>>
  readonly unconverted: Array<Moved<UnconvertedMove>>
}

const partRows = (): PartRows => {
  const spans: Array<CustomerMrrSpan> = []
  const churn: Array<ChurnEvent> = []
  const moves: Array<Moved<CustomerMove>> = []
  const unconverted: Array<Moved<UnconvertedMove>> = []
  const add = (customerId: string, part: CustomerRollup) => {
    for (const x of part.spans) spans.push(x)
    for (const e of part.churnEvents) churn.push(e)
    for (const m of part.moves) moves.push({ ...m, customerId })
    for (const u of part.unconvertedMoves) unconverted.push({ ...u, customerId })
  }
  return { add, spans, churn, moves, unconverted }
}

// The rows as the JSON parameter each table's statement reads (its column list next to it).
const spansJson = (rows: ReadonlyArray<CustomerMrrSpan>) =>
  JSON.stringify(rows.map((x) => ({ c: x.customerId, f: x.fromDay, t: x.toDay, m: x.mrrMinor })))
const churnJson = (rows: ReadonlyArray<ChurnEvent>) =>
  JSON.stringify(rows.map((e) => ({ c: e.customerId, d: e.day, m: e.mrrLostMinor, r: e.reason })))
const movesJson = (rows: ReadonlyArray<Moved<CustomerMove>>) =>
  JSON.stringify(rows.map((m) => ({
    c: m.customerId,
    d: m.day,
    mrr: m.mrrDelta,
    cust: m.customersDelta,
    nw: m.newMrrMinor,
    ex: m.expansionMrrMinor,
    co: m.contractionMrrMinor,
    ch: m.churnedMrrMinor,
    re: m.reactivationMrrMinor,
    nc: m.newCustomers,
    cc: m.churnedCustomers,
    rc: m.reactivatedCustomers
  })))
const unconvertedJson = (rows: ReadonlyArray<Moved<UnconvertedMove>>) =>
  JSON.stringify(rows.map((x) => ({ c: x.customerId, cur: x.currency, d: x.day, delta: x.delta })))

/**
 * A full rollup's writer: customer parts kept until CHUNK rows of one kind are waiting, then inserted CHUNK
 * rows at a time (the rest waits for the next flush).
 */
export const partsWriter = (sql: SqlClient.SqlClient, projectId: string) => {
  const rows = partRows()
  const take = <A>(list: Array<A>, all: boolean): Array<Arr.NonEmptyReadonlyArray<A>> => {
    const n = all ? list.length : list.length - (list.length % CHUNK)
    return n === 0 ? [] : chunks(list.splice(0, n))
  }
  const flush = Effect.fnUntraced(function*(all: boolean) {
    for (const chunk of take(rows.spans, all)) {
      yield* sql`INSERT INTO customer_mrr (project_id, customer_id, from_day, to_day, mrr_minor)
          SELECT ${projectId}, u.c, u.f, u.t, u.m
          FROM jsonb_to_recordset(${spansJson(chunk)}::jsonb) AS u(c text, f date, t date, m bigint)`
    }
    for (const chunk of take(rows.churn, all)) {
      yield* sql`INSERT INTO churn_events (project_id, customer_id, day, mrr_lost_minor, reason)
          SELECT ${projectId}, u.c, u.d, u.m, u.r
          FROM jsonb_to_recordset(${churnJson(chunk)}::jsonb) AS u(c text, d date, m bigint, r text)`
    }
    for (const chunk of take(rows.moves, all)) {
      yield* sql`INSERT INTO payments_customer_moves (project_id, customer_id, day, mrr_delta, customers_delta,
            new_mrr_minor, expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor, reactivation_mrr_minor,
            new_customers, churned_customers, reactivated_customers)
          SELECT ${projectId}, u.c, u.d, u.mrr, u.cust, u.nw, u.ex, u.co, u.ch, u.re, u.nc, u.cc, u.rc
          FROM jsonb_to_recordset(${movesJson(chunk)}::jsonb) AS u(c text, d date, mrr bigint, cust integer,
            nw bigint, ex bigint, co bigint, ch bigint, re bigint, nc integer, cc integer, rc integer)`
    }
    for (const chunk of take(rows.unconverted, all)) {
      yield* sql`INSERT INTO payments_customer_unconverted (project_id, customer_id, currency, day, delta)
          SELECT ${projectId}, u.c, u.cur, u.d, u.delta
          FROM jsonb_to_recordset(${unconvertedJson(chunk)}::jsonb) AS u(c text, cur text, d date, delta bigint)`
    }
  })
  return { add: rows.add, flush }
}

/** Some customers' parts, all of them in memory (an incremental rollup's chunk of customers). */
export const partsCollector = (): PartRows => partRows()

/**
 * The stored parts of these customers become exactly `parts`, BY DIFFERENCE, one statement per table: a stored
 * row whose key is not among the new rows is deleted, a new row is inserted, a changed one updated, and a row
 * stored as it comes again is not written at all (a renewal at an unchanged price leaves its customer's spans
 * and moves as they are). The delete and the upsert touch disjoint keys.
 */
export const replacePartsOf = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  projectId: string,
  ids: ReadonlyArray<string>,
  parts: PartRows
) {
  yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${spansJson(parts.spans)}::jsonb)
        AS u(c text, f date, t date, m bigint)),
      gone AS (DELETE FROM customer_mrr s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
        AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.f = s.from_day))
    INSERT INTO customer_mrr (project_id, customer_id, from_day, to_day, mrr_minor)
    SELECT ${projectId}, u.c, u.f, u.t, u.m FROM u
    ON CONFLICT (project_id, customer_id, from_day) DO UPDATE SET to_day = EXCLUDED.to_day,
      mrr_minor = EXCLUDED.mrr_minor
    WHERE (customer_mrr.to_day, customer_mrr.mrr_minor) IS DISTINCT FROM (EXCLUDED.to_day, EXCLUDED.mrr_minor)`
  yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${churnJson(parts.churn)}::jsonb)
        AS u(c text, d date, m bigint, r text)),
      gone AS (DELETE FROM churn_events s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
        AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.d = s.day))
    INSERT INTO churn_events (project_id, customer_id, day, mrr_lost_minor, reason)
    SELECT ${projectId}, u.c, u.d, u.m, u.r FROM u
    ON CONFLICT (project_id, day, customer_id) DO UPDATE SET mrr_lost_minor = EXCLUDED.mrr_lost_minor,
      reason = EXCLUDED.reason
    WHERE (churn_events.mrr_lost_minor, churn_events.reason)
      IS DISTINCT FROM (EXCLUDED.mrr_lost_minor, EXCLUDED.reason)`
  yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${movesJson(parts.moves)}::jsonb)
        AS u(c text, d date, mrr bigint, cust integer, nw bigint, ex bigint, co bigint, ch bigint, re bigint,
          nc integer, cc integer, rc integer)),
      gone AS (DELETE FROM payments_customer_moves s WHERE s.project_id = ${projectId} AND s.customer_id = ANY(${ids})
        AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.d = s.day))
    INSERT INTO payments_customer_moves (project_id, customer_id, day, mrr_delta, customers_delta, new_mrr_minor,
      expansion_mrr_minor, contraction_mrr_minor, churned_mrr_minor, reactivation_mrr_minor, new_customers,
      churned_customers, reactivated_customers)
    SELECT ${projectId}, u.c, u.d, u.mrr, u.cust, u.nw, u.ex, u.co, u.ch, u.re, u.nc, u.cc, u.rc FROM u
    ON CONFLICT (project_id, customer_id, day) DO UPDATE SET mrr_delta = EXCLUDED.mrr_delta,
      customers_delta = EXCLUDED.customers_delta, new_mrr_minor = EXCLUDED.new_mrr_minor,
      expansion_mrr_minor = EXCLUDED.expansion_mrr_minor, contraction_mrr_minor = EXCLUDED.contraction_mrr_minor,
      churned_mrr_minor = EXCLUDED.churned_mrr_minor, reactivation_mrr_minor = EXCLUDED.reactivation_mrr_minor,
      new_customers = EXCLUDED.new_customers, churned_customers = EXCLUDED.churned_customers,
      reactivated_customers = EXCLUDED.reactivated_customers
    WHERE (payments_customer_moves.mrr_delta, payments_customer_moves.customers_delta,
        payments_customer_moves.new_mrr_minor, payments_customer_moves.expansion_mrr_minor,
        payments_customer_moves.contraction_mrr_minor, payments_customer_moves.churned_mrr_minor,
        payments_customer_moves.reactivation_mrr_minor, payments_customer_moves.new_customers,
        payments_customer_moves.churned_customers, payments_customer_moves.reactivated_customers)
      IS DISTINCT FROM (EXCLUDED.mrr_delta, EXCLUDED.customers_delta, EXCLUDED.new_mrr_minor,
        EXCLUDED.expansion_mrr_minor, EXCLUDED.contraction_mrr_minor, EXCLUDED.churned_mrr_minor,
        EXCLUDED.reactivation_mrr_minor, EXCLUDED.new_customers, EXCLUDED.churned_customers,
        EXCLUDED.reactivated_customers)`
  yield* sql`WITH u AS (SELECT * FROM jsonb_to_recordset(${unconvertedJson(parts.unconverted)}::jsonb)
        AS u(c text, cur text, d date, delta bigint)),
      gone AS (DELETE FROM payments_customer_unconverted s WHERE s.project_id = ${projectId}
        AND s.customer_id = ANY(${ids})
        AND NOT EXISTS (SELECT 1 FROM u WHERE u.c = s.customer_id AND u.cur = s.currency AND u.d = s.day))
    INSERT INTO payments_customer_unconverted (project_id, customer_id, currency, day, delta)
    SELECT ${projectId}, u.c, u.cur, u.d, u.delta FROM u
    ON CONFLICT (project_id, customer_id, currency, day) DO UPDATE SET delta = EXCLUDED.delta
    WHERE payments_customer_unconverted.delta IS DISTINCT FROM EXCLUDED.delta`
})

/**
 * Flows ADDED to the stored ones (a full rollup adds to nothing; an incremental one adds differences); rows
 * that no longer sum any charge or refund go.
 */
export const addFlows = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  projectId: string,
  days: ReadonlyArray<FlowDay>,
  unconverted: ReadonlyArray<UnconvertedFlow>
) {
  for (const rows of chunks(days)) {
    const json = JSON.stringify(rows.map((f) => ({
      source: f.source,
      day: f.day,
      gross: f.grossMinor,
      refunds: f.refundsMinor,
      failed_payments: f.failedPayments,
      failed: f.failedMinor,
      items: f.items
    })))
    yield* sql`INSERT INTO payments_flow_days (project_id, source, day, gross_minor, refunds_minor, failed_payments,
          failed_minor, items)
        SELECT ${projectId}, u.source, u.day, u.gross, u.refunds, u.failed_payments, u.failed, u.items
        FROM jsonb_to_recordset(${json}::jsonb) AS u(source text, day date, gross bigint, refunds bigint,
          failed_payments integer, failed bigint, items integer)
        ON CONFLICT (project_id, source, day) DO UPDATE SET
          gross_minor = payments_flow_days.gross_minor + EXCLUDED.gross_minor,
          refunds_minor = payments_flow_days.refunds_minor + EXCLUDED.refunds_minor,
          failed_payments = payments_flow_days.failed_payments + EXCLUDED.failed_payments,
          failed_minor = payments_flow_days.failed_minor + EXCLUDED.failed_minor,
          items = payments_flow_days.items + EXCLUDED.items`
  }
  for (const rows of chunks(unconverted)) {
    const json = JSON.stringify(rows.map((f) => ({
      source: f.source,
      currency: f.currency,
      day: f.day,
      gross: f.grossMinor,
      refunds: f.refundsMinor,
      failed: f.failedMinor,
      items: f.items
    })))
    yield* sql`INSERT INTO payments_flow_unconverted (project_id, source, currency, day, gross_minor, refunds_minor,
          failed_minor, items)
        SELECT ${projectId}, u.source, u.currency, u.day, u.gross, u.refunds, u.failed, u.items
        FROM jsonb_to_recordset(${json}::jsonb) AS u(source text, currency text, day date, gross bigint,
          refunds bigint, failed bigint, items integer)
        ON CONFLICT (project_id, source, currency, day) DO UPDATE SET
          gross_minor = payments_flow_unconverted.gross_minor + EXCLUDED.gross_minor,
          refunds_minor = payments_flow_unconverted.refunds_minor + EXCLUDED.refunds_minor,
          failed_minor = payments_flow_unconverted.failed_minor + EXCLUDED.failed_minor,
          items = payments_flow_unconverted.items + EXCLUDED.items`
  }
  yield* sql`DELETE FROM payments_flow_days WHERE project_id = ${projectId} AND items = 0`
  yield* sql`DELETE FROM payments_flow_unconverted WHERE project_id = ${projectId} AND items = 0`
})

const PART_TABLES = [
  "customer_mrr",
  "churn_events",
  "payments_customer_moves",
  "payments_customer_unconverted",
  "payments_flow_days",
  "payments_flow_unconverted",
  "payments_rollup_dirty"
] as const

/** Every stored part of the project, and its marks, deleted: a full rollup starts from nothing. */
export const deleteParts = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, projectId: string) {
  for (const table of PART_TABLES) yield* sql`DELETE FROM ${sql(table)} WHERE project_id = ${projectId}`
})
