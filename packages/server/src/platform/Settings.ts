/**
 * The building blocks every program's settings are read with (platform/Config.ts, platform/Tracing.ts): Effect's
 * `Config` over
 * the current `ConfigProvider` (the environment by default, a record in tests), with our conventions on top —
 * a blank variable counts as unset, a secret is `Redacted` from the moment it is read, and an invalid value is a
 * sentence that names the variable (never echoing a secret's value).
 *
 * `Config.all` stops at the first bad variable; an operator fixing a deployment should see all of them at
 * once, so `collect` evaluates every setting and gathers every problem into one `SettingsError`.
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { SecretKeyError } from "./SecretKey.ts"

/** Every invalid setting of a program, each a sentence naming its variable. */
export class SettingsError extends Data.TaggedError("SettingsError")<{ readonly problems: ReadonlyArray<string> }> {
  override get message(): string {
    return this.problems.join("; ")
  }
}

/** A ConfigError whose message is `message` (which names the variable) rather than a schema's wording. */
export const invalid = (name: string, message: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message })))
  )

const formatIssue = SchemaIssue.makeFormatterDefault()

/** One line for a ConfigError: our own sentence when we wrote one, else the variable and the schema's complaint. */
export const describeConfigError = (error: Config.ConfigError): string => {
  const cause = error.cause
  if (!Schema.isSchemaError(cause)) return cause.message
  const issue = cause.issue
  if (issue._tag !== "Pointer") return formatIssue(issue)
  const inner = issue.issue
  const own = inner._tag === "InvalidValue" ? inner.annotations?.message : undefined
  return typeof own === "string" ? own : `${issue.path.join("_")}: ${formatIssue(inner)}`
}

/** The variable's text, trimmed; null when unset or blank (a blank line in an env file must not mean ""). */
export const text = (name: string): Config.Config<string | null> =>
  Config.option(Config.String(name)).pipe(
    Config.map((value) => {
      if (value._tag === "None") return null
      const trimmed = value.value.trim()
      return trimmed === "" ? null : trimmed
    })
  )

/**
 * A secret's text, trimmed, as `Redacted` (it prints as <redacted> in logs, errors and JSON); null when unset or
 * blank. `check` returns the problem with the value (a sentence that must not contain it), or null.
 */
export const secret = (
  name: string,
  check?: (value: string) => string | null
): Config.Config<Redacted.Redacted<string> | null> =>
  Config.option(Config.Redacted(name)).pipe(
    Config.mapEffect((value) => {
      if (value._tag === "None") return Effect.succeed(null)
      const trimmed = Redacted.value(value.value).trim()
      if (trimmed === "") return Effect.succeed(null)
      const problem = check?.(trimmed) ?? null
      return problem === null ? Effect.succeed(Redacted.make(trimmed)) : Effect.fail(invalid(name, problem))
    })
  )

/** A setting decoded from its (trimmed, non-blank) text: `decode` gives the value or the problem's sentence. */
export const parsed = <A>(
  name: string,
  fallback: A,
  decode: (raw: string) => Result.Result<A, string>
): Config.Config<A> =>
  text(name).pipe(
    Config.mapEffect((raw) => {
      if (raw === null) return Effect.succeed(fallback)
      const result = decode(raw)
      return Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.fail(invalid(name, result.failure))
    })
  )

/** A whole number in [min, max]; `fallback` when unset. */
export const int = (name: string, fallback: number, min: number, max: number): Config.Config<number> =>
  parsed(name, fallback, (raw) => {
    const n = Number(raw)
    return Number.isInteger(n) && n >= min && n <= max
      ? Result.succeed(n)
      : Result.fail(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  })

type Setting<A> = Config.Config<A> | Effect.Effect<A, SettingsError>

type Collected<R extends Record<string, Setting<unknown>>> = {
  -readonly [K in keyof R]: R[K] extends Setting<infer A> ? A : never
}

/**
 * Every setting in `settings`, read with the current ConfigProvider; fails with one SettingsError listing every
 * problem, in the order given. A member may itself be a `collect` (its problems are merged in).
 */
export const collect = <const R extends Record<string, Setting<unknown>>>(
  settings: R
): Effect.Effect<Collected<R>, SettingsError> =>
  Effect.gen(function*() {
    const values: Record<string, unknown> = {}
    const problems: Array<string> = []
    for (const [key, setting] of Object.entries(settings)) {
      const result = yield* Effect.result(setting as Effect.Effect<unknown, Config.ConfigError | SettingsError>)
      if (Result.isSuccess(result)) values[key] = result.success
      else if (result.failure._tag === "SettingsError") problems.push(...result.failure.problems)
      else problems.push(describeConfigError(result.failure))
    }
    // A variable read by two settings (STRIPE_API_BASE: the connector's and billing's) is named once.
    if (problems.length > 0) return yield* new SettingsError({ problems: [...new Set(problems)] })
    return values as Collected<R>
  })

/** `settings` read from `env` (tests, and the synchronous readers kept for them); throws the SettingsError. */
export const readSync = <A>(settings: Effect.Effect<A, SettingsError>, env: Record<string, string | undefined>): A => {
  const result = Effect.runSync(
    Effect.result(Effect.provideService(settings, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)))
  )
  if (Result.isFailure(result)) throw result.failure
  return result.success
}

/**
 * What a program that failed to start says about it, one line per problem and never a stack trace: each bad
 * setting, the key's problem, or `stopped: <reason>` (port taken, database unreachable).
 */
export const startupFailureLines = (cause: Cause.Cause<unknown>): ReadonlyArray<string> => {
  const error = Cause.squash(cause)
  if (error instanceof SettingsError) return error.problems
  if (error instanceof SecretKeyError) return [error.message]
  const { message, cause: inner } = (error ?? {}) as { message?: unknown; cause?: { message?: unknown } }
  const reason = typeof inner?.message === "string"
    ? inner.message
    : typeof message === "string"
    ? message
    : String(error)
  return [`stopped: ${reason}`]
}
