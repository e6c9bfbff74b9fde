/**
 * Migration 0016_sync_schedule: each integration keeps when its next scheduled sync is due
 * (`next_sync_at`, written when a run ends: its next slot, or its back-off after a failure — Schedule.ts)
 * and how many runs in a row have failed (`failures`, 0 after a success). NULL = not scheduled yet (a new
 * connection before its first run ends): due at its first slot after connected_at. `history_pending`: the
 * run that brought its history succeeded and the project's history is still to be rebuilt (set with the
 * run's success, cleared in the rebuild's transaction: a worker that dies in between leaves it set, and
 * the next round does it). Integrations that
 * existed before get a time spread over the next hour, so the upgrade does not queue them all at once.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const syncScheduleMigration = ddlMigration(`
  ALTER TABLE integrations ADD COLUMN next_sync_at timestamptz;
  ALTER TABLE integrations ADD COLUMN failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0);
  ALTER TABLE integrations ADD COLUMN history_pending boolean NOT NULL DEFAULT false;
  UPDATE integrations SET next_sync_at = now() + random() * interval '1 hour';
  CREATE INDEX integrations_next_sync ON integrations (next_sync_at);
`)
