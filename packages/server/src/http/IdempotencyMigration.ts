/**
 * Migration 0009_idempotency: the stored answers of POSTs sent with an `Idempotency-Key` (http/Idempotency.ts).
 * Registered in Migrations.ts.
 *
 * One row per (token, key). `status` is 'running' from the claim (INSERT … ON CONFLICT DO NOTHING: one
 * winner among racing requests and instances) until the answer is stored ('done', with `response_status` and
 * `response_body` — the envelope as sent, never a token secret). `created_at` is when the key was claimed:
 * rows older than 24 h are deleted lazily by later claims, through the index on it.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const idempotencyMigration = ddlMigration(`
    CREATE TABLE idempotency_keys (
      token_id text NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
      key text NOT NULL,
      request_hash text NOT NULL,
      status text NOT NULL CHECK (status IN ('running','done')),
      response_status integer,
      response_body text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (token_id, key),
      CHECK (status = 'running' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
    );
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)
`)
