/**
 * The stdio server once main.ts has answered (or passed on) `initialize`: the SDK server on the lines read
 * from stdin, its settings read (platform/Settings.ts: Effect's Config) right after it is connected, and the handlers
 * (Handlers.ts, with the contract) loaded at once, so the client's first `tools/list` does not wait for them
 * either. Every request but `initialize` waits for the settings. Bad settings are reported on stderr and
 * end the process with exit code 2.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Readable, Writable } from "node:stream"
import type { Send } from "./Dispatch.ts"
import { makeMcpServer, type McpOptions } from "./Server.ts"
import type { Settings } from "./Settings.ts"

export const serveStdio = async (lines: Readable, output: Writable, stdin: Readable) => {
  let settled: (settings: Settings) => void = () => {}
  const settings = new Promise<Settings>((resolve) => (settled = resolve))
  const options = settings.then(({ token, baseUrl, readOnly, toolsets }): McpOptions => {
    // The typed client (and the contract it is built from) loads with the first request that needs it.
    let client: Promise<Send> | undefined
    const send: Send = async (request) =>
      (await (client ??= import("./ApiClientSend.ts").then(({ apiClientSend }) => apiClientSend(baseUrl, token))))(
        request
      )
    return { send, readOnly, toolsets }
  })

  const server = makeMcpServer(options)
  await server.connect(new StdioServerTransport(lines, output))

  // In the check phase: lines already read are handed to the server first (an initialize that was not
  // answered early is answered without waiting for the settings).
  setImmediate(async () => {
    const read = await (await import("./Settings.ts")).readSettings()
    if ("problems" in read) {
      process.stderr.write(read.problems.map((p) => `sitehealth-mcp: ${p}\n`).join(""))
      process.exitCode = 2
      // Nothing else keeps the process alive: with stdin closed it ends with this code.
      await server.close()
      stdin.destroy()
      return
    }
    settled(read.settings)
    // The handlers and the tool table, loaded now rather than by the client's first tools/list.
    void import("./Handlers.ts")
    void import("./Tools.ts")
    const { baseUrl, readOnly, toolsets } = read.settings
    const selection = [readOnly ? "read-only" : "", toolsets === null ? "" : `toolsets ${toolsets.join(",")}`].filter((
      s
    ) => s !== "")
    process.stderr.write(
      `sitehealth-mcp: serving ${baseUrl}${selection.length > 0 ? ` (${selection.join("; ")})` : ""} over stdio\n`
    )
  })
}
