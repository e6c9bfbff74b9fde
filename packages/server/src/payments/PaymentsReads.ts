/**
 * The payments REPORT READS on PostgreSQL: PaymentsRepo's `cohort`, `churnEvents` and `unconverted`. They
 * only touch derived rows (customer_mrr, churn_events, revenue_unconverted_daily), bounded by the window;
 * revenue_daily is read by MetricsRepo.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { CohortRow } from "../store/Series.ts"
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
): Pick<PaymentsRepoShape, "cohort" | "churnEvents" | "unconverted"> => ({
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
