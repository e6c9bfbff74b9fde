/**
 * The MCP server over any transport: the SDK's low-level `Server`, whose handlers (Handlers.ts: tools,
 * prompts, resources, all executed through a `Send` so the API enforces every rule) load with the first
 * request after `initialize`. This module itself imports nothing but the SDK, so a stdio client's spawn is
 * answered `initialize` before the contract, Effect, the domain and the tool table are loaded (the bundle
 * splits those into chunks of their own; docs/mcp.md, "Latency").
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import type { Handlers } from "./Handlers.ts"
import { CAPABILITIES, INSTRUCTIONS, SERVER_INFO } from "./Identity.ts"
import type { McpOptions } from "./Options.ts"
import type { CallProgress } from "./SyncProgress.ts"

export { CAPABILITIES, INSTRUCTIONS, SERVER_INFO } from "./Identity.ts"
export type { McpOptions } from "./Options.ts"

/**
 * The SDK validates JSON Schema only for elicitation (`elicitInput`: a form the server asks the client to
 * fill), which this server never sends. Given this, the SDK does not build its default Ajv validator (~25 ms
 * at every start), and the bundle leaves Ajv out (scripts/build.ts).
 */
export const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({
    valid: false,
    data: undefined,
    errorMessage: "sitehealth-mcp does not request elicitation"
  })
}

/**
 * A server for these options. They may be a promise: the stdio bin connects first and reads its settings
 * after (main.ts), so `initialize` does not wait for them; every other request does.
 */
export const makeMcpServer = (options: McpOptions | Promise<McpOptions>): Server => {
  let handlers: Promise<Handlers> | undefined
  const loaded =
    () => (handlers ??= Promise.all([import("./Handlers.ts"), options]).then(([{ makeHandlers }, resolved]) =>
      makeHandlers(resolved)
    ))

  const server = new Server(SERVER_INFO, {
    capabilities: { ...CAPABILITIES },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: NO_ELICITATION
  })
  server.setRequestHandler(ListToolsRequestSchema, async () => (await loaded()).listTools())
  // The level this session set (`logging/setLevel`); none set: the client did not ask for log messages, and a
  // sync is followed only when the call itself carries a progress token (a stateless HTTP call has no session).
  let level: LoggingLevel | undefined
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    level = request.params.level
    return {}
  })
  const severity = (l: LoggingLevel) => LoggingLevelSchema.options.indexOf(l)
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken
    const call: CallProgress = {
      follow: level !== undefined || token !== undefined,
      log: async (at, data) => {
        if (level !== undefined && severity(at) < severity(level)) return
        await extra.sendNotification({ method: "notifications/message", params: { level: at, logger: "sync", data } })
      },
      progress: async (progress, total, message) => {
        if (token === undefined) return
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total, message }
        })
      }
    }
    return (await loaded()).callTool(request, call)
  })
  server.setRequestHandler(ListPromptsRequestSchema, async () => (await loaded()).listPrompts())
  server.setRequestHandler(GetPromptRequestSchema, async (request) => (await loaded()).getPrompt(request))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => (await loaded()).listResourceTemplates())
  server.setRequestHandler(ListResourcesRequestSchema, async () => (await loaded()).listResources())
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => (await loaded()).readResource(request))
  server.setRequestHandler(CompleteRequestSchema, async (request) => (await loaded()).complete(request))
  return server
}
