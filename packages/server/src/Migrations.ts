/**
 * Schema migrations, applied in order at start-up (the server, the worker and the admin CLI): each feature keeps
 * its own migration beside its repository; this entry-level module collects them (platform/Database.ts only
 * connects), so the database layer never reaches up into the features.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { billingMigration } from "./accounts/BillingMigration.ts"
import { alertsMigration } from "./alerts/Migration.ts"
import { annotationsMigration } from "./annotations/Migration.ts"
import { answersGzipMigration, answersMigration, revenueForecastAnswersMigration } from "./answers/AnswersRepo.ts"
import { oauthFlowsMigration } from "./dashboard/connections/Migration.ts"
import {
  dashboardMigration,
  dashboardRolesMigration,
  dashboardSecurityMigration,
  dashboardTeamMigration
} from "./dashboard/Migration.ts"
import { demoLiveMigration } from "./demo/Migration.ts"
import { idempotencyMigration } from "./http/IdempotencyMigration.ts"
import { integrationsMigration } from "./integrations/Migration.ts"
import { syncScheduleMigration } from "./integrations/ScheduleMigration.ts"
import { oauthServerMigration } from "./oauth/Migration.ts"
import { customerContactsMigration } from "./payments/ContactsMigration.ts"
import { paymentsIncrementalMigration } from "./payments/IncrementalMigration.ts"
import { paymentsMigration } from "./payments/Migration.ts"
import { paymentsStagingMigration } from "./payments/StagingMigration.ts"
import { ddlMigration } from "./platform/Ddl.ts"
import { heartbeatMigration } from "./platform/HeartbeatMigration.ts"
import { searchMigration } from "./search/Migration.ts"
import { briefingEditionsMigration } from "./snapshots/BriefingEditionsMigration.ts"
import { snapshotsMigration } from "./snapshots/Migration.ts"
import { trafficCountriesMigration, trafficMigration } from "./traffic/Migration.ts"
import {
  entitlementEndingMigration,
  trafficAnomaliesMigration,
  webhookDisabledNoticesMigration,
  webhookDueOrderMigration,
  webhookEmailMigration,
  webhookFormatMigration,
  webhookRecapsMigration,
  webhookRulesMigration,
  webhooksMigration
} from "./webhooks/Migration.ts"

const m0001 = ddlMigration(`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      name text NOT NULL,
      trial_ends_at timestamptz NOT NULL,
      subscription_status text NOT NULL DEFAULT 'none' CHECK (subscription_status IN ('none','active','canceled')),
      subscription_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE projects (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      name text NOT NULL,
      domain text NOT NULL,
      timezone text NOT NULL,
      currency text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX projects_account ON projects (account_id, created_at, id);
    CREATE TABLE tokens (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      name text NOT NULL,
      secret_sha256 bytea NOT NULL UNIQUE,
      last4 text NOT NULL,
      projects text[],
      permissions text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX tokens_account ON tokens (account_id, created_at, id);
    CREATE TABLE expenses (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      currency text NOT NULL,
      category text NOT NULL,
      description text NOT NULL,
      vendor text,
      incurred_on date NOT NULL,
      recurrence text NOT NULL CHECK (recurrence IN ('one_off','monthly','yearly')),
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    );
    CREATE INDEX expenses_project ON expenses (project_id, created_at, id);
    CREATE TABLE integrations (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      provider text NOT NULL,
      status text NOT NULL CHECK (status IN ('connected','error')),
      connected_at timestamptz NOT NULL DEFAULT now(),
      last_synced_at timestamptz,
      last_error text,
      PRIMARY KEY (project_id, provider)
    );
    CREATE TABLE sync_requests (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      provider text NOT NULL,
      mode text NOT NULL,
      status text NOT NULL CHECK (status IN ('queued','running','succeeded','failed')),
      requested_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      requested_by text
    );
    -- At most one queued or running sync per integration, even under concurrent requests.
    CREATE UNIQUE INDEX sync_requests_pending ON sync_requests (project_id, provider) WHERE status IN ('queued','running');
    CREATE TABLE traffic_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      visitors integer NOT NULL,
      pageviews integer NOT NULL,
      sessions integer NOT NULL,
      bounces integer NOT NULL,
      duration_seconds bigint NOT NULL,
      PRIMARY KEY (project_id, day)
    );
    CREATE TABLE revenue_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      gross_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL,
      mrr_minor bigint NOT NULL,
      active_subscriptions integer NOT NULL,
      new_subscriptions integer NOT NULL,
      churned_subscriptions integer NOT NULL,
      churned_mrr_minor bigint NOT NULL,
      PRIMARY KEY (project_id, day)
    );
    CREATE TABLE search_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      clicks integer NOT NULL,
      impressions integer NOT NULL,
      position_weighted double precision NOT NULL,
      PRIMARY KEY (project_id, day)
    );
`)

/** Bumped by every write to a project's reported data, so a cached copy of its series knows it is stale. */
const m0002 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE projects ADD COLUMN data_version bigint NOT NULL DEFAULT 0`
})

/** The health response's encoded JSON, kept beside the snapshot so the hot path serves it as stored. */
const m0008 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE health_snapshots ADD COLUMN encoded text`
})

/**
 * Which computation `encoded` belongs to. A writer that does not know the column (an instance of an older
 * version during a rolling upgrade) updates the snapshot and leaves `encoded` as it was: the two computed_at
 * then differ and the stale text is never served.
 */
const m0011 = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE health_snapshots ADD COLUMN encoded_computed_at timestamptz`
  yield* sql`UPDATE health_snapshots SET encoded = NULL WHERE encoded IS NOT NULL`
})

export const migrations = Migrator.fromRecord({
  "0001_initial": m0001,
  "0002_data_version": m0002,
  "0003_traffic": trafficMigration,
  "0004_payments": paymentsMigration,
  "0005_search": searchMigration,
  "0006_snapshots": snapshotsMigration,
  "0007_integrations": integrationsMigration,
  "0008_health_encoded": m0008,
  "0009_idempotency": idempotencyMigration,
  "0010_worker_heartbeats": heartbeatMigration,
  "0011_health_encoded_computed_at": m0011,
  "0012_dashboard": dashboardMigration,
  "0013_oauth_flows": oauthFlowsMigration,
  "0014_stored_answers": answersMigration,
  "0015_traffic_countries": trafficCountriesMigration,
  "0016_sync_schedule": syncScheduleMigration,
  "0017_demo_live": demoLiveMigration,
  "0018_payments_staging": paymentsStagingMigration,
  "0019_payments_incremental": paymentsIncrementalMigration,
  "0020_stored_answers_gzip": answersGzipMigration,
  // 0021 was written and reverted (git log): a database that ran it must still run this one.
  "0022_dashboard_security": dashboardSecurityMigration,
  "0023_customer_contacts": customerContactsMigration,
  "0024_briefing_editions": briefingEditionsMigration,
  "0025_billing": billingMigration,
  "0030_oauth_server": oauthServerMigration,
  "0035_webhooks": webhooksMigration,
  "0036_alerts": alertsMigration,
  "0037_webhook_format": webhookFormatMigration,
  "0040_revenue_forecast": revenueForecastAnswersMigration,
  "0041_webhook_rules": webhookRulesMigration,
  "0042_webhook_recaps": webhookRecapsMigration,
  "0050_dashboard_roles": dashboardRolesMigration,
  "0055_annotations": annotationsMigration,
  "0056_dashboard_team": dashboardTeamMigration,
  "0057_webhook_email": webhookEmailMigration,
  "0059_traffic_anomalies": trafficAnomaliesMigration,
  "0060_webhook_due_order": webhookDueOrderMigration,
  "0061_webhook_disabled_notices": webhookDisabledNoticesMigration,
  "0062_entitlement_ending": entitlementEndingMigration
})

/**
 * Safe when several instances start at once (a rolling deploy, N replicas): on PostgreSQL, effect/sql's
 * Migrator runs all pending migrations in ONE transaction that begins with `LOCK TABLE sitehealth_migrations
 * IN ACCESS EXCLUSIVE MODE`, so the others wait for it, then read the latest applied id and find nothing left
 * to do; creating the table itself tolerates a concurrent creator. No advisory lock is needed on top
 * (ScaleOut.test.ts starts three servers at once on an empty database).
 */
export const runMigrations = Migrator.make({})({ loader: migrations, table: "sitehealth_migrations" })
