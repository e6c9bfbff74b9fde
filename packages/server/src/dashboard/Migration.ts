/**
 * The dashboard's tables: its users (email + scrypt hash; one per account until 0056 let accounts have members),
 * their sessions (only the SHA-256 of the cookie's secret is stored) and the signed email links already used.
 */
import { ddlMigration } from "../platform/Ddl.ts"

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

/**
 * Accounts an owner can trust (docs/security.md): the password version that every reset link carries (a change
 * ends every older link), two-factor sign-in (the TOTP secret encrypted like integration credentials, the last
 * time step used so a code works once, the recovery codes' hashes), the sessions' own idle span ("Stay signed
 * in"), and the log-in failures that throttling counts per account, address and pair.
 */
export const dashboardSecurityMigration = ddlMigration(`
    ALTER TABLE dashboard_users ADD COLUMN password_version integer NOT NULL DEFAULT 0;
    ALTER TABLE dashboard_users ADD COLUMN totp_secret bytea;
    ALTER TABLE dashboard_users ADD COLUMN totp_enabled_at timestamptz;
    ALTER TABLE dashboard_users ADD COLUMN totp_last_step bigint;
    ALTER TABLE dashboard_users ADD COLUMN totp_pending bytea;
    ALTER TABLE dashboard_users ADD COLUMN totp_pending_at timestamptz;
    CREATE TABLE dashboard_recovery_codes (
      user_id text NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
      code_sha256 bytea NOT NULL,
      used_at timestamptz,
      PRIMARY KEY (user_id, code_sha256)
    );
    ALTER TABLE dashboard_sessions ADD COLUMN idle_seconds integer NOT NULL DEFAULT 1800;
    ALTER TABLE dashboard_sessions ADD COLUMN persistent boolean NOT NULL DEFAULT false;
    CREATE TABLE dashboard_auth_failures (
      kind text NOT NULL,
      account text NOT NULL,
      address text NOT NULL,
      at timestamptz NOT NULL
    );
    CREATE INDEX dashboard_auth_failures_account ON dashboard_auth_failures (kind, account, at);
    CREATE INDEX dashboard_auth_failures_address ON dashboard_auth_failures (kind, address, at)
`)

/**
 * Roles (docs/dashboard.md): each login has a role in its account, read with the session on every request.
 * Every existing login is its account's owner.
 */
export const dashboardRolesMigration = ddlMigration(`
    ALTER TABLE dashboard_users ADD COLUMN role text NOT NULL DEFAULT 'owner'
      CHECK (role IN ('owner', 'admin', 'viewer'))
`)

/**
 * Team members (docs/dashboard.md#team): an account may have several logins, and invitations to become one. An
 * invitation's link is signed (Links.ts), never stored; the row says whether it is still pending. At most one
 * pending invitation per address and account.
 */
export const dashboardTeamMigration = ddlMigration(`
    ALTER TABLE dashboard_users DROP CONSTRAINT IF EXISTS dashboard_users_account_id_key;
    CREATE INDEX dashboard_users_account ON dashboard_users (account_id, created_at);
    CREATE TABLE dashboard_invitations (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
      invited_by text REFERENCES dashboard_users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      revoked_at timestamptz
    );
    CREATE UNIQUE INDEX dashboard_invitations_pending ON dashboard_invitations (account_id, email)
      WHERE accepted_at IS NULL AND revoked_at IS NULL
`)
