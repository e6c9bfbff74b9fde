/**
 * The payments FACTS on PostgreSQL — customers, subscription versions, charges and refunds, upserted by
 * provider id — and the rollup over them (SqlRollup.ts): PaymentsRepo's `write`, `rebuild`, `rollUp` and
 * `projectsWithPaymentsIn`, and the facts of a sync's `commit` (`commitFacts`, which PaymentsRepo.ts runs in
 * one transaction with the batch's staging, PaymentsStaging.ts).
 *
 * Upserts are one statement per table and chunk whatever the row count: the rows travel as ONE JSON parameter
 * read by jsonb_to_recordset, so the statement text (and the prepared statement Postgres and the driver keep
 * for it) is the same for every batch — a multi-row VALUES list is a new statement for every batch size,
 * which a streaming sync's thousands of batches made slow and memory-hungry.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { FxRepo } from "../fx/FxRepo.ts"
import { chunks } from "../store/Chunks.ts"
import { dieOnSqlError, rowsOf } from "../store/Sql.ts"
import { commitTracking, marksOf, splitVersions } from "./DirtyTracking.ts"
import type { PaymentsBatch, PaymentsRepoShape } from "./PaymentsShape.ts"
import { forgetBasis, keepMarks, markBatch } from "./SqlDirty.ts"
import { rollUpIn } from "./SqlRollup.ts"
import { decodeVersions, versionOf } from "./SqlRows.ts"
import type { PaymentsData, SubscriptionVersion } from "./Types.ts"
import { versionsDiff } from "./VersionsDiff.ts"

const decodeProjectIds = rowsOf("subscription_versions, charges", Schema.Struct({ project_id: Schema.String }))

const versionsJson = (rows: ReadonlyArray<SubscriptionVersion>) =>
  JSON.stringify(rows.map((v) => ({
    s: v.subscriptionId,
    c: v.customerId,
    f: v.validFrom,
    t: v.validTo,
    st: v.status,
    cur: v.currency.toUpperCase(),
    unit: v.unitAmountMinor,
    q: v.quantity,
    i: v.interval,
    ic: v.intervalCount,
    pct: v.discountPercentOff,
    amt: v.discountAmountOffMinor,
    r: v.cancelReason
  })))

/** Upserts versions (a stored version equal to the new one is left as it is: no new row version, no index entries). */
const upsertVersions = (sql: SqlClient.SqlClient, projectId: string, rows: ReadonlyArray<SubscriptionVersion>) =>
  sql`INSERT INTO subscription_versions (project_id, subscription_id, customer_id, valid_from, valid_to, status,
      currency, unit_amount_minor, quantity, interval, interval_count, discount_percent_off, discount_amount_off_minor,
      cancel_reason)
    SELECT ${projectId}, u.s, u.c, u.f, u.t, u.st, u.cur, u.unit, u.q, u.i, u.ic, u.pct, u.amt, u.r
    FROM jsonb_to_recordset(${versionsJson(rows)}::jsonb) AS u(s text, c text, f timestamptz, t timestamptz, st text,
      cur text, unit bigint, q integer, i text, ic integer, pct numeric, amt bigint, r text)
    ON CONFLICT (project_id, subscription_id, valid_from) DO UPDATE SET customer_id = EXCLUDED.customer_id,
      valid_to = EXCLUDED.valid_to, status = EXCLUDED.status, currency = EXCLUDED.currency,
      unit_amount_minor = EXCLUDED.unit_amount_minor, quantity = EXCLUDED.quantity, interval = EXCLUDED.interval,
      interval_count = EXCLUDED.interval_count, discount_percent_off = EXCLUDED.discount_percent_off,
      discount_amount_off_minor = EXCLUDED.discount_amount_off_minor, cancel_reason = EXCLUDED.cancel_reason
    WHERE (subscription_versions.customer_id, subscription_versions.valid_to, subscription_versions.status,
        subscription_versions.currency, subscription_versions.unit_amount_minor, subscription_versions.quantity,
        subscription_versions.interval, subscription_versions.interval_count,
        subscription_versions.discount_percent_off,
        subscription_versions.discount_amount_off_minor, subscription_versions.cancel_reason)
      IS DISTINCT FROM (EXCLUDED.customer_id, EXCLUDED.valid_to, EXCLUDED.status, EXCLUDED.currency,
        EXCLUDED.unit_amount_minor, EXCLUDED.quantity, EXCLUDED.interval, EXCLUDED.interval_count,
        EXCLUDED.discount_percent_off, EXCLUDED.discount_amount_off_minor, EXCLUDED.cancel_reason)`

/** Upserts the facts by provider id; a row stored as it comes again is not rewritten. */
const upsertFacts = Effect.fnUntraced(
  function*(sql: SqlClient.SqlClient, projectId: string, data: Partial<PaymentsData>) {
    for (const rows of chunks(data.customers ?? [])) {
      const json = JSON.stringify(
        rows.map((c) => ({ id: c.id, created_at: c.createdAt, name: c.name ?? null, email: c.email ?? null }))
      )
      yield* sql`INSERT INTO customers (project_id, id, created_at, name, email)
      SELECT ${projectId}, u.id, u.created_at, u.name, u.email
      FROM jsonb_to_recordset(${json}::jsonb) AS u(id text, created_at timestamptz, name text, email text)
      ON CONFLICT (project_id, id) DO UPDATE SET created_at = EXCLUDED.created_at, name = EXCLUDED.name,
        email = EXCLUDED.email
      WHERE (customers.created_at, customers.name, customers.email)
        IS DISTINCT FROM (EXCLUDED.created_at, EXCLUDED.name, EXCLUDED.email)`
    }
    for (const rows of chunks(data.subscriptionVersions ?? [])) yield* upsertVersions(sql, projectId, rows)
    for (const rows of chunks(data.charges ?? [])) {
      const json = JSON.stringify(rows.map((c) => ({
        id: c.id,
        c: c.customerId,
        at: c.at,
        amt: c.amountMinor,
        cur: c.currency.toUpperCase(),
        st: c.status
      })))
      yield* sql`INSERT INTO charges (project_id, id, customer_id, at, amount_minor, currency, status)
      SELECT ${projectId}, u.id, u.c, u.at, u.amt, u.cur, u.st
      FROM jsonb_to_recordset(${json}::jsonb) AS u(id text, c text, at timestamptz, amt bigint, cur text, st text)
      ON CONFLICT (project_id, id) DO UPDATE SET customer_id = EXCLUDED.customer_id, at = EXCLUDED.at,
        amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency, status = EXCLUDED.status
      WHERE (charges.customer_id, charges.at, charges.amount_minor, charges.currency, charges.status)
        IS DISTINCT FROM (EXCLUDED.customer_id, EXCLUDED.at, EXCLUDED.amount_minor, EXCLUDED.currency, EXCLUDED.status)`
    }
    for (const rows of chunks(data.refunds ?? [])) {
      const json = JSON.stringify(rows.map((r) => ({
        id: r.id,
        ch: r.chargeId,
        at: r.at,
        amt: r.amountMinor,
        cur: r.currency.toUpperCase()
      })))
      yield* sql`INSERT INTO refunds (project_id, id, charge_id, at, amount_minor, currency)
      SELECT ${projectId}, u.id, u.ch, u.at, u.amt, u.cur
      FROM jsonb_to_recordset(${json}::jsonb) AS u(id text, ch text, at timestamptz, amt bigint, cur text)
      ON CONFLICT (project_id, id) DO UPDATE SET charge_id = EXCLUDED.charge_id, at = EXCLUDED.at,
        amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency
      WHERE (refunds.charge_id, refunds.at, refunds.amount_minor, refunds.currency)
        IS DISTINCT FROM (EXCLUDED.charge_id, EXCLUDED.at, EXCLUDED.amount_minor, EXCLUDED.currency)`
    }
  }
)

/**
 * The versions of these subscriptions become exactly `versions`, BY DIFFERENCE, worked out in the process:
 * per CHUNK subscriptions their stored versions are read (one index range per subscription), and only what
 * differs is sent — stored versions whose start is no longer a start deleted, new or changed ones upserted; the
 * others are not written at all (a renewal appends a version and ends the one before it: two rows, not the
 * subscription's whole history, and not every version sent for Postgres to compare). With `track`, the
 * customers of the subscriptions whose versions did change are marked (DirtyTracking rule 2): a subscription
 * whose versions came out the same marks nothing. The caller's transaction holds the read and the writes
 * together.
 */
const none = () => undefined

const replaceVersions = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  projectId: string,
  subscriptions: ReadonlyArray<string>,
  versions: ReadonlyArray<SubscriptionVersion>,
  track: boolean
) {
  const bySub = new Map<string, Array<SubscriptionVersion>>()
  for (const v of versions) {
    const list = bySub.get(v.subscriptionId)
    if (list === undefined) bySub.set(v.subscriptionId, [v])
    else list.push(v)
  }
  for (const ids of chunks([...new Set(subscriptions)])) {
    const rows = yield* sql`SELECT * FROM subscription_versions
        WHERE project_id = ${projectId} AND subscription_id = ANY(${ids})`.pipe(Effect.flatMap(decodeVersions))
    const stored = rows.map(versionOf)
    const next = ids.flatMap((id) => bySub.get(id) ?? [])
    const { changedSubscriptions, gone, put } = versionsDiff(stored, next)
    if (changedSubscriptions.size === 0) continue
    if (gone.length > 0) {
      const json = JSON.stringify(gone.map((g) => ({ s: g.subscriptionId, f: g.validFrom })))
      yield* sql`DELETE FROM subscription_versions v
        USING jsonb_to_recordset(${json}::jsonb) AS g(s text, f timestamptz)
        WHERE v.project_id = ${projectId} AND v.subscription_id = g.s AND v.valid_from = g.f`
    }
    for (const rows of chunks(put)) yield* upsertVersions(sql, projectId, rows)
    if (track) {
      const slice = { replaceVersionsOf: ids, facts: { subscriptionVersions: next } }
      yield* keepMarks(sql, projectId, marksOf(slice, { versions: stored, charge: none, refund: none }))
    }
  }
})

/**
 * The facts of one sync batch, inside the commit's transaction: what they change marked for the next rollup
 * (or the basis forgotten: DirtyTracking rule 1) BEFORE they are written, then the replaced subscriptions'
 * versions written by difference, the other facts upserted and the removed refunds deleted.
 */
export const commitFacts = Effect.fnUntraced(
  function*(sql: SqlClient.SqlClient, projectId: string, batch: PaymentsBatch) {
    const { replaced, upserted } = splitVersions(batch)
    const facts = { ...batch.facts, subscriptionVersions: upserted }
    const removeRefunds = batch.removeRefunds ?? []
    const tracking = commitTracking(batch)
    if (tracking === "mark") yield* markBatch(sql, projectId, batch)
    else if (tracking === "forgetBasis") yield* forgetBasis(sql, projectId)
    const replace = batch.replaceVersionsOf ?? []
    if (replace.length > 0) yield* replaceVersions(sql, projectId, replace, replaced, tracking === "mark")
    yield* upsertFacts(sql, projectId, facts)
    for (const ids of chunks(removeRefunds)) {
      yield* sql`DELETE FROM refunds WHERE project_id = ${projectId} AND id = ANY(${ids})`
    }
  }
)

/** The repository's methods on the facts: writes with their rollup, and which projects hold which currencies. */
export const makePaymentsFacts = (
  sql: SqlClient.SqlClient,
  fx: FxRepo["Service"]
): Pick<PaymentsRepoShape, "write" | "rebuild" | "rollUp" | "projectsWithPaymentsIn"> => ({
  write: Effect.fn("PaymentsRepo.write")(function*(projectId: string, data: Partial<PaymentsData>) {
    yield* sql.withTransaction(Effect.gen(function*() {
      // The project row is locked by the bump before the facts change (rollUpIn bumps first; the upsert
      // of facts no one reads until the rollup may come before it in the same transaction).
      yield* sql`SELECT 1 FROM projects WHERE id = ${projectId} FOR UPDATE`
      yield* upsertFacts(sql, projectId, data)
      yield* rollUpIn(sql, projectId, yield* fx.all(), true)
    }))
  }, dieOnSqlError),
  rebuild: Effect.fn("PaymentsRepo.rebuild")(function*(projectId: string) {
    yield* sql.withTransaction(Effect.flatMap(fx.all(), (rates) => rollUpIn(sql, projectId, rates, true)))
  }, dieOnSqlError),
  rollUp: Effect.fn("PaymentsRepo.rollUp")(function*(projectId: string) {
    yield* sql.withTransaction(Effect.flatMap(fx.all(), (rates) => rollUpIn(sql, projectId, rates, false)))
  }, dieOnSqlError),
  projectsWithPaymentsIn: Effect.fn("PaymentsRepo.projectsWithPaymentsIn")(
    function*(currencies: ReadonlyArray<string>) {
      const wanted = currencies.map((c) => c.toUpperCase())
      const rows = yield* sql`SELECT project_id FROM subscription_versions WHERE currency = ANY(${wanted})
        UNION SELECT project_id FROM charges WHERE currency = ANY(${wanted})
        ORDER BY project_id`.pipe(Effect.flatMap(decodeProjectIds))
      return rows.map((r) => r.project_id)
    },
    dieOnSqlError
  )
})
