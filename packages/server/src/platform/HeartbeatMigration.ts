/**
 * Migration 0010_worker_heartbeats: one row per worker process (the server's in-process worker or an
 * `npm run worker`), its `beat_at` moved to now() on every poll (platform/Heartbeat.ts). /readyz of a server
 * that runs no worker itself (SITEHEALTH_WORKER=0) reports how long ago ANY worker last beat: older than a
 * minute, the queue is not being worked. Registered last in Migrations.ts.
 *
 * Times are the database's clock (now()), written and compared there: the hosts' clocks may disagree.
 */
import { ddlMigration } from "./Ddl.ts"

export const heartbeatMigration = ddlMigration(`
    CREATE TABLE worker_heartbeats (
      worker_id text PRIMARY KEY,
      hostname text NOT NULL,
      pid integer NOT NULL,
      started_at timestamptz NOT NULL,
      beat_at timestamptz NOT NULL
    )
`)
