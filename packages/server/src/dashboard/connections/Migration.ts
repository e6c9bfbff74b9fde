/**
 * Migration 0013_oauth_flows: Google OAuth flows between "start" and the owner's choice of a Search Console
 * property. A row is found by the SHA-256 of its `state` (the state itself is never stored), is claimed once
 * (exchanged_at), and holds its PKCE verifier — and, after the code exchange, the refresh token — encrypted
 * with the credentials key (integrations/Crypto.ts). Rows live 15 minutes.
 */
import { ddlMigration } from "../../platform/Ddl.ts"

export const oauthFlowsMigration = ddlMigration(`
    CREATE TABLE oauth_flows (
      id text PRIMARY KEY,
      state_sha256 bytea NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      secrets bytea NOT NULL,
      exchanged_at timestamptz,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX oauth_flows_expiry ON oauth_flows (expires_at)
`)
