/**
 * `sitehealth-mcp`: the MCP server over stdio. stdout carries only the protocol; everything else goes to
 * stderr. Configuration: SITEHEALTH_TOKEN (required), SITEHEALTH_URL (default http://127.0.0.1:8787),
 * `--read-only` or SITEHEALTH_MCP_READ_ONLY=1, `--toolsets reports,expenses` (or `--toolsets=…`) or
 * SITEHEALTH_MCP_TOOLSETS — read with Effect's Config, the token as Redacted, every bad setting reported at once.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Config, Effect, Exit, Redacted, Result } from "effect"
import type { Send } from "./Dispatch.ts"
import { makeMcpServer } from "./Server.ts"
import { withoutBatches } from "./StdioInput.ts"

export const DEFAULT_URL = "http://127.0.0.1:8787"

const MISSING_TOKEN = "SITEHEALTH_TOKEN is not set. Create a token (sitehealth tokens create) and set it in the MCP client's env, " +
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
  Config.option(Config.String(name)).pipe(Config.map((v) => (v._tag === "Some" && v.value.trim() !== "" ? v.value.trim() : null)))

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

const read = await Effect.runPromiseExit(Effect.all(settings))
const toolsetsRead = Exit.isSuccess(read) ? await toolsetsOf(Result.getOrThrow(read.value.toolsets)) : Result.succeed(null)
const problems = Exit.isFailure(read)
  ? [String(read.cause)]
  : [...Object.values<Result.Result<unknown, string>>(read.value), toolsetsRead].flatMap((r) => (Result.isFailure(r) ? [r.failure] : []))
if (Exit.isFailure(read) || problems.length > 0) {
  process.stderr.write(problems.map((p) => `sitehealth-mcp: ${p}\n`).join(""))
  // Nothing else keeps the process alive: it ends with this code once the message is written.
  process.exitCode = 2
} else {
  const token = Redacted.value(Result.getOrThrow(read.value.token))
  const baseUrl = Result.getOrThrow(read.value.baseUrl)
  const readOnly = Result.getOrThrow(read.value.readOnly)
  const toolsets = Result.getOrThrow(toolsetsRead)
  // The typed client (and the contract it is built from) loads with the first request, after `initialize`.
  let client: Promise<Send> | undefined
  const send: Send = async (request) =>
    (await (client ??= import("./ApiClientSend.ts").then(({ apiClientSend }) => apiClientSend(baseUrl, token))))(request)
  const server = makeMcpServer({ send, readOnly, toolsets })
  await server.connect(new StdioServerTransport(withoutBatches(process.stdin, process.stdout), process.stdout))
  const selection = [readOnly ? "read-only" : "", toolsets === null ? "" : `toolsets ${toolsets.join(",")}`].filter((s) => s !== "")
  process.stderr.write(`sitehealth-mcp: serving ${baseUrl}${selection.length > 0 ? ` (${selection.join("; ")})` : ""} over stdio\n`)
}
