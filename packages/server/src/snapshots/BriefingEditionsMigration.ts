/**
 * Migration 0024_briefing_editions: a briefing is recomposed during its day when its data lands (a first sync,
 * a new critical signal: recompute/Recompute.ts). `body` is the current edition; `morning_body` keeps the one
 * first written (null until the first recomposition), `updated_at` when it was last recomposed. Bodies stored
 * before sources were kept gain `updatedAt: null`, `sources` (every kind connected) and a `state` of `connected`
 * on each of yesterday's figures — their figures were taken as data then — so every stored body decodes as the
 * contract's Briefing.
 */
import { ddlMigration } from "../platform/Ddl.ts"

/** The bodies' upgrade on its own: idempotent (bodies that have `sources` are left alone), run by the migration. */
export const UPGRADE_STORED_BRIEFINGS = `UPDATE briefings SET body = jsonb_build_object(
        'updatedAt', null,
        'sources', jsonb_build_object('analytics', 'connected', 'payments', 'connected', 'search', 'connected')
      ) || jsonb_set(body, '{yesterday}', (
        SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = 'object'
          THEN value || '{"state": "connected"}'::jsonb ELSE value END)
        FROM jsonb_each(body -> 'yesterday')
      ))
      WHERE body -> 'sources' IS NULL`

export const briefingEditionsMigration = ddlMigration(`
    ALTER TABLE briefings ADD COLUMN morning_body jsonb, ADD COLUMN updated_at timestamptz;
    ${UPGRADE_STORED_BRIEFINGS}
`)
