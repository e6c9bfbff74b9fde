/**
 * The ingest rollup over SQL: re-aggregates the affected hours, local days and local months from
 * traffic_events with INSERT … SELECT … GROUP BY … ON CONFLICT DO UPDATE, by the rules written in
 * traffic/Aggregate.ts (which the in-memory store runs in TypeScript). Each statement reads the events of
 * its buckets through the (project_id, occurred_at) index, plus the other events of the sessions that
 * start in them through (project_id, session_id). Pages and sources are replaced per day (DELETE then
 * INSERT) because a path can fall out of a day's top TOP_PER_DAY.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type Affected, boundsOf } from "./Aggregate.ts"
import { TOP_PER_DAY } from "./Types.ts"

export const rollupSql = (sql: SqlClient.SqlClient, projectId: string, timezone: string, affected: Affected) =>
  Effect.gen(function*() {
    if (affected.hours.length === 0 && affected.days.length === 0) return
    const b = boundsOf(affected, timezone)
    const hours = JSON.stringify(affected.hours)
    const days = JSON.stringify(affected.days)
    const months = JSON.stringify(affected.months)

    // Visitors, page views, sessions, bounces and time of each bucket in `events` (its rows carry the bucket
    // in a column of that name). A session counts in the bucket of its first event, `sessionBucket` (over
    // min(e.occurred_at)), and bounced when it has one event.
    const upsertTotals = (
      table: "traffic_hourly" | "traffic_daily",
      bucket: "hour" | "day",
      events: Statement.Fragment,
      sessionBucket: Statement.Fragment
    ) =>
      sql`WITH ev AS (${events}),
      views AS (SELECT ${sql(bucket)}, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews FROM ev GROUP BY ${
        sql(bucket)
      }),
      sess AS (SELECT ${sessionBucket} AS ${sql(bucket)}, count(*) AS events, sum(e.duration_seconds) AS duration
        FROM traffic_events e WHERE e.project_id = ${projectId} AND e.session_id IN (SELECT session_id FROM ev)
        GROUP BY e.session_id),
      merged AS (SELECT ${sql(bucket)}, visitors, pageviews, 0 AS sessions, 0 AS bounces, 0 AS duration FROM views
        UNION ALL SELECT ${sql(bucket)}, 0, 0, 1, CASE WHEN events = 1 THEN 1 ELSE 0 END, duration FROM sess)
      INSERT INTO ${sql(table)} (project_id, ${sql(bucket)}, visitors, pageviews, sessions, bounces, duration_seconds)
      SELECT ${projectId}, ${sql(bucket)}, sum(visitors), sum(pageviews), sum(sessions), sum(bounces), sum(duration)
      FROM merged GROUP BY ${sql(bucket)}
      -- Only buckets with page views here, i.e. the affected ones: a session that started before them is left out.
      HAVING sum(pageviews) > 0
      ON CONFLICT (project_id, ${
        sql(bucket)
      }) DO UPDATE SET visitors = EXCLUDED.visitors, pageviews = EXCLUDED.pageviews,
        sessions = EXCLUDED.sessions, bounces = EXCLUDED.bounces, duration_seconds = EXCLUDED.duration_seconds`

    // Joins (not IN lists) against the affected buckets, so the planner hashes them.
    const hourEvents = sql`SELECT a.hour, e.visitor_id, e.session_id
      FROM traffic_events e
      JOIN (SELECT value::timestamptz AS hour FROM json_array_elements_text(${hours}::json)) a
        ON a.hour = date_trunc('hour', e.occurred_at, 'UTC')
      WHERE e.project_id = ${projectId} AND e.occurred_at >= ${b.hours.lo}::timestamptz AND e.occurred_at <
        ${b.hours.hi}::timestamptz`
    const dayEvents = sql`SELECT a.day, e.occurred_at, e.visitor_id, e.session_id, e.path,
        coalesce(e.source, 'direct') AS source
      FROM traffic_events e
      JOIN (SELECT value::date AS day FROM json_array_elements_text(${days}::json)) a
        ON a.day = (e.occurred_at AT TIME ZONE ${timezone})::date
      WHERE e.project_id = ${projectId} AND e.occurred_at >= ${b.days.lo}::timestamptz AND e.occurred_at <
        ${b.days.hi}::timestamptz`

    yield* upsertTotals("traffic_hourly", "hour", hourEvents, sql`date_trunc('hour', min(e.occurred_at), 'UTC')`)
    yield* upsertTotals("traffic_daily", "day", dayEvents, sql`(min(e.occurred_at) AT TIME ZONE ${timezone})::date`)

    yield* sql`DELETE FROM traffic_pages_daily WHERE project_id = ${projectId}
      AND day IN (SELECT value::date FROM json_array_elements_text(${days}::json))`
    yield* sql`WITH ev AS (${dayEvents}),
      ranked AS (SELECT day, path, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews,
          row_number() OVER (PARTITION BY day ORDER BY count(*) DESC, path COLLATE "C") AS rank
        FROM ev GROUP BY day, path)
      INSERT INTO traffic_pages_daily (project_id, day, path, visitors, pageviews)
      SELECT ${projectId}, day, path, visitors, pageviews FROM ranked WHERE rank <= ${TOP_PER_DAY}`

    yield* sql`DELETE FROM traffic_sources_daily WHERE project_id = ${projectId}
      AND day IN (SELECT value::date FROM json_array_elements_text(${days}::json))`
    yield* sql`WITH ev AS (${dayEvents}),
      ranked AS (SELECT day, source, count(DISTINCT visitor_id) AS visitors, count(DISTINCT session_id) AS sessions,
          row_number() OVER (PARTITION BY day ORDER BY count(DISTINCT visitor_id) DESC, source COLLATE "C") AS rank
        FROM ev GROUP BY day, source)
      INSERT INTO traffic_sources_daily (project_id, day, source, visitors, sessions)
      SELECT ${projectId}, day, source, visitors, sessions FROM ranked WHERE rank <= ${TOP_PER_DAY}`

    yield* sql`WITH ev AS (SELECT (occurred_at AT TIME ZONE ${timezone})::date AS day, visitor_id FROM traffic_events
        WHERE project_id = ${projectId} AND occurred_at >= ${b.months.lo}::timestamptz
          AND occurred_at < ${b.months.hi}::timestamptz),
      months AS (SELECT (value || '-01')::date AS from_day FROM json_array_elements_text(${months}::json))
      INSERT INTO traffic_uniques (project_id, from_day, to_day, visitors)
      SELECT ${projectId}, m.from_day, (m.from_day + interval '1 month' - interval '1 day')::date, count(DISTINCT
        ev.visitor_id)
      FROM ev JOIN months m ON m.from_day = date_trunc('month', ev.day::timestamp)::date
      GROUP BY m.from_day
      ON CONFLICT (project_id, from_day, to_day) DO UPDATE SET visitors = EXCLUDED.visitors`
  })
