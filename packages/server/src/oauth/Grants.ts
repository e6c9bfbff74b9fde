/**
 * The grants: a code for the owner's approval, the code exchanged for tokens, a refresh token renewed.
 *
 * A grant's access token is an ordinary `svc_` token (a row of `tokens`, named after the client, listed and
 * revocable on the dashboard's API / MCP page like any other), short-lived: renewing it gives the SAME row a
 * new secret and expiry, so one connected client is one row however often it refreshes. Each refresh token is
 * single use and replaced on every renewal (OAuth 2.1 §4.3.1 rotation); presenting a used one again — a copy in
 * someone else's hands, or the client's after a thief's — revokes the access token and every refresh token of
 * its family. A code is single use too: a second exchange revokes what the first one got (RFC 6749 §4.1.2).
 * Revoking the token on the dashboard ends its refresh tokens (renewal checks the token is not revoked).
 */
import type { AccountId, ProjectId, TokenId } from "@sitehealth/domain/Common"
import type { Permission } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import { mintToken } from "../accounts/Provisioning.ts"
import { randomBase62 } from "../store/Ids.ts"
import { generateSecret, hashSecret } from "../store/TokenSecret.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { type CheckedRequest, OAuthFailure, redirectWith } from "./Authorization.ts"
import { OAuthRepo } from "./OAuthRepo.ts"
import { verifierMatches } from "./Pkce.ts"

/** A code lives one minute: the client exchanges it as soon as the browser is back. */
export const CODE_LIFETIME_MS = 60_000
/** An access token lives an hour; the client renews it with its refresh token. */
export const ACCESS_LIFETIME_S = 3600
/** A refresh token lives 30 days from its issue (every renewal issues a new one). */
export const REFRESH_LIFETIME_MS = 30 * 86_400_000

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const invalidGrant = (description: string) =>
  Effect.fail(new OAuthFailure({ status: 400, error: "invalid_grant", description }))

/** The name of a grant's token on the dashboard: the client's own name, and how it came. */
export const tokenNameOf = (clientName: string) => `${clientName.slice(0, 80)} (MCP sign-in)`

export interface TokenAnswer {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

/** The owner approved: a single-use code bound to the client, its redirect URI, the PKCE challenge and resource. */
export const approve = Effect.fn("OAuth.approve")(function*(
  request: CheckedRequest,
  grant: {
    readonly accountId: AccountId
    readonly projects: ReadonlyArray<ProjectId> | null
    readonly permissions: ReadonlyArray<Permission>
  },
  issuer: string
) {
  const at = yield* now
  const code = Crypto.randomBytes(32).toString("base64url")
  yield* (yield* OAuthRepo).insertCode({
    secretSha256: hashSecret(code),
    clientId: request.client.id,
    accountId: grant.accountId,
    projects: grant.projects,
    permissions: grant.permissions,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    createdAt: at,
    expiresAt: new Date(at.getTime() + CODE_LIFETIME_MS),
    usedAt: null,
    tokenId: null
  })
  return redirectWith(request.redirectUri, { code, state: request.state, iss: issuer })
})

export const deny = (request: CheckedRequest, issuer: string) =>
  redirectWith(request.redirectUri, {
    error: "access_denied",
    error_description: "The owner denied access",
    state: request.state,
    iss: issuer
  })

/** Ends a grant: its access token revoked, its refresh tokens used up. */
const endGrant = (tokenId: TokenId, at: Date) =>
  Effect.gen(function*() {
    const tokens = yield* TokensRepo
    const token = yield* tokens.findById(tokenId)
    if (token !== null) yield* tokens.revoke(token.accountId, token.id, at)
    yield* (yield* OAuthRepo).endFamily(tokenId, at)
  })

const newRefresh = (tokenId: TokenId, clientId: string, resource: string, at: Date) =>
  Effect.gen(function*() {
    const secret = `svr_${randomBase62(43)}`
    yield* (yield* OAuthRepo).insertRefresh({
      secretSha256: hashSecret(secret),
      tokenId,
      clientId,
      resource,
      createdAt: at,
      expiresAt: new Date(at.getTime() + REFRESH_LIFETIME_MS),
      usedAt: null
    })
    return secret
  })

const field = (form: URLSearchParams, name: string) => {
  const value = form.get(name)
  return value === null || value === "" ? undefined : value
}

const required = (form: URLSearchParams, name: string) => {
  const value = field(form, name)
  return value === undefined
    ? Effect.fail(new OAuthFailure({ status: 400, error: "invalid_request", description: `${name} is required` }))
    : Effect.succeed(value)
}

/** The client named by `client_id` (public clients: no secret to check; PKCE binds the code to this client). */
const clientOf = (form: URLSearchParams) =>
  Effect.gen(function*() {
    const id = yield* required(form, "client_id")
    const client = yield* (yield* OAuthRepo).findClient(id)
    if (client === null) {
      return yield* Effect.fail(
        new OAuthFailure({ status: 401, error: "invalid_client", description: "Unknown client" })
      )
    }
    return client
  })

const checkResource = (form: URLSearchParams, bound: string) => {
  const resource = field(form, "resource")
  return resource === undefined || resource === bound
    ? Effect.void
    : Effect.fail(
      new OAuthFailure({
        status: 400,
        error: "invalid_target",
        description: `This grant is for the resource ${bound} only`
      })
    )
}

/** grant_type=authorization_code: the code (once, in time, by its client and verifier) for a token pair. */
export const exchangeCode = Effect.fn("OAuth.exchangeCode")(function*(form: URLSearchParams, resource: string) {
  const client = yield* clientOf(form)
  yield* checkResource(form, resource)
  const code = yield* required(form, "code")
  const redirectUri = yield* required(form, "redirect_uri")
  const verifier = yield* required(form, "code_verifier")
  const at = yield* now
  const used = yield* (yield* OAuthRepo).useCode(hashSecret(code), at)
  if (used === null) return yield* invalidGrant("Unknown authorization code")
  const record = used.record
  if (!used.firstUse) {
    if (record.tokenId !== null) yield* endGrant(record.tokenId, at)
    return yield* invalidGrant("The authorization code was already used: the tokens it gave are revoked")
  }
  if (record.clientId !== client.id) return yield* invalidGrant("The code was issued to another client")
  if (record.expiresAt.getTime() <= at.getTime()) return yield* invalidGrant("The authorization code has expired")
  if (record.redirectUri !== redirectUri) return yield* invalidGrant("redirect_uri differs from the authorization's")
  if (!verifierMatches(verifier, record.codeChallenge)) {
    return yield* invalidGrant("code_verifier does not match the code_challenge (PKCE S256)")
  }
  yield* checkResource(form, record.resource)
  const minted = yield* mintToken({
    accountId: record.accountId,
    name: tokenNameOf(client.name),
    projects: record.projects,
    permissions: record.permissions,
    expiresAt: new Date(at.getTime() + ACCESS_LIFETIME_S * 1000)
  })
  yield* (yield* OAuthRepo).setCodeToken(record.secretSha256, minted.token.id)
  const answer: TokenAnswer = {
    access_token: minted.secret,
    token_type: "Bearer",
    expires_in: ACCESS_LIFETIME_S,
    refresh_token: yield* newRefresh(minted.token.id, client.id, record.resource, at),
    scope: record.permissions.join(" ")
  }
  return answer
})

/** grant_type=refresh_token: a new access secret for the same token and a new refresh token; the old one is spent. */
export const refresh = Effect.fn("OAuth.refresh")(function*(form: URLSearchParams, resource: string) {
  const client = yield* clientOf(form)
  // Before the refresh token is spent: a request for another resource leaves it usable.
  yield* checkResource(form, resource)
  const secret = yield* required(form, "refresh_token")
  const at = yield* now
  const used = yield* (yield* OAuthRepo).useRefresh(hashSecret(secret), at)
  if (used === null) return yield* invalidGrant("Unknown refresh token")
  const record = used.record
  if (!used.firstUse) {
    yield* endGrant(record.tokenId, at)
    return yield* invalidGrant("The refresh token was already used: the grant is revoked, sign in again")
  }
  if (record.clientId !== client.id) return yield* invalidGrant("The refresh token was issued to another client")
  if (record.expiresAt.getTime() <= at.getTime()) return yield* invalidGrant("The refresh token has expired")
  yield* checkResource(form, record.resource)
  const access = generateSecret()
  const rotated = yield* (yield* TokensRepo).rotate(record.tokenId, {
    secretSha256: hashSecret(access),
    last4: access.slice(-4),
    expiresAt: new Date(at.getTime() + ACCESS_LIFETIME_S * 1000)
  })
  if (rotated === null) return yield* invalidGrant("The token was revoked: sign in again")
  const answer: TokenAnswer = {
    access_token: access,
    token_type: "Bearer",
    expires_in: ACCESS_LIFETIME_S,
    refresh_token: yield* newRefresh(record.tokenId, client.id, record.resource, at),
    scope: rotated.permissions.join(" ")
  }
  return answer
})
