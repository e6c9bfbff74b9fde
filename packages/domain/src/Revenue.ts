/** The revenue and churn reports. */
import { Schema } from "effect"
import { DateOnly, Money, Period, ProjectId, Rate } from "./Common.ts"
import { Window } from "./Projects.ts"

export const RevenueWindow = Schema.Struct({
  window: Window,
  gross: Money,
  refunds: Money,
  net: Money,
  newSubscriptions: Schema.Int,
  churnedSubscriptions: Schema.Int
}).annotate({ identifier: "RevenueWindow" })

export const Revenue = Schema.Struct({
  projectId: ProjectId,
  currency: Schema.String,
  asOf: Schema.NullOr(DateOnly).annotate({ description: "Last day with payment data; null when none" }),
  mrr: Money.annotate({ description: "Monthly recurring revenue at asOf (yearly plans count 1/12)" }),
  arr: Money.annotate({ description: "12 × MRR" }),
  activeSubscriptions: Schema.Int,
  arpu: Schema.NullOr(Money).annotate({ description: "MRR / active subscriptions; null with none" }),
  last30Days: RevenueWindow,
  previous30Days: RevenueWindow,
  change: Schema.Struct({ net: Rate, mrr: Rate })
}).annotate({ identifier: "Revenue" })
export type Revenue = typeof Revenue.Type

export const Churn = Schema.Struct({
  projectId: ProjectId,
  window: Window,
  subscriptionsAtStart: Schema.Int,
  newSubscriptions: Schema.Int,
  churnedSubscriptions: Schema.Int,
  subscriptionsAtEnd: Schema.Int,
  customerChurnRate: Rate.annotate({ description: "Churned subscriptions / subscriptions at start of the window" }),
  mrrAtStart: Money,
  churnedMrr: Money,
  revenueChurnRate: Rate.annotate({ description: "Churned MRR / MRR at start of the window" }),
  previous: Schema.Struct({ window: Window, customerChurnRate: Rate, revenueChurnRate: Rate })
}).annotate({ identifier: "Churn" })
export type Churn = typeof Churn.Type

