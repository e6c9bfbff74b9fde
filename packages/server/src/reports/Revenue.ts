/** GET /projects/{id}/revenue and /churn: derived rows only, a handful of round trips, O(days in the window). */
import type { Period } from "@sitehealth/domain/Common"
import { RECENT_FAILED_PAYMENTS } from "@sitehealth/domain/Revenue"
import * as Effect from "effect/Effect"
import { FxRepo } from "../fx/FxRepo.ts"
import { type LoadedProject, loadProjectWith } from "../http/ProjectPolicy.ts"
import * as Compute from "../metrics/Compute.ts"
import { addDays } from "../metrics/Dates.ts"
import { MetricsRepo } from "../metrics/MetricsRepo.ts"
import { PaymentsRepo } from "../payments/PaymentsRepo.ts"

/**
 * Days of revenue rows a period needs: its window and the previous one of equal length (3m is at most 92
 * days, 12m at most 366). The MetricsRepo adds the last row before the range, which carries MRR forward.
 */
const PERIOD_LOOKBACK: Record<Period, number | null> = {
  today: 2,
  yesterday: 3,
  "7d": 15,
  "30d": 61,
  "3m": 186,
  "12m": 734,
  all: null
}
/** The revenue report also shows 12 months of month-end MRR and the last 30 days against the 30 before. */
const REVENUE_MIN_LOOKBACK = 400

/** What both reports are of: the loaded project's payments over the period. */
const scopeOf = (p: LoadedProject, period: Period) => ({
  projectId: p.project.id,
  period,
  today: p.today,
  timezone: p.project.timezone,
  currency: p.project.currency,
  revenue: p.series.revenue
})

export const makeRevenueReports = Effect.gen(function*() {
  const payments = yield* PaymentsRepo
  const fx = yield* FxRepo
  const loadProject = loadProjectWith(yield* MetricsRepo)
  return {
    getRevenue: (projectId: string, period: Period) =>
      Effect.gen(function*() {
        const lookback = PERIOD_LOOKBACK[period]
        const p = yield* loadProject(projectId, lookback === null ? null : Math.max(lookback, REVENUE_MIN_LOOKBACK))
        const window = Compute.revenuePeriodWindow(period, p.today, p.series.revenue)
        const last30 = Compute.lastDays(p.today, 30)
        const [cohort, unconverted, failedCharges] = yield* Effect.all([
          payments.cohort(p.project.id, addDays(window.from, -1), window.to),
          payments.unconverted(p.project.id, last30.from, p.today),
          payments.failedCharges(
            p.project.id,
            { fromDay: last30.from, toDay: p.today, timezone: p.project.timezone },
            RECENT_FAILED_PAYMENTS
          )
        ], { concurrency: 3 })
        const rates = yield* fx.all()
        return Compute.revenue({
          ...scopeOf(p, period),
          cohort,
          unconverted,
          failedCharges,
          expenses: p.series.expenses,
          rates
        })
      }),
    getChurn: (projectId: string, period: Period) =>
      Effect.gen(function*() {
        const p = yield* loadProject(projectId, PERIOD_LOOKBACK[period])
        const window = Compute.revenuePeriodWindow(period, p.today, p.series.revenue)
        const churnEvents = yield* payments.churnEvents(p.project.id, window.from, window.to)
        const contacts = churnEvents.length === 0
          ? []
          : yield* payments.contacts(p.project.id, churnEvents.map((e) => e.customerId))
        return Compute.churn({
          ...scopeOf(p, period),
          churnEvents,
          contacts
        })
      })
  }
})
