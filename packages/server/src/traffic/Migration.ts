/**
 * Migration 0003_traffic: the tables of this feature folder. Registered in Migrations.ts.
 *
 * traffic_daily (0001) stays the per-local-day aggregate. Added here: UTC hours, top pages and sources
 * per local day, provider range uniques, and raw self-collected events. Reads only ever touch the
 * aggregates; traffic_events is read by the ingest rollup alone (traffic/Rollup.ts).
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const trafficMigration = ddlMigration(`
    CREATE TABLE traffic_hourly (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      hour timestamptz NOT NULL,
      visitors integer NOT NULL,
      pageviews integer NOT NULL,
      sessions integer NOT NULL,
      bounces integer NOT NULL,
      duration_seconds bigint NOT NULL,
      PRIMARY KEY (project_id, hour)
    );
    CREATE TABLE traffic_pages_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      path text NOT NULL,
      visitors integer NOT NULL,
      pageviews integer NOT NULL,
      PRIMARY KEY (project_id, day, path)
    );
    CREATE TABLE traffic_sources_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      source text NOT NULL,
      visitors integer NOT NULL,
      sessions integer NOT NULL,
      PRIMARY KEY (project_id, day, source)
    );
    CREATE TABLE traffic_uniques (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      from_day date NOT NULL,
      to_day date NOT NULL,
      visitors integer NOT NULL,
      PRIMARY KEY (project_id, from_day, to_day),
      CHECK (to_day >= from_day)
    );
    CREATE TABLE traffic_events (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      occurred_at timestamptz NOT NULL,
      visitor_id text NOT NULL,
      session_id text NOT NULL,
      path text NOT NULL,
      source text,
      duration_seconds integer NOT NULL DEFAULT 0
    );
    CREATE INDEX traffic_events_time ON traffic_events (project_id, occurred_at);
    CREATE INDEX traffic_events_session ON traffic_events (project_id, session_id)
`)

/**
 * Migration 0015_traffic_countries: visitors per project, LOCAL day and country (ISO 3166-1 alpha-2), the
 * top TOP_PER_DAY countries of a day, written by providers (Plausible's `visit:country` breakdown, the demo
 * data) through TrafficRepo.write. Self-collected events carry no country, so the ingest rollup never
 * writes here. Analytics answers stored before it (answers/, migration 0014) lack `topCountries` and the tops'
 * previous figures: they are dropped, so the next read computes the new shape.
 */
export const trafficCountriesMigration = ddlMigration(`
  CREATE TABLE traffic_countries_daily (
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day date NOT NULL,
    country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    visitors integer NOT NULL,
    PRIMARY KEY (project_id, day, country)
  );
  DELETE FROM stored_answers WHERE key LIKE 'getAnalytics?%';
`)
