/**
 * A handler group's layer built in a context that holds only its middlewares.
 *
 * `HttpApiBuilder.group` (effect 4.1) keeps the whole context its layer is built in — every repository, the
 * SQL client, the config, … — and every request of the group runs `Effect.provideContext(thatContext)`:
 * `Context.merge(fiberContext, groupContext)`, a new Map with both contexts' entries, per request. The
 * middlewares are the only services it must hold (they are looked up in it when the routes are built), so the
 * group is built with those alone: the per-request merge then adds a handful of entries to the request's own
 * context instead of the whole application's. The handlers take their services when the group is built
 * (`const repo = yield* Repo` in the operations' build effect, closures use `repo`); the type below rejects a
 * group whose handlers still need anything else per request.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * `layer` built in the current context cut down to `keys` (and the layer's own scope): what it captures
 * holds those services only. Its requirements must be among them.
 */
export const builtWithOnly =
  <const Keys extends ReadonlyArray<Context.Service.Any>>(...keys: Keys) =>
  <ROut, E, RIn extends Context.Service.Identifier<Keys[number]>>(
    layer: Layer.Layer<ROut, E, RIn>
  ): Layer.Layer<ROut, E, RIn> =>
    Layer.fromBuild((memoMap, scope) =>
      Effect.updateContext(
        Layer.buildWithMemoMap(layer, memoMap, scope),
        (context: Context.Context<RIn>) => Context.pick(...keys)(context)
      )
    )
