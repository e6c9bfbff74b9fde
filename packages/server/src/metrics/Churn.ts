/**
 * The churn report, from the rows the payments rollup derived and its churn events. Pure; see Revenue.ts
 * for how states and flows are read, and docs/metrics.md ("Churn") for the definitions.
 */
import type { Churn } from "@sitehealth/domain/Revenue"
import type { ChurnEvent, CustomerContact, RevenueDay } from "../store/Series.ts"
import { addDays } from "./Dates.ts"
import type { DayWindow } from "./Numbers.ts"
import { inWindow, money, previousWindow, ratio } from "./Numbers.ts"
import {
  customerChurnRate,
  movementsIn,
  payingCustomersAtEndOf,
  type PaymentsReportScope,
  revenuePeriodWindow
} from "./Revenue.ts"

export interface ChurnInput extends PaymentsReportScope {
  /** Revenue rows covering the period and the previous one, plus the last row before them. */
  readonly revenue: ReadonlyArray<RevenueDay>
  /** Churn events of the period's window (others are ignored). */
  readonly churnEvents: ReadonlyArray<ChurnEvent>
  /** The stored name and email of the churned customers; a customer not in it has neither (null). */
  readonly contacts?: ReadonlyArray<CustomerContact>
}

/**
 * Rates of one window. Reactivation is NOT netted against churn: a returning customer is reported as
 * reactivation MRR (and in the revenue report's movements), not as negative churn.
 */
export const churnRates = (rows: ReadonlyArray<RevenueDay>, w: DayWindow, currency: string) => {
  const m = movementsIn(rows, w)
  return {
    window: w,
    customersAtStart: payingCustomersAtEndOf(rows, addDays(w.from, -1)),
    churnedCustomers: m.churnedCustomers,
    customerChurnRate: customerChurnRate(rows, w),
    mrrAtStart: money(m.start, currency),
    churnedMrr: money(m.churned, currency),
    contractionMrr: money(m.contraction, currency),
    expansionMrr: money(m.expansion, currency),
    reactivationMrr: money(m.reactivation, currency),
    grossMrrChurnRate: ratio(m.churned + m.contraction, m.start),
    netMrrChurnRate: ratio(m.churned + m.contraction - m.expansion, m.start)
  }
}

export const churn = (input: ChurnInput): Churn => {
  const window = revenuePeriodWindow(input.period, input.today, input.revenue)
  const contacts = new Map((input.contacts ?? []).map((c) => [c.customerId, c] as const))
  return {
    projectId: input.projectId,
    period: input.period,
    timezone: input.timezone,
    currency: input.currency,
    ...churnRates(input.revenue, window, input.currency),
    churned: input.churnEvents
      .filter((e) => inWindow(e.day, window))
      .map((e) => ({
        customerId: e.customerId,
        name: contacts.get(e.customerId)?.name ?? null,
        email: contacts.get(e.customerId)?.email ?? null,
        date: e.day,
        mrrLost: money(e.mrrLostMinor, input.currency),
        reason: e.reason
      })),
    previous: churnRates(input.revenue, previousWindow(window), input.currency)
  }
}
