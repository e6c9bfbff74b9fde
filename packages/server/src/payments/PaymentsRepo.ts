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
 * The SQL rollup streams the project's history through Rollup.rollupAccumulator (versions customer range by
 * customer range, charges and refunds by id ranges), so its memory does not grow with the history.
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { FxRepo } from "../fx/FxRepo.ts"
import type { CohortRow, RevenueDay } from "../metrics/Rows.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import { revenueColumns } from "../store/Rows.ts"
import { bulkRowsOf, Day, dieOnSqlError, firstOf, rowsOf, Wide } from "../store/Sql.ts"
import {
  assembleDays,
  byDayThenCustomer,
  type ChurnEvent,
  type CustomerMrrSpan,
  customerRollup,
  type CustomerRollup,
  type FlowDay,
  flowsAccumulator,
  type RollupOutput,
  type UnconvertedDay,
  type UnconvertedFlow
} from "./Rollup.ts"
import { basisOf, decodeVersions, makeSqlRollup, versionOf } from "./SqlRollup.ts"
import type { Charge, Customer, PaymentsData, Refund, SubscriptionVersion } from "./Types.ts"
import { versionsDiff } from "./VersionsDiff.ts"

export type { CohortRow }
export { revenueColumns }

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
   * full one (a full listing: everything changes anyway).
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
  readonly stagedAfter: (projectId: string, after: string | null, limit: number) => Effect.Effect<ReadonlyArray<StagedGroup>>
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
  /** Unconverted rows with day ≤ toDay that are on or after fromDay, or the last one before it per currency. */
  readonly unconverted: (projectId: string, fromDay: string, toDay: string) => Effect.Effect<ReadonlyArray<UnconvertedDay>>
}

const CHUNK = 1000 // rows per INSERT, well under Postgres's 65 535 parameters

/** Non-empty slices of at most CHUNK rows: sql.insert takes a non-empty list. */
const chunks = <A>(rows: ReadonlyArray<A>): Array<Arr.NonEmptyReadonlyArray<A>> => {
  const out: Array<Arr.NonEmptyReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const slice = rows.slice(i, i + CHUNK)
    if (Arr.isReadonlyArrayNonEmpty(slice)) out.push(slice)
  }
  return out
}


/** Staged docs (sorted by group) as groups. */
const groupDocs = (docs: ReadonlyArray<StagedDoc>): Array<StagedGroup> => {
  const out: Array<{ groupId: string; docs: Array<StagedDoc> }> = []
  for (const d of docs) {
    const last = out.at(-1)
    if (last !== undefined && last.groupId === d.groupId) last.docs.push(d)
    else out.push({ groupId: d.groupId, docs: [d] })
  }
  return out
}

const StagedRow = Schema.Struct({ kind: Schema.String, id: Schema.String, parent_id: Schema.String, group_id: Schema.String, data: Schema.Unknown })
const decodeStaged = bulkRowsOf("payments_staged", StagedRow)
const decodeProgress = firstOf("payments_sync_progress", Schema.Struct({ progress: Schema.Unknown }))
const decodeRemovedGroups = rowsOf("payments_staged", Schema.Struct({ group_id: Schema.String }))
const decodeProjectIds = rowsOf("subscription_versions, charges", Schema.Struct({ project_id: Schema.String }))
// One row per paying customer of the project: can be thousands on the revenue report's path.
const decodeCohort = bulkRowsOf("customer_mrr", Schema.Struct({ customer_id: Schema.String, start_minor: Wide, end_minor: Wide }))
const decodeChurn = rowsOf(
  "churn_events",
  Schema.Struct({ customer_id: Schema.String, day: Day, mrr_lost_minor: Wide, reason: Schema.NullOr(Schema.String) })
)
const decodeUnconverted = rowsOf(
  "revenue_unconverted_daily",
  Schema.Struct({ currency: Schema.String, day: Day, mrr_minor: Wide, gross_minor: Wide, refunds_minor: Wide, failed_minor: Wide })
)

export class PaymentsRepo extends Context.Service<PaymentsRepo, PaymentsRepoShape>()("sitehealth/PaymentsRepo") {
  static readonly sql = Layer.effect(
    PaymentsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const fx = yield* FxRepo
      const { forgetBasis, markDirty, rollUpIn } = makeSqlRollup(sql)

      // Upserts as one statement per table and chunk whatever the row count: the rows travel as ONE JSON
      // parameter read by jsonb_to_recordset, so the statement text (and the prepared statement Postgres and
      // the driver keep for it) is the same for every batch — a multi-row VALUES list is a new statement for
      // every batch size, which a streaming sync's thousands of batches made slow and memory-hungry.
      const json = (rows: ReadonlyArray<unknown>) => JSON.stringify(rows)
      const versionsJson = (rows: ReadonlyArray<SubscriptionVersion>) =>
        json(rows.map((v) => ({
          s: v.subscriptionId, c: v.customerId, f: v.validFrom, t: v.validTo, st: v.status, cur: v.currency.toUpperCase(),
          unit: v.unitAmountMinor, q: v.quantity, i: v.interval, ic: v.intervalCount, pct: v.discountPercentOff,
          amt: v.discountAmountOffMinor, r: v.cancelReason
        })))
      const versionColumns = sql.literal(`u(s text, c text, f timestamptz, t timestamptz, st text, cur text, unit bigint, q integer, i text,
                ic integer, pct numeric, amt bigint, r text)`)
      // A stored version equal to the new one is left as it is (no new row version, no index entries).
      const versionConflict = sql.literal(`ON CONFLICT (project_id, subscription_id, valid_from) DO UPDATE SET customer_id = EXCLUDED.customer_id,
                valid_to = EXCLUDED.valid_to, status = EXCLUDED.status, currency = EXCLUDED.currency,
                unit_amount_minor = EXCLUDED.unit_amount_minor, quantity = EXCLUDED.quantity, interval = EXCLUDED.interval,
                interval_count = EXCLUDED.interval_count, discount_percent_off = EXCLUDED.discount_percent_off,
                discount_amount_off_minor = EXCLUDED.discount_amount_off_minor, cancel_reason = EXCLUDED.cancel_reason
              WHERE (subscription_versions.customer_id, subscription_versions.valid_to, subscription_versions.status,
                  subscription_versions.currency, subscription_versions.unit_amount_minor, subscription_versions.quantity,
                  subscription_versions.interval, subscription_versions.interval_count, subscription_versions.discount_percent_off,
                  subscription_versions.discount_amount_off_minor, subscription_versions.cancel_reason)
                IS DISTINCT FROM (EXCLUDED.customer_id, EXCLUDED.valid_to, EXCLUDED.status, EXCLUDED.currency, EXCLUDED.unit_amount_minor,
                  EXCLUDED.quantity, EXCLUDED.interval, EXCLUDED.interval_count, EXCLUDED.discount_percent_off,
                  EXCLUDED.discount_amount_off_minor, EXCLUDED.cancel_reason)`)

      /**
       * The versions of these subscriptions become exactly `versions`, BY DIFFERENCE, worked out in the process:
       * per CHUNK subscriptions their stored versions are read (one index range per subscription), and only
       * what differs is sent — stored versions whose start is no longer a start deleted, new or changed ones
       * upserted; the others are not written at all (a renewal appends a version and ends the one before it:
       * two rows, not the subscription's whole history, and not every version sent for Postgres to compare).
       * With `track`, the customers of the subscriptions whose versions did change — before (as stored) and
       * after — are marked dirty for the incremental rollup: a subscription whose versions came out the same
       * marks nothing. The caller's transaction holds the read and the writes together.
       */
      const replaceVersions = (projectId: string, subscriptions: ReadonlyArray<string>, versions: ReadonlyArray<SubscriptionVersion>, track: boolean) =>
        Effect.gen(function*() {
          const bySub = new Map<string, Array<SubscriptionVersion>>()
          for (const v of versions) {
            const list = bySub.get(v.subscriptionId)
            if (list === undefined) bySub.set(v.subscriptionId, [v])
            else list.push(v)
          }
          const subs = [...new Set(subscriptions)]
          for (let i = 0; i < subs.length; i += CHUNK) {
            const ids = subs.slice(i, i + CHUNK)
            const stored = yield* sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId} AND subscription_id = ANY(${ids})`.pipe(
              Effect.flatMap(decodeVersions)
            )
            const { changedSubscriptions, gone, put } = versionsDiff(stored.map(versionOf), ids.flatMap((id) => bySub.get(id) ?? []))
            if (changedSubscriptions.size === 0) continue
            if (gone.length > 0) {
              yield* sql`DELETE FROM subscription_versions v USING jsonb_to_recordset(${json(gone.map((g) => ({ s: g.subscriptionId, f: g.validFrom })))}::jsonb)
                  AS g(s text, f timestamptz)
                WHERE v.project_id = ${projectId} AND v.subscription_id = g.s AND v.valid_from = g.f`
            }
            for (const rows of chunks(put)) {
              yield* sql`INSERT INTO subscription_versions (project_id, subscription_id, customer_id, valid_from, valid_to, status,
                  currency, unit_amount_minor, quantity, interval, interval_count, discount_percent_off, discount_amount_off_minor, cancel_reason)
                SELECT ${projectId}, u.s, u.c, u.f, u.t, u.st, u.cur, u.unit, u.q, u.i, u.ic, u.pct, u.amt, u.r
                FROM jsonb_to_recordset(${versionsJson(rows)}::jsonb) AS ${versionColumns}
                ${versionConflict}`
            }
            if (track) {
              const customers = new Set<string>()
              for (const v of stored) if (changedSubscriptions.has(v.subscription_id)) customers.add(v.customer_id)
              for (const id of changedSubscriptions) for (const v of bySub.get(id) ?? []) customers.add(v.customerId)
              yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key)
                  SELECT ${projectId}, 'customer', u.id FROM unnest(${[...customers]}::text[]) AS u(id)
                  ON CONFLICT DO NOTHING`
            }
          }
        })

      const upsert = (projectId: string, data: Partial<PaymentsData>) =>
        Effect.gen(function*() {
          for (const rows of chunks(data.customers ?? [])) {
            yield* sql`INSERT INTO customers (project_id, id, created_at)
              SELECT ${projectId}, u.id, u.created_at
              FROM jsonb_to_recordset(${json(rows.map((c) => ({ id: c.id, created_at: c.createdAt })))}::jsonb) AS u(id text, created_at timestamptz)
              ON CONFLICT (project_id, id) DO UPDATE SET created_at = EXCLUDED.created_at
              WHERE customers.created_at IS DISTINCT FROM EXCLUDED.created_at`
          }
          for (const rows of chunks(data.subscriptionVersions ?? [])) {
            yield* sql`INSERT INTO subscription_versions (project_id, subscription_id, customer_id, valid_from, valid_to, status,
                currency, unit_amount_minor, quantity, interval, interval_count, discount_percent_off, discount_amount_off_minor, cancel_reason)
              SELECT ${projectId}, u.s, u.c, u.f, u.t, u.st, u.cur, u.unit, u.q, u.i, u.ic, u.pct, u.amt, u.r
              FROM jsonb_to_recordset(${versionsJson(rows)}::jsonb) AS ${versionColumns}
              ${versionConflict}`
          }
          for (const rows of chunks(data.charges ?? [])) {
            yield* sql`INSERT INTO charges (project_id, id, customer_id, at, amount_minor, currency, status)
              SELECT ${projectId}, u.id, u.c, u.at, u.amt, u.cur, u.st
              FROM jsonb_to_recordset(${json(rows.map((c) => ({
                id: c.id, c: c.customerId, at: c.at, amt: c.amountMinor, cur: c.currency.toUpperCase(), st: c.status
              })))}::jsonb) AS u(id text, c text, at timestamptz, amt bigint, cur text, st text)
              ON CONFLICT (project_id, id) DO UPDATE SET customer_id = EXCLUDED.customer_id, at = EXCLUDED.at,
                amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency, status = EXCLUDED.status
              WHERE (charges.customer_id, charges.at, charges.amount_minor, charges.currency, charges.status)
                IS DISTINCT FROM (EXCLUDED.customer_id, EXCLUDED.at, EXCLUDED.amount_minor, EXCLUDED.currency, EXCLUDED.status)`
          }
          for (const rows of chunks(data.refunds ?? [])) {
            yield* sql`INSERT INTO refunds (project_id, id, charge_id, at, amount_minor, currency)
              SELECT ${projectId}, u.id, u.ch, u.at, u.amt, u.cur
              FROM jsonb_to_recordset(${json(rows.map((r) => ({
                id: r.id, ch: r.chargeId, at: r.at, amt: r.amountMinor, cur: r.currency.toUpperCase()
              })))}::jsonb) AS u(id text, ch text, at timestamptz, amt bigint, cur text)
              ON CONFLICT (project_id, id) DO UPDATE SET charge_id = EXCLUDED.charge_id, at = EXCLUDED.at,
                amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency
              WHERE (refunds.charge_id, refunds.at, refunds.amount_minor, refunds.currency)
                IS DISTINCT FROM (EXCLUDED.charge_id, EXCLUDED.at, EXCLUDED.amount_minor, EXCLUDED.currency)`
          }
        })

      const writeAndRollUp = (projectId: string, data: Partial<PaymentsData>) =>
        sql.withTransaction(Effect.gen(function*() {
          // The project row is locked by the bump before the facts change (rollUpIn bumps first; the upsert
          // of facts no one reads until the rollup may come before it in the same transaction).
          yield* sql`SELECT 1 FROM projects WHERE id = ${projectId} FOR UPDATE`
          yield* upsert(projectId, data)
          yield* rollUpIn(projectId, yield* fx.all(), true)
        })).pipe(dieOnSqlError)

      const commit = (projectId: string, batch: PaymentsBatch) =>
        sql.withTransaction(Effect.gen(function*() {
          // A sync's batch does not wait for its WAL to reach the disk (a full listing commits ~1,500 of them):
          // a crash of Postgres may lose the last batches, never half of one (the batch and its progress go
          // together), and the rollup — what reports read — and the run's outcome saved after it commit
          // synchronously, which flushes every batch before them.
          yield* sql`SET LOCAL synchronous_commit = off`
          const replace = batch.replaceVersionsOf ?? []
          const replaced = new Set(replace)
          const allFacts = batch.facts ?? {}
          // The versions of the replaced subscriptions are written by difference (replaceVersions), the rest upserted.
          const rebuilt = replaced.size === 0 ? [] : (allFacts.subscriptionVersions ?? []).filter((v) => replaced.has(v.subscriptionId))
          const facts = replaced.size === 0 ? allFacts : { ...allFacts, subscriptionVersions: (allFacts.subscriptionVersions ?? []).filter((v) => !replaced.has(v.subscriptionId)) }
          const track = batch.trackChanges === true
          if (track) yield* markDirty(projectId, facts, batch.removeRefunds ?? [])
          else if (replace.length > 0 || (batch.removeRefunds ?? []).length > 0 || Object.values(allFacts).some((rows) => rows.length > 0)) {
            yield* forgetBasis(projectId)
          }
          if (replace.length > 0) yield* replaceVersions(projectId, replace, rebuilt, track)
          yield* upsert(projectId, facts)
          const gone = batch.removeRefunds ?? []
          for (let i = 0; i < gone.length; i += CHUNK) {
            yield* sql`DELETE FROM refunds WHERE project_id = ${projectId} AND id = ANY(${gone.slice(i, i + CHUNK)})`
          }
          const removed = new Set<string>()
          // Per kind, `parent_id = ANY(…)`: an index scan of payments_staged_parent (a join on unnest would let
          // the planner scan the whole table once per batch).
          // The docs of a parent staged again in this batch are kept (and upserted below): only the others go.
          const byKind = new Map<string, Array<string>>()
          for (const p of batch.unstageParents ?? []) {
            const list = byKind.get(p.kind)
            if (list === undefined) byKind.set(p.kind, [p.parentId])
            else list.push(p.parentId)
          }
          for (const [kind, parents] of byKind) {
            const keep = (batch.staged ?? []).filter((d) => d.kind === kind).map((d) => d.id)
            for (let i = 0; i < parents.length; i += CHUNK) {
              const rows = yield* sql`DELETE FROM payments_staged WHERE project_id = ${projectId} AND kind = ${kind}
                  AND parent_id = ANY(${parents.slice(i, i + CHUNK)}) AND NOT (id = ANY(${keep})) RETURNING group_id`.pipe(Effect.flatMap(decodeRemovedGroups))
              for (const r of rows) removed.add(r.group_id)
            }
          }
          // A doc stored as it is re-staged is not rewritten (a jsonb row and its index entries).
          for (const rows of chunks(batch.staged ?? [])) {
            yield* sql`INSERT INTO payments_staged (project_id, kind, id, parent_id, group_id, data)
              SELECT ${projectId}, u.k, u.id, u.p, u.g, u.d
              FROM jsonb_to_recordset(${json(rows.map((d) => ({ k: d.kind, id: d.id, p: d.parentId, g: d.groupId, d: d.data })))}::jsonb)
                AS u(k text, id text, p text, g text, d jsonb)
              ON CONFLICT (project_id, kind, id) DO UPDATE SET parent_id = EXCLUDED.parent_id, group_id = EXCLUDED.group_id,
                data = EXCLUDED.data
              WHERE (payments_staged.parent_id, payments_staged.group_id, payments_staged.data)
                IS DISTINCT FROM (EXCLUDED.parent_id, EXCLUDED.group_id, EXCLUDED.data)`
          }
          const progress = batch.progress
          if (progress !== undefined) {
            if (progress.value === null) {
              yield* sql`DELETE FROM payments_sync_progress WHERE project_id = ${projectId} AND provider = ${progress.provider}`
            } else {
              yield* sql`INSERT INTO payments_sync_progress (project_id, provider, progress)
                  VALUES (${projectId}, ${progress.provider}, ${JSON.stringify(progress.value)}::jsonb)
                  ON CONFLICT (project_id, provider) DO UPDATE SET progress = EXCLUDED.progress`
            }
          }
          return [...removed]
        })).pipe(dieOnSqlError)

      const docsOf = (rows: ReadonlyArray<typeof StagedRow.Type>) =>
        groupDocs(rows.map((r): StagedDoc => ({ kind: r.kind, id: r.id, parentId: r.parent_id, groupId: r.group_id, data: r.data })))

      return PaymentsRepo.of({
        write: writeAndRollUp,
        rebuild: (projectId) => sql.withTransaction(Effect.flatMap(fx.all(), (rates) => rollUpIn(projectId, rates, true))).pipe(dieOnSqlError),
        rollUp: (projectId) => sql.withTransaction(Effect.flatMap(fx.all(), (rates) => rollUpIn(projectId, rates, false))).pipe(dieOnSqlError),
        commit,
        progress: (projectId, provider) =>
          sql`SELECT progress FROM payments_sync_progress WHERE project_id = ${projectId} AND provider = ${provider}`.pipe(
            Effect.flatMap(decodeProgress),
            Effect.map((row) => row?.progress ?? null),
            dieOnSqlError
          ),
        stagedAfter: (projectId, after, limit) =>
          (after === null
            ? sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId} AND group_id IN (
                  SELECT DISTINCT group_id FROM payments_staged WHERE project_id = ${projectId} ORDER BY group_id LIMIT ${limit})
                ORDER BY group_id, kind, id`
            : sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId} AND group_id IN (
                  SELECT DISTINCT group_id FROM payments_staged WHERE project_id = ${projectId} AND group_id > ${after}
                  ORDER BY group_id LIMIT ${limit})
                ORDER BY group_id, kind, id`).pipe(Effect.flatMap(decodeStaged), Effect.map(docsOf), dieOnSqlError),
        stagedOf: (projectId, groups) =>
          (groups.length === 0 ? Effect.succeed([]) :
            sql`SELECT kind, id, parent_id, group_id, data FROM payments_staged WHERE project_id = ${projectId}
                AND group_id = ANY(${[...groups]}) ORDER BY group_id, kind, id`.pipe(Effect.flatMap(decodeStaged), Effect.map(docsOf))).pipe(dieOnSqlError),
        projectsWithPaymentsIn: (currencies) =>
          sql`SELECT project_id FROM subscription_versions WHERE currency = ANY(${currencies.map((c) => c.toUpperCase())})
              UNION SELECT project_id FROM charges WHERE currency = ANY(${currencies.map((c) => c.toUpperCase())})
              ORDER BY project_id`.pipe(
            Effect.flatMap(decodeProjectIds),
            Effect.map((rows) => rows.map((r) => r.project_id)),
            dieOnSqlError
          ),
        cohort: (projectId, startDay, endDay) =>
          // One pass over the spans that overlap [startDay, endDay] (a customer's spans never overlap, so
          // max picks the one in force); a self-join here degrades to a quadratic nested loop whenever the
          // planner's statistics lag behind a fresh rollup.
          sql`SELECT customer_id, start_minor, coalesce(end_minor, 0) AS end_minor FROM (
                SELECT customer_id,
                  max(mrr_minor) FILTER (WHERE from_day <= ${startDay}::date AND (to_day IS NULL OR to_day > ${startDay}::date)) AS start_minor,
                  max(mrr_minor) FILTER (WHERE from_day <= ${endDay}::date AND (to_day IS NULL OR to_day > ${endDay}::date)) AS end_minor
                FROM customer_mrr
                WHERE project_id = ${projectId} AND from_day <= ${endDay}::date
                  AND (to_day IS NULL OR to_day > ${startDay}::date)
                GROUP BY customer_id) c
              WHERE start_minor IS NOT NULL
              ORDER BY customer_id`.pipe(
            Effect.flatMap(decodeCohort),
            Effect.map((rows) =>
              rows.map((r): CohortRow => ({
                customerId: r.customer_id, startMinor: Number(r.start_minor), endMinor: Number(r.end_minor)
              }))
            ),
            dieOnSqlError
          ),
        churnEvents: (projectId, fromDay, toDay) =>
          sql`SELECT customer_id, to_char(day, 'YYYY-MM-DD') AS day, mrr_lost_minor, reason FROM churn_events
              WHERE project_id = ${projectId} AND day BETWEEN ${fromDay}::date AND ${toDay}::date
              ORDER BY day, customer_id`.pipe(
            Effect.flatMap(decodeChurn),
            Effect.map((rows) =>
              rows.map((r): ChurnEvent => ({
                customerId: r.customer_id, day: r.day, mrrLostMinor: Number(r.mrr_lost_minor), reason: r.reason
              }))
            ),
            dieOnSqlError
          ),
        unconverted: (projectId, fromDay, toDay) =>
          sql`SELECT currency, to_char(day, 'YYYY-MM-DD') AS day, mrr_minor, gross_minor, refunds_minor, failed_minor
              FROM revenue_unconverted_daily
              WHERE project_id = ${projectId} AND day <= ${toDay}::date AND (day >= ${fromDay}::date OR day = (
                SELECT max(b.day) FROM revenue_unconverted_daily b
                WHERE b.project_id = ${projectId} AND b.currency = revenue_unconverted_daily.currency AND b.day < ${fromDay}::date))
              ORDER BY currency, day`.pipe(
            Effect.flatMap(decodeUnconverted),
            Effect.map((rows) =>
              rows.map((r): UnconvertedDay => ({
                day: r.day, currency: r.currency, mrrMinor: Number(r.mrr_minor), grossMinor: Number(r.gross_minor),
                refundsMinor: Number(r.refunds_minor), failedMinor: Number(r.failed_minor)
              }))
            ),
            dieOnSqlError
          )
      })
    })
  )

  /** Tests only: raw facts and derived rows in maps; revenue days go to MemoryDb, where MetricsRepo reads them. */
  static readonly memory = Layer.effect(
    PaymentsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const fx = yield* FxRepo
      interface Raw {
        readonly customers: Map<string, Customer>
        readonly versions: Map<string, SubscriptionVersion>
        readonly charges: Map<string, Charge>
        readonly refunds: Map<string, Refund>
      }
      const raw = new Map<string, Raw>()
      const derived = new Map<string, RollupOutput>()
      const staged = new Map<string, Map<string, StagedDoc>>() // project → `${kind}|${id}` → doc
      const progress = new Map<string, unknown>() // `${project}|${provider}` → progress
      const versionKey = (v: SubscriptionVersion) => `${v.subscriptionId}|${new Date(v.validFrom).toISOString()}`
      const up = (s: string) => s.toUpperCase()

      const rawOf = (projectId: string): Raw => {
        const r = raw.get(projectId) ?? { customers: new Map(), versions: new Map(), charges: new Map(), refunds: new Map() }
        raw.set(projectId, r)
        return r
      }
      const upsert = (projectId: string, data: Partial<PaymentsData>) => {
        const r = rawOf(projectId)
        for (const c of data.customers ?? []) r.customers.set(c.id, c)
        for (const v of data.subscriptionVersions ?? []) r.versions.set(versionKey(v), { ...v, currency: up(v.currency) })
        for (const c of data.charges ?? []) r.charges.set(c.id, { ...c, currency: up(c.currency) })
        for (const f of data.refunds ?? []) r.refunds.set(f.id, { ...f, currency: up(f.currency) })
      }
      const sortedGroups = (docs: Iterable<StagedDoc>, keep: (d: StagedDoc) => boolean) =>
        groupDocs([...docs].filter(keep).sort((a, b) =>
          a.groupId !== b.groupId ? (a.groupId < b.groupId ? -1 : 1) : a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

      /** The parts of the rollup kept per project (as the SQL store's tables do): see SqlRollup.ts. */
      interface Parts {
        basis: string | null
        readonly customers: Map<string, CustomerRollup>
        /** By `${source}|${day}`, and `${source}|${currency}|${day}`. */
        readonly flows: Map<string, FlowDay>
        readonly unconvertedFlows: Map<string, UnconvertedFlow>
        readonly dirtyCustomers: Set<string>
        /** Changed charges and refunds, with what they were at the last rollup (null: new). */
        readonly dirtyCharges: Map<string, Charge | null>
        readonly dirtyRefunds: Map<string, Refund | null>
      }
      const parts = new Map<string, Parts>()
      const partsOf = (projectId: string): Parts => {
        const p = parts.get(projectId) ?? { basis: null, customers: new Map(), flows: new Map(), unconvertedFlows: new Map(), dirtyCustomers: new Set(), dirtyCharges: new Map(), dirtyRefunds: new Map() }
        parts.set(projectId, p)
        return p
      }
      const markDirty = (projectId: string, batch: PaymentsBatch) => {
        const r = rawOf(projectId)
        const p = partsOf(projectId)
        const facts = batch.facts ?? {}
        const changed = (batch.replaceVersionsOf ?? []).length > 0 || (batch.removeRefunds ?? []).length > 0 ||
          Object.values(facts).some((rows) => rows.length > 0)
        if (batch.trackChanges !== true) {
          if (changed) p.basis = null
          return
        }
        const subs = new Set([...(batch.replaceVersionsOf ?? []), ...(facts.subscriptionVersions ?? []).map((v) => v.subscriptionId)])
        for (const v of r.versions.values()) if (subs.has(v.subscriptionId)) p.dirtyCustomers.add(v.customerId)
        for (const v of facts.subscriptionVersions ?? []) p.dirtyCustomers.add(v.customerId)
        // The first change since the last rollup keeps what the stored flows hold.
        for (const c of facts.charges ?? []) if (!p.dirtyCharges.has(c.id)) p.dirtyCharges.set(c.id, r.charges.get(c.id) ?? null)
        for (const id of [...(facts.refunds ?? []).map((f) => f.id), ...(batch.removeRefunds ?? [])]) {
          if (!p.dirtyRefunds.has(id)) p.dirtyRefunds.set(id, r.refunds.get(id) ?? null)
        }
      }

      const commit = (projectId: string, batch: PaymentsBatch) =>
        Effect.sync(() => {
          markDirty(projectId, batch)
          const r = rawOf(projectId)
          const replace = new Set(batch.replaceVersionsOf ?? [])
          if (replace.size > 0) for (const [k, v] of r.versions) if (replace.has(v.subscriptionId)) r.versions.delete(k)
          upsert(projectId, batch.facts ?? {})
          for (const id of batch.removeRefunds ?? []) r.refunds.delete(id)
          const docs = staged.get(projectId) ?? new Map<string, StagedDoc>()
          staged.set(projectId, docs)
          const removed = new Set<string>()
          const parents = new Set((batch.unstageParents ?? []).map((p) => `${p.kind}|${p.parentId}`))
          if (parents.size > 0) {
            for (const [k, d] of docs) {
              if (parents.has(`${d.kind}|${d.parentId}`)) {
                docs.delete(k)
                removed.add(d.groupId)
              }
            }
          }
          // Stored as JSON would be: the reader gets a copy, as from the database.
          for (const d of batch.staged ?? []) docs.set(`${d.kind}|${d.id}`, { ...d, data: JSON.parse(JSON.stringify(d.data)) })
          if (batch.progress !== undefined) {
            const key = `${projectId}|${batch.progress.provider}`
            if (batch.progress.value === null) progress.delete(key)
            else progress.set(key, JSON.parse(JSON.stringify(batch.progress.value)))
          }
          return [...removed]
        })

      /** The rollup from the kept parts: all recomputed when `full` or the basis changed, else the dirty ones. */
      const rollUpParts = (projectId: string, full: boolean) =>
        Effect.gen(function*() {
          const project = db.projects.get(projectId)
          if (project === undefined) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
          const rates = yield* fx.all()
          const options = { timezone: project.timezone, currency: project.currency, rates }
          const basis = JSON.stringify(basisOf(project.timezone, project.currency, rates))
          const r = rawOf(projectId)
          const p = partsOf(projectId)
          const byCustomer = new Map<string, Array<SubscriptionVersion>>()
          for (const v of r.versions.values()) {
            const list = byCustomer.get(v.customerId)
            if (list === undefined) byCustomer.set(v.customerId, [v])
            else list.push(v)
          }
          const part = customerRollup(options)
          const addFlows = (f: ReturnType<ReturnType<typeof flowsAccumulator>["finish"]>) => {
            for (const d of f.days) {
              const key = `${d.source}|${d.day}`
              const was = p.flows.get(key)
              const sum = was === undefined ? d : {
                ...d, grossMinor: was.grossMinor + d.grossMinor, refundsMinor: was.refundsMinor + d.refundsMinor,
                failedPayments: was.failedPayments + d.failedPayments, failedMinor: was.failedMinor + d.failedMinor, items: was.items + d.items
              }
              if (sum.items === 0) p.flows.delete(key)
              else p.flows.set(key, sum)
            }
            for (const u of f.unconverted) {
              const key = `${u.source}|${u.currency}|${u.day}`
              const was = p.unconvertedFlows.get(key)
              const sum = was === undefined ? u : {
                ...u, grossMinor: was.grossMinor + u.grossMinor, refundsMinor: was.refundsMinor + u.refundsMinor,
                failedMinor: was.failedMinor + u.failedMinor, items: was.items + u.items
              }
              if (sum.items === 0) p.unconvertedFlows.delete(key)
              else p.unconvertedFlows.set(key, sum)
            }
          }
          const acc = flowsAccumulator(options)
          if (full || p.basis !== basis) {
            p.customers.clear()
            p.flows.clear()
            p.unconvertedFlows.clear()
            for (const [customerId, versions] of byCustomer) p.customers.set(customerId, part(customerId, versions))
            for (const c of r.charges.values()) acc.charge(c)
            for (const f of r.refunds.values()) acc.refund(f)
            p.basis = basis
          } else {
            for (const customerId of p.dirtyCustomers) {
              const versions = byCustomer.get(customerId)
              if (versions === undefined) p.customers.delete(customerId)
              else p.customers.set(customerId, part(customerId, versions))
            }
            for (const [id, old] of p.dirtyCharges) {
              const now = r.charges.get(id)
              if (now !== undefined) acc.charge(now)
              if (old !== null) acc.charge(old, -1)
            }
            for (const [id, old] of p.dirtyRefunds) {
              const now = r.refunds.get(id)
              if (now !== undefined) acc.refund(now)
              if (old !== null) acc.refund(old, -1)
            }
          }
          addFlows(acc.finish())
          p.dirtyCharges.clear()
          p.dirtyRefunds.clear()
          p.dirtyCustomers.clear()
          const customers = [...p.customers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c)
          const { revenueDays, unconverted } = assembleDays(
            customers.flatMap((c) => c.moves),
            p.flows.values(),
            customers.flatMap((c) => c.unconvertedMoves),
            p.unconvertedFlows.values()
          )
          const out: RollupOutput = {
            revenueDays,
            customerMrr: customers.flatMap((c) => c.spans),
            churnEvents: customers.flatMap((c) => c.churnEvents).sort(byDayThenCustomer),
            unconverted
          }
          derived.set(projectId, out)
          db.revenue.set(projectId, new Map(out.revenueDays.map((d) => [d.day, d] as const)))
        })

      const writeAndRollUp = (projectId: string, data: Partial<PaymentsData>) =>
        Effect.gen(function*() {
          if (db.projects.get(projectId) === undefined) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
          upsert(projectId, data)
          yield* rollUpParts(projectId, true)
        })

      const spanAt = (spans: ReadonlyArray<CustomerMrrSpan>, customerId: string, day: string) =>
        spans.find((s) => s.customerId === customerId && s.fromDay <= day && (s.toDay === null || s.toDay > day))

      return PaymentsRepo.of({
        write: writeAndRollUp,
        rebuild: (projectId) => rollUpParts(projectId, true),
        rollUp: (projectId) => rollUpParts(projectId, false),
        commit,
        progress: (projectId, provider) => Effect.sync(() => progress.get(`${projectId}|${provider}`) ?? null),
        stagedAfter: (projectId, after, limit) =>
          Effect.sync(() =>
            sortedGroups(staged.get(projectId)?.values() ?? [], (d) => after === null || d.groupId > after).slice(0, limit)
          ),
        stagedOf: (projectId, groups) =>
          Effect.sync(() => {
            const wanted = new Set(groups)
            return sortedGroups(staged.get(projectId)?.values() ?? [], (d) => wanted.has(d.groupId))
          }),
        projectsWithPaymentsIn: (currencies) =>
          Effect.sync(() => {
            const wanted = new Set(currencies.map(up))
            return [...raw.entries()]
              .filter(([, r]) => [...r.versions.values(), ...r.charges.values()].some((x) => wanted.has(x.currency)))
              .map(([id]) => id)
              .sort()
          }),
        cohort: (projectId, startDay, endDay) =>
          Effect.sync(() => {
            const spans = derived.get(projectId)?.customerMrr ?? []
            return spans
              .filter((s) => s.fromDay <= startDay && (s.toDay === null || s.toDay > startDay))
              .map((s) => ({ customerId: s.customerId, startMinor: s.mrrMinor, endMinor: spanAt(spans, s.customerId, endDay)?.mrrMinor ?? 0 }))
              .sort((a, b) => (a.customerId < b.customerId ? -1 : 1))
          }),
        churnEvents: (projectId, fromDay, toDay) =>
          Effect.sync(() => (derived.get(projectId)?.churnEvents ?? []).filter((e) => e.day >= fromDay && e.day <= toDay)),
        unconverted: (projectId, fromDay, toDay) =>
          Effect.sync(() => {
            const rows = (derived.get(projectId)?.unconverted ?? []).filter((u) => u.day <= toDay)
            const lastBefore = new Map<string, UnconvertedDay>()
            for (const u of rows) if (u.day < fromDay) lastBefore.set(u.currency, u) // rows are by currency, day
            return rows.filter((u) => u.day >= fromDay || lastBefore.get(u.currency) === u)
          })
      })
    })
  )
}
