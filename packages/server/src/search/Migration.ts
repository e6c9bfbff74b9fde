/**
 * Migration 0005_search: what Google Search Console gives us, per project and day, and the FX rates the
 * reports convert money with. Registered in Migrations.ts.
 *
 * - search_daily (migration 0001) stays the property's daily totals: GSC's totals include anonymised
 *   queries, so they exceed the sum of the query rows.
 * - search_queries_daily / search_pages_daily: the day's top rows (SEARCH_ROWS_PER_DAY, trimmed on write),
 *   so a report's read is bounded by the days of its window.
 * - fx_rates: operator-supplied rates, 1 base = rate quote from `day` until the pair's next rate.
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const searchMigration = ddlMigration(`
    CREATE TABLE search_queries_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      query text NOT NULL,
      clicks integer NOT NULL,
      impressions integer NOT NULL,
      position_weighted double precision NOT NULL,
      PRIMARY KEY (project_id, day, query)
    );
    CREATE TABLE search_pages_daily (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      page text NOT NULL,
      clicks integer NOT NULL,
      impressions integer NOT NULL,
      position_weighted double precision NOT NULL,
      PRIMARY KEY (project_id, day, page)
    );
    CREATE TABLE fx_rates (
      base text NOT NULL CHECK (base ~ '^[A-Z]{3}$'),
      quote text NOT NULL CHECK (quote ~ '^[A-Z]{3}$'),
      day date NOT NULL,
      rate double precision NOT NULL CHECK (rate > 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (base, quote, day)
    )
`)
