/**
 * The recompute queue: one `project_jobs` row per project saying which data_version and local day its
 * stored snapshots were computed from and when it is next due. The row is also THE lock: whoever computes
 * a project (a worker, or a GET finding its snapshot behind) holds `SELECT … FOR UPDATE` on it for the
 * whole computation, in one transaction, so two computations of one project never overlap. Workers claim
 * with SKIP LOCKED (they move on to another project); readers wait (they need the result).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as SqlClient from "effect/sql/SqlClient"
import { MemoryDb } from "../store/MemoryDb.ts"
import { Day, dieOnSqlError, firstOf, Instant } from "../store/Sql.ts"

export interface JobState {
  readonly projectId: string
  readonly computedVersion: string | null
  readonly computedDay: string | null
  readonly lastRunAt: Date | null
}

export interface JobsRepoShape {
  /** The project's data_version now (memory: a fingerprint of its rows); null when there is no such project. */
  readonly dataVersion: (projectId: string) => Effect.Effect<string | null>
  /**
   * Runs `f` in a transaction holding the project's job row (created when missing), waiting for any
   * other holder to finish first.
   */
  readonly withProjectLock: <A, E, R>(
    projectId: string,
    f: (job: JobState) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /**
   * Claims ONE due project — its data_version differs from the computed one, or its due_at has passed —
   * skipping rows other transactions hold, and runs `f` on it in the same transaction. Returns whether
   * a project was claimed.
   */
  /**
   * Claims one due project and runs `f` on it inside the claim's transaction; false when none is due.
   * `projectIds`: only these projects (a test that shares its database with another suite drains its own).
   */
  readonly claimNext: <E, R>(
    now: Date,
    f: (job: JobState) => Effect.Effect<void, E, R>,
    projectIds?: ReadonlyArray<string>
  ) => Effect.Effect<boolean, E, R>
  /** Inside `withProjectLock`/`claimNext`: record what was computed and when the project is next due. */
  readonly markComputed: (
    projectId: string,
    version: string,
    day: string,
    now: Date,
    dueAt: Date
  ) => Effect.Effect<void>
  /**
   * Inside the lock, after a failed computation: retry at `dueAt` rather than at once (the version is
   * marked as seen, so a project whose computation keeps failing cannot starve the others).
   */
  readonly postpone: (projectId: string, dueAt: Date) => Effect.Effect<void>
  /** Makes sure every project has a job row (new projects become due at once). */
  readonly ensureJobs: (now: Date) => Effect.Effect<void>
  /**
   * Runs the work of a claimed project inside a savepoint: a SQL error in it rolls back to the savepoint,
   * so the claim's own transaction stays usable and the failure handler can still postpone the project.
   */
  readonly attempt: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** FNV-1a (32-bit) of a string, base 36: the memory store's stand-in for data_version. */
const fnv1a = (s: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(36)
}

const JobRow = Schema.Struct({
  project_id: Schema.String,
  computed_version: Schema.NullOr(Schema.String),
  computed_day: Schema.NullOr(Day),
  last_run_at: Schema.NullOr(Instant)
})
const decodeJob = firstOf("project_jobs", JobRow)
const decodeVersion = firstOf("projects", Schema.Struct({ v: Schema.String }))

/** The locked job row: the statement that locks it has just created it when missing. */
const lockedJob = (rows: ReadonlyArray<unknown>) =>
  Effect.flatMap(decodeJob(rows), (r) =>
    r === null
      ? Effect.die(new Error("project_jobs: the row just upserted is missing")) // invariant, see withProjectLock
      : Effect.succeed<JobState>({
        projectId: r.project_id,
        computedVersion: r.computed_version,
        computedDay: r.computed_day,
        lastRunAt: r.last_run_at
      }))

export class JobsRepo extends Context.Service<JobsRepo, JobsRepoShape>()("sitehealth/JobsRepo") {
  static readonly sql = Layer.effect(
    JobsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobColumns = sql`project_id, computed_version::text AS computed_version,
        to_char(computed_day, 'YYYY-MM-DD') AS computed_day, last_run_at`
      return JobsRepo.of({
        dataVersion: Effect.fn("JobsRepo.dataVersion")(function*(projectId) {
          return yield* sql`SELECT data_version::text AS v FROM projects WHERE id = ${projectId}`.pipe(
            Effect.flatMap(decodeVersion),
            Effect.map((r) => (r === null ? null : r.v)),
            dieOnSqlError
          )
        }),
        withProjectLock: Effect.fn("JobsRepo.withProjectLock")(
          function*(projectId, f) {
            yield* sql`INSERT INTO project_jobs (project_id, due_at) VALUES (${projectId}, now())
              ON CONFLICT (project_id) DO NOTHING`.pipe(dieOnSqlError)
            const job = yield* sql`SELECT ${jobColumns} FROM project_jobs WHERE project_id = ${projectId} FOR UPDATE`
              .pipe(Effect.flatMap(lockedJob), dieOnSqlError)
            return yield* f(job)
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        claimNext: Effect.fn("JobsRepo.claimNext")(
          function*(now, f, projectIds) {
            const rows = yield* sql`SELECT ${sql`j.project_id, j.computed_version::text AS computed_version,
                to_char(j.computed_day, 'YYYY-MM-DD') AS computed_day, j.last_run_at`}
              FROM project_jobs j JOIN projects p ON p.id = j.project_id
              WHERE (j.computed_version IS DISTINCT FROM p.data_version OR j.due_at <= ${now})
                ${projectIds === undefined ? sql`` : sql`AND j.project_id = ANY(${[...projectIds]})`}
              ORDER BY j.due_at, j.project_id
              LIMIT 1
              FOR UPDATE OF j SKIP LOCKED`.pipe(dieOnSqlError)
            if (rows.length === 0) return false
            yield* f(yield* lockedJob(rows))
            return true
          },
          sql.withTransaction,
          dieOnSqlError
        ),
        markComputed: Effect.fn("JobsRepo.markComputed")(function*(projectId, version, day, now, dueAt) {
          return yield* sql`UPDATE project_jobs SET computed_version = ${version}::bigint, computed_day = ${day}::date,
                last_run_at = ${now}, due_at = ${dueAt}
              WHERE project_id = ${projectId}`.pipe(Effect.asVoid, dieOnSqlError)
        }),
        postpone: Effect.fn("JobsRepo.postpone")(function*(projectId, dueAt) {
          return yield* sql`UPDATE project_jobs j SET computed_version = p.data_version, due_at = ${dueAt}
              FROM projects p WHERE p.id = j.project_id AND j.project_id = ${projectId}`.pipe(
            Effect.asVoid,
            dieOnSqlError
          )
        }),
        attempt: Effect.fn("JobsRepo.attempt")(function*(work) {
          return yield* sql.withTransaction(work).pipe(dieOnSqlError)
        }),
        ensureJobs: Effect.fn("JobsRepo.ensureJobs")(function*(now) {
          return yield* sql`INSERT INTO project_jobs (project_id, due_at)
              SELECT p.id, ${now} FROM projects p
              WHERE NOT EXISTS (SELECT 1 FROM project_jobs j WHERE j.project_id = p.id)
              ON CONFLICT (project_id) DO NOTHING`.pipe(Effect.asVoid, dieOnSqlError)
        })
      })
    })
  )

  /** Tests only: one semaphore per project stands in for the row lock. */
  static readonly memory = Layer.effect(
    JobsRepo,
    Effect.gen(function*() {
      const db = yield* MemoryDb
      const jobs = new Map<string, JobState & { dueAt: Date }>()
      const locks = new Map<string, Semaphore.Semaphore>()
      const lockOf = (id: string) => {
        let s = locks.get(id)
        if (s === undefined) locks.set(id, s = Semaphore.makeUnsafe(1))
        return s
      }
      const jobOf = (id: string) => {
        let j = jobs.get(id)
        if (j === undefined) {
          jobs.set(
            id,
            j = { projectId: id, computedVersion: null, computedDay: null, lastRunAt: null, dueAt: new Date(0) }
          )
        }
        return j
      }
      // No data_version in the maps: a fingerprint of everything the reports read stands in for it.
      const versionOf = (id: string): string | null => {
        if (!db.projects.has(id)) return null
        const rows = [db.traffic, db.revenue, db.search].map((t) => [...(t.get(id)?.values() ?? [])])
        const expenses = [...db.expenses.values()].filter((e) => e.projectId === id && e.deletedAt === null)
        // Annotations are cited by the signals and the briefing: a change makes them due too.
        const annotations = [...db.annotations.values()].filter((a) => a.projectId === id)
        // Integration states feed the signals (failing, stale): a change must make the project due, as the
        // data_version bump does in SQL.
        const integrations = [...db.integrations.values()].filter((i) => i.projectId === id)
          .map((i) => [i.provider, i.status, i.lastError, i.lastSyncedAt?.getTime() ?? null])
        return fnv1a(JSON.stringify([rows, expenses, integrations, annotations]))
      }
      return JobsRepo.of({
        dataVersion: Effect.fn("JobsRepo.dataVersion")((id) => Effect.sync(() => versionOf(id))),
        withProjectLock: Effect.fn("JobsRepo.withProjectLock")(function*(id, f) {
          return yield* lockOf(id).withPermit(Effect.suspend(() => f(jobOf(id))))
        }),
        claimNext: Effect.fn("JobsRepo.claimNext")(function*(now, f, projectIds) {
          for (const id of [...db.projects.keys()].sort()) {
            if (projectIds !== undefined && !projectIds.includes(id)) continue
            const j = jobOf(id)
            if (j.computedVersion === versionOf(id) && j.dueAt > now) continue
            const ran = yield* lockOf(id).withPermitsIfAvailable(1)(Effect.suspend(() => f(jobOf(id))))
            if (Option.isSome(ran)) return true
          }
          return false
        }),
        markComputed: Effect.fn("JobsRepo.markComputed")((id, version, day, now, dueAt) =>
          Effect.sync(() =>
            void jobs.set(id, { projectId: id, computedVersion: version, computedDay: day, lastRunAt: now, dueAt })
          )
        ),
        postpone: Effect.fn("JobsRepo.postpone")((id, dueAt) =>
          Effect.sync(() => void jobs.set(id, { ...jobOf(id), computedVersion: versionOf(id), dueAt }))
        ),
        ensureJobs: Effect.fn("JobsRepo.ensureJobs")(() =>
          Effect.sync(() => void [...db.projects.keys()].forEach(jobOf))
        ),
        attempt: Effect.fn("JobsRepo.attempt")(function*(work) {
          return yield* work
        })
      })
    })
  )
}
