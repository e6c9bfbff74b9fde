/** Assertions shared by the contract tests. */
import { Cause, Effect, Exit } from "effect"
import { expect } from "vitest"
import type { CallResult } from "./TestApp.ts"

/** The error envelope, exactly: status, code (the string trial_expired for 402), message, type; no leaks. */
export const expectError = (r: CallResult, status: number, type?: string) => {
  expect(r.status, r.text).toBe(status)
  expect(r.json, r.text).toBeTypeOf("object")
  expect(Object.keys(r.json).sort()).toEqual(["error", "status"])
  expect(r.json.status).toBe("error")
  expect(r.json.error.code).toBe(status === 402 ? "trial_expired" : status)
  expect(r.json.error.message).toBeTypeOf("string")
  expect(r.json.error.message.length).toBeGreaterThan(0)
  expect(r.json.error.type).toBeTypeOf("string")
  if (type !== undefined) expect(r.json.error.type).toBe(type)
  // Never a stack trace or an internal name.
  expect(r.text).not.toMatch(/\bat .*\.ts:\d+|Error:|HttpApiSchemaError|SqlError|node_modules/)
}

/** The effect fails (an error or a defect) with a message matching `pattern`: `expect(promise).rejects.toThrow`. */
export const expectFailure = <A, E, R>(effect: Effect.Effect<A, E, R>, pattern: RegExp) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    expect(Exit.isFailure(exit), "expected a failure").toBe(true)
    if (Exit.isFailure(exit)) {
      expect(() => {
        throw Cause.squash(exit.cause)
      }).toThrow(pattern)
    }
  })
