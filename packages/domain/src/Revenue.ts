/** The revenue and churn reports. Definitions with formulas: docs/metrics.md, "Revenue" and "Churn". */
import * as Schema from "effect/Schema"
import { Currency, DateOnly, Integer, Money, Period, ProjectId, Rate } from "./Common.ts"
import { Window } from "./Projects.ts"

const converted = "in the reporting currency; amounts without an FX rate are left out and listed in `unconverted`"

export const MrrMovements = Schema.Struct({
  start: Money.annotateKey({ description: "MRR at the end of the day before the window" }),
  new: Money.annotateKey({ description: "MRR of customers paying for the first time in the window" }),
  expansion: Money.annotateKey({ description: "MRR increases of paying customers" }),
  contraction: Money.annotateKey({ description: "MRR decreases of customers who keep paying" }),
  churned: Money.annotateKey({ description: "MRR of customers whose MRR went to 0 (the MRR they had the day before)" }),
  reactivation: Money.annotateKey({ description: "MRR of customers who had paid before, went to 0 and came back" }),
  netNew: Money.annotateKey({ description: "new + expansion + reactivation − contraction − churned" }),
  end: Money.annotateKey({ description: "MRR at the end of the window; always start + netNew exactly" }),
  newCustomers: Integer.annotate({ description: "Customers who started paying for the first time" }),
  churnedCustomers: Integer.annotate({ description: "Churn events (a customer going from paying to 0)" }),
  reactivatedCustomers: Integer.annotate({ description: "Customers who came back from 0" })
}).annotate({ identifier: "MrrMovements", description: `MRR movements over the window, ${converted}` })

export const RevenueWindow = Schema.Struct({
  window: Window,
  gross: Money.annotateKey({ description: "Succeeded charges on days in the window" }),
  refunds: Money.annotateKey({
    description: "Refunds issued on days in the window (on the refund's day, not the charge's)"
  }),
  net: Money.annotateKey({ description: "gross − refunds" })
}).annotate({ identifier: "RevenueWindow", description: `Cash collected, ${converted}` })

export const UnconvertedAmount = Schema.Struct({
  currency: Currency,
  mrr: Money.annotateKey({ description: "MRR at asOf in this currency that has no FX rate to the reporting currency" }),
  gross: Money.annotateKey({ description: "Succeeded charges of the last 30 days in this currency without a rate" }),
  refunds: Money.annotateKey({ description: "Refunds of the last 30 days in this currency without a rate" })
}).annotate({ identifier: "UnconvertedAmount", description: "Amounts never summed into the converted figures" })

const customerName = Schema.NullOr(Schema.String).annotate({
  description: "The customer's name as the payment provider holds it; null when it holds none"
})
const customerEmail = Schema.NullOr(Schema.String).annotate({
  description: "The customer's email address as the payment provider holds it; null when it holds none"
})

export const FailedPayment = Schema.Struct({
  chargeId: Schema.String.annotate({ description: "The payment provider's charge id" }),
  customerId: Schema.NullOr(Schema.String).annotate({
    description: "The payment provider's customer id; null for a charge without a customer (a guest checkout)"
  }),
  name: customerName,
  email: customerEmail,
  amount: Money.annotateKey({ description: "The charge's amount in its own currency, as the provider holds it" }),
  day: DateOnly.annotate({ description: "The local day of the attempt (project time zone)" })
}).annotate({ identifier: "FailedPayment", description: "One failed charge attempt" })

export const MrrForecast = Schema.Struct({
  level: Schema.Finite.annotate({ description: "How sure the range is: 0.8 = an 80% interval" }),
  basis: Schema.Struct({
    months: Integer.annotate({ description: "How many monthly movements the forecast is fitted on (3 to 6)" }),
    from: Schema.String.annotate({ description: "First month (YYYY-MM) of those movements" }),
    to: Schema.String.annotate({ description: "Last month (YYYY-MM): the last complete calendar month" }),
    averageChange: Money.annotateKey({ description: "The mean monthly MRR movement: the forecast's drift" }),
    standardDeviation: Money.annotateKey({
      description: "The movements' sample standard deviation: how erratic they were; it widens the range"
    })
  }).annotate({ description: "What the forecast stands on" }),
  points: Schema.Array(Schema.Struct({
    months: Integer.annotate({ description: "Months ahead of today: 3, 6 or 12" }),
    month: Schema.String.annotate({ description: "The calendar month (YYYY-MM) that many months after this one" }),
    mrr: Money.annotateKey({ description: "Expected MRR: MRR today + averageChange × months (never below 0)" }),
    low: Money.annotateKey({ description: "Bottom of the range at `level` (never below 0)" }),
    high: Money.annotateKey({ description: "Top of the range at `level`" })
  })).annotate({ description: "One point per horizon, nearest first" })
}).annotate({ identifier: "MrrForecast", description: `MRR ahead, from the recent monthly movements, ${converted}` })

export const ProfitRunRate = Schema.Struct({
  window: Window.annotateKey({ description: "The last 90 days, today included" }),
  revenueNet: Money.annotateKey({ description: "Succeeded charges − refunds of those days" }),
  expenses: Money.annotateKey({ description: "Expenses attributed to those days, as in profitability" }),
  unconvertedExpenses: Schema.Array(Money).annotate({
    description: "Attributed expenses with no FX rate, per currency; not in expenses or profit"
  }),
  profit: Money.annotateKey({ description: "revenueNet − expenses over the 90 days" }),
  perMonth: Money.annotateKey({ description: "profit × 30.4375 ÷ 90: the run-rate per average month" })
}).annotate({ identifier: "ProfitRunRate", description: "The last 90 days' net profit per month" })

/** How many failed payments `failedPayments.recent` lists at most. */
export const RECENT_FAILED_PAYMENTS = 20

export const Revenue = Schema.Struct({
  projectId: ProjectId,
  period: Period,
  window: Window.annotateKey({ description: "The period's days (project time zone); movements, NRR, GRR apply to it" }),
  timezone: Schema.String.annotate({ description: "The project's IANA time zone; every day is a local day" }),
  currency: Currency.annotate({ description: "The project's reporting currency" }),
  asOf: DateOnly.annotate({ description: "Today in the project's time zone: MRR and customers are at its end" }),
  dataThrough: Schema.NullOr(DateOnly).annotate({
    description: "Last day anything happened in the payment data; null when none"
  }),
  mrr: Money.annotateKey({
    description:
      "Monthly recurring revenue at asOf: active and past_due subscriptions, normalised to a month, discounts applied"
  }),
  arr: Money.annotateKey({ description: "12 × MRR" }),
  customers: Integer.annotate({ description: "Paying customers (MRR > 0) at asOf" }),
  arpu: Schema.NullOr(Money).annotate({ description: "MRR ÷ customers; null with no customers" }),
  monthlyChurnRate: Rate.annotate({
    description: "Customer churn rate of the last 30 days (churned ÷ paying 30 days before), used by LTV"
  }),
  ltv: Schema.NullOr(Money).annotate({
    description: "ARPU ÷ monthlyChurnRate; null when either is null or the rate is 0"
  }),
  movements: MrrMovements,
  nrr: Rate.annotate({
    description:
      "Net revenue retention over the window: Σ MRR at the end of customers paying at the start ÷ Σ their MRR at the " +
      "start"
  }),
  grr: Rate.annotate({
    description: "Gross revenue retention: as NRR with each customer's end MRR capped at its start MRR"
  }),
  quickRatio: Rate.annotate({
    description: "(new + expansion + reactivation) ÷ (contraction + churned); null when nothing was lost"
  }),
  last30Days: RevenueWindow,
  previous30Days: RevenueWindow,
  change: Schema.Struct({
    net: Rate.annotate({ description: "(net last 30 days − net previous 30) ÷ |net previous 30|" })
  }).annotate({ description: "Changes against the previous 30 days" }),
  failedPayments: Schema.Struct({
    count: Integer.annotate({ description: "Failed charge attempts in the last 30 days" }),
    amount: Money.annotateKey({ description: `Their amount, ${converted}` }),
    recent: Schema.Array(FailedPayment).annotate({
      description: `The newest ${RECENT_FAILED_PAYMENTS} of them at most, newest first, each with its customer`
    })
  }).annotate({ description: "Failed payments of the last 30 days" }),
  mrrSeries: Schema.Array(Schema.Struct({
    month: Schema.String.annotate({ description: "Calendar month YYYY-MM" }),
    mrr: Money.annotateKey({ description: "MRR at the end of the month's last day (at asOf for the current month)" })
  })).annotate({ description: "Month-end MRR of the last 12 calendar months, oldest first, zero-filled" }),
  unconverted: Schema.Array(UnconvertedAmount).annotate({
    description: "Per currency without an FX rate; empty when every amount converted"
  }),
  profitability: Schema.Struct({
    window: Window.annotateKey({ description: "The period's window" }),
    revenueNet: Money.annotateKey({ description: "Succeeded charges − refunds of the window's days" }),
    expenses: Money.annotateKey({
      description:
        "Expenses attributed to the window (one-off on their day; recurring ones spread over the days of the month " +
        "or year each occurrence covers), converted with the stored FX rates"
    }),
    unconvertedExpenses: Schema.Array(Money).annotate({
      description:
        "Attributed expenses with no FX rate into the reporting currency, per currency; not in expenses or profit"
    }),
    profit: Money.annotateKey({ description: "revenueNet − expenses" }),
    margin: Rate.annotate({ description: "profit ÷ revenueNet; null when revenueNet ≤ 0" })
  }).annotate({ description: "Revenue minus expenses over the period (docs/metrics.md, Profitability)" }),
  forecast: Schema.NullOr(MrrForecast).annotate({
    description: "MRR 3, 6, 12 months ahead with a range (docs/metrics.md); null before 3 months of movements"
  }),
  profitRunRate: ProfitRunRate
}).annotate({ identifier: "Revenue" })
export type Revenue = typeof Revenue.Type

export const ChurnedCustomer = Schema.Struct({
  customerId: Schema.String.annotate({ description: "The payment provider's customer id" }),
  name: customerName,
  email: customerEmail,
  date: DateOnly.annotate({ description: "The local day the customer's MRR went to 0" }),
  mrrLost: Money.annotateKey({ description: "Its MRR the day before" }),
  reason: Schema.NullOr(Schema.String).annotate({ description: "The cancel reason the provider gave; null when none" })
}).annotate({ identifier: "ChurnedCustomer" })

export const ChurnRates = Schema.Struct({
  window: Window,
  customersAtStart: Integer.annotate({ description: "Paying customers at the end of the day before the window" }),
  churnedCustomers: Integer.annotate({
    description: "Churn events in the window (a customer who churns twice counts twice)"
  }),
  customerChurnRate: Rate.annotate({ description: "Logo churn: churnedCustomers ÷ customersAtStart" }),
  mrrAtStart: Money.annotateKey({ description: "MRR at the end of the day before the window" }),
  churnedMrr: Money.annotateKey({ description: "MRR lost by customers going to 0 in the window" }),
  contractionMrr: Money.annotateKey({ description: "MRR lost by downgrades of customers who keep paying" }),
  expansionMrr: Money.annotateKey({ description: "MRR gained by upgrades of paying customers" }),
  reactivationMrr: Money.annotateKey({ description: "MRR of returning customers; NOT counted in the churn rates" }),
  grossMrrChurnRate: Rate.annotate({ description: "(churnedMrr + contractionMrr) ÷ mrrAtStart" }),
  netMrrChurnRate: Rate.annotate({
    description: "(churnedMrr + contractionMrr − expansionMrr) ÷ mrrAtStart; negative when expansion outweighs losses"
  })
}).annotate({ identifier: "ChurnRates" })

export const Churn = Schema.Struct({
  projectId: ProjectId,
  period: Period,
  timezone: Schema.String.annotate({ description: "The project's IANA time zone; every day is a local day" }),
  currency: Currency.annotate({ description: "The project's reporting currency" }),
  ...ChurnRates.fields,
  churned: Schema.Array(ChurnedCustomer).annotate({ description: "Every churn event of the window, oldest first" }),
  previous: ChurnRates.annotateKey({ description: "The same figures for the previous window of equal length" })
}).annotate({ identifier: "Churn" })
export type Churn = typeof Churn.Type
