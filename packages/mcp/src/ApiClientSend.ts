/**
 * `Send` over HTTP through the contract's typed client, `HttpApiClient.make(SiteHealthApi)`: a tool call's
 * arguments are decoded with the endpoint's own params/query/payload schemas and the endpoint is called
 * by its group and name, so the request is exactly what the contract encodes. The answer is taken in
 * `responseMode: "response-only"` and its envelope passed to the agent as the API wrote it (a REST client
 * and an agent see the same JSON, including the 429 envelope with limit/remaining/reset).
 *
 * The arguments were checked with the same schemas before the request was built (Validate.ts), so they
 * decode; should one not, it is sent as given (HttpSend) and the API answers it. Only a transport failure is
 * `unreachable`: a request the client could not build is a 400, never a misleading "Cannot reach" (503)
 * that a POST would retry.
 */
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import { errorBody } from "@sitehealth/domain/Envelope"
import { clipInput } from "@sitehealth/domain/Errors"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import type { ApiAnswer, ApiRequest, Send } from "./Dispatch.ts"
import { bodyOf, httpSend, unreachable } from "./HttpSend.ts"

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
      ...(payload === undefined
        ? (schemas.payloadOptional && schemas.payload !== undefined ? { payload: null } : {})
        : { payload })
    }
  } catch {
    return null
  }
}

const isTransportError = (error: unknown): boolean =>
  (error as { _tag?: unknown })?._tag === "HttpClientError" &&
  (error as { reason?: { _tag?: unknown } }).reason?._tag === "TransportError"

/** A request the typed client could not make: a 400 of the API's shape, never retried (Retry.ts). */
const notSent = (error: unknown): ApiAnswer => ({
  status: 400,
  body: errorBody(
    400,
    `The request could not be built: ${clipInput(error instanceof Error ? error.message : String(error), 200)}`,
    "invalid_request"
  )
})

/** The call's Idempotency-Key, provided per call: the typed client is shared by every call. */
const CallIdempotencyKey = Context.Reference<string | undefined>("sitehealth/mcp/CallIdempotencyKey", {
  defaultValue: () => undefined
})

export const apiClientSend = (baseUrl: string, token: string): Send => {
  const raw = httpSend(baseUrl, token)
  const runtime = ManagedRuntime.make(
    HttpApiMiddleware.layerClient(
      Authentication,
      ({ next, request }) => next(HttpClientRequest.bearerToken(request, token))
    ).pipe(
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
        })
      )
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
      const api = (await client) as unknown as Record<
        string,
        Record<string, (input: unknown) => Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>>
      >
      return await runtime.runPromise(
        Effect.gen(function*() {
          const response = yield* api[group]![endpoint]!({ ...input, responseMode: "response-only" })
          return { status: response.status, body: bodyOf(yield* response.text) }
        }).pipe(Effect.provideService(CallIdempotencyKey, request.idempotencyKey))
      )
    } catch (error) {
      // Only a transport failure is "cannot reach" (503, which a POST retries); anything else failed here,
      // before or without a request (the client could not build it), and is no reason to try again.
      return isTransportError(error) ? unreachable(baseUrl, error) : notSent(error)
    }
  }
}
