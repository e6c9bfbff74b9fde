/**
 * `Send` over plain HTTP to a sitehealth server: what the stdio transport's typed client (ApiClientSend)
 * falls back to should checked arguments (Validate.ts) still not decode, so that the API answers them.
 * The request is the contract's own path and body (built in Dispatch from the endpoint); the answer is the
 * API's envelope as it came — exactly what a REST client would see.
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import type { ApiAnswer, ApiRequest, Send } from "./Dispatch.ts"

export const httpSend = (baseUrl: string, token: string): Send => async (request: ApiRequest): Promise<ApiAnswer> => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" }
  if (request.body !== undefined) headers["content-type"] = "application/json"
  if (request.method === "POST") headers["idempotency-key"] = request.idempotencyKey ?? crypto.randomUUID()
  try {
    const response = await fetch(new URL(request.url, baseUrl), {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) })
    })
    return { status: response.status, body: bodyOf(await response.text()) }
  } catch (error) {
    return unreachable(baseUrl, error)
  }
}

/** An answer's body as JSON; null when empty or not JSON (a proxy's page): the status still speaks. */
export const bodyOf = (text: string): unknown => {
  if (text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** The answer when the server cannot be reached: an envelope of the API's shape, type `unreachable`. */
export const unreachable = (baseUrl: string, error: unknown): ApiAnswer => {
  const cause = (error as { cause?: { message?: string } })?.cause?.message
  return {
    status: 503,
    body: errorBody(503, `Cannot reach ${baseUrl}${cause ? `: ${cause}` : ""}`, "unreachable")
  }
}
