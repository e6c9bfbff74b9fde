/**
 * Migration 0023_customer_contacts: who a customer is, as the payments provider holds it — its name and email
 * address (either may be null) beside its id, so that churned customers and failed payments name people
 * (docs/metrics.md, "Churn"; docs/integrations-stripe.md). Customers stored before it have neither until the
 * next full listing (the daily reconciliation) or a `customer.updated` event fills them.
 *
 * The partial index serves the revenue report's recent failed payments (a project's failed charges by
 * instant) without reading the project's succeeded ones. Registered in Migrations.ts.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const customerContactsMigration = ddlMigration(`
    ALTER TABLE customers ADD COLUMN name text;
    ALTER TABLE customers ADD COLUMN email text;
    CREATE INDEX charges_failed ON charges (project_id, at) WHERE status = 'failed';
`)
