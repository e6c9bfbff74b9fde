/**
 * The payments REPORT READS on PostgreSQL: PaymentsRepo's `cohort`, `churnEvents` and `unconverted` only touch
 * derived rows (customer_mrr, churn_events, revenue_unconverted_daily), bounded by the window; revenue_daily is
 * read by MetricsRepo. `contacts` (customers by id) and `failedCharges` (the newest failed charges of a window,
 * by the partial index charges_failed) read the raw facts, bounded by the ids or the limit.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { chunks } from "../store/Chunks.ts"
import type { CohortRow, CustomerContact, FailedCharge } from "../store/Series.ts"
import { bulkRowsOf, Day, dieOnSqlError, rowsOf, Wide } from "../store/Sql.ts"
import type { PaymentsRepoShape } from "./PaymentsShape.ts"
import type { ChurnEvent, UnconvertedDay } from "./Rollup.ts"

// One row per paying customer of the project: can be thousands on the revenue report's path.
const decodeCohort = bulkRowsOf(
  "customer_mrr",
  Schema.Struct({ customer_id: Schema.String, start_minor: Wide, end_minor: Wide })
)
const decodeChurn = rowsOf(
  "churn_events",
  Schema.Struct({ customer_id: Schema.String, day: Day, mrr_lost_minor: Wide, reason: Schema.NullOr(Schema.String) })
)
const decodeContacts = rowsOf(
  "customers",
  Schema.Struct({ id: Schema.String, name: Schema.NullOr(Schema.String), email: Schema.NullOr(Schema.String) })
)
const decodeFailed = rowsOf(
  "charges",
  Schema.Struct({
    id: Schema.String,
    customer_id: Schema.String,
    name: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    day: Day,
    amount_minor: Wide,
    currency: Schema.String
  })
)
const decodeUnconverted = rowsOf(
  "revenue_unconverted_daily",
  Schema.Struct({
    currency: Schema.String,
    day: Day,
    mrr_minor: Wide,
    gross_minor: Wide,
    refunds_minor: Wide,
    failed_minor: Wide
  })
)

export const makePaymentsReads = (
  sql: SqlClient.SqlClient
): Pick<PaymentsRepoShape, "cohort" | "churnEvents" | "contacts" | "failedCharges" | "unconverted"> => ({
  cohort: Effect.fn("PaymentsRepo.cohort")(function*(projectId: string, startDay: string, endDay: string) {
    // One pass over the spans that overlap [startDay, endDay] (a customer's spans never overlap, so max picks
    // the one in force); a self-join here degrades to a quadratic nested loop whenever the planner's
    // statistics lag behind a fresh rollup.
    const rows = yield* sql`SELECT customer_id, start_minor, coalesce(end_minor, 0) AS end_minor FROM (
          SELECT customer_id,
            max(mrr_minor)
              FILTER (WHERE from_day <= ${startDay}::date AND (to_day IS NULL OR to_day > ${startDay}::date))
              AS start_minor,
            max(mrr_minor) FILTER (WHERE from_day <= ${endDay}::date AND (to_day IS NULL OR to_day > ${endDay}::date))
              AS end_minor
          FROM customer_mrr
          WHERE project_id = ${projectId} AND from_day <= ${endDay}::date
            AND (to_day IS NULL OR to_day > ${startDay}::date)
          GROUP BY customer_id) c
        WHERE start_minor IS NOT NULL
        ORDER BY customer_id`.pipe(Effect.flatMap(decodeCohort))
    return rows.map((r): CohortRow => ({
      customerId: r.customer_id,
      startMinor: Number(r.start_minor),
      endMinor: Number(r.end_minor)
    }))
  }, dieOnSqlError),
  churnEvents: Effect.fn("PaymentsRepo.churnEvents")(function*(projectId: string, fromDay: string, toDay: string) {
    const rows = yield* sql`SELECT customer_id, to_char(day, 'YYYY-MM-DD') AS day, mrr_lost_minor, reason
        FROM churn_events
        WHERE project_id = ${projectId} AND day BETWEEN ${fromDay}::date AND ${toDay}::date
        ORDER BY day, customer_id`.pipe(Effect.flatMap(decodeChurn))
    return rows.map((r): ChurnEvent => ({
      customerId: r.customer_id,
      day: r.day,
      mrrLostMinor: Number(r.mrr_lost_minor),
      reason: r.reason
    }))
  }, dieOnSqlError),
  contacts: Effect.fn("PaymentsRepo.contacts")(function*(projectId: string, customerIds: ReadonlyArray<string>) {
    const out: Array<CustomerContact> = []
    for (const ids of chunks([...new Set(customerIds)])) {
      const rows = yield* sql`SELECT id, name, email FROM customers WHERE project_id = ${projectId} AND id = ANY(${ids})
          ORDER BY id`.pipe(Effect.flatMap(decodeContacts))
      for (const r of rows) out.push({ customerId: r.id, name: r.name, email: r.email })
    }
    return out
  }, dieOnSqlError),
  failedCharges: Effect.fn("PaymentsRepo.failedCharges")(function*(
    projectId: string,
    window: { readonly fromDay: string; readonly toDay: string; readonly timezone: string },
    limit: number
  ) {
    const { fromDay, timezone, toDay } = window
    // The window's local days as instants: from the start of fromDay to the start of the day after toDay.
    const rows = yield* sql`SELECT c.id, c.customer_id, cu.name, cu.email, c.amount_minor, c.currency,
          to_char(c.at AT TIME ZONE ${timezone}, 'YYYY-MM-DD') AS day
        FROM charges c
        LEFT JOIN customers cu ON cu.project_id = c.project_id AND cu.id = c.customer_id
        WHERE c.project_id = ${projectId} AND c.status = 'failed'
          AND c.at >= (${fromDay}::date)::timestamp AT TIME ZONE ${timezone}
          AND c.at < (${toDay}::date + 1)::timestamp AT TIME ZONE ${timezone}
        ORDER BY c.at DESC, c.id DESC
        LIMIT ${limit}`.pipe(Effect.flatMap(decodeFailed))
    return rows.map((r): FailedCharge => ({
      chargeId: r.id,
      customerId: r.customer_id === "" ? null : r.customer_id,
      name: r.name,
      email: r.email,
      day: r.day,
      amountMinor: Number(r.amount_minor),
      currency: r.currency
    }))
  }, dieOnSqlError),
  unconverted: Effect.fn("PaymentsRepo.unconverted")(function*(projectId: string, fromDay: string, toDay: string) {
    const rows = yield* sql`SELECT currency, to_char(day, 'YYYY-MM-DD') AS day, mrr_minor, gross_minor, refunds_minor,
          failed_minor
        FROM revenue_unconverted_daily
        WHERE project_id = ${projectId} AND day <= ${toDay}::date AND (day >= ${fromDay}::date OR day = (
          SELECT max(b.day) FROM revenue_unconverted_daily b
          WHERE b.project_id = ${projectId} AND b.currency = revenue_unconverted_daily.currency
            AND b.day < ${fromDay}::date))
        ORDER BY currency, day`.pipe(Effect.flatMap(decodeUnconverted))
    return rows.map((r): UnconvertedDay => ({
      day: r.day,
      currency: r.currency,
      mrrMinor: Number(r.mrr_minor),
      grossMinor: Number(r.gross_minor),
      refundsMinor: Number(r.refunds_minor),
      failedMinor: Number(r.failed_minor)
    }))
  }, dieOnSqlError)
})
