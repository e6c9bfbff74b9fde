/**
 * A TestClock that starts at a chosen instant and then follows real time (10 ms steps), for tests whose code
 * waits on real sockets under Effect timeouts — a standing clock would never let those fire — but whose
 * "now" must be fixed (a fixture's today, a point inside a rate-limit minute). `TestClock.adjust` still
 * jumps ahead at once (a retry's delay, a warning's interval).
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"

export const followRealTimeFrom = (start: number) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start)
    yield* TestClock.withLive(Effect.sleep(10)).pipe(
      Effect.andThen(TestClock.adjust(10)),
      Effect.forever,
      Effect.forkScoped
    )
  })
