/**
 * `Send` over HTTP through the contract's typed client, `HttpApiClient.make(SiteHealthApi)`: a tool call's
 * arguments are decoded with the endpoint's own params/query/payload schemas and the endpoint is called
 * by its group and name, so the request is exactly what the contract encodes. The answer is taken in
 * `responseMode: "response-only"` and its envelope passed to the agent as the API wrote it (a REST client
 * and an agent see the same JSON, including the 429 envelope with limit/remaining/reset).
 *
 * Arguments the contract cannot decode (a period that does not exist, a negative amount…) are sent as
 * given (HttpSend), so that the agent gets the API's own 400 with its `issues` — the API alone validates.
 */
import { Context, Effect, Layer, ManagedRuntime, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import type { ApiAnswer, ApiRequest, Send } from "./Dispatch.ts"
import { httpSend, unreachable } from "./HttpSend.ts"

type Decoded = { readonly params?: unknown; readonly query?: unknown; readonly payload?: unknown }

/** The call's arguments as the endpoint's decoded input, or null when they do not decode. */
export const decodeInput = (tool: NonNullable<ApiRequest["tool"]>): Decoded | null => {
  const { schemas } = tool.spec
  const decode = (schema: Schema.Top | undefined, value: unknown) =>
    schema === undefined ? undefined : Schema.decodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(value)
  try {
    const params = decode(schemas.params, tool.params)
    const query = decode(schemas.query, tool.query)
    const payload = tool.payload === undefined ? undefined : decode(schemas.payload, tool.payload)
    return {
      ...(params === undefined ? {} : { params }),
      ...(query === undefined ? {} : { query }),
      ...(payload === undefined ? (schemas.payloadOptional && schemas.payload !== undefined ? { payload: null } : {}) : { payload })
    }
  } catch {
    return null
  }
}

/** The call's Idempotency-Key, provided per call: the typed client is shared by every call. */
const CallIdempotencyKey = Context.Reference<string | undefined>("sitehealth/mcp/CallIdempotencyKey", {
  defaultValue: () => undefined
})

export const apiClientSend = (baseUrl: string, token: string): Send => {
  const raw = httpSend(baseUrl, token)
  const runtime = ManagedRuntime.make(
    HttpApiMiddleware.layerClient(Authentication, ({ next, request }) => next(HttpClientRequest.bearerToken(request, token))).pipe(
      Layer.merge(FetchHttpClient.layer)
    )
  )
  const client = runtime.runPromise(
    HttpApiClient.make(SiteHealthApi, {
      baseUrl,
      // POSTs carry the call's Idempotency-Key (the same on every attempt of the call: Retry.ts).
      transformClient: HttpClient.mapRequestEffect((request: HttpClientRequest.HttpClientRequest) =>
        Effect.gen(function*() {
          if (request.method !== "POST") return request
          const key = yield* CallIdempotencyKey
          return HttpClientRequest.setHeader(request, "idempotency-key", key ?? crypto.randomUUID())
        }))
    })
  )

  return async (request: ApiRequest): Promise<ApiAnswer> => {
    const input = request.tool === undefined ? null : decodeInput(request.tool)
    if (request.tool === undefined || input === null) return raw(request)
    const { group, endpoint } = request.tool.spec
    try {
      // The one cast of this module: the tool names its endpoint at run time (group and name strings), and the
      // typed client can only be indexed by the literal names; the input was decoded by that endpoint's own
      // schemas above, so the call is the one the contract describes.
      const api = (await client) as unknown as Record<string, Record<string, (input: unknown) => Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>>>
      return await runtime.runPromise(
        Effect.gen(function*() {
          const response = yield* api[group]![endpoint]!({ ...input, responseMode: "response-only" })
          const text: string = yield* response.text
          let body: unknown = null
          try {
            body = text === "" ? null : JSON.parse(text)
          } catch {
            body = null
          }
          return { status: response.status, body }
        }).pipe(Effect.provideService(CallIdempotencyKey, request.idempotencyKey))
      )
    } catch (error) {
      return unreachable(baseUrl, error)
    }
  }
}
