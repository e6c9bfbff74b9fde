/**
 * The MCP server over any transport: the SDK's low-level `Server` with tools, prompts and resources, all
 * executed through a `Send` so the API enforces every rule. Which tools are listed:
 * - read-only mode lists only read tools (the others are not registered at all: calling one is an error);
 * - otherwise the token's own permissions, read from `GET /tokens` (the one active entry whose prefix ends
 *   like the token) when the token may list tokens; when it may not, every tool is listed and the API answers 403 for
 *   what the token lacks — the listing is a convenience, enforcement is the API's.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { errorBody, isErrorEnvelope } from "@sitehealth/domain/Envelope"
import { clipInput } from "@sitehealth/domain/Errors"
import { type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import { requestFor, resultOf, type Send } from "./Dispatch.ts"
import { PROMPTS, promptMessages } from "./Prompts.ts"
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from "./Retry.ts"
import { deriveTools, type ToolSpec } from "./Tools.ts"
import { validateArguments } from "./Validate.ts"

/** MCP's code for a resource that does not exist (spec, server/resources: error handling). */
const RESOURCE_NOT_FOUND = -32002

const safeDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const isPermission = (u: unknown): u is Permission => PERMISSIONS.some((p) => p === u)

export const SERVER_INFO = { name: "sitehealth", version: "0.1.0" } as const

export interface McpOptions {
  readonly send: Send
  /** The token, to find its own entry in `GET /tokens`; omit to list every tool. */
  readonly token?: string
  readonly readOnly?: boolean
  /** Retries of a tool call's POST, with one Idempotency-Key for all its attempts (Retry.ts). */
  readonly retry?: RetryPolicy
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The contract's endpoint as a tool spec (the requests the server makes for itself go the same way). */
const specOf = (endpoint: string): ToolSpec => {
  const spec = deriveTools().find((t) => t.endpoint === endpoint)
  if (spec === undefined) throw new Error(`no endpoint ${endpoint} in the contract`)
  return spec
}

/** The token's permissions, or null when the token may not list tokens (then every tool is listed). */
export const discoverPermissions = async (send: Send, token: string): Promise<ReadonlyArray<Permission> | null> => {
  const answer = await send(requestFor(specOf("listTokens"), { limit: "100" }))
  if (answer.status !== 200 || !isObject(answer.body) || !isObject(answer.body.data)) return null
  const tokens: ReadonlyArray<unknown> = Array.isArray(answer.body.data.tokens) ? answer.body.data.tokens : []
  // The prefix is `svc_…` plus the secret's last 4 characters; two active tokens could share them, and then
  // the token cannot tell which is its own: list everything rather than guess.
  const mine = tokens.filter(isObject).filter((t) =>
    t.status === "active" && typeof t.prefix === "string" && token.endsWith(t.prefix.split("…").pop() ?? "\u0000")
  )
  const permissions = mine.length === 1 ? mine[0]!.permissions : undefined
  return Array.isArray(permissions) ? permissions.filter(isPermission) : null
}

export const makeMcpServer = (options: McpOptions): Server => {
  const all = deriveTools()
  const registered = options.readOnly ? all.filter((t) => t.kind === "read") : all
  const byName = new Map(registered.map((t) => [t.definition.name, t] as const))
  const sendTool = withRetries(options.send, options.retry ?? DEFAULT_RETRY)
  let permissions: Promise<ReadonlyArray<Permission> | null> | undefined
  const visible = async (): Promise<ReadonlyArray<ToolSpec>> => {
    if (options.token === undefined) return registered
    permissions ??= discoverPermissions(options.send, options.token)
    const granted = await permissions
    return granted === null ? registered : registered.filter((t) => granted.includes(t.permission))
  }

  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, prompts: {}, resources: {} },
    instructions:
      "sitehealth: health, briefing, signals, analytics, revenue, churn, SEO, integrations, expenses and tokens of websites. " +
      "Start with list_projects. Errors are the API's envelope {status:'error', error:{code, type, message}}; on 429 wait until error.reset."
  })

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await visible()).map((t) => t.definition)
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const spec = byName.get(request.params.name)
    if (spec === undefined) {
      const why = options.readOnly && all.some((t) => t.definition.name === request.params.name)
        ? "is not available: this server runs read-only"
        : "does not exist"
      return {
        content: [{ type: "text", text: JSON.stringify(errorBody(404, `Tool ${request.params.name} ${why}`, "unknown_tool")) }],
        isError: true
      }
    }
    const args = request.params.arguments ?? {}
    // Checked before any request is built: a call that does not hold is answered here, with the API's 400.
    const invalid = validateArguments(spec, args)
    if (invalid !== null) return resultOf(spec, invalid)
    const answer = await sendTool(requestFor(spec, args))
    return resultOf(spec, answer)
  })

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS.map((p) => p.definition) }))
  server.setRequestHandler(GetPromptRequestSchema, async (request) => promptMessages(request.params.name, request.params.arguments ?? {}))

  // Resources: each project's health, readable by URI.
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{
      uriTemplate: "sitehealth://projects/{id}/health",
      name: "project-health",
      title: "Project health",
      description: "Health score, confidence and dimensions of a project (GET /projects/{id}/health)",
      mimeType: "application/json"
    }]
  }))
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const answer = await options.send(requestFor(specOf("listProjects"), { limit: "100" }))
    const listed: ReadonlyArray<unknown> = isObject(answer.body) && isObject(answer.body.data) && Array.isArray(answer.body.data.projects)
      ? answer.body.data.projects
      : []
    return {
      resources: listed.filter(isObject).map((p) => ({
        uri: `sitehealth://projects/${p.id}/health`,
        name: `${p.name ?? p.id} health`,
        description: `Health of ${p.domain ?? p.id}`,
        mimeType: "application/json"
      }))
    }
  })
  // A URI that names no resource is the caller's mistake (-32602); a project the API refuses is a JSON-RPC
  // error too (-32002 resource not found for 404, -32602 for 400/403, else -32603), its envelope as `data`.
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri
    const match = /^sitehealth:\/\/projects\/([^/]+)\/health$/.exec(uri)
    const id = match === null ? undefined : safeDecode(match[1]!)
    const health = specOf("getHealth")
    if (id === undefined || validateArguments(health, { id }) !== null) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${clipInput(uri, 200)}; resources are sitehealth://projects/{id}/health with a project id prj_…`)
    }
    const answer = await options.send(requestFor(health, { id }))
    if (answer.status >= 400 || !isObject(answer.body) || answer.body.status !== "success") {
      const envelope = isErrorEnvelope(answer.body) ? answer.body : errorBody(answer.status, `The API answered HTTP ${answer.status}`, "unexpected_response")
      const code = answer.status === 404 ? RESOURCE_NOT_FOUND : answer.status === 400 || answer.status === 403 ? ErrorCode.InvalidParams : ErrorCode.InternalError
      throw new McpError(code, `${uri}: ${envelope.error.message}`, envelope)
    }
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(answer.body.data, null, 2) }] }
  })

  return server
}
