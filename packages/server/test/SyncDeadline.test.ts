/**
 * The whole sync's deadline (SITEHEALTH_SYNC_DEADLINE_MINUTES, SyncRunner.withDeadline): a run still going
 * past it is interrupted and fails as a transient timeout naming the setting; one that ends in time is
 * untouched.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ProviderError } from "../src/integrations/ProviderHttp.ts"
import { readConfig } from "../src/platform/Config.ts"
import { DEFAULT_DEADLINE_MINUTES, withDeadline } from "../src/worker/SyncRunner.ts"

describe("the sync deadline", () => {
  it.effect("stops a run past it: a timeout that says which setting, and the run is interrupted", () =>
    Effect.gen(function*() {
      let interrupted = false
      const endless = Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true))))
      const fiber = yield* Effect.forkChild(Effect.flip(withDeadline(endless, 30)))
      yield* TestClock.adjust("29 minutes")
      expect(interrupted).toBe(false)
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      expect(error).toBeInstanceOf(ProviderError)
      expect([error.kind, error.status]).toEqual(["timeout", null])
      expect(error.message).toContain("deadline of 30 min (SITEHEALTH_SYNC_DEADLINE_MINUTES)")
      expect(interrupted).toBe(true)
    }))

  it.effect("leaves a run that ends in time as it is", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(withDeadline(Effect.as(Effect.sleep("10 minutes"), "done"), 30))
      yield* TestClock.adjust("10 minutes")
      expect(yield* Fiber.join(fiber)).toBe("done")
    }))

  it("is read from SITEHEALTH_SYNC_DEADLINE_MINUTES (default 60, 1 to 1440)", () => {
    expect(readConfig({}).syncDeadlineMinutes).toBe(DEFAULT_DEADLINE_MINUTES)
    expect(readConfig({ SITEHEALTH_SYNC_DEADLINE_MINUTES: "15" }).syncDeadlineMinutes).toBe(15)
    expect(() => readConfig({ SITEHEALTH_SYNC_DEADLINE_MINUTES: "0" })).toThrow(/SITEHEALTH_SYNC_DEADLINE_MINUTES/)
  })
})
