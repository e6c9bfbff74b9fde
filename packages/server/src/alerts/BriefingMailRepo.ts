/**
 * The morning briefing email's state: each account's settings (on by default, 08:00 in the time zone of its first
 * website unless it chose others) and the claim of each account's day (Migration.ts). SQL and memory twins.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { MemoryDb } from "../store/MemoryDb.ts"
import { dieOnSqlError, rowsOf } from "../store/Sql.ts"

export const DEFAULT_BRIEFING_HOUR = 8
/** A claim not marked sent within this long (the worker died mid-send) may be taken again. */
export const CLAIM_TIMEOUT_MS = 10 * 60_000

export interface MailCandidate {
  readonly accountId: string
  readonly hour: number
  readonly timezone: string
}

/** The owner's choices (alert_settings); null hour/time zone: the defaults (08:00, the first website's zone). */
export interface MailSettings {
  readonly enabled: boolean
  readonly hour: number
  /** The zone chosen, or null: the first website's. */
  readonly timezone: string | null
  /** The zone the email follows now: the chosen one, else the first website's (null without a website). */
  readonly effectiveTimezone: string | null
}

export interface MailSettingsPatch {
  readonly enabled?: boolean
  readonly hour?: number
  readonly timezone?: string | null
}

export interface BriefingMailRepoShape {
  /** Accounts whose briefing email is on and which have a website, with their hour and time zone. */
  readonly candidates: (accountIds?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<MailCandidate>>
  /** Takes the account's day: true for the one caller that may send it (again only after a dead claim). */
  readonly claim: (accountId: string, localDate: string, now: Date) => Effect.Effect<boolean>
  readonly markSent: (accountId: string, localDate: string, now: Date) => Effect.Effect<void>
  /** Whether the account's day was sent. */
  readonly sentOn: (accountId: string, localDate: string) => Effect.Effect<Date | null>
  readonly setEmail: (accountId: string, on: boolean, now: Date) => Effect.Effect<void>
  readonly emailOn: (accountId: string) => Effect.Effect<boolean>
  readonly settings: (accountId: string) => Effect.Effect<MailSettings>
  readonly saveSettings: (accountId: string, patch: MailSettingsPatch, now: Date) => Effect.Effect<MailSettings>
}

const CandidateRow = Schema.Struct({ account_id: Schema.String, hour: Schema.Finite, timezone: Schema.String })
const SettingsRow = Schema.Struct({
  enabled: Schema.Boolean,
  hour: Schema.Finite,
  timezone: Schema.NullOr(Schema.String),
  first_timezone: Schema.NullOr(Schema.String)
})

export class BriefingMailRepo
  extends Context.Service<BriefingMailRepo, BriefingMailRepoShape>()("sitehealth/BriefingMailRepo")
{
  static readonly sql = Layer.effect(
    BriefingMailRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decode = rowsOf("alert_settings", CandidateRow)
      const decodeSettings = rowsOf("alert_settings", SettingsRow)
      const settings = (accountId: string) =>
        sql`SELECT coalesce(s.briefing_email, true) AS enabled,
          coalesce(s.briefing_hour, ${DEFAULT_BRIEFING_HOUR}) AS hour,
              s.timezone, (SELECT timezone FROM projects p WHERE p.account_id = a.id ORDER BY created_at, id LIMIT 1)
                AS first_timezone
            FROM accounts a LEFT JOIN alert_settings s ON s.account_id = a.id WHERE a.id = ${accountId}`.pipe(
          Effect.flatMap(decodeSettings),
          Effect.map((rows): MailSettings => {
            const r = rows[0]
            return r === undefined
              ? { enabled: true, hour: DEFAULT_BRIEFING_HOUR, timezone: null, effectiveTimezone: null }
              : {
                enabled: r.enabled,
                hour: r.hour,
                timezone: r.timezone,
                effectiveTimezone: r.timezone ?? r.first_timezone
              }
          }),
          dieOnSqlError
        )
      return BriefingMailRepo.of({
        candidates: Effect.fn("BriefingMailRepo.candidates")(function*(accountIds) {
          return yield* sql`SELECT a.id AS account_id, coalesce(s.briefing_hour, ${DEFAULT_BRIEFING_HOUR}) AS hour,
                coalesce(s.timezone, first.timezone) AS timezone
              FROM accounts a
              JOIN LATERAL (SELECT timezone FROM projects p WHERE p.account_id = a.id ORDER BY created_at, id LIMIT 1)
                first ON true
              LEFT JOIN alert_settings s ON s.account_id = a.id
              WHERE coalesce(s.briefing_email, true)
              ${accountIds === undefined ? sql`` : sql`AND a.id = ANY(${[...accountIds]})`}`.pipe(
            Effect.flatMap(decode),
            Effect.map((rows) => rows.map((r) => ({ accountId: r.account_id, hour: r.hour, timezone: r.timezone }))),
            dieOnSqlError
          )
        }),
        claim: Effect.fn("BriefingMailRepo.claim")(function*(accountId, localDate, now) {
          const stale = new Date(now.getTime() - CLAIM_TIMEOUT_MS)
          const rows = yield* sql`INSERT INTO briefing_emails (account_id, local_date, claimed_at)
              VALUES (${accountId}, ${localDate}::date, ${now})
              ON CONFLICT (account_id, local_date) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
                WHERE briefing_emails.sent_at IS NULL AND briefing_emails.claimed_at < ${stale}
              RETURNING account_id`.pipe(dieOnSqlError)
          return rows.length > 0
        }),
        markSent: Effect.fn("BriefingMailRepo.markSent")(function*(accountId, localDate, now) {
          yield* sql`UPDATE briefing_emails SET sent_at = ${now}
              WHERE account_id = ${accountId} AND local_date = ${localDate}::date`.pipe(dieOnSqlError)
        }),
        sentOn: Effect.fn("BriefingMailRepo.sentOn")(function*(accountId, localDate) {
          const rows = yield* sql<{ sent_at: Date | null }>`SELECT sent_at FROM briefing_emails
              WHERE account_id = ${accountId} AND local_date = ${localDate}::date`.pipe(dieOnSqlError)
          return rows[0]?.sent_at ?? null
        }),
        setEmail: Effect.fn("BriefingMailRepo.setEmail")(function*(accountId, on, now) {
          yield* sql`INSERT INTO alert_settings (account_id, briefing_email, updated_at)
            VALUES (${accountId}, ${on}, ${now})
              ON CONFLICT (account_id) DO UPDATE SET briefing_email = EXCLUDED.briefing_email,
                updated_at = EXCLUDED.updated_at`.pipe(dieOnSqlError)
        }),
        emailOn: Effect.fn("BriefingMailRepo.emailOn")(function*(accountId) {
          const rows = yield* sql<{ briefing_email: boolean }>`SELECT briefing_email FROM alert_settings
              WHERE account_id = ${accountId}`.pipe(dieOnSqlError)
          return rows[0]?.briefing_email ?? true
        }),
        settings: Effect.fn("BriefingMailRepo.settings")(function*(accountId) {
          return yield* settings(accountId)
        }),
        saveSettings: Effect.fn("BriefingMailRepo.saveSettings")(function*(accountId, patch, now) {
          const current = yield* settings(accountId)
          const next = { ...current, ...patch }
          yield* sql`INSERT INTO alert_settings (account_id, briefing_email, briefing_hour, timezone, updated_at)
              VALUES (${accountId}, ${next.enabled}, ${next.hour}, ${next.timezone}, ${now})
              ON CONFLICT (account_id) DO UPDATE SET briefing_email = EXCLUDED.briefing_email,
                briefing_hour = EXCLUDED.briefing_hour, timezone = EXCLUDED.timezone,
                updated_at = EXCLUDED.updated_at`.pipe(dieOnSqlError)
          return yield* settings(accountId)
        })
      })
    })
  )

  static readonly memory = Layer.effect(
    BriefingMailRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const settings = new Map<string, { enabled: boolean; hour: number; timezone: string | null }>()
      const DEFAULTS = { enabled: true, hour: DEFAULT_BRIEFING_HOUR, timezone: null }
      const firstTimezone = (accountId: string) =>
        [...db.projects.values()].filter((p) => p.accountId === accountId).sort((x, y) =>
          x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : 1)
        )[0]?.timezone ?? null
      const read = (accountId: string): MailSettings => {
        const s = settings.get(accountId) ?? DEFAULTS
        return { ...s, effectiveTimezone: s.timezone ?? firstTimezone(accountId) }
      }
      const days = new Map<string, { claimedAt: Date; sentAt: Date | null }>()
      return BriefingMailRepo.of({
        candidates: Effect.fn("BriefingMailRepo.candidates")((accountIds) =>
          Effect.sync(() =>
            [...db.accounts.values()].flatMap((a) => {
              if (accountIds !== undefined && !accountIds.includes(a.id)) return []
              const s = read(a.id)
              const first = firstTimezone(a.id)
              if (!s.enabled || first === null) return []
              return [{ accountId: a.id, hour: s.hour, timezone: s.timezone ?? first }]
            })
          )
        ),
        claim: Effect.fn("BriefingMailRepo.claim")((accountId, localDate, now) =>
          Effect.sync(() => {
            const key = `${accountId}/${localDate}`
            const day = days.get(key)
            if (
              day !== undefined && (day.sentAt !== null || day.claimedAt.getTime() >= now.getTime() - CLAIM_TIMEOUT_MS)
            ) {
              return false
            }
            days.set(key, { claimedAt: now, sentAt: null })
            return true
          })
        ),
        markSent: Effect.fn("BriefingMailRepo.markSent")((accountId, localDate, now) =>
          Effect.sync(() => {
            const key = `${accountId}/${localDate}`
            const day = days.get(key)
            if (day !== undefined) days.set(key, { ...day, sentAt: now })
          })
        ),
        sentOn: Effect.fn("BriefingMailRepo.sentOn")((accountId, localDate) =>
          Effect.sync(() => days.get(`${accountId}/${localDate}`)?.sentAt ?? null)
        ),
        setEmail: Effect.fn("BriefingMailRepo.setEmail")((accountId, on) =>
          Effect.sync(() => void settings.set(accountId, { ...(settings.get(accountId) ?? DEFAULTS), enabled: on }))
        ),
        emailOn: Effect.fn("BriefingMailRepo.emailOn")((accountId) =>
          Effect.sync(() => (settings.get(accountId) ?? DEFAULTS).enabled)
        ),
        settings: Effect.fn("BriefingMailRepo.settings")((accountId) => Effect.sync(() => read(accountId))),
        saveSettings: Effect.fn("BriefingMailRepo.saveSettings")((accountId, patch) =>
          Effect.sync(() => {
            const { effectiveTimezone: _, ...current } = read(accountId)
            settings.set(accountId, { ...current, ...patch })
            return read(accountId)
          })
        )
      })
    })
  )
}
