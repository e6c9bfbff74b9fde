/**
 * The URLs the authorization server names: its issuer (PUBLIC_URL, else the origin the request came to), the
 * MCP resource (`<issuer>/mcp`, the RFC 8707 `resource` every grant is bound to) and its endpoints.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { AppConfig } from "../platform/Config.ts"

export const MCP_RESOURCE_PATH = "/mcp"
export const AUTHORIZE_PATH = "/oauth/authorize"
export const TOKEN_PATH = "/oauth/token"
export const REGISTER_PATH = "/oauth/register"
/** The dashboard page (the web app) where the owner approves or denies: /oauth/authorize sends the browser there. */
export const CONSENT_PAGE = "/consent"
export const PROTECTED_RESOURCE_METADATA = "/.well-known/oauth-protected-resource"
export const AUTHORIZATION_SERVER_METADATA = "/.well-known/oauth-authorization-server"

/** The issuer for a request: PUBLIC_URL when set; else http:// and the request's Host (a local or dev server). */
export const issuerFor = (publicUrl: string | null, request: HttpServerRequest.HttpServerRequest): string => {
  if (publicUrl !== null) return publicUrl
  const host = request.headers.host ?? hostOf(request.url) ?? "localhost"
  return `http://${host}`
}

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).host
  } catch {
    return undefined
  }
}

export const currentIssuer = Effect.gen(function*() {
  const config = yield* AppConfig
  return issuerFor(config.publicUrl, yield* HttpServerRequest.HttpServerRequest)
})

export const resourceOf = (issuer: string) => `${issuer}${MCP_RESOURCE_PATH}`
