/**
 * The stdio bin's settings: SITEHEALTH_TOKEN (required), SITEHEALTH_URL (default http://127.0.0.1:8787),
 * `--read-only` or SITEHEALTH_MCP_READ_ONLY=1, `--toolsets reports,expenses` (or `--toolsets=…`) or
 * SITEHEALTH_MCP_TOOLSETS — read with Effect's Config, the token as Redacted, every bad setting reported at
 * once. Loaded by main.ts once the transport listens (Effect is not needed to answer `initialize`).
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"

export const DEFAULT_URL = "http://127.0.0.1:8787"

const MISSING_TOKEN =
  "SITEHEALTH_TOKEN is not set. Create a token (sitehealth tokens create) and set it in the MCP client's env, " +
  "e.g. \"env\": {\"SITEHEALTH_TOKEN\": \"svc_…\"}."

/** The value of `--name value` or `--name=value` on the command line, or null when absent. */
const flag = (name: string): string | null => {
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) return args[i + 1] ?? ""
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3)
  }
  return null
}

const trimmed = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Config.map((v) => (v._tag === "Some" && v.value.trim() !== "" ? v.value.trim() : null))
  )

/** Each setting gives its value or the sentence that says what is wrong with it (never a secret's value). */
const settings = {
  token: Config.option(Config.Redacted("SITEHEALTH_TOKEN")).pipe(
    Config.map((v) => {
      const token = v._tag === "Some" ? Redacted.value(v.value).trim() : ""
      return token === "" ? Result.fail(MISSING_TOKEN) : Result.succeed(Redacted.make(token))
    })
  ),
  baseUrl: trimmed("SITEHEALTH_URL").pipe(
    Config.map((raw) => {
      if (raw === null) return Result.succeed(DEFAULT_URL)
      const url = URL.canParse(raw) ? new URL(raw) : null
      return url !== null && (url.protocol === "http:" || url.protocol === "https:")
        ? Result.succeed(raw)
        : Result.fail(`SITEHEALTH_URL must be an http(s) URL such as ${DEFAULT_URL}, got "${raw}"`)
    })
  ),
  readOnly: trimmed("SITEHEALTH_MCP_READ_ONLY").pipe(
    Config.map((raw) => Result.succeed(process.argv.includes("--read-only") || raw === "1" || raw === "true"))
  ),
  toolsets: trimmed("SITEHEALTH_MCP_TOOLSETS").pipe(Config.map((raw) => Result.succeed(flag("toolsets") ?? raw)))
}

/** The toolsets named, checked against the contract's groups — which loads the contract only when some are named. */
const toolsetsOf = async (raw: string | null): Promise<Result.Result<ReadonlyArray<string> | null, string>> => {
  if (raw === null) return Result.succeed(null)
  const parsed = (await import("./Tools.ts")).parseToolsets(raw)
  return "error" in parsed ? Result.fail(`--toolsets: ${parsed.error}`) : Result.succeed(parsed.toolsets)
}

export interface Settings {
  readonly token: string
  readonly baseUrl: string
  readonly readOnly: boolean
  readonly toolsets: ReadonlyArray<string> | null
}

/** The settings, or every sentence saying what is wrong with them (never a secret's value). */
export const readSettings = async (): Promise<
  { readonly settings: Settings } | { readonly problems: ReadonlyArray<string> }
> => {
  const read = await Effect.runPromiseExit(Effect.all(settings))
  if (Exit.isFailure(read)) return { problems: [String(read.cause)] }
  const toolsetsRead = await toolsetsOf(Result.getOrThrow(read.value.toolsets))
  const problems = [...Object.values<Result.Result<unknown, string>>(read.value), toolsetsRead].flatMap((
    r
  ) => (Result.isFailure(r) ? [r.failure] : []))
  if (problems.length > 0) return { problems }
  return {
    settings: {
      token: Redacted.value(Result.getOrThrow(read.value.token)),
      baseUrl: Result.getOrThrow(read.value.baseUrl),
      readOnly: Result.getOrThrow(read.value.readOnly),
      toolsets: Result.getOrThrow(toolsetsRead)
    }
  }
}
