/**
 * Migration 0006_snapshots: what the recompute worker stores. Registered in Migrations.ts.
 *
 * - health_snapshots: one row per project and LOCAL day (the latest computation of the day wins), with
 *   the data_version it was computed from, so a reader knows whether it is behind the data.
 * - signals: stored conditions. At most one OPEN (resolved_at IS NULL) signal per (project, fingerprint);
 *   a resolved one stays as history and a re-appearing condition opens a new row.
 * - briefings: one per project and local date, written once (INSERT … ON CONFLICT DO NOTHING).
 * - project_jobs: the worker's queue, one row per project; claimed with FOR UPDATE SKIP LOCKED.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const snapshotsMigration = ddlMigration(`
    CREATE TABLE health_snapshots (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      computed_at timestamptz NOT NULL,
      data_version bigint NOT NULL,
      score integer,
      confidence double precision NOT NULL,
      status text NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (project_id, day)
    );
    CREATE TABLE signals (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      fingerprint text NOT NULL,
      kind text NOT NULL,
      dimension text NOT NULL,
      severity text NOT NULL CHECK (severity IN ('info','warning','critical')),
      body jsonb NOT NULL,
      detected_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      resolved_at timestamptz
    );
    CREATE UNIQUE INDEX signals_open_fingerprint ON signals (project_id, fingerprint) WHERE resolved_at IS NULL;
    CREATE INDEX signals_project_list ON signals (project_id, (resolved_at IS NOT NULL), detected_at DESC);
    CREATE TABLE briefings (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      local_date date NOT NULL,
      generated_at timestamptz NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (project_id, local_date)
    );
    CREATE TABLE project_jobs (
      project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      due_at timestamptz NOT NULL,
      computed_version bigint,
      computed_day date,
      last_run_at timestamptz
    );
    CREATE INDEX project_jobs_due ON project_jobs (due_at)
`)
