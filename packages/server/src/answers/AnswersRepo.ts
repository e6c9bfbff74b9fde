/**
 * Stored answers: the encoded `data` of a report read (analytics, revenue, churn, SEO for each period; the
 * briefing), kept per project and key with the data_version and local day it was computed for, so that the
 * next read of the same report is served as stored text from the authentication lookup's one round trip
 * (access/AccessRepo.ts), exactly as the health read is. Rows are written by the read that found none current;
 * a write of the project's data (which bumps data_version) makes them stale, never wrong.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { ddlMigration } from "../platform/Ddl.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import { Day, dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"

const AnswerRow = Schema.Struct({ day: Day, data_version: Schema.String, computed_at: Instant, encoded: Schema.String })

export type { StoredAnswer } from "../store/Records.ts"
import type { StoredAnswer } from "../store/Records.ts"

/**
 * The key of a project's entry in `GET /projects` (access/ListAnswer.ts): its `health` and `trend`, encoded,
 * kept with the day, data_version and computed_at of the health snapshot it was built from. Unlike the other
 * keys it names no endpoint's whole answer, only the part of a list item that does not depend on the caller.
 */
export const PROJECT_LIST_ENTRY = "projects.entry"

export interface AnswersRepoShape {
  /** Keeps (replaces) the answer under `key`, unless a later computation is already stored. */
  readonly keep: (projectId: string, key: string, answer: StoredAnswer) => Effect.Effect<void>
  /** The stored answer under `key` (the SQL path reads it in the access lookup instead). */
  readonly find: (projectId: string, key: string) => Effect.Effect<StoredAnswer | null>
}

export class AnswersRepo extends Context.Service<AnswersRepo, AnswersRepoShape>()("sitehealth/AnswersRepo") {
  static readonly sql = Layer.effect(
    AnswersRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeFirst = firstOf("stored_answers", AnswerRow)
      return AnswersRepo.of({
        keep: Effect.fn("AnswersRepo.keep")(function*(projectId, key, a) {
          return yield* sql`INSERT INTO stored_answers (project_id, key, day, data_version, computed_at, encoded, gzip)
              SELECT ${projectId}, ${key}, ${a.day}::date, ${a.dataVersion}::bigint, ${a.computedAt}, ${a.encoded}, ${
            a.gzip == null ? null : Buffer.from(a.gzip.buffer, a.gzip.byteOffset, a.gzip.byteLength)
          }::bytea
              WHERE EXISTS (SELECT 1 FROM projects WHERE id = ${projectId})
              ON CONFLICT (project_id, key) DO UPDATE SET day = EXCLUDED.day, data_version = EXCLUDED.data_version,
                computed_at = EXCLUDED.computed_at, encoded = EXCLUDED.encoded, gzip = EXCLUDED.gzip
              WHERE stored_answers.computed_at <= EXCLUDED.computed_at`.pipe(Effect.asVoid, dieOnSqlError)
        }),
        find: Effect.fn("AnswersRepo.find")(function*(projectId, key) {
          return yield* sql`SELECT to_char(day, 'YYYY-MM-DD') AS day,
                data_version::text AS data_version, computed_at, encoded
              FROM stored_answers WHERE project_id = ${projectId} AND key = ${key}`.pipe(
            dieOnSqlError,
            Effect.flatMap(decodeFirst),
            Effect.map((r) =>
              r === null
                ? null
                : { day: r.day, dataVersion: r.data_version, computedAt: r.computed_at, encoded: r.encoded }
            )
          )
        })
      })
    })
  )

  /**
   * Tests: the same, in a map of the memory store (where SnapshotsRepo.memory forgets list entries, as the SQL one
   * does).
   */
  static readonly memory = Layer.effect(
    AnswersRepo,
    Effect.gen(function*() {
      const answers = (yield* MemoryDb).answers
      return AnswersRepo.of({
        keep: Effect.fn("AnswersRepo.keep")((projectId, key, a) =>
          Effect.sync(() => {
            const old = answers.get(`${projectId}|${key}`)
            if (old === undefined || old.computedAt.getTime() <= a.computedAt.getTime()) {
              answers.set(`${projectId}|${key}`, a)
            }
          })
        ),
        find: Effect.fn("AnswersRepo.find")((projectId, key) =>
          Effect.sync(() => answers.get(`${projectId}|${key}`) ?? null)
        )
      })
    })
  )
}

/** Migration 0020_stored_answers_gzip (Migrations.ts): the gzipped body kept beside the text. */
export const answersGzipMigration = ddlMigration(`ALTER TABLE stored_answers ADD COLUMN gzip bytea;`)

/** Migration 0014_stored_answers (Migrations.ts). */
export const answersMigration = ddlMigration(`
  CREATE TABLE stored_answers (
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key text NOT NULL,
    day date NOT NULL,
    data_version bigint NOT NULL,
    computed_at timestamptz NOT NULL,
    encoded text NOT NULL,
    PRIMARY KEY (project_id, key)
  );
`)

/**
 * Migration 0040_revenue_forecast (Migrations.ts): revenue answers kept before the report had `forecast` and
 * `profitRunRate` lack them; they are dropped, so the next read computes the new shape (as 0015 did for analytics).
 */
export const revenueForecastAnswersMigration = ddlMigration(`DELETE FROM stored_answers WHERE key LIKE 'getRevenue?%';`)
