/**
 * Streamable HTTP at `/mcp` on the API server (stateless, JSON responses). Every request needs
 * `Authorization: Bearer …` (else 401 with `WWW-Authenticate`, naming the protected-resource metadata where a
 * client connecting by URL learns how to sign in) and an `Origin` that is absent, loopback or the server's
 * PUBLIC_URL (else 403, against DNS rebinding). Tool calls are not a second implementation: each becomes an internal
 * request dispatched through the app's own router, so auth, rate limit (shared with REST for the token),
 * entitlement and scope are exactly REST's. A bearer that does not authenticate is refused with 401 up front.
 * Only POST is served: being stateless, the server has no stream to offer on GET and no session to end on
 * DELETE, so both answer 405 with `Allow: POST` (an SDK client then stops asking for a stream, rather than
 * reconnecting every second to a stream that closes at once). A JSON-RPC batch is refused (-32600) when the
 * negotiated protocol is 2025-06-18 or later, which removed batching.
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import { RateLimitExempt } from "@sitehealth/domain/Middleware"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type { ApiAnswer, ApiRequest, Send } from "./Dispatch.ts"
import { parseReadOnly, parseToolsets } from "./Tools.ts"

/**
 * The MCP SDK (and the tool table built on it) is loaded on the first /mcp request, not at start-up: an
 * API instance that never serves an agent does not carry its ~25 MB.
 */
let sdk:
  | Promise<
    readonly [
      typeof import("./Server.ts"),
      typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")
    ]
  >
  | undefined
const loadSdk = () => (sdk ??= Promise.all([
  import("./Server.ts"),
  import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")
]))

export const MCP_PATH = "/mcp"

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** Absent, loopback, or one of `allowed` (the server's PUBLIC_URL): a browser page of another site is refused. */
export const originAllowed = (origin: string | undefined, allowed: ReadonlyArray<string> = []): boolean => {
  if (origin === undefined || origin === "") return true
  try {
    const url = new URL(origin)
    return LOOPBACK.has(url.hostname) || allowed.includes(url.origin)
  } catch {
    return false
  }
}

/**
 * Which tools this request's server registers, as GitHub's MCP server takes it: `?toolsets=reports,expenses`
 * and `?read_only=true`, or the headers `X-MCP-Toolsets` and `X-MCP-Readonly` (the query wins). A bad value
 * is a 400 naming it.
 */
const toolSelection = (request: HttpServerRequest.HttpServerRequest) => {
  const query = new URL(request.url, "http://internal").searchParams
  const toolsets = parseToolsets(query.get("toolsets") ?? request.headers["x-mcp-toolsets"])
  if ("error" in toolsets) return toolsets
  const readOnly = parseReadOnly(query.get("read_only") ?? request.headers["x-mcp-readonly"] ?? null)
  if ("error" in readOnly) return readOnly
  return { toolsets: toolsets.toolsets, readOnly: readOnly.readOnly }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers })

/** An answer of the transport itself (not of a tool): a JSON-RPC error with no id, as the SDK writes them. */
const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  json(status, { jsonrpc: "2.0", error: { code, message }, id: null }, headers)

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** A `tools/call` carrying a progress token (`params._meta.progressToken`): its client wants to hear how it goes. */
export const wantsProgress = (message: unknown): boolean => {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false
  const { method, params } = message as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } }
  return method === "tools/call" && params?._meta?.progressToken !== undefined
}

/** The protocol version that removed JSON-RPC batching. */
const NO_BATCHES_SINCE = "2025-06-18"

/**
 * Whether `message` is a batch the negotiated protocol does not allow. The version is the request's
 * `MCP-Protocol-Version` header, or an initialize's own in the batch; without either it is 2025-03-26, the
 * spec's default, which has batches. Versions are dates, so they compare as strings.
 */
export const batchRemoved = (message: unknown, header: string | null): boolean => {
  if (!Array.isArray(message)) return false
  const initialize = message.find((m) =>
    typeof m === "object" && m !== null && (m as { method?: unknown }).method === "initialize"
  )
  const version = header ??
    (initialize as { params?: { protocolVersion?: unknown } } | undefined)?.params?.protocolVersion
  return typeof version === "string" && version >= NO_BATCHES_SINCE
}

/**
 * Says whether a bearer secret authenticates (well formed, known, not revoked, not expired) WITHOUT the
 * rest of the API's checks — no rate-limit charge, no entitlement: those apply per tool call, in the API.
 * The server provides it; null means it authenticates, else the reason (the API's 401 `type`).
 */
export type BearerCheck = (secret: string) => Effect.Effect<null | "invalid_token" | "token_revoked" | "token_expired">

/**
 * How the server publishes its authorization (the MCP authorization spec): the URL of /mcp's RFC 9728
 * protected-resource metadata for a request, named in every 401's `WWW-Authenticate`, so a client that
 * connects by URL alone finds where to sign in; and the origins allowed besides loopback (PUBLIC_URL's).
 */
export interface McpAuthorization {
  readonly resourceMetadataUrl: (request: HttpServerRequest.HttpServerRequest) => string
  readonly allowedOrigins: ReadonlyArray<string>
}

const challenge = (metadataUrl: string | null, error: string | null) =>
  [
    `Bearer realm="sitehealth"`,
    ...(metadataUrl === null ? [] : [`resource_metadata="${metadataUrl}"`]),
    ...(error === null ? [] : [`error="${error}"`])
  ].join(", ")

export const mcpRoute = (checkBearer: BearerCheck, authorization: McpAuthorization | null = null) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const router = yield* HttpRouter.HttpRouter
      return HttpRouter.add("*", MCP_PATH, (request) =>
        Effect.gen(function*() {
          if (!originAllowed(request.headers["origin"], authorization?.allowedOrigins)) {
            return json(403, errorBody(403, "Origin not allowed", "forbidden_origin"))
          }
          // Stateless: no stream the server could open (GET) and no session to end (DELETE).
          if (request.method !== "POST") {
            return jsonRpcError(
              405,
              -32000,
              `Method not allowed: ${MCP_PATH} takes POST only (no server-initiated stream, no session)`,
              { allow: "POST" }
            )
          }
          const metadataUrl = authorization === null ? null : authorization.resourceMetadataUrl(request)
          const bearer = request.headers["authorization"] ?? ""
          const token = /^Bearer\s+(\S+)$/i.exec(bearer)?.[1]
          if (token === undefined) {
            return json(401, errorBody(401, "Invalid or expired token", "missing_token"), {
              "www-authenticate": challenge(metadataUrl, null)
            })
          }
          const selection = toolSelection(request)
          if ("error" in selection) return json(400, errorBody(400, selection.error, "invalid_request"))
          const refused = yield* checkBearer(token)
          if (refused !== null) {
            return json(401, errorBody(401, "Invalid or expired token", refused), {
              "www-authenticate": challenge(metadataUrl, "invalid_token")
            })
          }
          const context = yield* Effect.context<never>()
          const dispatch = (api: ApiRequest): Promise<ApiAnswer> => {
            const inner = new Request(new URL(api.url, "http://internal"), {
              method: api.method,
              headers: {
                authorization: bearer,
                ...(api.body === undefined ? {} : { "content-type": "application/json" }),
                ...(api.method === "POST" ? { "idempotency-key": api.idempotencyKey ?? crypto.randomUUID() } : {})
              },
              ...(api.body === undefined ? {} : { body: JSON.stringify(api.body) })
            })
            return Effect.runPromiseWith(context)(
              Effect.scoped(
                router.asHttpEffect().pipe(
                  Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(inner)),
                  // tools/list's whoami and resources/list's projects are protocol discovery: no rate-limit unit.
                  Effect.provideService(RateLimitExempt, api.discovery === true),
                  Effect.flatMap((response) =>
                    Effect.promise(() => HttpServerResponse.toWeb(response).json().catch(() => null)).pipe(
                      Effect.map((body): ApiAnswer => ({ status: response.status, body }))
                    )
                  ),
                  Effect.catchCause(() => Effect.succeed<ApiAnswer>({ status: 500, body: null }))
                )
              ) as Effect.Effect<ApiAnswer>
            )
          }
          const send: Send = dispatch
          // An invariant: a request that reached this route was parsed by the server, so it converts.
          const webRequest = yield* HttpServerRequest.toWeb(request).pipe(Effect.orDie)
          // Read here to refuse a batch where the negotiated protocol has none; the SDK gets it parsed.
          const text = yield* Effect.promise(() => webRequest.text())
          const parsed = parseJson(text)
          if (parsed.ok && batchRemoved(parsed.value, webRequest.headers.get("mcp-protocol-version"))) {
            return jsonRpcError(
              400,
              -32600,
              "Invalid Request: JSON-RPC batches are not supported from protocol 2025-06-18 on; send one message per " +
                "request"
            )
          }
          const [{ makeMcpServer }, { WebStandardStreamableHTTPServerTransport }] = yield* Effect.promise(loadSdk)
          const server = makeMcpServer({ send, ...selection })
          // A tool call with a progress token is answered as an event stream, so that what the call tells while
          // it runs (a followed sync's notifications) reaches the client before the result; anything else as JSON.
          const streams = parsed.ok && wantsProgress(parsed.value)
          const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !streams })
          yield* Effect.promise(() => server.connect(transport))
          const response = yield* Effect.promise(() =>
            parsed.ok
              ? transport.handleRequest(webRequest, { parsedBody: parsed.value })
              : transport.handleRequest(
                new Request(webRequest.url, { method: "POST", headers: webRequest.headers, body: text })
              )
          )
          if (!streams || response.body === null) {
            yield* Effect.promise(() => server.close())
            return HttpServerResponse.fromWeb(response)
          }
          // The stream ends after the result: the server closes then (a client that hangs up leaves it to the GC).
          const body = response.body.pipeThrough(new TransformStream({ flush: () => void server.close() }))
          return HttpServerResponse.fromWeb(new Response(body, { status: response.status, headers: response.headers }))
        }))
    })
  )
