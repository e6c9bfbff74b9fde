/**
 * The FX rates the reports convert money with. Operator-supplied (admin CLI `fx set`) or seeded by the
 * demo; sitehealth never invents a rate. The table is small (a row per pair and rate change), so it is
 * read whole.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Day, dieOnSqlError, Numeric, rowsOf } from "../store/Sql.ts"
import type { FxRate } from "./Fx.ts"

export interface FxRepoShape {
  /** Every stored rate, ordered by base, quote, day. */
  readonly all: () => Effect.Effect<ReadonlyArray<FxRate>>
  /**
   * Inserts or replaces rates by (base, quote, day). A rate changes the reported figures of every project
   * with an amount in that currency, so every project's data_version is bumped in the same transaction.
   */
  readonly put: (rates: ReadonlyArray<FxRate>) => Effect.Effect<void>
}

const decodeRates = rowsOf(
  "fx_rates",
  Schema.Struct({ base: Schema.String, quote: Schema.String, day: Day, rate: Numeric })
)

const keyOf = (r: FxRate) => `${r.base.toUpperCase()}|${r.quote.toUpperCase()}|${r.day}`
const normalise = (r: FxRate): FxRate => ({
  day: r.day,
  base: r.base.toUpperCase(),
  quote: r.quote.toUpperCase(),
  rate: r.rate
})
const order = (a: FxRate, b: FxRate) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0)

export class FxRepo extends Context.Service<FxRepo, FxRepoShape>()("sitehealth/FxRepo") {
  static readonly sql = Layer.effect(
    FxRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return FxRepo.of({
        all: Effect.fn("FxRepo.all")(function*() {
          return yield* sql`SELECT base, quote, to_char(day, 'YYYY-MM-DD') AS day, rate FROM fx_rates ORDER BY base,
              quote, day`
            .pipe(
              Effect.flatMap(decodeRates),
              dieOnSqlError
            )
        }),
        put: Effect.fn("FxRepo.put")(function*(rates) {
          if (rates.length === 0) return
          return yield* sql.withTransaction(Effect.gen(function*() {
            for (const r of rates.map(normalise)) {
              yield* sql`INSERT INTO fx_rates (base, quote, day, rate) VALUES (${r.base}, ${r.quote}, ${r.day}::date,
                  ${r.rate})
                ON CONFLICT (base, quote, day) DO UPDATE SET rate = EXCLUDED.rate, updated_at = now()`
            }
            yield* sql`UPDATE projects SET data_version = data_version + 1`
          })).pipe(Effect.asVoid, dieOnSqlError)
        })
      })
    })
  )

  static readonly memory = Layer.sync(FxRepo, () => {
    const rates = new Map<string, FxRate>()
    return FxRepo.of({
      all: Effect.fn("FxRepo.all")(() => Effect.sync(() => [...rates.values()].sort(order))),
      put: Effect.fn("FxRepo.put")((next) =>
        Effect.sync(() => {
          for (const r of next.map(normalise)) rates.set(keyOf(r), r)
        })
      )
    })
  })
}
