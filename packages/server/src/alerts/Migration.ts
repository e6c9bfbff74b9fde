/** The owner's alert settings (the morning briefing email) and the one row per account and day that sends it once. */
import { ddlMigration } from "../platform/Ddl.ts"

export const alertsMigration = ddlMigration(`
    CREATE TABLE alert_settings (
      account_id text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      briefing_email boolean NOT NULL DEFAULT true,
      briefing_hour integer NOT NULL DEFAULT 8 CHECK (briefing_hour BETWEEN 0 AND 23),
      timezone text,
      updated_at timestamptz NOT NULL
    );
    -- Claimed before sending: two workers, or a restart at 08:00, never send one account's morning twice.
    CREATE TABLE briefing_emails (
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      local_date date NOT NULL,
      claimed_at timestamptz NOT NULL,
      sent_at timestamptz,
      PRIMARY KEY (account_id, local_date)
    );
`)
