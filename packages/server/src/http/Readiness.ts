/** Whether the database answers: behind GET /readyz. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export class Readiness extends Context.Service<Readiness, { readonly check: Effect.Effect<boolean> }>()(
  "sitehealth/Readiness"
) {
  static readonly sql = Layer.effect(
    Readiness,
    Effect.map(SqlClient.SqlClient, (sql) =>
      Readiness.of({
        check: sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.as(true),
          Effect.catchCause(() => Effect.succeed(false))
        )
      }))
  )
  static readonly memory = Layer.succeed(Readiness, Readiness.of({ check: Effect.succeed(true) }))
}
