/**
 * The failures the dashboard's throttle counts (dashboard/FailuresRepo.ts), on both stores: recording one forgets
 * the old failures of the same account or address only, so an instance (or a test) whose clock runs ahead of
 * another's does not wipe the failures the other is still counting; rows far older than any window go whoever
 * records.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FailuresRepo, FORGET_ANY_MS } from "../../src/dashboard/FailuresRepo.ts"
import { h, TestApp } from "../support/TestApp.ts"

const HOUR = 3_600_000

layer(TestApp.layer())("Failures the throttle counts", (it) => {
  describe("record", () => {
    it.effect("forgets the old failures of its own account or address, not another's", () =>
      Effect.gen(function*() {
        const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
        const a = { kind: "login" as const, account: `a-${tag}@example.test`, address: `10.1.0.1-${tag}` }
        const b = { kind: "login" as const, account: `b-${tag}@example.test`, address: `10.2.0.1-${tag}` }
        const t = Date.parse("2026-11-20T12:00:00Z")
        const at = (ms: number) => new Date(ms)
        const stats = (key: typeof a, since: number) =>
          h.run(Effect.flatMap(FailuresRepo, (r) => r.stats(key, at(since))))
        const record = (key: typeof a, when: number) =>
          h.run(Effect.flatMap(FailuresRepo, (r) => r.record(key, at(when), at(when - HOUR))))

        yield* record(a, t)
        // Another account and address, on a clock two hours ahead: a's failure is still counted.
        yield* record(b, t + 2 * HOUR)
        expect((yield* stats(a, t - HOUR)).pair).toBe(1)
        // a's own next failure, two hours on: its old one is forgotten.
        yield* record(a, t + 2 * HOUR)
        expect(yield* stats(a, t - HOUR)).toMatchObject({ pair: 1, pairLast: t + 2 * HOUR })
        // Far older than any window: gone, whoever records.
        yield* record(b, t + 2 * HOUR + HOUR + FORGET_ANY_MS + HOUR)
        expect((yield* stats(a, t - HOUR)).pair).toBe(0)
      }))
  })
})
