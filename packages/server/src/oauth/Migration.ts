/**
 * The MCP authorization server's tables (docs/mcp.md, "Connecting by URL"): the clients that registered
 * themselves (RFC 7591), the authorization codes and the refresh tokens. A code and a refresh token are kept
 * by the SHA-256 of their secret only. A grant's access token is an ordinary row of `tokens`: a refresh token
 * belongs to it (its family) and goes with it.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const oauthServerMigration = ddlMigration(`
    CREATE TABLE oauth_clients (
      id text PRIMARY KEY,
      name text NOT NULL,
      redirect_uris text[] NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE TABLE oauth_codes (
      secret_sha256 bytea PRIMARY KEY,
      client_id text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      projects text[],
      permissions text[] NOT NULL,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      resource text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      token_id text REFERENCES tokens(id) ON DELETE SET NULL
    );
    CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);
    CREATE TABLE oauth_refresh_tokens (
      secret_sha256 bytea PRIMARY KEY,
      token_id text NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
      client_id text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
      resource text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    );
    CREATE INDEX oauth_refresh_tokens_token ON oauth_refresh_tokens (token_id)
`)
