/**
 * Row shapes of the tables more than one repository reads: projects (joined by the metrics, snapshots and
 * access reads) and revenue_daily (written by the payments rollup and by MetricsRepo.writeDays).
 */
import { AccountId, ProjectId } from "@sitehealth/domain/Common"
import * as Schema from "effect/Schema"
import type { ProjectRecord } from "./Records.ts"
import type { RevenueDay } from "./Series.ts"
import { Instant } from "./Sql.ts"

/** The projects columns a ProjectRecord is built from; a query may select more. */
export const ProjectRow = Schema.Struct({
  id: ProjectId,
  account_id: AccountId,
  name: Schema.String,
  domain: Schema.String,
  timezone: Schema.String,
  currency: Schema.String,
  created_at: Instant
})
export type ProjectRow = typeof ProjectRow.Type

export const toProjectRecord = (r: ProjectRow): ProjectRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  domain: r.domain,
  timezone: r.timezone,
  currency: r.currency,
  createdAt: r.created_at
})

/** revenue_daily's columns of one RevenueDay. */
export const revenueColumns = (projectId: string, r: RevenueDay) => ({
  project_id: projectId,
  day: r.day,
  gross_minor: r.grossMinor,
  refunds_minor: r.refundsMinor,
  failed_payments: r.failedPayments,
  failed_minor: r.failedMinor,
  mrr_minor: r.mrrMinor,
  customers: r.customers,
  new_mrr_minor: r.newMrrMinor,
  expansion_mrr_minor: r.expansionMrrMinor,
  contraction_mrr_minor: r.contractionMrrMinor,
  churned_mrr_minor: r.churnedMrrMinor,
  reactivation_mrr_minor: r.reactivationMrrMinor,
  new_customers: r.newCustomers,
  churned_customers: r.churnedCustomers,
  reactivated_customers: r.reactivatedCustomers
})
