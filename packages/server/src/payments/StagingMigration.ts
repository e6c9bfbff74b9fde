/**
 * Migration 0018_payments_staging: what lets a payments sync stream and resume (docs/integrations-stripe.md,
 * "Streaming, resuming").
 *
 * - `payments_staged`: the provider objects a rebuild of derived facts needs later, kept between runs as
 *   compact JSON — for Stripe, each subscription as it is now (kind `subscription`) and the subscription
 *   lines of each invoice (kind `lines`, one row per invoice and subscription). `group_id` is what they are
 *   rebuilt together by (the subscription: its versions come from it and its lines), `parent_id` what
 *   replaces them as a whole (the invoice: a re-read invoice replaces its lines).
 * - `payments_sync_progress`: where a running sync has got to, committed with each batch it writes, so a
 *   run that dies continues from there instead of from the start.
 * - an index on subscription_versions by customer: the rollup reads versions customer range by customer
 *   range, and a sync replaces the versions of the subscriptions it rebuilt.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const paymentsStagingMigration = ddlMigration(`
    CREATE TABLE payments_staged (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      kind text NOT NULL,
      id text NOT NULL,
      parent_id text NOT NULL,
      group_id text NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (project_id, kind, id)
    );
    CREATE INDEX payments_staged_group ON payments_staged (project_id, group_id);
    CREATE INDEX payments_staged_parent ON payments_staged (project_id, kind, parent_id);
    CREATE TABLE payments_sync_progress (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      provider text NOT NULL,
      progress jsonb NOT NULL,
      PRIMARY KEY (project_id, provider)
    );
    CREATE INDEX subscription_versions_customer ON subscription_versions (project_id, customer_id);
`)
