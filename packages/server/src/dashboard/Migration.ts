/**
 * The dashboard's tables: its users (one per account, email + scrypt hash), their sessions (only the SHA-256
 * of the cookie's secret is stored) and the signed email links already used (single use).
 */
import { ddlMigration } from "../db/Ddl.ts"

export const dashboardMigration = ddlMigration(`
    CREATE TABLE dashboard_users (
      id text PRIMARY KEY,
      account_id text NOT NULL UNIQUE REFERENCES accounts(id) ON DELETE CASCADE,
      email text NOT NULL UNIQUE,
      password_hash text,
      email_verified_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE TABLE dashboard_sessions (
      id text PRIMARY KEY,
      secret_sha256 bytea NOT NULL UNIQUE,
      user_id text NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      idle_expires_at timestamptz NOT NULL,
      absolute_expires_at timestamptz NOT NULL,
      user_agent text,
      address text
    );
    CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id, created_at);
    CREATE TABLE dashboard_used_links (
      id bytea PRIMARY KEY,
      used_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )
`)
