/**
 * The hot path's one database round trip: the token (by the SHA-256 of its secret) with its account's
 * entitlement fields and — when the endpoint names a project — that project, its data_version and, for the
 * health endpoint, the stored snapshot of the project's local today, already encoded as the response's JSON —
 * or, for a report, its stored answer, already the response's body (the success envelope around it, UTF-8). Nothing
 * here is cached between requests: a revoked token, a project moved out
 * of scope or a new data_version is seen by the very next request on every instance.
 *
 * The project is joined on the token's own account, so a project of another account comes back as
 * absent (404 for the caller) and none of its data is ever read for a stranger.
 *
 * For `GET /projects` it reads the page of the token's projects instead (its account's, within its own
 * list), each with its kept list entry when that was built from the project's current snapshot of its local
 * today (access/ListAnswer.ts).
 */
import { SUCCESS_TEXT_HEAD, SUCCESS_TEXT_TAIL, successText } from "@sitehealth/domain/Envelope"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { PROJECT_LIST_ENTRY } from "../answers/AnswersRepo.ts"
import { AnswersRepo, type StoredAnswer } from "../answers/AnswersRepo.ts"
import { addDays, todayIn } from "../metrics/Dates.ts"
import { toProjectRecord } from "../projects/ProjectsRepo.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { JobsRepo } from "../recompute/JobsRepo.ts"
import { SnapshotsRepo } from "../snapshots/SnapshotsRepo.ts"
import { toPage } from "../store/Cursor.ts"
import { looksLikeId } from "../store/Ids.ts"
import type { ProjectRecord, SubscriptionStatus, TokenWithAccount } from "../store/Records.ts"
import type { ProjectRow } from "../store/Rows.ts"
import { dieOnSqlError } from "../store/Sql.ts"
import { type TokenRow, TokensRepo, toTokenRecord } from "../tokens/TokensRepo.ts"

/** A stored health snapshot as the fast path serves it: the encoded response `data`, verbatim. */
export interface EncodedHealth {
  readonly day: string
  readonly dataVersion: string
  readonly computedAt: Date
  /** JSON of the contract's Health schema, encoded when the snapshot was stored. */
  readonly encoded: string
}

/** What the lookup found for the project the request names. */
export interface ProjectAccess {
  /** The id in the path, as given. */
  readonly id: string
  /** null: no project with this id in the token's account. */
  readonly project: ProjectRecord | null
  readonly dataVersion: string | null
  /** Stored snapshots of the days around today (only when asked for), any order. */
  readonly health: ReadonlyArray<EncodedHealth>
  /** The stored answer under the lookup's answerKey (access/StoredAnswers.ts), when asked for and kept. */
  readonly answer: ServedAnswer | null
}

/**
 * A stored answer as the lookup reads it: what decides whether it is current, and the whole success envelope
 * around its encoded `data` as UTF-8 bytes — the response body as is. The database wraps and converts it
 * (`convert_to`), and the driver hands a bytea over as bytes: a read of a 35 KB answer then costs no text
 * decoding, no string concatenation and no UTF-8 encoding on the way out (docs/benchmarks.md, "Answer size").
 */
export interface ServedAnswer extends Omit<StoredAnswer, "encoded" | "gzip"> {
  readonly body: Uint8Array
  /** `body` is the gzipped body (the lookup was asked for gzip and the answer has a gzipped copy). */
  readonly gzip: boolean
}

const utf8 = new TextEncoder()

/** A kept answer as the SQL lookup reads it (the memory lookup, for tests, wraps and encodes it here). */
const servedAnswer = (a: StoredAnswer | null, gzip: boolean): ServedAnswer | null =>
  a === null ? null : gzip && a.gzip != null
    ? { day: a.day, dataVersion: a.dataVersion, computedAt: a.computedAt, body: a.gzip, gzip: true }
    : {
      day: a.day,
      dataVersion: a.dataVersion,
      computedAt: a.computedAt,
      body: utf8.encode(successText(a.encoded)),
      gzip: false
    }

export interface Access extends TokenWithAccount {
  readonly project: ProjectAccess | null
  /** The page of `GET /projects`, when the lookup was asked for it. */
  readonly list: ProjectListAccess | null
}

/** The page of `GET /projects` to read with the token: the request's own (already valid) limit and cursor. */
export interface ListLookup {
  readonly limit: number
  /** The cursor as given (null: the first page) and what it decodes to. */
  readonly cursor: string | null
  readonly after: { readonly createdAt: Date; readonly id: string } | null
}

/** A kept list entry (answers/AnswersRepo.ts, PROJECT_LIST_ENTRY) and the snapshot it was built from. */
export interface ListEntry {
  readonly dataVersion: string
  readonly computedAt: Date
  /** JSON object of the entry's `health` and `trend`, as the contract encodes them. */
  readonly encoded: string
}

export interface ProjectListAccess extends ListLookup {
  readonly items: ReadonlyArray<{
    readonly project: ProjectRecord
    readonly dataVersion: string | null
    /** The entry kept for the project's current snapshot of its local today; null when there is none. */
    readonly entry: ListEntry | null
  }>
  readonly nextCursor: string | null
}

export interface ProjectLookup {
  readonly id: string
  /** Also read the stored health snapshots of the days `today` can be in any zone (UTC day ± 1). */
  readonly withHealth: boolean
  /** Also read the stored answer under this key (access/StoredAnswers.ts); null: none. */
  readonly answerKey: string | null
  /** The request accepts gzip: read the stored answer's gzipped body when it has one. */
  readonly gzip?: boolean
}

export interface AccessRepoShape {
  /** With `list`, the page of `GET /projects` instead of a project (`project` is then null). */
  readonly lookup: (
    secretSha256Hex: string,
    project: ProjectLookup | null,
    now: Date,
    list?: ListLookup
  ) => Effect.Effect<Access | null>
}

/** The UTC day of `now` ± 1 covers the local day of every zone (UTC−12 … UTC+14). Kept for the UTC day. */
let lastHealthDays: { readonly epochDay: number; readonly from: string; readonly to: string } | undefined
const healthDays = (now: Date) => {
  const epochDay = Math.floor(now.getTime() / 86_400_000)
  if (lastHealthDays === undefined || lastHealthDays.epochDay !== epochDay) {
    const utc = now.toISOString().slice(0, 10)
    lastHealthDays = { epochDay, from: addDays(utc, -1), to: addDays(utc, 1) }
  }
  return lastHealthDays
}

/**
 * A row of the lookup as the driver returns it: the token's columns, its account's, then the project's and snapshot's
 * (absent from the narrower queries, null when the LEFT JOIN found nothing).
 */
interface AccessRow extends TokenRow {
  readonly trial_ends_at: Date
  readonly subscription_status: SubscriptionStatus
  readonly subscription_until: Date | null
  // The project's columns: absent from the narrower queries; all null together when the LEFT JOIN found none.
  readonly p_id?: ProjectRow["id"] | null
  readonly p_account_id?: ProjectRow["account_id"]
  readonly p_name?: string
  readonly p_domain?: string
  readonly p_timezone?: string
  readonly p_currency?: string
  readonly p_created_at?: Date
  readonly p_version?: string | null
  readonly h_day?: string | null
  readonly h_version?: string
  readonly h_computed_at?: Date
  readonly h_encoded?: string
  readonly s_day?: string | null
  readonly s_version?: string
  readonly s_computed_at?: Date
  readonly s_body?: Uint8Array
  readonly s_gzip?: boolean
  // GET /projects: the kept entry (null when none matches the project's snapshot of today).
  readonly e_version?: string | null
  readonly e_computed_at?: Date | null
  readonly e_encoded?: string | null
}

/**
 * The typed row to the lookup's answer: a plain mapping, no schema decode, since this runs on every request
 * and the query's own column list is what fixes the row's shape.
 */
const toAccess = (
  rows: ReadonlyArray<AccessRow>,
  lookup: ProjectLookup | null,
  list: ListLookup | null = null
): Access | null => {
  if (rows.length === 0) return null
  const r = rows[0]
  const project: ProjectAccess | null = lookup === null ? null : {
    id: lookup.id,
    // Every p_ column is selected with p_id and comes from the same joined row, so they are set whenever it is.
    project: r.p_id === null || r.p_id === undefined ? null : projectOf(r, r.p_id),
    dataVersion: r.p_version ?? null,
    health: lookup.withHealth ? rows.flatMap(toEncodedHealth) : [],
    // Every s_ column comes with s_day from the one joined row (the key is the table's primary key).
    answer: r.s_day === null || r.s_day === undefined
      ? null
      : {
        day: r.s_day,
        dataVersion: r.s_version!,
        computedAt: r.s_computed_at!,
        body: r.s_body!,
        gzip: r.s_gzip === true
      }
  }
  return {
    token: toTokenRecord(r),
    account: {
      trialEndsAt: r.trial_ends_at,
      subscriptionStatus: r.subscription_status,
      subscriptionUntil: r.subscription_until
    },
    project,
    list: list === null ? null : toList(rows, list)
  }
}

/** The row's joined project (its p_ columns, all set whenever p_id is: they come from the same joined row). */
const projectOf = (r: AccessRow, id: ProjectRow["id"]) =>
  toProjectRecord({
    id,
    account_id: r.p_account_id!,
    name: r.p_name!,
    domain: r.p_domain!,
    timezone: r.p_timezone!,
    currency: r.p_currency!,
    created_at: r.p_created_at!
  })

/** The rows of the list lookup (one per project of the page, plus the next page's first) to the page. */
const toList = (rows: ReadonlyArray<AccessRow>, list: ListLookup): ProjectListAccess => {
  const items: Array<ProjectListAccess["items"][number] & { readonly createdAt: Date; readonly id: string }> = []
  for (const r of rows) {
    // A token without projects in its page: one row, its project columns null.
    if (r.p_id === null || r.p_id === undefined) continue
    const project = projectOf(r, r.p_id)
    items.push({
      project,
      createdAt: project.createdAt,
      id: project.id,
      dataVersion: r.p_version!,
      entry: r.e_encoded === null || r.e_encoded === undefined
        ? null
        : { dataVersion: r.e_version!, computedAt: r.e_computed_at!, encoded: r.e_encoded }
    })
  }
  const page = toPage(items, list.limit)
  return { ...list, items: page.items, nextCursor: page.nextCursor }
}

const toEncodedHealth = (x: AccessRow): ReadonlyArray<EncodedHealth> =>
  x.h_day === null || x.h_day === undefined ? [] : [{
    day: x.h_day,
    dataVersion: x.h_version!,
    computedAt: new Date(x.h_computed_at!),
    encoded: x.h_encoded!
  }]

export class AccessRepo extends Context.Service<AccessRepo, AccessRepoShape>()("sitehealth/AccessRepo") {
  static readonly sql = Layer.effect(
    AccessRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tokenColumns = sql.literal("t.*, a.trial_ends_at, a.subscription_status, a.subscription_until")
      const projectColumns = sql.literal(
        `p.id AS p_id, p.account_id AS p_account_id, p.name AS p_name, p.domain AS p_domain,
        p.timezone AS p_timezone, p.currency AS p_currency, p.created_at AS p_created_at, p.data_version::text AS
          p_version`
      )
      return AccessRepo.of({
        lookup: (hash, lookup, now, list) => {
          const secret = Buffer.from(hash, "hex")
          if (list !== undefined) {
            // The token's page of its account's projects (within its own list, when it has one), in the list's
            // order; each with its kept entry when that is of its local today. Writing a snapshot deletes the
            // entry (SnapshotsRepo.putHealth), so an entry that is there was built from the snapshots stored now.
            const after = list.after
            const page = sql`${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
                  ORDER BY created_at, id LIMIT ${list.limit + 1}`
            // Two branches, of which the token's row lets one run: a token with a project list reads those
            // projects by id (an account of 10,000 websites is not scanned for a token of 500), one without
            // reads its account's in the list's order (projects_account).
            return sql<AccessRow>`SELECT ${tokenColumns}, ${projectColumns},
                  e.data_version::text AS e_version, e.computed_at AS e_computed_at, e.encoded AS e_encoded
                FROM tokens t JOIN accounts a ON a.id = t.account_id
                LEFT JOIN LATERAL (
                  (SELECT * FROM projects WHERE t.projects IS NULL AND account_id = t.account_id ${page})
                  UNION ALL
                  (SELECT * FROM projects WHERE t.projects IS NOT NULL AND id = ANY(t.projects) AND account_id =
                    t.account_id ${page})
                ) p ON true
                LEFT JOIN stored_answers e ON e.project_id = p.id AND e.key = ${PROJECT_LIST_ENTRY}
                  AND e.day = (${now}::timestamptz AT TIME ZONE p.timezone)::date
                WHERE t.secret_sha256 = ${secret}
                ORDER BY p.created_at, p.id`.pipe(Effect.map((rows) => toAccess(rows, null, list)), dieOnSqlError)
          }
          // An id that cannot be one matches nothing: the same answer as an unknown project, no join.
          const id = lookup !== null && looksLikeId(lookup.id) ? lookup.id : ""
          if (lookup === null) {
            return sql<AccessRow>`SELECT ${tokenColumns}
                FROM tokens t JOIN accounts a ON a.id = t.account_id
                WHERE t.secret_sha256 = ${secret}`.pipe(Effect.map((rows) => toAccess(rows, null)), dieOnSqlError)
          }
          // The token, its account and the path's project (of the token's account only), then what the
          // endpoint is served from: nothing more, the stored answer under its key, or the health snapshots.
          const project = sql`${tokenColumns}, ${projectColumns}`
          const from = sql`FROM tokens t JOIN accounts a ON a.id = t.account_id
                LEFT JOIN projects p ON p.id = ${id} AND p.account_id = t.account_id`
          if (lookup.answerKey !== null) {
            // The response body: the text in the success envelope as UTF-8, or its gzipped copy when asked and kept.
            const text = sql`convert_to(${SUCCESS_TEXT_HEAD}::text || s.encoded || ${SUCCESS_TEXT_TAIL}::text, 'UTF8')`
            return sql<AccessRow>`SELECT ${project},
                  to_char(s.day, 'YYYY-MM-DD') AS s_day, s.data_version::text AS s_version,
                  s.computed_at AS s_computed_at,
                  ${
              lookup.gzip === true
                ? sql`COALESCE(s.gzip, ${text}) AS s_body, s.gzip IS NOT NULL AS s_gzip`
                : sql`${text} AS s_body`
            }
                ${from}
                LEFT JOIN stored_answers s ON s.project_id = p.id AND s.key = ${lookup.answerKey}
                WHERE t.secret_sha256 = ${secret}`.pipe(Effect.map((rows) => toAccess(rows, lookup)), dieOnSqlError)
          }
          if (!lookup.withHealth) {
            return sql<AccessRow>`SELECT ${project} ${from}
                WHERE t.secret_sha256 = ${secret}`.pipe(Effect.map((rows) => toAccess(rows, lookup)), dieOnSqlError)
          }
          // Only the project's local today (the day `now` is in its zone): one row, the one the handler serves.
          return sql<AccessRow>`SELECT ${project},
                to_char(h.day, 'YYYY-MM-DD') AS h_day, h.data_version::text AS h_version,
                h.computed_at AS h_computed_at, h.encoded AS h_encoded
              ${from}
              LEFT JOIN health_snapshots h ON h.project_id = p.id
                AND h.day = (${now}::timestamptz AT TIME ZONE p.timezone)::date
                AND h.encoded IS NOT NULL AND h.encoded_computed_at = h.computed_at
              WHERE t.secret_sha256 = ${secret}`.pipe(Effect.map((rows) => toAccess(rows, lookup)), dieOnSqlError)
        }
      })
    })
  )

  /** Tests only: the same answer composed from the in-memory repositories. */
  static readonly memory = Layer.effect(
    AccessRepo,
    Effect.gen(function*() {
      const tokens = yield* TokensRepo
      const projects = yield* ProjectsRepo
      const snapshots = yield* SnapshotsRepo
      const jobs = yield* JobsRepo
      const answers = yield* AnswersRepo
      return AccessRepo.of({
        lookup: (hash, lookup, now, list) =>
          Effect.gen(function*() {
            const found = yield* tokens.findBySecretHash(hash)
            if (found === null) return null
            if (list !== undefined) {
              const page = yield* projects.list(found.token.accountId, found.token.projects, {
                limit: list.limit,
                after: list.after
              })
              const items: Array<ProjectListAccess["items"][number]> = []
              for (const project of page.items) {
                const today = todayIn(project.timezone, now)
                const entry = yield* answers.find(project.id, PROJECT_LIST_ENTRY)
                const matches = entry !== null && entry.day === today
                items.push({
                  project,
                  dataVersion: yield* jobs.dataVersion(project.id),
                  entry: matches
                    ? { dataVersion: entry.dataVersion, computedAt: entry.computedAt, encoded: entry.encoded }
                    : null
                })
              }
              return { ...found, project: null, list: { ...list, items, nextCursor: page.nextCursor } }
            }
            if (lookup === null) return { ...found, project: null, list: null }
            const record = yield* projects.find(lookup.id)
            const project = record !== null && record.accountId === found.token.accountId ? record : null
            const health: Array<EncodedHealth> = []
            if (project !== null && lookup.withHealth) {
              const days = healthDays(now)
              for (let day = days.from; day <= days.to; day = addDays(day, 1)) {
                const stored = yield* snapshots.healthOf(project.id, day)
                if (stored !== null && stored.encoded !== undefined) {
                  health.push({
                    day,
                    dataVersion: stored.dataVersion,
                    computedAt: stored.computedAt,
                    encoded: stored.encoded
                  })
                }
              }
            }
            return {
              ...found,
              list: null,
              project: {
                id: lookup.id,
                project,
                dataVersion: project === null ? null : yield* jobs.dataVersion(project.id),
                health,
                answer: project === null || lookup.answerKey === null
                  ? null
                  : servedAnswer(yield* answers.find(project.id, lookup.answerKey), lookup.gzip === true)
              }
            }
          })
      })
    })
  )
}

/**
 * The project the request's path names, as the authentication lookup found it (null on routes without a
 * project). Handlers take the project from here instead of reading it again (http/ProjectPolicy.ts).
 */
export const RequestProject = Context.Reference<ProjectAccess | null>("sitehealth/RequestProject", {
  defaultValue: () => null
})

/**
 * Everything the authentication lookup found for this request (null outside the API's routes, or when a test
 * authenticates without it): the later checks read it instead of querying again.
 */
export const RequestAccess = Context.Reference<Access | null>("sitehealth/RequestAccess", {
  defaultValue: () => null
})
