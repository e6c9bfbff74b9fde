/**
 * `sitehealth-mcp`: the MCP server over stdio. stdout carries only the protocol; everything else goes to
 * stderr. Settings: Settings.ts (SITEHEALTH_TOKEN, SITEHEALTH_URL, --read-only, --toolsets).
 *
 * Start-up order, for a client's spawn-to-initialize: this module imports only the SDK's server and stdio
 * transport; it connects, and an `initialize` already waiting on stdin is answered (the SDK needs nothing of
 * ours for it). Then — in the event loop's check phase, after that stdin read — the settings are read (Effect's
 * Config) and every other request, which waits for them, is served by the handlers (Handlers.ts, with the
 * contract), loaded at once so the client's first `tools/list` does not wait for them either. Bad settings
 * are reported on stderr and end the process with exit code 2, as before.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Send } from "./Dispatch.ts"
import { makeMcpServer, type McpOptions } from "./Server.ts"
import type { Settings } from "./Settings.ts"
import { withoutBatches } from "./StdioInput.ts"

let settled: (settings: Settings) => void = () => {}
const settings = new Promise<Settings>((resolve) => (settled = resolve))

const options = settings.then(({ token, baseUrl, readOnly, toolsets }): McpOptions => {
  // The typed client (and the contract it is built from) loads with the first request that needs it.
  let client: Promise<Send> | undefined
  const send: Send = async (request) =>
    (await (client ??= import("./ApiClientSend.ts").then(({ apiClientSend }) => apiClientSend(baseUrl, token))))(request)
  return { send, readOnly, toolsets }
})

const server = makeMcpServer(options)
await server.connect(new StdioServerTransport(withoutBatches(process.stdin, process.stdout), process.stdout))

setImmediate(async () => {
  const read = await (await import("./Settings.ts")).readSettings()
  if ("problems" in read) {
    process.stderr.write(read.problems.map((p) => `sitehealth-mcp: ${p}\n`).join(""))
    process.exitCode = 2
    // Nothing else keeps the process alive: with stdin closed it ends with this code.
    await server.close()
    process.stdin.destroy()
    return
  }
  settled(read.settings)
  // The handlers and the tool table, loaded now rather than by the client's first tools/list.
  void import("./Handlers.ts")
  void import("./Tools.ts")
  const { baseUrl, readOnly, toolsets } = read.settings
  const selection = [readOnly ? "read-only" : "", toolsets === null ? "" : `toolsets ${toolsets.join(",")}`].filter((s) => s !== "")
  process.stderr.write(`sitehealth-mcp: serving ${baseUrl}${selection.length > 0 ? ` (${selection.join("; ")})` : ""} over stdio\n`)
})
