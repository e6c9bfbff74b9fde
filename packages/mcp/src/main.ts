/**
 * `sitehealth-mcp`: the MCP server over stdio. stdout carries only the protocol; everything else goes to
 * stderr. Configuration: SITEHEALTH_TOKEN (required), SITEHEALTH_URL (default http://127.0.0.1:8787),
 * `--read-only` or SITEHEALTH_MCP_READ_ONLY=1 — read with Effect's Config, the token as Redacted, every bad
 * variable reported at once.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Config, Effect, Exit, Redacted, Result } from "effect"
import { apiClientSend } from "./ApiClientSend.ts"
import { makeMcpServer } from "./Server.ts"
import { withoutBatches } from "./StdioInput.ts"

export const DEFAULT_URL = "http://127.0.0.1:8787"

const MISSING_TOKEN = "SITEHEALTH_TOKEN is not set. Create a token (sitehealth tokens create) and set it in the MCP client's env, " +
  "e.g. \"env\": {\"SITEHEALTH_TOKEN\": \"svc_…\"}."

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
    Config.map((raw) => Result.succeed(process.argv.includes("--read-only") || raw === "1"))
  )
}

const read = await Effect.runPromiseExit(Effect.all(settings))
const problems = Exit.isFailure(read)
  ? [String(read.cause)]
  : Object.values<Result.Result<unknown, string>>(read.value).flatMap((r) => (Result.isFailure(r) ? [r.failure] : []))
if (Exit.isFailure(read) || problems.length > 0) {
  process.stderr.write(problems.map((p) => `sitehealth-mcp: ${p}\n`).join(""))
  // Nothing else keeps the process alive: it ends with this code once the message is written.
  process.exitCode = 2
} else {
  const token = Redacted.value(Result.getOrThrow(read.value.token))
  const baseUrl = Result.getOrThrow(read.value.baseUrl)
  const readOnly = Result.getOrThrow(read.value.readOnly)
  const server = makeMcpServer({ send: apiClientSend(baseUrl, token), token, readOnly })
  await server.connect(new StdioServerTransport(withoutBatches(process.stdin, process.stdout), process.stdout))
  process.stderr.write(`sitehealth-mcp: serving ${baseUrl}${readOnly ? " (read-only)" : ""} over stdio\n`)
}
