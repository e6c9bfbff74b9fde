/**
 * Password strength (ASVS 2.1.7): the bundled list of common passwords, loaded on first use, and the rules beside it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import {
  commonPasswordCount,
  isCommonPasswordListLoaded,
  WEAK_PASSWORD_REASONS,
  weakPasswordReason
} from "../src/dashboard/PasswordPolicy.ts"

const MODULE = new URL("../src/dashboard/PasswordPolicy.ts", import.meta.url)
const owner = { email: "Jane.Doe+dash@example.com" }

describe("password policy", () => {
  // First in this file: nothing has checked a password yet.
  it("does not load the list at import time, only on the first check", () => {
    expect(isCommonPasswordListLoaded()).toBe(false)
    // In a fresh process, importing the module resolves nothing from the package; the first check does.
    const script = `
      import { registerHooks } from "node:module"
      const resolved = []
      registerHooks({ resolve: (specifier, context, next) => { resolved.push(specifier); return next(specifier, context) } })
      const policy = await import(${JSON.stringify(MODULE.href)})
      const Effect = await import("effect/Effect")
      const atImport = resolved.some((s) => s.includes("@zxcvbn-ts")) || policy.isCommonPasswordListLoaded()
      await Effect.runPromise(policy.weakPasswordReason("tangerine-mosaic-74-quiet", { email: "a@b.c" }))
      console.log(JSON.stringify({ atImport, afterCheck: resolved.some((s) => s.includes("@zxcvbn-ts")) && policy.isCommonPasswordListLoaded() }))
    `
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: new URL("..", import.meta.url),
      encoding: "utf8"
    })
    expect(child.stderr).toBe("")
    expect(JSON.parse(child.stdout)).toEqual({ atImport: false, afterCheck: true })
  })

  it.effect("bundles a list of more than 10,000 common passwords, loaded once", () =>
    Effect.gen(function*() {
      const count = yield* commonPasswordCount
      expect(count).toBeGreaterThan(10_000)
      expect(isCommonPasswordListLoaded()).toBe(true)
      expect(yield* commonPasswordCount).toBe(count)
    }))

  it.effect("refuses common, stretched, repeated and sequential passwords, and the owner's email, each saying why", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["password1234", WEAK_PASSWORD_REASONS.common],
        ["PassWord1234", WEAK_PASSWORD_REASONS.common],
        ["iloveyou2024!", WEAK_PASSWORD_REASONS.commonWithAdditions],
        ["password12345!", WEAK_PASSWORD_REASONS.commonWithAdditions],
        ["2024!tangerine", WEAK_PASSWORD_REASONS.commonWithAdditions],
        ["trustno12345", WEAK_PASSWORD_REASONS.commonWithAdditions],
        ["aaaaaaaaaaaa", WEAK_PASSWORD_REASONS.repeated],
        ["abcabcabcabc", WEAK_PASSWORD_REASONS.repeated],
        ["123456789012", WEAK_PASSWORD_REASONS.sequence],
        ["qwertyuiopas", WEAK_PASSWORD_REASONS.sequence],
        ["abcdefghijkl", WEAK_PASSWORD_REASONS.sequence],
        ["lkjhgfdsapoi", WEAK_PASSWORD_REASONS.sequence],
        ["janedoe-rocks-1", WEAK_PASSWORD_REASONS.email],
        ["I am jane.doe!!", WEAK_PASSWORD_REASONS.email],
        ["jane.doe+dash@example.com", WEAK_PASSWORD_REASONS.email]
      ]
      for (const [password, reason] of cases) {
        expect([password, yield* weakPasswordReason(password, owner)]).toEqual([password, reason])
      }
      // No sentence repeats the password.
      for (const reason of Object.values(WEAK_PASSWORD_REASONS)) expect(reason).not.toMatch(/password1234|iloveyou/)
    }))

  it.effect("accepts passphrases and unrelated strings", () =>
    Effect.gen(function*() {
      for (
        const password of [
          "correct horse battery",
          "tangerine-mosaic-74-quiet",
          "jazz#8302!71x",
          "847362915047",
          "Ünïcödé wörds ärë fïnë"
        ]
      ) {
        expect([password, yield* weakPasswordReason(password, owner)]).toEqual([password, null])
      }
      // A short local part ("bob") is too common a string to refuse on.
      expect(yield* weakPasswordReason("bobcat-harbour-lantern", { email: "bob@example.com" })).toBeNull()
    }))

  it.effect("the list matches lower-cased and NFC-normalized", () =>
    Effect.gen(function*() {
      // "iloveyou" entry: the same letters in upper case, and a password given in NFD that is NFC-equal.
      expect(yield* weakPasswordReason("ILOVEYOU2024!", owner)).toBe(WEAK_PASSWORD_REASONS.commonWithAdditions)
      const nfd = "ja\u0301ne.doe"
      expect(yield* weakPasswordReason(`my name is ${nfd}`, { email: "j\u00e1ne.doe@example.com" })).toBe(
        WEAK_PASSWORD_REASONS.email
      )
    }))
})
