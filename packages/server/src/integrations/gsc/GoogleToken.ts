/**
 * Google OAuth2 for a stored refresh token: POST the token endpoint with grant_type=refresh_token, keep
 * the access token in memory until shortly before `expires_in` runs out, and — because Google can
 * expire or revoke an access token early — let the caller drop it and ask again once after a 401.
 * The cache key holds a digest of the refresh token, never the token itself; nothing here is logged.
 */
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readProviderUrl } from "../../platform/ProviderUrls.ts"
import type { ConnectionContext } from "../Connector.ts"
import { decodeEffect } from "../Decode.ts"
import { ProviderError } from "../ProviderHttp.ts"

export const DEFAULT_GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
/** Renew this long before Google's expiry, so a token never dies between the check and the call. */
const EXPIRY_MARGIN_MS = 60_000

/**
 * Credentials' own token_uri (as in Google's client JSON) > GOOGLE_TOKEN_URL (through Config: ProviderUrls.ts)
 * > Google's endpoint.
 */
export const tokenUrlFor = (ctx: ConnectionContext): Effect.Effect<string, ProviderError> =>
  ctx.credentials.token_uri !== undefined
    ? Effect.succeed(ctx.credentials.token_uri)
    : readProviderUrl("GOOGLE_TOKEN_URL").pipe(
      Effect.map((url) => url ?? DEFAULT_GOOGLE_TOKEN_URL),
      Effect.mapError((message) => new ProviderError({ kind: "invalid_request", status: null, message }))
    )

export const googleCredential = (ctx: ConnectionContext, key: string): Effect.Effect<string, ProviderError> => {
  const v = ctx.credentials[key]
  return typeof v === "string" && v.length > 0
    ? Effect.succeed(v)
    : Effect.fail(
      new ProviderError({
        kind: "invalid_request",
        status: null,
        message: `The Search Console credentials have no "${key}"`
      })
    )
}

/**
 * Google answers a refresh grant it will not honour with 400 {"error":"invalid_grant"} (revoked, expired,
 * or issued to another client) and a bad client with 401 {"error":"invalid_client"}. The HTTP client keeps
 * only error_description, so every 400 of a refresh grant is read as a dead refresh token.
 */
const explainTokenFailure = (e: ProviderError): ProviderError =>
  e.status === 400 || e.kind === "invalid_request"
    ? new ProviderError({
      kind: "unauthorized",
      status: e.status,
      message: `Google refused the refresh token (${e.message}): the refresh token was revoked; reconnect`
    })
    : e.kind === "unauthorized" || e.kind === "forbidden"
    ? new ProviderError({
      kind: "unauthorized",
      status: e.status,
      message: `Google rejected the OAuth client (${e.message}): check client_id and client_secret`
    })
    : e

/** The token endpoint's answer (RFC 6749 §5.1): the fields we use. */
const TokenAnswer = Schema.Struct({
  access_token: Schema.NonEmptyString,
  expires_in: Schema.optional(Schema.NullOr(Schema.Finite))
})
const decodeToken = decodeEffect("google-search-console", TokenAnswer)

interface Cached {
  readonly accessToken: string
  readonly expiresAtMs: number
}

export interface TokenSource {
  /** A valid access token: the cached one, or a fresh one from the token endpoint. */
  readonly get: (ctx: ConnectionContext) => Effect.Effect<string, ProviderError>
  /** Forgets the cached token of these credentials (after the API answered 401 with it). */
  readonly drop: (ctx: ConnectionContext) => Effect.Effect<void, ProviderError>
  /** How many times the token endpoint was asked (for counts and tests). */
  readonly exchanges: () => number
}

/**
 * `env`: the variables to read GOOGLE_TOKEN_URL from (tests pointing one source at a fake); the current
 * ConfigProvider (the process environment) when omitted.
 */
export const makeTokenSource = (env?: Record<string, string | undefined>): TokenSource => {
  const cache = new Map<string, Cached>()
  let exchanges = 0
  const provider = env === undefined ? undefined : ConfigProvider.fromEnvRecord(env)
  const tokenUrl = (ctx: ConnectionContext) =>
    provider === undefined
      ? tokenUrlFor(ctx)
      : Effect.provideService(tokenUrlFor(ctx), ConfigProvider.ConfigProvider, provider)
  const keyOf = (ctx: ConnectionContext, url: string) =>
    createHash("sha256")
      .update(`${url}\u0000${ctx.credentials.client_id ?? ""}\u0000${ctx.credentials.refresh_token ?? ""}`)
      .digest("hex")

  const exchange = (ctx: ConnectionContext, url: string) =>
    Effect.gen(function*() {
      const clientId = yield* googleCredential(ctx, "client_id")
      const clientSecret = yield* googleCredential(ctx, "client_secret")
      const refreshToken = yield* googleCredential(ctx, "refresh_token")
      exchanges++
      const res = yield* ctx.http.request({
        method: "POST",
        url,
        form: {
          grant_type: "refresh_token",
          client_id: clientId,
          client_secret: clientSecret,
          refresh_token: refreshToken
        }
      }).pipe(Effect.mapError(explainTokenFailure))
      const body = yield* decodeToken(res.json, "token endpoint")
      const expiresIn = body.expires_in ?? 3600
      const now = yield* Clock.currentTimeMillis
      // A short-lived token (a test's, or a policy's) keeps half its life rather than none.
      return {
        accessToken: body.access_token,
        expiresAtMs: now + expiresIn * 1000 - Math.min(EXPIRY_MARGIN_MS, expiresIn * 500)
      }
    })

  return {
    get: (ctx) =>
      Effect.gen(function*() {
        const url = yield* tokenUrl(ctx)
        const key = keyOf(ctx, url)
        const now = yield* Clock.currentTimeMillis
        const hit = cache.get(key)
        if (hit !== undefined && hit.expiresAtMs > now) return hit.accessToken
        const fresh = yield* exchange(ctx, url)
        cache.set(key, fresh)
        return fresh.accessToken
      }),
    drop: (ctx) => Effect.map(tokenUrl(ctx), (url) => void cache.delete(keyOf(ctx, url))),
    exchanges: () => exchanges
  }
}
