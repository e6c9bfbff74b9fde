/**
 * Payments storage. Writes upsert the provider's raw facts by provider id, then re-run the rollup
 * (Rollup.ts) over the project's whole payment history and replace its derived rows — all in one
 * transaction that also bumps projects.data_version. Reads only touch derived rows, bounded by the window.
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
import { type ChurnEvent, type CustomerMrrSpan, rollup, type RollupOutput, type UnconvertedDay } from "./Rollup.ts"
import type { Charge, Customer, PaymentsData, Refund, SubscriptionVersion } from "./Types.ts"

export type { CohortRow }
export { revenueColumns }

export interface PaymentsRepoShape {
  /**
   * Upserts the given raw facts by provider id (customers and charges and refunds by id, subscription
   * versions by (subscriptionId, validFrom)), re-runs the rollup for the project and stores its output,
   * bumping data_version — one transaction.
   */
  readonly write: (projectId: string, data: Partial<PaymentsData>) => Effect.Effect<void>
  /** Re-runs the rollup without new facts (after FX rates change). */
  readonly rebuild: (projectId: string) => Effect.Effect<void>
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

const numOrNull = (value: number | bigint | string | null): number | null => (value === null ? null : Number(value))

/**
 * A project's raw payment facts, read whole on every rollup: bulk reads (bulkRowsOf), so the row schemas
 * do not transform — bigint and numeric columns are Wide and go through Number() where they are read.
 */
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
const RefundRow = Schema.Struct({
  id: Schema.String,
  charge_id: Schema.String,
  at: Schema.Date,
  amount_minor: Wide,
  currency: Schema.String
})
const decodeVersions = bulkRowsOf("subscription_versions", VersionRow)
const decodeCharges = bulkRowsOf("charges", ChargeRow)
const decodeRefunds = bulkRowsOf("refunds", RefundRow)
const decodeProject = firstOf("projects", Schema.Struct({ timezone: Schema.String, currency: Schema.String }))
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
      const insertRows = <A>(rows: Arr.NonEmptyReadonlyArray<A>, toRow: (a: A) => Record<string, unknown>) =>
        sql.insert(Arr.map(rows, toRow))

      const upsert = (projectId: string, data: Partial<PaymentsData>) =>
        Effect.gen(function*() {
          for (const rows of chunks(data.customers ?? [])) {
            yield* sql`INSERT INTO customers ${insertRows(rows, (c) => ({ project_id: projectId, id: c.id, created_at: c.createdAt }))}
              ON CONFLICT (project_id, id) DO UPDATE SET created_at = EXCLUDED.created_at`
          }
          for (const rows of chunks(data.subscriptionVersions ?? [])) {
            yield* sql`INSERT INTO subscription_versions ${insertRows(rows, (v) => ({
              project_id: projectId, subscription_id: v.subscriptionId, customer_id: v.customerId,
              valid_from: v.validFrom, valid_to: v.validTo, status: v.status, currency: v.currency.toUpperCase(),
              unit_amount_minor: v.unitAmountMinor, quantity: v.quantity, interval: v.interval,
              interval_count: v.intervalCount, discount_percent_off: v.discountPercentOff,
              discount_amount_off_minor: v.discountAmountOffMinor, cancel_reason: v.cancelReason
            }))}
              ON CONFLICT (project_id, subscription_id, valid_from) DO UPDATE SET customer_id = EXCLUDED.customer_id,
                valid_to = EXCLUDED.valid_to, status = EXCLUDED.status, currency = EXCLUDED.currency,
                unit_amount_minor = EXCLUDED.unit_amount_minor, quantity = EXCLUDED.quantity, interval = EXCLUDED.interval,
                interval_count = EXCLUDED.interval_count, discount_percent_off = EXCLUDED.discount_percent_off,
                discount_amount_off_minor = EXCLUDED.discount_amount_off_minor, cancel_reason = EXCLUDED.cancel_reason`
          }
          for (const rows of chunks(data.charges ?? [])) {
            yield* sql`INSERT INTO charges ${insertRows(rows, (c) => ({
              project_id: projectId, id: c.id, customer_id: c.customerId, at: c.at, amount_minor: c.amountMinor,
              currency: c.currency.toUpperCase(), status: c.status
            }))}
              ON CONFLICT (project_id, id) DO UPDATE SET customer_id = EXCLUDED.customer_id, at = EXCLUDED.at,
                amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency, status = EXCLUDED.status`
          }
          for (const rows of chunks(data.refunds ?? [])) {
            yield* sql`INSERT INTO refunds ${insertRows(rows, (r) => ({
              project_id: projectId, id: r.id, charge_id: r.chargeId, at: r.at, amount_minor: r.amountMinor,
              currency: r.currency.toUpperCase()
            }))}
              ON CONFLICT (project_id, id) DO UPDATE SET charge_id = EXCLUDED.charge_id, at = EXCLUDED.at,
                amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency`
          }
        })

      const loadAll = (projectId: string) =>
        Effect.gen(function*() {
          const versions = yield* sql`SELECT * FROM subscription_versions WHERE project_id = ${projectId}`
            .pipe(Effect.flatMap(decodeVersions))
          const charges = yield* sql`SELECT * FROM charges WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeCharges))
          const refunds = yield* sql`SELECT * FROM refunds WHERE project_id = ${projectId}`.pipe(Effect.flatMap(decodeRefunds))
          return {
            customers: [],
            subscriptionVersions: versions.map((r): SubscriptionVersion => ({
              subscriptionId: r.subscription_id, customerId: r.customer_id, validFrom: r.valid_from.toISOString(),
              validTo: r.valid_to === null ? null : r.valid_to.toISOString(), status: r.status, currency: r.currency,
              unitAmountMinor: Number(r.unit_amount_minor), quantity: Number(r.quantity), interval: r.interval,
              intervalCount: Number(r.interval_count), discountPercentOff: numOrNull(r.discount_percent_off),
              discountAmountOffMinor: numOrNull(r.discount_amount_off_minor), cancelReason: r.cancel_reason
            })),
            charges: charges.map((r): Charge => ({
              id: r.id, customerId: r.customer_id, at: r.at.toISOString(), amountMinor: Number(r.amount_minor),
              currency: r.currency, status: r.status
            })),
            refunds: refunds.map((r): Refund => ({
              id: r.id, chargeId: r.charge_id, at: r.at.toISOString(), amountMinor: Number(r.amount_minor), currency: r.currency
            }))
          } satisfies PaymentsData
        })

      const store = (projectId: string, out: RollupOutput) =>
        Effect.gen(function*() {
          for (const table of ["revenue_daily", "customer_mrr", "churn_events", "revenue_unconverted_daily"]) {
            yield* sql`DELETE FROM ${sql(table)} WHERE project_id = ${projectId}`
          }
          for (const rows of chunks(out.revenueDays)) {
            yield* sql`INSERT INTO revenue_daily ${insertRows(rows, (r) => revenueColumns(projectId, r))}`
          }
          for (const rows of chunks(out.customerMrr)) {
            yield* sql`INSERT INTO customer_mrr ${insertRows(rows, (s) => ({
              project_id: projectId, customer_id: s.customerId, from_day: s.fromDay, to_day: s.toDay, mrr_minor: s.mrrMinor
            }))}`
          }
          for (const rows of chunks(out.churnEvents)) {
            yield* sql`INSERT INTO churn_events ${insertRows(rows, (e) => ({
              project_id: projectId, customer_id: e.customerId, day: e.day, mrr_lost_minor: e.mrrLostMinor, reason: e.reason
            }))}`
          }
          for (const rows of chunks(out.unconverted)) {
            yield* sql`INSERT INTO revenue_unconverted_daily ${insertRows(rows, (u) => ({
              project_id: projectId, currency: u.currency, day: u.day, mrr_minor: u.mrrMinor, gross_minor: u.grossMinor,
              refunds_minor: u.refundsMinor, failed_minor: u.failedMinor
            }))}`
          }
        })

      const writeAndRollUp = (projectId: string, data: Partial<PaymentsData>) =>
        sql.withTransaction(Effect.gen(function*() {
          // The bump comes first: its row lock serialises concurrent writes of the same project, so each
          // rollup sees every fact committed before it.
          const project = yield* sql`UPDATE projects SET data_version = data_version + 1 WHERE id = ${projectId}
              RETURNING timezone, currency`.pipe(Effect.flatMap(decodeProject))
          // Callers write payments of a project they just found (sync, seed): its absence is a bug.
          if (project === null) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
          yield* upsert(projectId, data)
          const all = yield* loadAll(projectId)
          const rates = yield* fx.all()
          yield* store(projectId, rollup(all, { timezone: project.timezone, currency: project.currency, rates }))
        })).pipe(dieOnSqlError)

      return PaymentsRepo.of({
        write: writeAndRollUp,
        rebuild: (projectId) => writeAndRollUp(projectId, {}),
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
      const versionKey = (v: SubscriptionVersion) => `${v.subscriptionId}|${new Date(v.validFrom).toISOString()}`
      const up = (s: string) => s.toUpperCase()

      const writeAndRollUp = (projectId: string, data: Partial<PaymentsData>) =>
        Effect.gen(function*() {
          const project = db.projects.get(projectId)
          if (project === undefined) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
          const r = raw.get(projectId) ?? { customers: new Map(), versions: new Map(), charges: new Map(), refunds: new Map() }
          raw.set(projectId, r)
          for (const c of data.customers ?? []) r.customers.set(c.id, c)
          for (const v of data.subscriptionVersions ?? []) r.versions.set(versionKey(v), { ...v, currency: up(v.currency) })
          for (const c of data.charges ?? []) r.charges.set(c.id, { ...c, currency: up(c.currency) })
          for (const f of data.refunds ?? []) r.refunds.set(f.id, { ...f, currency: up(f.currency) })
          const rates = yield* fx.all()
          const out = rollup(
            { subscriptionVersions: [...r.versions.values()], charges: [...r.charges.values()], refunds: [...r.refunds.values()] },
            { timezone: project.timezone, currency: project.currency, rates }
          )
          derived.set(projectId, out)
          db.revenue.set(projectId, new Map(out.revenueDays.map((d) => [d.day, d] as const)))
        })

      const spanAt = (spans: ReadonlyArray<CustomerMrrSpan>, customerId: string, day: string) =>
        spans.find((s) => s.customerId === customerId && s.fromDay <= day && (s.toDay === null || s.toDay > day))

      return PaymentsRepo.of({
        write: writeAndRollUp,
        rebuild: (projectId) => writeAndRollUp(projectId, {}),
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
