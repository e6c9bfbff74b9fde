/**
 * Registration (RFC 7591) and the authorization request (OAuth 2.1 §4.1.1 with PKCE and RFC 8707): what a
 * client may register, and whether an /oauth/authorize request (or the consent page's copy of it) is one to
 * show the owner. A request whose client or redirect URI is not known is refused WITHOUT redirecting (the
 * redirect URI is not trusted yet: an open redirect otherwise); any other fault goes back to the client's
 * registered redirect URI with an `error`, as OAuth says.
 */
import type { AuthorizationRequest } from "@sitehealth/domain/DashboardConsent"
import { type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { randomBase62 } from "../store/Ids.ts"
import { resourceOf } from "./Issuer.ts"
import { type OAuthClient, OAuthRepo } from "./OAuthRepo.ts"
import { CHALLENGE } from "./Pkce.ts"

/** An OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2): `{error, error_description}` with its status. */
export class OAuthFailure extends Data.TaggedError("OAuthFailure")<{
  readonly status: number
  readonly error: string
  readonly description: string
}> {}

const fail = (status: number, error: string, description: string) =>
  Effect.fail(new OAuthFailure({ status, error, description }))

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])
export const MAX_REDIRECT_URIS = 10
const MAX_NAME = 100

/** https anywhere, or http on a loopback host (RFC 8252 §7.3); never a fragment, never credentials in it. */
export const redirectUriProblem = (raw: unknown): string | null => {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 2000) {
    return "must be a URL of at most 2000 characters"
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "must be an absolute URL"
  }
  if (url.hash !== "" || raw.includes("#")) return "must not have a fragment"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (url.protocol === "https:") return null
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return null
  return "must be https, or http on a loopback address (localhost, 127.0.0.1, [::1])"
}

export interface RegisteredClient {
  readonly client_id: string
  readonly client_id_issued_at: number
  readonly client_name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly grant_types: ReadonlyArray<string>
  readonly response_types: ReadonlyArray<string>
  readonly token_endpoint_auth_method: "none"
}

const GRANT_TYPES = ["authorization_code", "refresh_token"]

/**
 * Registers a public client (no secret: `token_endpoint_auth_method: none`, PKCE protects the code). A client
 * asking for a secret-based method is registered as `none` and told so in the answer, as RFC 7591 §3.2.1
 * allows: the MCP clients we know then carry on without a secret.
 */
export const register = Effect.fn("OAuth.register")(function*(body: unknown, now: Date) {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return yield* fail(400, "invalid_client_metadata", "The body must be a JSON object of client metadata")
  }
  const metadata = body as Record<string, unknown>
  const uris = metadata["redirect_uris"]
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    return yield* fail(
      400,
      "invalid_redirect_uri",
      `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URLs`
    )
  }
  for (const [i, uri] of uris.entries()) {
    const problem = redirectUriProblem(uri)
    if (problem !== null) return yield* fail(400, "invalid_redirect_uri", `redirect_uris[${i}] ${problem}`)
  }
  const name = metadata["client_name"] ?? "MCP client"
  if (typeof name !== "string" || name.trim().length === 0 || name.length > MAX_NAME) {
    return yield* fail(400, "invalid_client_metadata", `client_name must be a text of 1 to ${MAX_NAME} characters`)
  }
  const grantTypes = metadata["grant_types"] ?? ["authorization_code"]
  if (!Array.isArray(grantTypes) || grantTypes.some((g) => !GRANT_TYPES.includes(g as string))) {
    return yield* fail(400, "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only")
  }
  const responseTypes = metadata["response_types"] ?? ["code"]
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== "code")) {
    return yield* fail(400, "invalid_client_metadata", "response_types may hold code only")
  }
  const client: OAuthClient = {
    id: `cli_${randomBase62(24)}`,
    name: name.trim(),
    redirectUris: uris as Array<string>,
    createdAt: now
  }
  yield* (yield* OAuthRepo).insertClient(client)
  const answer: RegisteredClient = {
    client_id: client.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: GRANT_TYPES,
    response_types: ["code"],
    token_endpoint_auth_method: "none"
  }
  return answer
})

/** An authorization request fit to show the owner. */
export interface CheckedRequest {
  readonly client: OAuthClient
  readonly redirectUri: string
  readonly state: string | undefined
  readonly codeChallenge: string
  readonly requestedPermissions: ReadonlyArray<Permission>
  readonly resource: string
}

export type Checked =
  | { readonly _tag: "Valid"; readonly request: CheckedRequest }
  /** Not answerable to the client (unknown client, unregistered redirect URI): shown, never redirected. */
  | { readonly _tag: "Invalid"; readonly message: string }
  /** The client's fault, answered at its redirect URI. */
  | { readonly _tag: "Refused"; readonly redirectTo: string; readonly message: string }

/** The client's redirect URI with the answer's parameters (and `iss`, RFC 9207). */
export const redirectWith = (redirectUri: string, params: Record<string, string | undefined>): string => {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}

/** Space-separated permissions (RFC 6749 scope); none named = all of them. Null when one is not a permission. */
export const permissionsOfScope = (scope: string | undefined): ReadonlyArray<Permission> | null => {
  const names = (scope ?? "").split(" ").filter((s) => s !== "")
  if (names.length === 0) return PERMISSIONS
  return names.every((n): n is Permission => (PERMISSIONS as ReadonlyArray<string>).includes(n))
    ? [...new Set(names)] as Array<Permission>
    : null
}

export const checkAuthorization = Effect.fn("OAuth.checkAuthorization")(function*(
  request: AuthorizationRequest,
  issuer: string
) {
  const client = yield* (yield* OAuthRepo).findClient(request.client_id)
  if (client === null) return { _tag: "Invalid", message: "Unknown client_id: register the client first" } as Checked
  if (!client.redirectUris.includes(request.redirect_uri)) {
    return {
      _tag: "Invalid",
      message: "redirect_uri is not one the client registered: nothing is sent to it"
    } as Checked
  }
  const refuse = (error: string, message: string): Checked => ({
    _tag: "Refused",
    message,
    redirectTo: redirectWith(request.redirect_uri, {
      error,
      error_description: message,
      state: request.state,
      iss: issuer
    })
  })
  if (request.response_type !== "code") {
    return refuse("unsupported_response_type", "response_type must be code")
  }
  if (request.code_challenge === undefined || !CHALLENGE.test(request.code_challenge)) {
    return refuse("invalid_request", "PKCE is required: code_challenge must be a base64url SHA-256 (43 characters)")
  }
  if (request.code_challenge_method !== "S256") {
    return refuse("invalid_request", "code_challenge_method must be S256")
  }
  const resource = resourceOf(issuer)
  if (request.resource !== undefined && request.resource !== resource) {
    return refuse("invalid_target", `resource must be this server's MCP endpoint, ${resource}`)
  }
  const requestedPermissions = permissionsOfScope(request.scope)
  if (requestedPermissions === null) {
    return refuse("invalid_scope", `scope may name these permissions only: ${PERMISSIONS.join(" ")}`)
  }
  return {
    _tag: "Valid",
    request: {
      client,
      redirectUri: request.redirect_uri,
      state: request.state,
      codeChallenge: request.code_challenge,
      requestedPermissions,
      resource
    }
  } as Checked
})
