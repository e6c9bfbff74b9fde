/**
 * The MCP authorization server's HTTP side, outside the JSON envelope because OAuth fixes its wire format:
 *
 *   GET  /.well-known/oauth-protected-resource[/mcp]   RFC 9728: /mcp is protected by this server
 *   GET  /.well-known/oauth-authorization-server       RFC 8414: the endpoints below
 *   POST /oauth/register                               RFC 7591 dynamic registration (rate-limited per address)
 *   GET  /oauth/authorize                              checks the request, sends the browser to the consent page
 *   POST /oauth/token                                  authorization_code (PKCE S256) and refresh_token grants
 *
 * Errors are RFC 6749/7591 JSON (`{error, error_description}`); an authorization request with an unknown client
 * or unregistered redirect URI is answered here (400), never redirected.
 */
import { AuthorizationRequest } from "@sitehealth/domain/DashboardConsent"
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AppConfig } from "../platform/Config.ts"
import type { TokensRepo } from "../tokens/TokensRepo.ts"
import { checkAuthorization, OAuthFailure, register } from "./Authorization.ts"
import { exchangeCode, refresh } from "./Grants.ts"
import {
  AUTHORIZATION_SERVER_METADATA,
  AUTHORIZE_PATH,
  CONSENT_PAGE,
  issuerFor,
  PROTECTED_RESOURCE_METADATA,
  REGISTER_PATH,
  resourceOf,
  TOKEN_PATH
} from "./Issuer.ts"
import type { OAuthRepo } from "./OAuthRepo.ts"

/** Registrations one address may make per hour. */
export const REGISTRATIONS_PER_HOUR = 20
const HOUR_MS = 3_600_000

/** Metadata and the token endpoint are read by browser-based clients too (MCP Inspector): any origin may. */
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, mcp-protocol-version"
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { ...CORS, ...headers } })

const oauthError = (failure: OAuthFailure) =>
  json(failure.status, { error: failure.error, error_description: failure.description })

export const protectedResourceMetadata = (issuer: string) => ({
  resource: resourceOf(issuer),
  authorization_servers: [issuer],
  scopes_supported: PERMISSIONS,
  bearer_methods_supported: ["header"],
  resource_name: "sitehealth MCP server",
  resource_documentation: `${issuer}/api/v1/openapi.json`
})

export const authorizationServerMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
  token_endpoint: `${issuer}${TOKEN_PATH}`,
  registration_endpoint: `${issuer}${REGISTER_PATH}`,
  scopes_supported: PERMISSIONS,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  token_endpoint_auth_methods_supported: ["none"],
  code_challenge_methods_supported: ["S256"],
  authorization_response_iss_parameter_supported: true
})

const decodeAuthorization = Schema.decodeUnknownOption(AuthorizationRequest)

/** Counts registrations per address in this process: a fixed window of an hour. */
const registrationBudget = () => {
  const windows = new Map<string, { start: number; count: number }>()
  return (address: string, now: number): boolean => {
    for (const [key, w] of windows) if (now - w.start >= HOUR_MS) windows.delete(key)
    const window = windows.get(address) ?? { start: now, count: 0 }
    window.count += 1
    windows.set(address, window)
    return window.count <= REGISTRATIONS_PER_HOUR
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const oauthRoutes = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    // What the grants need beyond the request, captured when the layer is built.
    const context = yield* Effect.context<OAuthRepo | TokensRepo>()
    const withRepos = <A, E>(effect: Effect.Effect<A, E, OAuthRepo | TokensRepo>) =>
      Effect.provideContext(effect, context)
    const allowRegistration = registrationBudget()
    const issuerOf = (request: HttpServerRequest.HttpServerRequest) => issuerFor(config.publicUrl, request)
    const preflight = () => Effect.succeed(HttpServerResponse.empty({ status: 204, headers: CORS }))
    const resourceMetadata = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.succeed(json(200, protectedResourceMetadata(issuerOf(request))))

    return HttpRouter.addAll([
      HttpRouter.route("GET", PROTECTED_RESOURCE_METADATA, resourceMetadata),
      HttpRouter.route("GET", `${PROTECTED_RESOURCE_METADATA}/mcp`, resourceMetadata),
      HttpRouter.route(
        "GET",
        AUTHORIZATION_SERVER_METADATA,
        (request) => Effect.succeed(json(200, authorizationServerMetadata(issuerOf(request))))
      ),
      HttpRouter.route("OPTIONS", PROTECTED_RESOURCE_METADATA, preflight),
      HttpRouter.route("OPTIONS", `${PROTECTED_RESOURCE_METADATA}/mcp`, preflight),
      HttpRouter.route("OPTIONS", AUTHORIZATION_SERVER_METADATA, preflight),
      HttpRouter.route("OPTIONS", REGISTER_PATH, preflight),
      HttpRouter.route("OPTIONS", TOKEN_PATH, preflight),
      HttpRouter.route("POST", REGISTER_PATH, (request) =>
        Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const address = Option.getOrElse(request.remoteAddress, () => "unknown")
          if (!allowRegistration(address, at)) {
            return json(429, {
              error: "too_many_requests",
              error_description: `At most ${REGISTRATIONS_PER_HOUR} client registrations per hour from one address`
            }, { "retry-after": "3600" })
          }
          const text = yield* Effect.orElseSucceed(request.text, () => "")
          return json(201, yield* withRepos(register(parseJson(text), new Date(at))))
        }).pipe(Effect.catchTag("OAuthFailure", (failure) => Effect.succeed(oauthError(failure))))),
      HttpRouter.route("GET", AUTHORIZE_PATH, (request) =>
        Effect.gen(function*() {
          const url = new URL(request.url, "http://internal")
          const query = Object.fromEntries(url.searchParams)
          const parsed = decodeAuthorization(query)
          if (Option.isNone(parsed)) {
            return oauthError(
              new OAuthFailure({
                status: 400,
                error: "invalid_request",
                description: "client_id, redirect_uri and response_type are required"
              })
            )
          }
          const checked = yield* withRepos(checkAuthorization(parsed.value, issuerOf(request)))
          switch (checked._tag) {
            case "Invalid":
              return oauthError(
                new OAuthFailure({ status: 400, error: "invalid_request", description: checked.message })
              )
            case "Refused":
              return HttpServerResponse.redirect(checked.redirectTo, { status: 302 })
            case "Valid":
              // The consent page (the web app) gets the same query: it logs the owner in first when needed.
              return HttpServerResponse.redirect(`${CONSENT_PAGE}${url.search}`, { status: 302 })
          }
        })),
      HttpRouter.route("POST", TOKEN_PATH, (request) =>
        Effect.gen(function*() {
          const type = request.headers["content-type"] ?? ""
          if (!type.startsWith("application/x-www-form-urlencoded")) {
            return yield* Effect.fail(
              new OAuthFailure({
                status: 400,
                error: "invalid_request",
                description: "The token request must be application/x-www-form-urlencoded"
              })
            )
          }
          const form = new URLSearchParams(yield* Effect.orElseSucceed(request.text, () => ""))
          const resource = resourceOf(issuerOf(request))
          switch (form.get("grant_type")) {
            case "authorization_code":
              return json(200, yield* withRepos(exchangeCode(form, resource)))
            case "refresh_token":
              return json(200, yield* withRepos(refresh(form, resource)))
            default:
              return yield* Effect.fail(
                new OAuthFailure({
                  status: 400,
                  error: "unsupported_grant_type",
                  description: "grant_type must be authorization_code or refresh_token"
                })
              )
          }
        }).pipe(Effect.catchTag("OAuthFailure", (failure) => Effect.succeed(oauthError(failure)))))
    ])
  })
)
