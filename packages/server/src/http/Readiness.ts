/**
 * Whether this instance should get traffic: behind GET /readyz. Not ready while the database does not answer,
 * and not ready once the process has begun its graceful stop (main.ts marks it draining on SIGTERM/SIGINT),
 * so a load balancer polling /readyz takes the instance out of rotation while it finishes its requests.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export type ReadinessStatus = "ready" | "draining" | "database unreachable"

/**
 * Process-wide, one-way: a process that began stopping never becomes ready again (a restart is a new
 * process). A module variable rather than a service because the signal handler that sets it runs outside
 * any Effect context, and every layer built in this process must see it.
 */
let draining = false

/** Called once a stop signal arrives; /readyz answers 503 `draining` from then on. */
export const markDraining = (): void => {
  draining = true
}

export const isDraining = (): boolean => draining

export class Readiness extends Context.Service<Readiness, {
  /** true only when `status` is "ready". */
  readonly check: Effect.Effect<boolean>
  /** Why the instance is (not) ready; /readyz can put it in its 503 body. */
  readonly status: Effect.Effect<ReadinessStatus>
}>()("sitehealth/Readiness") {
  static readonly sql = Layer.effect(
    Readiness,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const status: Effect.Effect<ReadinessStatus> = Effect.suspend(() =>
        draining
          ? Effect.succeed("draining" as const)
          : sql`SELECT 1`.pipe(
            Effect.timeout("2 seconds"),
            Effect.as("ready" as const),
            Effect.catchCause(() => Effect.succeed("database unreachable" as const))
          )
      )
      return Readiness.of({ check: Effect.map(status, (s) => s === "ready"), status })
    })
  )
  static readonly memory = Layer.sync(Readiness, () => {
    const status = Effect.sync((): ReadinessStatus => (draining ? "draining" : "ready"))
    return Readiness.of({ check: Effect.map(status, (s) => s === "ready"), status })
  })
}
