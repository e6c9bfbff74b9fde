/**
 * Migration 0017_demo_live: the `demo` provider is gone (the demo projects now connect to the demo's local
 * Stripe, Plausible and Search Console: demo/Providers.ts). A project that had a `demo` integration (only
 * the demo seed made them) loses it, its sync runs, and the payments the old demo seed wrote (their
 * subscriptions were written as versions the Stripe connector would not rebuild the same way, so a Stripe
 * sync over them would leave rows of both); the server's start-up step (demo/Seed.ts attachDemo) then
 * connects the three providers and their first full sync writes the data again. Traffic and search rows
 * are keyed by day and are simply overwritten by those syncs.
 */
import { ddlMigration } from "../platform/Ddl.ts"

const PAYMENT_TABLES = [
  "customers",
  "subscription_versions",
  "charges",
  "refunds",
  "revenue_daily",
  "customer_mrr",
  "churn_events",
  "revenue_unconverted_daily"
]

export const demoLiveMigration = ddlMigration(`
  ${
  PAYMENT_TABLES.map((t) =>
    `DELETE FROM ${t} WHERE project_id IN (SELECT project_id FROM integrations WHERE provider = 'demo');`
  ).join("\n  ")
}
  DELETE FROM sync_runs WHERE provider = 'demo';
  DELETE FROM integrations WHERE provider = 'demo';
`)
