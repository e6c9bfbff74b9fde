/**
 * A website's webhook endpoints and the outbox of their events (Migration.ts), over SQL; the memory twin is
 * WebhooksMemory.ts. Secrets arrive and leave encrypted: this module never sees one.
 */
import { Cadence, EventKind } from "@sitehealth/domain/Events"
import { SEVERITIES, Severity } from "@sitehealth/domain/Projects"
import { WebhookFormat } from "@sitehealth/domain/Webhooks"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { toPage } from "../store/Cursor.ts"
import { looksLikeId } from "../store/Ids.ts"
import { Bytes, dieOnSqlError, firstOf, Instant, rowsOf, singleOf } from "../store/Sql.ts"
import { type DeliveryRecord, streakChanges, type WebhookRecord, type WebhooksRepoShape } from "./Records.ts"
import { passesRules } from "./Rules.ts"

export type * from "./Records.ts"

const WebhookRow = Schema.Struct({
  id: Schema.String,
  project_id: Schema.String,
  url: Schema.String,
  format: WebhookFormat,
  description: Schema.NullOr(Schema.String),
  events: Schema.Array(EventKind),
  min_money_at_stake: Schema.NullOr(Schema.Finite),
  min_severity: Schema.NullOr(Severity),
  cadence: Cadence,
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(Schema.String),
  failing_since: Schema.NullOr(Instant),
  secret_enc: Bytes,
  previous_secret_enc: Schema.NullOr(Bytes),
  previous_secret_expires_at: Schema.NullOr(Instant),
  secret_rotated_at: Schema.NullOr(Instant),
  created_at: Instant
})

const toWebhook = (r: typeof WebhookRow.Type): WebhookRecord => ({
  id: r.id,
  projectId: r.project_id,
  url: r.url,
  format: r.format,
  description: r.description,
  events: r.events,
  minMoneyAtStake: r.min_money_at_stake,
  minSeverity: r.min_severity,
  cadence: r.cadence,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  failingSince: r.failing_since,
  secretEnc: r.secret_enc,
  previousSecretEnc: r.previous_secret_enc,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  secretRotatedAt: r.secret_rotated_at,
  createdAt: r.created_at
})

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  event_id: Schema.String,
  type: EventKind,
  status: Schema.Literals(["pending", "succeeded", "failed"]),
  attempts: Schema.Finite,
  response_status: Schema.NullOr(Schema.Finite),
  latency_ms: Schema.NullOr(Schema.Finite),
  response_excerpt: Schema.NullOr(Schema.String),
  created_at: Instant,
  first_attempt_at: Schema.NullOr(Instant),
  last_attempt_at: Schema.NullOr(Instant),
  next_attempt_at: Schema.NullOr(Instant)
})

const toDelivery = (r: typeof DeliveryRow.Type): DeliveryRecord => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventId: r.event_id,
  type: r.type,
  status: r.status,
  attempts: r.attempts,
  responseStatus: r.response_status,
  latencyMs: r.latency_ms,
  responseExcerpt: r.response_excerpt,
  createdAt: r.created_at,
  firstAttemptAt: r.first_attempt_at,
  lastAttemptAt: r.last_attempt_at,
  nextAttemptAt: r.next_attempt_at
})

const ClaimedRow = Schema.Struct({
  ...DeliveryRow.fields,
  body: Schema.String,
  w_url: Schema.String,
  w_format: WebhookFormat,
  w_project_id: Schema.String,
  w_description: Schema.NullOr(Schema.String),
  w_events: Schema.Array(EventKind),
  w_min_money_at_stake: Schema.NullOr(Schema.Finite),
  w_min_severity: Schema.NullOr(Severity),
  w_cadence: Cadence,
  w_enabled: Schema.Boolean,
  w_disabled_reason: Schema.NullOr(Schema.String),
  w_failing_since: Schema.NullOr(Instant),
  w_secret_enc: Bytes,
  w_previous_secret_enc: Schema.NullOr(Bytes),
  w_previous_secret_expires_at: Schema.NullOr(Instant),
  w_secret_rotated_at: Schema.NullOr(Instant),
  w_created_at: Instant
})

// What a delivery row answers (the event's type comes from its event).
const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.event_id, e.type, d.status, d.attempts, d.response_status, d.latency_ms,
  d.response_excerpt, d.created_at, d.first_attempt_at, d.last_attempt_at, d.next_attempt_at`

export class WebhooksRepo extends Context.Service<WebhooksRepo, WebhooksRepoShape>()("sitehealth/WebhooksRepo") {
  static readonly sql = Layer.effect(
    WebhooksRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const webhooks = rowsOf("webhooks", WebhookRow)
      const webhook = firstOf("webhooks", WebhookRow)
      const webhookSingle = singleOf("webhooks", WebhookRow)
      const deliveries = rowsOf("webhook_deliveries", DeliveryRow)
      const delivery = firstOf("webhook_deliveries", DeliveryRow)
      const claimed = rowsOf("webhook_deliveries", ClaimedRow)
      const columns = sql.unsafe(DELIVERY_COLUMNS)
      return WebhooksRepo.of({
        insert: Effect.fn("WebhooksRepo.insert")(function*(w) {
          return yield* sql`INSERT INTO webhooks (id, project_id, url, format, description, events, min_money_at_stake,
                min_severity, cadence, enabled, disabled_reason, failing_since, secret_enc, previous_secret_enc,
                previous_secret_expires_at, secret_rotated_at, created_at)
              VALUES (${w.id}, ${w.projectId}, ${w.url}, ${w.format}, ${w.description}, ${[...w.events] as Array<
            string
          >}::text[],
                ${w.minMoneyAtStake}, ${w.minSeverity}, ${w.cadence}, ${w.enabled}, ${w.disabledReason}, ${w.failingSince},
                ${w.secretEnc}, ${w.previousSecretEnc},
                ${w.previousSecretExpiresAt}, ${w.secretRotatedAt}, ${w.createdAt})
              RETURNING *`.pipe(Effect.flatMap(webhookSingle), Effect.map(toWebhook), dieOnSqlError)
        }),
        list: Effect.fn("WebhooksRepo.list")(function*(projectId) {
          return yield* sql`SELECT * FROM webhooks WHERE project_id = ${projectId} ORDER BY created_at, id`.pipe(
            Effect.flatMap(webhooks),
            Effect.map((rows) => rows.map(toWebhook)),
            dieOnSqlError
          )
        }),
        find: Effect.fn("WebhooksRepo.find")(function*(projectId, id) {
          if (!looksLikeId(id)) return null
          return yield* sql`SELECT * FROM webhooks WHERE id = ${id} AND project_id = ${projectId}`.pipe(
            Effect.flatMap(webhook),
            Effect.map((r) => r === null ? null : toWebhook(r)),
            dieOnSqlError
          )
        }),
        update: Effect.fn("WebhooksRepo.update")(function*(projectId, id, patch) {
          if (!looksLikeId(id)) return null
          const set = (column: string, value: unknown) => sql`${sql(column)} = ${value as any}`
          const assignments = [
            ...("url" in patch ? [set("url", patch.url)] : []),
            ...("description" in patch ? [set("description", patch.description)] : []),
            ...("events" in patch ? [sql`events = ${[...patch.events!] as Array<string>}::text[]`] : []),
            ...("minMoneyAtStake" in patch ? [set("min_money_at_stake", patch.minMoneyAtStake)] : []),
            ...("minSeverity" in patch ? [set("min_severity", patch.minSeverity)] : []),
            ...("cadence" in patch ? [set("cadence", patch.cadence)] : []),
            ...("enabled" in patch ? [set("enabled", patch.enabled)] : []),
            ...("disabledReason" in patch ? [set("disabled_reason", patch.disabledReason)] : []),
            ...("failingSince" in patch ? [set("failing_since", patch.failingSince)] : []),
            ...("secretEnc" in patch ? [set("secret_enc", patch.secretEnc)] : []),
            ...("previousSecretEnc" in patch ? [set("previous_secret_enc", patch.previousSecretEnc)] : []),
            ...("previousSecretExpiresAt" in patch
              ? [set("previous_secret_expires_at", patch.previousSecretExpiresAt)]
              : []),
            ...("secretRotatedAt" in patch ? [set("secret_rotated_at", patch.secretRotatedAt)] : [])
          ]
          if (assignments.length === 0) {
            return yield* sql`SELECT * FROM webhooks WHERE id = ${id} AND project_id = ${projectId}`.pipe(
              Effect.flatMap(webhook),
              Effect.map((r) => r === null ? null : toWebhook(r)),
              dieOnSqlError
            )
          }
          return yield* sql`UPDATE webhooks SET ${sql.csv(assignments)}
              WHERE id = ${id} AND project_id = ${projectId} RETURNING *`.pipe(
            Effect.flatMap(webhook),
            Effect.map((r) => r === null ? null : toWebhook(r)),
            dieOnSqlError
          )
        }),
        remove: Effect.fn("WebhooksRepo.remove")(function*(projectId, id) {
          if (!looksLikeId(id)) return null
          return yield* sql`DELETE FROM webhooks WHERE id = ${id} AND project_id = ${projectId} RETURNING *`.pipe(
            Effect.flatMap(webhook),
            Effect.map((r) => r === null ? null : toWebhook(r)),
            dieOnSqlError
          )
        }),
        enqueue: Effect.fn("WebhooksRepo.enqueue")(function*(event) {
          const only = event.webhookId
          // The destination's rules (docs/alerts.md): a filtered event is never delivered; a test goes to its one.
          const rank = (value: unknown) => sql`array_position(${[...SEVERITIES]}::text[], ${value as any})`
          const target = only === undefined
            ? sql`${event.type} = ANY(w.events)
                AND (w.min_money_at_stake IS NULL OR ${event.money}::integer IS NULL
                  OR ${event.money}::integer >= w.min_money_at_stake)
                AND (w.min_severity IS NULL OR ${event.severity}::text IS NULL
                  OR ${rank(event.severity)} >= array_position(${[...SEVERITIES]}::text[], w.min_severity))`
            : sql`w.id = ${only}`
          return yield* sql`WITH ev AS (
                INSERT INTO webhook_events (id, project_id, type, body, created_at, money, severity)
                SELECT ${event.id}, ${event.projectId}, ${event.type}, ${event.body}, ${event.createdAt},
                  ${event.money}, ${event.severity}
                WHERE EXISTS (SELECT 1 FROM webhooks w
                  WHERE w.project_id = ${event.projectId} AND w.enabled AND ${target})
                RETURNING id, type
              ), d AS (
                INSERT INTO webhook_deliveries (id, event_id, webhook_id, status, next_attempt_at, locked_until,
                  created_at)
                SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), ev.id, w.id, 'pending',
                       ${event.createdAt}, ${event.lockedUntil ?? null}, ${event.createdAt}
                FROM ev JOIN webhooks w ON w.project_id = ${event.projectId} AND w.enabled
                WHERE ${target} ${only === undefined ? sql`AND w.cadence = 'live'` : sql``}
                RETURNING *
              )
              SELECT ${columns} FROM d JOIN ev e ON e.id = d.event_id`.pipe(
            Effect.flatMap(deliveries),
            Effect.map((rows) => rows.map(toDelivery)),
            dieOnSqlError
          )
        }),
        subscribed: Effect.fn("WebhooksRepo.subscribed")(function*(projectId) {
          const rows = yield* sql<{ kind: string }>`SELECT DISTINCT unnest(events) AS kind FROM webhooks
              WHERE project_id = ${projectId} AND enabled`.pipe(dieOnSqlError)
          return new Set(rows.map((r) => r.kind as EventKind))
        }),
        listDeliveries: Effect.fn("WebhooksRepo.listDeliveries")(function*(webhookId, page) {
          const after = page.after
          return yield* sql`SELECT ${columns} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
              WHERE d.webhook_id = ${webhookId}
              ${after === null ? sql`` : sql`AND (d.created_at, d.id) < (${after.createdAt}, ${after.id})`}
              ORDER BY d.created_at DESC, d.id DESC LIMIT ${page.limit + 1}`.pipe(
            Effect.flatMap(deliveries),
            Effect.map((rows) => toPage(rows.map(toDelivery), page.limit)),
            dieOnSqlError
          )
        }),
        findDelivery: Effect.fn("WebhooksRepo.findDelivery")(function*(webhookId, id) {
          if (!looksLikeId(id)) return null
          return yield* sql`SELECT ${columns} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
              WHERE d.id = ${id} AND d.webhook_id = ${webhookId}`.pipe(
            Effect.flatMap(delivery),
            Effect.map((r) => r === null ? null : toDelivery(r)),
            dieOnSqlError
          )
        }),
        claim: Effect.fn("WebhooksRepo.claim")(function*(now, leaseMs, limit, webhookIds) {
          const until = new Date(now.getTime() + leaseMs)
          return yield* sql`WITH due AS (
                SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
                  AND (d.locked_until IS NULL OR d.locked_until <= ${now}) AND w.enabled
                  ${webhookIds === undefined ? sql`` : sql`AND d.webhook_id = ANY(${[...webhookIds]})`}
                ORDER BY d.next_attempt_at, d.id LIMIT ${limit}
                FOR UPDATE OF d SKIP LOCKED
              )
              UPDATE webhook_deliveries d SET locked_until = ${until}
              FROM due, webhook_events e, webhooks w
              WHERE d.id = due.id AND e.id = d.event_id AND w.id = d.webhook_id
              RETURNING ${columns}, e.body, w.url AS w_url, w.format AS w_format, w.project_id AS w_project_id,
                w.description AS w_description, w.events AS w_events, w.enabled AS w_enabled,
                w.min_money_at_stake AS w_min_money_at_stake, w.min_severity AS w_min_severity, w.cadence AS w_cadence,
                w.disabled_reason AS w_disabled_reason, w.failing_since AS w_failing_since,
                w.secret_enc AS w_secret_enc, w.previous_secret_enc AS w_previous_secret_enc,
                w.previous_secret_expires_at AS w_previous_secret_expires_at,
                w.secret_rotated_at AS w_secret_rotated_at, w.created_at AS w_created_at`.pipe(
            Effect.flatMap(claimed),
            Effect.map((rows) =>
              rows.map((r) => ({
                delivery: toDelivery(r),
                body: r.body,
                webhook: {
                  id: r.webhook_id,
                  projectId: r.w_project_id,
                  url: r.w_url,
                  format: r.w_format,
                  description: r.w_description,
                  events: r.w_events,
                  minMoneyAtStake: r.w_min_money_at_stake,
                  minSeverity: r.w_min_severity,
                  cadence: r.w_cadence,
                  enabled: r.w_enabled,
                  disabledReason: r.w_disabled_reason,
                  failingSince: r.w_failing_since,
                  secretEnc: r.w_secret_enc,
                  previousSecretEnc: r.w_previous_secret_enc,
                  previousSecretExpiresAt: r.w_previous_secret_expires_at,
                  secretRotatedAt: r.w_secret_rotated_at,
                  createdAt: r.w_created_at
                }
              }))
            ),
            dieOnSqlError
          )
        }),
        record: Effect.fn("WebhooksRepo.record")(function*(deliveryId, a) {
          return yield* sql`WITH d AS (
                UPDATE webhook_deliveries SET status = ${a.next}, attempts = attempts + 1,
                  first_attempt_at = coalesce(first_attempt_at, ${a.at}), last_attempt_at = ${a.at},
                  next_attempt_at = ${a.nextAttemptAt}, locked_until = NULL, response_status = ${a.status},
                  latency_ms = ${a.latencyMs}, response_excerpt = ${a.excerpt}
                WHERE id = ${deliveryId} RETURNING *
              ), w AS (
                UPDATE webhooks SET
                  failing_since = ${a.ok ? sql`NULL` : sql`coalesce(failing_since, ${a.at})`}
                  ${
            a.disable
              ? sql`, enabled = false,
                disabled_reason = 'every delivery failed for 3 days: enable it again when it is fixed'`
              : sql``
          }
                WHERE id = (SELECT webhook_id FROM d)
              )
              SELECT ${columns} FROM d JOIN webhook_events e ON e.id = d.event_id`.pipe(
            Effect.flatMap(delivery),
            Effect.map((r) => r === null ? null : toDelivery(r)),
            dieOnSqlError
          )
        }),
        recordMany: Effect.fn("WebhooksRepo.recordMany")(function*(outcomes) {
          if (outcomes.length === 0) return 0
          const rows = JSON.stringify(outcomes.map(({ attempt: a, deliveryId }) => ({
            id: deliveryId,
            status: a.next,
            at: a.at.toISOString(),
            next_at: a.nextAttemptAt?.toISOString() ?? null,
            response_status: a.status,
            latency_ms: a.latencyMs,
            excerpt: a.excerpt
          })))
          // One statement for the deliveries (each worker's are its own, under its leases), then each endpoint
          // whose streak changes, in id order (two workers lock them in the same order): one transaction.
          return yield* sql.withTransaction(Effect.gen(function*() {
            const updated = yield* sql<{ n: number }>`WITH d AS (
                UPDATE webhook_deliveries d SET status = v.status, attempts = d.attempts + 1,
                  first_attempt_at = coalesce(d.first_attempt_at, v.at), last_attempt_at = v.at,
                  next_attempt_at = v.next_at, locked_until = NULL, response_status = v.response_status,
                  latency_ms = v.latency_ms, response_excerpt = v.excerpt
                FROM json_to_recordset(${rows}::json) AS v(id text, status text, at timestamptz,
                  next_at timestamptz, response_status integer, latency_ms integer, excerpt text)
                WHERE d.id = v.id RETURNING d.id
              )
              SELECT count(*)::integer AS n FROM d`
            for (const c of streakChanges(outcomes)) {
              const from = c.failedFrom
              const streak = c.reset ? sql`${from}::timestamptz` : sql`coalesce(failing_since, ${from}::timestamptz)`
              // Written only when it changes: a healthy endpoint's row is not rewritten by every round.
              yield* sql`UPDATE webhooks SET failing_since = ${streak}
                  ${
                c.disable
                  ? sql`, enabled = false,
                    disabled_reason = 'every delivery failed for 3 days: enable it again when it is fixed'`
                  : sql``
              }
                  WHERE id = ${c.webhookId}
                    ${c.disable ? sql`` : sql`AND failing_since IS DISTINCT FROM ${streak}`}`
            }
            return updated[0]?.n ?? 0
          })).pipe(dieOnSqlError)
        }),
        redeliver: Effect.fn("WebhooksRepo.redeliver")(function*(webhookId, id, now) {
          if (!looksLikeId(id)) return null
          return yield* sql`WITH d AS (
                UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now}, locked_until = NULL,
                  first_attempt_at = NULL
                WHERE id = ${id} AND webhook_id = ${webhookId} RETURNING *
              )
              SELECT ${columns} FROM d JOIN webhook_events e ON e.id = d.event_id`.pipe(
            Effect.flatMap(delivery),
            Effect.map((r) => r === null ? null : toDelivery(r)),
            dieOnSqlError
          )
        }),
        recapDestinations: Effect.fn("WebhooksRepo.recapDestinations")(function*(webhookIds) {
          const rows = yield* sql`SELECT w.*, p.timezone AS project_timezone FROM webhooks w
              JOIN projects p ON p.id = w.project_id
              WHERE w.enabled AND w.cadence <> 'live'
              ${webhookIds === undefined ? sql`` : sql`AND w.id = ANY(${[...webhookIds]})`}
              ORDER BY w.created_at, w.id`.pipe(dieOnSqlError)
          const decoded = yield* webhooks(rows)
          return decoded.map((r, i) => ({
            webhook: toWebhook(r),
            timezone: String((rows[i] as { project_timezone: string }).project_timezone)
          }))
        }),
        eventsFor: Effect.fn("WebhooksRepo.eventsFor")(function*(webhook, from, to) {
          const rows = yield* sql<{
            type: EventKind
            body: string
            created_at: Date
            money: number | null
            severity: string | null
          }>`SELECT type, body, created_at, money, severity FROM webhook_events
              WHERE project_id = ${webhook.projectId} AND created_at >= ${from} AND created_at < ${to}
                AND type = ANY(${[...webhook.events] as Array<string>}::text[])
                AND type NOT IN ('recap.ready', 'webhook.test')
              ORDER BY created_at, id`.pipe(dieOnSqlError)
          return rows.filter((r) =>
            passesRules(webhook, { type: r.type, money: r.money, severity: r.severity as Severity | null })
          ).map((r) => ({ type: r.type, body: r.body, createdAt: new Date(r.created_at) }))
        }),
        claimDisabledNotice: Effect.fn("WebhooksRepo.claimDisabledNotice")(function*(webhookId, failingSince, now) {
          const rows = yield* sql`INSERT INTO webhook_disabled_notices (webhook_id, failing_since, created_at)
              VALUES (${webhookId}, ${failingSince}, ${now}) ON CONFLICT DO NOTHING RETURNING webhook_id`.pipe(
            dieOnSqlError
          )
          return rows.length > 0
        }),
        claimRecap: Effect.fn("WebhooksRepo.claimRecap")(function*(webhookId, periodStart, now) {
          const rows = yield* sql`INSERT INTO webhook_recaps (webhook_id, period_start, created_at)
              VALUES (${webhookId}, ${periodStart}::date, ${now}) ON CONFLICT DO NOTHING
              RETURNING webhook_id`.pipe(dieOnSqlError)
          return rows.length > 0
        }),
        anomalyProjects: Effect.fn("WebhooksRepo.anomalyProjects")(function*(projectIds) {
          const rows = yield* sql<{ project_id: string }>`SELECT DISTINCT project_id FROM webhooks
              WHERE enabled AND 'traffic.anomaly' = ANY(events)
              ${projectIds === undefined ? sql`` : sql`AND project_id = ANY(${[...projectIds]})`}
              ORDER BY project_id`.pipe(dieOnSqlError)
          return rows.map((r) => String(r.project_id))
        }),
        claimAnomaly: Effect.fn("WebhooksRepo.claimAnomaly")(function*(projectId, hour, now) {
          const rows = yield* sql`INSERT INTO traffic_anomaly_claims (project_id, hour, created_at)
              VALUES (${projectId}, ${hour}, ${now}) ON CONFLICT DO NOTHING
              RETURNING project_id`.pipe(dieOnSqlError)
          return rows.length > 0
        }),
        claimEntitlementEnding: Effect.fn("WebhooksRepo.claimEntitlementEnding")(function*(accountId, endsAt, now) {
          const rows = yield* sql`INSERT INTO entitlement_ending_claims (account_id, ends_at, created_at)
              VALUES (${accountId}, ${endsAt}, ${now}) ON CONFLICT DO NOTHING RETURNING account_id`.pipe(dieOnSqlError)
          return rows.length > 0
        }),
        transaction: (effect) => sql.withTransaction(effect).pipe(dieOnSqlError) as any
      })
    })
  )
}
