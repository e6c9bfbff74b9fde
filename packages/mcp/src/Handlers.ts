/**
 * What the MCP server (Server.ts) answers once initialized: tools, prompts and resources, all executed
 * through a `Send` so the API enforces every rule. Loaded by Server.ts on the first request after
 * `initialize`, with the contract, Effect and the domain. Which tools are listed:
 * - the selection: read-only keeps only read tools, toolsets keep their groups' tools (the others are not
 *   registered at all: calling one is an error);
 * - of those, what the caller's own token allows, read from `GET /tokens/current` (any valid token may ask).
 *   A lookup that fails (rate limited, server unreachable) lists the whole selection — the API still answers
 *   403 for what the token lacks — and is asked again on the next `tools/list`; a successful one is kept for
 *   the session (a token's permissions never change).
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import type {
  CallToolRequest,
  CompleteRequest,
  GetPromptRequest,
  ReadResourceRequest
} from "@modelcontextprotocol/sdk/types.js"
import { PERIODS } from "@sitehealth/domain/Common"
import { errorBody, isErrorEnvelope } from "@sitehealth/domain/Envelope"
import { clipInput } from "@sitehealth/domain/Errors"
import { AUTHENTICATED, type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import { type ApiRequest, requestFor, resultOf, type Send, type ToolResult } from "./Dispatch.ts"
import { REVEAL_SECRET, SECRET_ENDPOINTS } from "./Names.ts"
import type { McpOptions } from "./Options.ts"
import { promptMessages, PROMPTS } from "./Prompts.ts"
import { DEFAULT_RETRY, withRetries } from "./Retry.ts"
import { type CallProgress, followSync } from "./SyncProgress.ts"
import type { ToolSpec } from "./Tools.ts"
import { validateArguments } from "./Validate.ts"
import { WHAT_CHANGED, whatChanged, whatChangedDefinition } from "./WhatChanged.ts"

/**
 * The tool table (and with it the contract) loads on the first request that needs it, not with the server:
 * a stdio client's `initialize` is answered without it (the bundle splits it into its own chunk).
 */
let toolsModule: Promise<typeof import("./Tools.ts")> | undefined
const loadTools = () => (toolsModule ??= import("./Tools.ts"))

const HEALTH_TEMPLATE = "sitehealth://projects/{id}/health"

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

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The contract's endpoint as a tool spec (the requests the server makes for itself go the same way). */
const specOf = async (endpoint: string): Promise<ToolSpec> => {
  const spec = (await loadTools()).deriveTools().find((t) => t.endpoint === endpoint)
  if (spec === undefined) throw new Error(`no endpoint ${endpoint} in the contract`)
  return spec
}

/** `GET /tokens/current`: who is calling. No tool names it, so it is sent by its path. */
export const CURRENT_TOKEN: ApiRequest = { method: "GET", url: "/api/v1/tokens/current", discovery: true }

/** The calling token's permissions from `GET /tokens/current`, or null when the lookup failed (any status but 200). */
export const discoverPermissions = async (send: Send): Promise<ReadonlyArray<Permission> | null> => {
  const answer = await send(CURRENT_TOKEN)
  if (answer.status !== 200 || !isObject(answer.body) || !isObject(answer.body.data)) return null
  const permissions = answer.body.data.permissions
  return Array.isArray(permissions) ? permissions.filter(isPermission) : null
}

/** A minted token's answer without its secret, unless the call asked for it (`reveal_secret: true`). */
const withheldSecret = (tool: string, result: ToolResult): ToolResult => {
  const data = result.structuredContent
  if (result.isError === true || data === undefined || typeof data.secret !== "string") return result
  const redacted = { ...data, secret: null, secretWithheld: true }
  const id = isObject(data.token) ? data.token.id : isObject(data.webhook) ? data.webhook.id : undefined
  const advice = isObject(data.webhook)
    ? "Rotate it (update_webhook with rotateSecret) to get another."
    : "Revoke it if it is not needed."
  return {
    content: [
      { type: "text", text: JSON.stringify(redacted) },
      {
        type: "text",
        text: `${tool}: ${isObject(data.webhook) ? "secret of" : "minted"} ${
          String(id)
        }; its secret was withheld (call with reveal_secret: true to receive it). ${advice}`
      }
    ],
    structuredContent: redacted
  }
}

/** The answers of a server with these options, one function per request the server handles after `initialize`. */
export const makeHandlers = (options: McpOptions) => {
  let table:
    | Promise<{ all: ReadonlyArray<ToolSpec>; registered: ReadonlyArray<ToolSpec>; byName: Map<string, ToolSpec> }>
    | undefined
  const tools = () => (table ??= loadTools().then(({ deriveTools, selectTools }) => {
    const all = deriveTools()
    const registered = selectTools(all, options)
    return { all, registered, byName: new Map(registered.map((t) => [t.definition.name, t] as const)) }
  }))
  const sendTool = withRetries(options.send, options.retry ?? DEFAULT_RETRY)
  let permissions: ReadonlyArray<Permission> | undefined
  const visible = async (): Promise<ReadonlyArray<ToolSpec>> => {
    const { registered } = await tools()
    // Only a successful lookup is kept: a failure (429, 5xx, unreachable) is asked again next time.
    permissions ??= (await discoverPermissions(options.send)) ?? undefined
    const granted = permissions
    return granted === undefined
      ? registered
      : registered.filter((t) => t.permission === AUTHENTICATED || granted.includes(t.permission))
  }

  /** `what_changed` (WhatChanged.ts, composed of the projects group's reads) is served with that toolset. */
  const composed = options.toolsets === undefined || options.toolsets === null || options.toolsets.includes("projects")
  const listTools = async () => {
    const listed = await visible()
    const withComposed = composed && (permissions === undefined || permissions.includes("projects:read"))
    return { tools: [...listed.map((t) => t.definition), ...(withComposed ? [whatChangedDefinition] : [])] }
  }

  /** A queued sync followed to its end (SyncProgress.ts); the answer's last line says how it ended. */
  const followed = async (result: ToolResult, args: Record<string, unknown>, call: CallProgress) => {
    const sync = result.isError === true ? undefined : result.structuredContent?.sync
    if (!isObject(sync) || typeof sync.id !== "string") return result
    const target = { projectId: String(args.id), provider: String(args.provider), syncId: sync.id }
    // The contract's own read of the project's integrations, as protocol discovery (no rate-limit unit).
    const request = { ...requestFor(await specOf("listIntegrations"), { id: target.projectId }), discovery: true }
    const last = await followSync(() => options.send(request), target, call, options.follow)
    const status = last === null ? "unread" : last.status
    return {
      ...result,
      content: [...result.content, { type: "text" as const, text: `sync_integration: followed ${sync.id}: ${status}` }]
    }
  }

  const callTool = async (request: CallToolRequest, call?: CallProgress): Promise<ToolResult> => {
    if (request.params.name === WHAT_CHANGED && composed) {
      return whatChanged(options.send, request.params.arguments ?? {}, Date.now())
    }
    const { all, byName } = await tools()
    const spec = byName.get(request.params.name)
    if (spec === undefined) {
      const known = all.find((t) => t.definition.name === request.params.name)
      const why = known === undefined
        ? "does not exist"
        : options.readOnly && known.kind !== "read"
        ? "is not available: this server runs read-only"
        : `is not available: this server serves the toolsets ${(options.toolsets ?? []).join(", ")}`
      return {
        content: [{
          type: "text",
          text: JSON.stringify(errorBody(404, `Tool ${request.params.name} ${why}`, "unknown_tool"))
        }],
        isError: true
      }
    }
    const args = request.params.arguments ?? {}
    // Checked before any request is built: a call that does not hold is answered here, with the API's 400.
    // The MCP-only `reveal_secret` (create_token) is checked too (a boolean), then taken off: the API never sees it.
    const invalid = validateArguments(spec, args)
    if (invalid !== null) return resultOf(spec, invalid)
    const { [REVEAL_SECRET]: reveal, ...apiArgs } = args
    const result = resultOf(spec, await sendTool(requestFor(spec, apiArgs)))
    if (spec.endpoint === "syncIntegration" && call?.follow === true) return followed(result, apiArgs, call)
    return SECRET_ENDPOINTS.includes(spec.endpoint) && reveal !== true
      ? withheldSecret(spec.definition.name, result)
      : result
  }

  const listPrompts = async () => ({ prompts: PROMPTS.map((p) => p.definition) })
  const getPrompt = async (request: GetPromptRequest) =>
    promptMessages(request.params.name, request.params.arguments ?? {})

  // Resources: each project's health, readable by URI.
  const listResourceTemplates = async () => ({
    resourceTemplates: [{
      uriTemplate: HEALTH_TEMPLATE,
      name: "project-health",
      title: "Project health",
      description: "Health score, confidence and dimensions of a project (GET /projects/{id}/health)",
      mimeType: "application/json"
    }]
  })
  /** The first page (100) of the projects the token may see: discovery, no rate-limit unit at /mcp. */
  const visibleProjects = async (): Promise<ReadonlyArray<Record<string, unknown>>> => {
    const answer = await options.send({
      ...requestFor(await specOf("listProjects"), { limit: "100" }),
      discovery: true
    })
    const listed: ReadonlyArray<unknown> =
      isObject(answer.body) && isObject(answer.body.data) && Array.isArray(answer.body.data.projects)
        ? answer.body.data.projects
        : []
    return listed.filter(isObject)
  }
  const listResources = async () => {
    const listed = await visibleProjects()
    return {
      resources: listed.map((p) => ({
        uri: `sitehealth://projects/${p.id}/health`,
        name: `${p.name ?? p.id} health`,
        description: `Health of ${p.domain ?? p.id}`,
        mimeType: "application/json"
      }))
    }
  }
  // A URI that names no resource is the caller's mistake (-32602); a project the API refuses is a JSON-RPC
  // error too (-32002 resource not found for 404, -32602 for 400/403, else -32603), its envelope as `data`.
  const readResource = async (request: ReadResourceRequest) => {
    const uri = request.params.uri
    const match = /^sitehealth:\/\/projects\/([^/]+)\/health$/.exec(uri)
    const id = match === null ? undefined : safeDecode(match[1]!)
    const health = await specOf("getHealth")
    if (id === undefined || validateArguments(health, { id }) !== null) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown resource ${
          clipInput(uri, 200)
        }; resources are sitehealth://projects/{id}/health with a project id prj_…`
      )
    }
    const answer = await options.send(requestFor(health, { id }))
    if (answer.status >= 400 || !isObject(answer.body) || answer.body.status !== "success") {
      const envelope = isErrorEnvelope(answer.body)
        ? answer.body
        : errorBody(answer.status, `The API answered HTTP ${answer.status}`, "unexpected_response")
      const code = answer.status === 404
        ? RESOURCE_NOT_FOUND
        : answer.status === 400 || answer.status === 403
        ? ErrorCode.InvalidParams
        : ErrorCode.InternalError
      throw new McpError(code, `${uri}: ${envelope.error.message}`, envelope)
    }
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(answer.body.data, null, 2) }] }
  }

  /**
   * completion/complete: a prompt's `project` and the health template's `id` complete to the ids of the projects
   * the token may see whose id, name or domain starts with what was typed (case-insensitive); `period` to the
   * periods. An unknown prompt or template is -32602, an argument with nothing to offer completes to nothing.
   */
  const complete = async (request: CompleteRequest) => {
    const { argument, ref } = request.params
    const typed = argument.value.toLowerCase()
    const none = { completion: { values: [] as Array<string>, hasMore: false } }
    const known = ref.type === "ref/prompt"
      ? PROMPTS.some((p) => p.definition.name === ref.name)
      : ref.uri === HEALTH_TEMPLATE
    if (!known) {
      throw new McpError(
        ErrorCode.InvalidParams,
        ref.type === "ref/prompt"
          ? `Unknown prompt ${clipInput(ref.name, 100)}`
          : `Unknown resource template ${clipInput(ref.uri, 200)}; the template is ${HEALTH_TEMPLATE}`
      )
    }
    if (argument.name === "period" && ref.type === "ref/prompt") {
      return { completion: { values: PERIODS.filter((p) => p.startsWith(typed)), hasMore: false } }
    }
    if (argument.name !== (ref.type === "ref/prompt" ? "project" : "id")) return none
    const matches = (await visibleProjects()).filter((p) =>
      [p.id, p.name, p.domain].some((field) => typeof field === "string" && field.toLowerCase().startsWith(typed))
    ).map((p) => String(p.id))
    // MCP caps the values at 100 per answer.
    return { completion: { values: matches.slice(0, 100), total: matches.length, hasMore: matches.length > 100 } }
  }

  return { listTools, callTool, listPrompts, getPrompt, listResourceTemplates, listResources, readResource, complete }
}

export type Handlers = ReturnType<typeof makeHandlers>
