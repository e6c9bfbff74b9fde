/**
 * Migration 0007_integrations: what a real sync needs. Integrations get their encrypted credentials
 * (AES-256-GCM, see Crypto.ts), a base URL override, the connector's cursor (`state`), the end of the last
 * successful sync and their own sync interval; `sync_requests` becomes `sync_runs`, the durable queue
 * workers claim with FOR UPDATE SKIP LOCKED (lease_until: a run whose worker died is taken over after it).
 * The provider id `google_search_console` becomes `google-search-console`, as in the API paths.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const integrationsMigration = ddlMigration(`
    ALTER TABLE integrations RENAME COLUMN last_synced_at TO last_success_at;
    ALTER TABLE integrations ADD COLUMN credentials bytea;
    ALTER TABLE integrations ADD COLUMN base_url text;
    ALTER TABLE integrations ADD COLUMN state jsonb;
    ALTER TABLE integrations ADD COLUMN sync_interval_minutes integer CHECK (sync_interval_minutes > 0);
    UPDATE integrations SET provider = 'google-search-console' WHERE provider = 'google_search_console';
    ALTER TABLE sync_requests RENAME TO sync_runs;
    ALTER INDEX sync_requests_pending RENAME TO sync_runs_pending;
    ALTER TABLE sync_runs ADD COLUMN started_at timestamptz;
    ALTER TABLE sync_runs ADD COLUMN lease_until timestamptz;
    ALTER TABLE sync_runs ADD COLUMN attempts integer NOT NULL DEFAULT 0;
    ALTER TABLE sync_runs ADD COLUMN counts jsonb;
    ALTER TABLE sync_runs ADD COLUMN error text;
    UPDATE sync_runs SET provider = 'google-search-console' WHERE provider = 'google_search_console';
    CREATE INDEX sync_runs_claim ON sync_runs (requested_at, id) WHERE status IN ('queued','running');
    CREATE INDEX sync_runs_latest ON sync_runs (project_id, provider, requested_at DESC)
`)
