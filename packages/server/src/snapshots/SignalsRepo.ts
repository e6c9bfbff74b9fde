/**
 * Stored, de-duplicated signals. A signal's identity is its fingerprint (kind|subject, per project):
 * while the condition keeps being detected it stays ONE row (last_seen_at advances, figures refresh);
 * when a recomputation no longer finds it, it is resolved (resolved_at set); if it comes back later, a new
 * row opens. The list shows active signals first (severity, then newest), then those resolved in the last
 * RESOLVED_LIST_DAYS days (newest resolution first), keyset-paginated.
 */
import { badRequest } from "@sitehealth/domain/Errors"
import type { BadRequest } from "@sitehealth/domain/Errors"
import { Dimension, Severity, Signal } from "@sitehealth/domain/Projects"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { SignalCandidate } from "../metrics/Signals.ts"
import { SEVERITY_RANK } from "../metrics/Signals.ts"
import { randomBase62 } from "../store/Ids.ts"
import { dieOnSqlError, Instant, rowsOf } from "../store/Sql.ts"

export const RESOLVED_LIST_DAYS = 30

export interface SignalFilter {
  readonly dimension?: Dimension | undefined
  readonly severity?: Severity | undefined
  readonly active?: boolean | undefined
}

/** Position in the list order: (group 0 active / 1 resolved, severity rank or 0, −time ms, id). */
export type SignalKey = readonly [number, number, number, string]

export interface SignalsRepoShape {
  /** Inside the project lock: make the stored open signals exactly the candidates. */
  readonly reconcile: (
    projectId: string,
    currency: string,
    candidates: ReadonlyArray<SignalCandidate>,
    now: Date
  ) => Effect.Effect<void>
  /**
   * Inside the project lock, before replaying the days from `from` (recompute/Recompute.ts rebuildHistory):
   * the signals detected from then on are deleted and those resolved from then on are open again, so the
   * replay decides them afresh, day by day.
   */
  readonly rewind: (projectId: string, from: Date) => Effect.Effect<void>
  readonly active: (projectId: string) => Effect.Effect<ReadonlyArray<Signal>>
  readonly list: (
    projectId: string,
    filter: SignalFilter,
    page: { readonly limit: number; readonly after: SignalKey | null },
    now: Date
  ) => Effect.Effect<{ readonly items: ReadonlyArray<Signal>; readonly nextCursor: string | null }>
}

export const keyOf = (s: Signal): SignalKey =>
  s.active
    ? [0, SEVERITY_RANK[s.severity], -Date.parse(s.detectedAt), s.id]
    : [1, 0, -Date.parse(s.resolvedAt!), s.id]

const compareKeys = (a: SignalKey, b: SignalKey): number =>
  a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0)

export const encodeSignalCursor = (k: SignalKey): string => Buffer.from(JSON.stringify(k)).toString("base64url")

/** What a cursor this API returned holds: [active 0|1, severity rank, started day, signal id]. */
const SignalKeyJson = Schema.fromJsonString(Schema.Tuple([
  Schema.Literals([0, 1]),
  Schema.Int,
  Schema.Int,
  Schema.String.check(Schema.isPattern(/^sig_[0-9A-Za-z]{1,64}$/))
]))
const decodeSignalKey = Schema.decodeUnknownOption(SignalKeyJson)

export const decodeSignalCursor = (cursor: string | undefined): Effect.Effect<SignalKey | null, BadRequest> => {
  if (cursor === undefined) return Effect.succeed(null)
  const key = decodeSignalKey(Buffer.from(cursor, "base64url").toString("utf8"))
  return key._tag === "Some"
    ? Effect.succeed(key.value)
    : Effect.fail(badRequest("cursor is not a cursor this API returned", "invalid_cursor"))
}

/** The stored body: what the detector said, minus what the columns hold. */
const bodyOf = (c: SignalCandidate, currency: string) => ({
  subject: c.subject,
  title: c.title,
  detail: c.detail,
  metric: c.metric,
  day: c.day,
  actual: c.actual,
  expected: c.expected,
  change: c.change,
  moneyAtStake: c.moneyAtStake === null ? null : { amount: Math.round(c.moneyAtStake) + 0, currency }
})

const f = Signal.fields
/** The signals columns a Signal is read from; `body` (jsonb, arrives parsed) holds what bodyOf wrote. */
const SignalRow = Schema.Struct({
  id: Schema.String,
  dimension: Dimension,
  severity: Severity,
  kind: Schema.String,
  body: Schema.Struct({
    subject: f.subject,
    title: f.title,
    detail: f.detail,
    metric: f.metric,
    day: f.day,
    actual: f.actual,
    expected: f.expected,
    change: f.change,
    moneyAtStake: f.moneyAtStake
  }),
  detected_at: Instant,
  last_seen_at: Instant,
  resolved_at: Schema.NullOr(Instant)
})
const decodeSignals = rowsOf("signals", SignalRow)
const decodeOpen = rowsOf("signals", Schema.Struct({ id: Schema.String, fingerprint: Schema.String }))

const toSignal = (r: typeof SignalRow.Type): Signal => {
  const b = r.body
  return {
    id: r.id,
    dimension: r.dimension,
    severity: r.severity,
    kind: r.kind,
    subject: b.subject,
    title: b.title,
    detail: b.detail,
    metric: b.metric,
    day: b.day,
    actual: b.actual,
    expected: b.expected,
    change: b.change,
    moneyAtStake: b.moneyAtStake,
    detectedAt: r.detected_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    active: r.resolved_at === null,
    resolvedAt: r.resolved_at === null ? null : r.resolved_at.toISOString()
  }
}

const newSignalId = () => `sig_${randomBase62(16)}`

export class SignalsRepo extends Context.Service<SignalsRepo, SignalsRepoShape>()("sitehealth/SignalsRepo") {
  static readonly sql = Layer.effect(
    SignalsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sevRank = sql`CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END`
      // The list order as a row value, so a keyset cursor is one comparison.
      const key = sql`(CASE WHEN resolved_at IS NULL THEN 0 ELSE 1 END,
          CASE WHEN resolved_at IS NULL THEN ${sevRank} ELSE 0 END,
          -round(extract(epoch FROM coalesce(resolved_at, detected_at)) * 1000)::bigint, id)`
      return SignalsRepo.of({
        reconcile: Effect.fn("SignalsRepo.reconcile")(function*(projectId, currency, candidates, now) {
          const open =
            yield* sql`SELECT id, fingerprint FROM signals WHERE project_id = ${projectId} AND resolved_at IS NULL`
              .pipe(Effect.flatMap(decodeOpen))
          const byFingerprint = new Map(open.map((r) => [r.fingerprint, r.id]))
          for (const c of candidates) {
            const body = JSON.stringify(bodyOf(c, currency))
            const id = byFingerprint.get(c.fingerprint)
            if (id !== undefined) {
              byFingerprint.delete(c.fingerprint)
              yield* sql`UPDATE signals SET severity = ${c.severity}, dimension = ${c.dimension}, body = ${body}::jsonb,
                  last_seen_at = ${now} WHERE id = ${id}`
            } else {
              yield* sql`INSERT INTO signals (id, project_id, fingerprint, kind, dimension, severity, body, detected_at,
                  last_seen_at)
                  VALUES (${newSignalId()}, ${projectId}, ${c.fingerprint}, ${c.kind}, ${c.dimension}, ${c.severity},
                    ${body}::jsonb, ${now}, ${now})`
            }
          }
          const gone = [...byFingerprint.values()]
          if (gone.length > 0) yield* sql`UPDATE signals SET resolved_at = ${now} WHERE id = ANY(${gone})`
        }, dieOnSqlError),
        rewind: Effect.fn("SignalsRepo.rewind")(function*(projectId, from) {
          yield* sql`DELETE FROM signals WHERE project_id = ${projectId} AND detected_at >= ${from}`
          yield* sql`UPDATE signals SET resolved_at = NULL WHERE project_id = ${projectId} AND resolved_at >= ${from}`
        }, dieOnSqlError),
        active: Effect.fn("SignalsRepo.active")(function*(projectId) {
          return yield* sql`SELECT * FROM signals WHERE project_id = ${projectId} AND resolved_at IS NULL ORDER BY
              ${key}`
            .pipe(
              Effect.flatMap(decodeSignals),
              Effect.map((rows) => rows.map(toSignal)),
              dieOnSqlError
            )
        }),
        list: Effect.fn("SignalsRepo.list")(function*(projectId, filter, page, now) {
          const since = new Date(now.getTime() - RESOLVED_LIST_DAYS * 86_400_000)
          const after = page.after
          return yield* sql`SELECT * FROM signals WHERE project_id = ${projectId}
              AND ${
            filter.active === true ?
              sql`resolved_at IS NULL`
              : filter.active === false ?
              sql`resolved_at >= ${since}`
              : sql`(resolved_at IS NULL OR resolved_at >= ${since})`
          }
              ${filter.dimension === undefined ? sql`` : sql`AND dimension = ${filter.dimension}`}
              ${filter.severity === undefined ? sql`` : sql`AND severity = ${filter.severity}`}
              ${after === null ? sql`` : sql`AND ${key} > (${after[0]}, ${after[1]}, ${after[2]}, ${after[3]})`}
              ORDER BY ${key} LIMIT ${page.limit + 1}`.pipe(
            Effect.flatMap(decodeSignals),
            Effect.map((rows) => {
              const items = rows.slice(0, page.limit).map(toSignal)
              return {
                items,
                nextCursor: rows.length > page.limit ? encodeSignalCursor(keyOf(items[items.length - 1])) : null
              }
            }),
            dieOnSqlError
          )
        })
      })
    })
  )

  static readonly memory = Layer.sync(SignalsRepo, () => {
    const rows = new Map<string, { projectId: string; fingerprint: string; signal: Signal }>()
    const sorted = (xs: Iterable<Signal>) => [...xs].sort((a, b) => compareKeys(keyOf(a), keyOf(b)))
    return SignalsRepo.of({
      reconcile: Effect.fn("SignalsRepo.reconcile")((projectId, currency, candidates, now) =>
        Effect.sync(() => {
          const at = now.toISOString()
          const open = new Map(
            [...rows.values()].filter((r) => r.projectId === projectId && r.signal.active)
              .map((r) => [r.fingerprint, r] as const)
          )
          for (const c of candidates) {
            const old = open.get(c.fingerprint)
            open.delete(c.fingerprint)
            const base = {
              id: old?.signal.id ?? newSignalId(),
              dimension: c.dimension,
              severity: c.severity,
              kind: c.kind
            }
            rows.set(base.id, {
              projectId,
              fingerprint: c.fingerprint,
              signal: toSignal({
                ...base,
                body: bodyOf(c, currency),
                detected_at: new Date(old?.signal.detectedAt ?? at),
                last_seen_at: now,
                resolved_at: null
              })
            })
          }
          for (const r of open.values()) {
            rows.set(r.signal.id, { ...r, signal: { ...r.signal, active: false, resolvedAt: at } })
          }
        })
      ),
      rewind: Effect.fn("SignalsRepo.rewind")((projectId, from) =>
        Effect.sync(() => {
          for (const [id, r] of rows) {
            if (r.projectId !== projectId) continue
            if (Date.parse(r.signal.detectedAt) >= from.getTime()) rows.delete(id)
            else if (r.signal.resolvedAt !== null && Date.parse(r.signal.resolvedAt) >= from.getTime()) {
              rows.set(id, { ...r, signal: { ...r.signal, active: true, resolvedAt: null } })
            }
          }
        })
      ),
      active: Effect.fn("SignalsRepo.active")((projectId) =>
        Effect.sync(() =>
          sorted([...rows.values()].filter((r) => r.projectId === projectId && r.signal.active).map((r) => r.signal))
        )
      ),
      list: Effect.fn("SignalsRepo.list")((projectId, filter, page, now) =>
        Effect.sync(() => {
          const since = new Date(now.getTime() - RESOLVED_LIST_DAYS * 86_400_000).toISOString()
          const all = sorted(
            [...rows.values()].filter((r) => r.projectId === projectId).map((r) => r.signal).filter((s) =>
              (filter.active === true
                ? s.active
                : filter.active === false
                ? !s.active && s.resolvedAt! >= since
                : s.active || s.resolvedAt! >= since) &&
              (filter.dimension === undefined || s.dimension === filter.dimension) &&
              (filter.severity === undefined || s.severity === filter.severity)
            )
          )
          const rest = page.after === null ? all : all.filter((s) => compareKeys(keyOf(s), page.after!) > 0)
          const items = rest.slice(0, page.limit)
          return {
            items,
            nextCursor: rest.length > page.limit ? encodeSignalCursor(keyOf(items[items.length - 1])) : null
          }
        })
      )
    })
  })
}
