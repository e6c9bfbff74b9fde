/**
 * Migration 0019_payments_incremental: what lets the payments rollup recompute only what changed
 * (docs/integrations-stripe.md, "Incremental rollup").
 *
 * - `payments_customer_moves` / `payments_customer_unconverted`: each customer's part of the day totals (its
 *   MRR movements per day, its unconverted MRR changes per currency and day), replaced for the customers whose
 *   versions changed; revenue_daily sums them per day in SQL.
 * - `payments_flow_days` / `payments_flow_unconverted`: the charges, and apart the refunds, of each local day,
 *   converted (and per currency where no rate converts them), with how many they sum (`items`): an incremental
 *   rollup takes a changed charge's old contribution away and adds its new one.
 * - `payments_rollup_dirty`: what the commits of an incremental sync changed since the last rollup — customers,
 *   and charges and refunds with their row as it was at the last rollup (`old`, null if new) — written in the
 *   commit's transaction so a run that dies before its rollup loses nothing.
 * - `payments_rollup_basis`: the time zone, reporting currency and FX rates the stored parts were computed
 *   with; absent (a commit that does not record its changes removes it) or different → a full rollup.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const paymentsIncrementalMigration = ddlMigration(`
    CREATE TABLE payments_customer_moves (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      customer_id text NOT NULL,
      day date NOT NULL,
      mrr_delta bigint NOT NULL,
      customers_delta integer NOT NULL,
      new_mrr_minor bigint NOT NULL,
      expansion_mrr_minor bigint NOT NULL,
      contraction_mrr_minor bigint NOT NULL,
      churned_mrr_minor bigint NOT NULL,
      reactivation_mrr_minor bigint NOT NULL,
      new_customers integer NOT NULL,
      churned_customers integer NOT NULL,
      reactivated_customers integer NOT NULL,
      PRIMARY KEY (project_id, customer_id, day)
    );
    CREATE TABLE payments_customer_unconverted (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      customer_id text NOT NULL,
      currency text NOT NULL,
      day date NOT NULL,
      delta bigint NOT NULL,
      PRIMARY KEY (project_id, customer_id, currency, day)
    );
    CREATE TABLE payments_flow_days (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      source text NOT NULL CHECK (source IN ('charges','refunds')),
      day date NOT NULL,
      gross_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL,
      failed_payments integer NOT NULL,
      failed_minor bigint NOT NULL,
      items integer NOT NULL,
      PRIMARY KEY (project_id, source, day)
    );
    CREATE TABLE payments_flow_unconverted (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      source text NOT NULL CHECK (source IN ('charges','refunds')),
      currency text NOT NULL,
      day date NOT NULL,
      gross_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL,
      failed_minor bigint NOT NULL,
      items integer NOT NULL,
      PRIMARY KEY (project_id, source, currency, day)
    );
    CREATE TABLE payments_rollup_dirty (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('customer','charge','refund')),
      key text NOT NULL,
      old jsonb,
      PRIMARY KEY (project_id, kind, key)
    );
    CREATE TABLE payments_rollup_basis (
      project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      timezone text NOT NULL,
      currency text NOT NULL,
      rates text NOT NULL
    );
`)
