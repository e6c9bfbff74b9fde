/**
 * Turning a tool call into the endpoint's request and the API's answer into a tool result. The request
 * goes through a `Send` — over HTTP to a remote server (stdio) or into the app's own router (`/mcp`) — so
 * the API decides auth, rate limit, entitlement, scope. The arguments were checked first with the
 * endpoint's own schemas (Validate.ts); path parameters are URL-encoded into the path here. The envelope the
 * API answered is what the agent sees.
 */
import { errorBody, isErrorEnvelope } from "@sitehealth/domain/Envelope"
import { summaryOf } from "./Summary.ts"
import type { ToolSpec } from "./Tools.ts"

export interface ApiRequest {
  readonly method: string
  /** Path and query string, `/api/v1/projects/prj_1/analytics?period=7d`. */
  readonly url: string
  readonly body?: unknown
  /** Sent as `Idempotency-Key` on a POST: the same on every attempt of one call (Retry.ts). */
  readonly idempotencyKey?: string
  /** The tool call it was built from: a typed client (ApiClientSend) calls the endpoint from these. */
  readonly tool?: {
    readonly spec: ToolSpec
    readonly params: Record<string, unknown>
    readonly query: Record<string, unknown>
    readonly payload?: Record<string, unknown>
  }
  /**
   * A request the server makes to list or discover (whoami, resources/list), not a tool call: at `/mcp` it spends no
   * rate limit.
   */
  readonly discovery?: boolean
}

export interface ApiAnswer {
  readonly status: number
  readonly body: unknown
}

/** Sends one request to the API with the session's token; never fails (a transport error is an answer). */
export type Send = (request: ApiRequest) => Promise<ApiAnswer>

export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: Array<{ type: "text"; text: string }>
  readonly structuredContent?: { [key: string]: unknown }
  readonly isError?: boolean
}

export const requestFor = (spec: ToolSpec, args: Record<string, unknown>): ApiRequest => {
  let path = spec.path
  for (const name of spec.pathParams) {
    path = path.replace(`:${name}`, encodeURIComponent(String(args[name] ?? "")))
  }
  const query = new URLSearchParams()
  const body: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || spec.pathParams.includes(key)) continue
    // A field both in the query and the body (revoke_token's confirm) goes in the body, where it is typed.
    if (spec.payloadFields.includes(key)) body[key] = value
    else if (spec.queryParams.includes(key)) query.set(key, String(value))
    // Anything else was refused by Validate.ts before the request was built; should one get here, it goes
    // where the API rejects it by name rather than being silently dropped.
    else if (spec.hasPayload) body[key] = value
    else query.set(key, typeof value === "string" ? value : JSON.stringify(value))
  }
  // The gate is explicit on the wire: an agent that omitted confirm gets the preview, by the API's rule.
  if (spec.confirmGate) body.confirm = args.confirm === true
  const search = query.toString()
  const params: Record<string, unknown> = {}
  for (const name of spec.pathParams) params[name] = args[name]
  const queryArgs: Record<string, unknown> = {}
  for (const [key, value] of query.entries()) queryArgs[key] = value
  return {
    method: spec.method,
    url: search === "" ? path : `${path}?${search}`,
    ...(spec.hasPayload ? { body } : {}),
    tool: { spec, params, query: queryArgs, ...(spec.hasPayload ? { payload: body } : {}) }
  }
}

/** Compact JSON: pretty-printing doubled what an agent pays for a result (list_projects 9.2k → 4.1k characters). */
const text = (value: unknown) => ({ type: "text" as const, text: JSON.stringify(value) })

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

export const resultOf = (spec: ToolSpec, answer: ApiAnswer): ToolResult => {
  const body = answer.body
  if (answer.status < 400 && isObject(body) && body.status === "success" && isObject(body.data)) {
    const data = body.data
    // The data as compact JSON, then one short line saying what it is (a preview says that nothing changed).
    return { content: [text(data), { type: "text", text: summaryOf(spec, data) }], structuredContent: data }
  }
  // The API's error envelope as it answered it (code, type, message; limit/remaining/reset on 429).
  const envelope = isErrorEnvelope(body)
    ? body
    : errorBody(answer.status, `The API answered HTTP ${answer.status} without an envelope`, "unexpected_response")
  return { content: [text(envelope)], isError: true }
}
