/** The webhook endpoints of each website, and the outbox: one event, one delivery per endpoint it goes to. */
import { ddlMigration } from "../platform/Ddl.ts"

export const webhooksMigration = ddlMigration(`
    CREATE TABLE webhooks (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      events text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      failing_since timestamptz,
      -- AES-256-GCM under SITEHEALTH_SECRET_KEY (integrations/Crypto.ts), never the secret itself.
      secret_enc bytea NOT NULL,
      previous_secret_enc bytea,
      previous_secret_expires_at timestamptz,
      secret_rotated_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX webhooks_project ON webhooks (project_id, created_at, id);
    -- The outbox: written in the same transaction as the change that caused the event.
    CREATE TABLE webhook_events (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      type text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      event_id text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
      webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('pending','succeeded','failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      first_attempt_at timestamptz,
      last_attempt_at timestamptz,
      response_status integer,
      latency_ms integer,
      response_excerpt text,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
`)

/** A webhook's format: the signed event, or a Slack incoming-webhook message (Slack.ts). */
export const webhookFormatMigration = ddlMigration(`
    ALTER TABLE webhooks ADD COLUMN format text NOT NULL DEFAULT 'standard_webhooks'
      CHECK (format IN ('standard_webhooks', 'slack'))
`)

/** Each endpoint's rules (docs/alerts.md): a minimum money at stake (minor units) and a minimum signal severity. */
export const webhookRulesMigration = ddlMigration(`
    ALTER TABLE webhooks ADD COLUMN min_money_at_stake integer CHECK (min_money_at_stake >= 0);
    ALTER TABLE webhooks ADD COLUMN min_severity text CHECK (min_severity IN ('info', 'warning', 'critical'))
`)

/**
 * Each endpoint's cadence (live, or a daily/weekly/monthly recap), what the rules compare kept with each event
 * (for the recaps), and one row per endpoint and period: a recap is written once, whatever the workers.
 */
export const webhookRecapsMigration = ddlMigration(`
    ALTER TABLE webhooks ADD COLUMN cadence text NOT NULL DEFAULT 'live'
      CHECK (cadence IN ('live', 'daily', 'weekly', 'monthly'));
    ALTER TABLE webhook_events ADD COLUMN money integer;
    ALTER TABLE webhook_events ADD COLUMN severity text;
    CREATE INDEX webhook_events_project ON webhook_events (project_id, created_at);
    CREATE TABLE webhook_recaps (
      webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      period_start date NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (webhook_id, period_start)
    )
`)

/** Email destinations (Email.ts): format `email`, url `mailto:` one member of the account. */
export const webhookEmailMigration = ddlMigration(`
    ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_format_check;
    ALTER TABLE webhooks ADD CONSTRAINT webhooks_format_check CHECK (format IN ('standard_webhooks', 'slack', 'email'))
`)

/**
 * One row per website and UTC hour whose `traffic.anomaly` was written (worker/TrafficAnomalies.ts), claimed in the
 * transaction that writes the event: two workers, or a restart, write it once.
 */
export const trafficAnomaliesMigration = ddlMigration(`
    CREATE TABLE traffic_anomaly_claims (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      hour timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (project_id, hour)
    )
`)

/**
 * The due deliveries in the order the worker takes them (WebhooksRepo.claim: next_attempt_at, id): it reads the
 * first `limit` of the index and stops, where the index of next_attempt_at alone had it sort every due delivery
 * of a backlog on each round (10,000 pending: ~50 ms a claim instead of a few).
 */
export const webhookDueOrderMigration = ddlMigration(`
    DROP INDEX webhook_deliveries_due;
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending'
`)

/**
 * The owner's notice that an endpoint was disabled after 3 days of failures (webhooks/Disabled.ts): one row per
 * endpoint and failing streak, claimed before the mail goes, so two workers send it once.
 */
export const webhookDisabledNoticesMigration = ddlMigration(`
    CREATE TABLE webhook_disabled_notices (
      webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      failing_since timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (webhook_id, failing_since)
    )
`)

/**
 * One row per account and end date whose `entitlement.ending` events were written (worker/EntitlementEnding.ts),
 * claimed in the same transaction: two workers, or a restart, write them once.
 */
export const entitlementEndingMigration = ddlMigration(`
    CREATE TABLE entitlement_ending_claims (
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      ends_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, ends_at)
    )
`)
