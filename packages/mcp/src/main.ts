/**
 * `sitehealth-mcp`: the MCP server over stdio. stdout carries only the protocol; everything else goes to
 * stderr. Configuration: SITEHEALTH_TOKEN (required), SITEHEALTH_URL (default http://127.0.0.1:8787),
 * `--read-only` or SITEHEALTH_MCP_READ_ONLY=1.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { apiClientSend } from "./ApiClientSend.ts"
import { makeMcpServer } from "./Server.ts"

export const DEFAULT_URL = "http://127.0.0.1:8787"

const token = process.env.SITEHEALTH_TOKEN?.trim() ?? ""
if (token === "") {
  process.stderr.write(
    "sitehealth-mcp: SITEHEALTH_TOKEN is not set. Create a token (sitehealth tokens create) and set it in the MCP client's env, e.g. \"env\": {\"SITEHEALTH_TOKEN\": \"svc_…\"}.\n"
  )
  process.exit(2)
}
const baseUrl = process.env.SITEHEALTH_URL?.trim() || DEFAULT_URL
const readOnly = process.argv.includes("--read-only") || process.env.SITEHEALTH_MCP_READ_ONLY === "1"

const server = makeMcpServer({ send: apiClientSend(baseUrl, token), token, readOnly })
await server.connect(new StdioServerTransport())
process.stderr.write(`sitehealth-mcp: serving ${baseUrl}${readOnly ? " (read-only)" : ""} over stdio\n`)
