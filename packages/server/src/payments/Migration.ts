/**
 * Migration 0004_payments: what the payments provider gives us (customers, subscription versions, charges,
 * refunds — provider ids unique per project) and what the rollup derives from it on every write
 * (revenue_daily, customer_mrr, churn_events, revenue_unconverted_daily). Registered in Migrations.ts.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const paymentsMigration = ddlMigration(`
    CREATE TABLE customers (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      id text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (project_id, id)
    );
    CREATE TABLE subscription_versions (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      subscription_id text NOT NULL,
      customer_id text NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz,
      status text NOT NULL CHECK (status IN ('trialing','active','past_due','unpaid','canceled','incomplete')),
      currency text NOT NULL,
      unit_amount_minor bigint NOT NULL,
      quantity integer NOT NULL,
      interval text NOT NULL CHECK (interval IN ('day','week','month','year')),
      interval_count integer NOT NULL CHECK (interval_count > 0),
      discount_percent_off numeric,
      discount_amount_off_minor bigint,
      cancel_reason text,
      PRIMARY KEY (project_id, subscription_id, valid_from)
    );
    CREATE TABLE charges (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      id text NOT NULL,
      customer_id text NOT NULL,
      at timestamptz NOT NULL,
      amount_minor bigint NOT NULL,
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('succeeded','failed')),
      PRIMARY KEY (project_id, id)
    );
    CREATE TABLE refunds (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      id text NOT NULL,
      charge_id text NOT NULL,
      at timestamptz NOT NULL,
      amount_minor bigint NOT NULL,
      currency text NOT NULL,
      PRIMARY KEY (project_id, id)
    );
    DROP TABLE revenue_daily;
    CREATE TABLE revenue_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      gross_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL,
      failed_payments integer NOT NULL,
      failed_minor bigint NOT NULL,
      mrr_minor bigint NOT NULL,
      customers integer NOT NULL,
      new_mrr_minor bigint NOT NULL,
      expansion_mrr_minor bigint NOT NULL,
      contraction_mrr_minor bigint NOT NULL,
      churned_mrr_minor bigint NOT NULL,
      reactivation_mrr_minor bigint NOT NULL,
      new_customers integer NOT NULL,
      churned_customers integer NOT NULL,
      reactivated_customers integer NOT NULL,
      PRIMARY KEY (project_id, day)
    );
    CREATE TABLE customer_mrr (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      customer_id text NOT NULL,
      from_day date NOT NULL,
      to_day date,
      mrr_minor bigint NOT NULL,
      PRIMARY KEY (project_id, customer_id, from_day)
    );
    CREATE INDEX customer_mrr_days ON customer_mrr (project_id, from_day, to_day);
    CREATE TABLE churn_events (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      customer_id text NOT NULL,
      day date NOT NULL,
      mrr_lost_minor bigint NOT NULL,
      reason text,
      PRIMARY KEY (project_id, day, customer_id)
    );
    CREATE TABLE revenue_unconverted_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      currency text NOT NULL,
      day date NOT NULL,
      mrr_minor bigint NOT NULL,
      gross_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL,
      failed_minor bigint NOT NULL,
      PRIMARY KEY (project_id, currency, day)
    );
`)
