/**
 * Google's OAuth 2.0 authorization-code flow with PKCE (RFC 7636, S256), as the dashboard runs it for Search
 * Console: the authorize URL (with `state`, `code_challenge`, offline access so a refresh token comes back),
 * the code exchange at the token endpoint (with the `code_verifier`), and the account's properties
 * (`GET /webmasters/v3/sites`, sites.list). Nothing here logs or returns a token in an error.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import type { ConnectionContext } from "../Connector.ts"
import { decodeEffect } from "../Decode.ts"
import type { ProviderHttpShape } from "../ProviderHttp.ts"
import { isUnavailable, unavailable, VerifyFailure } from "../Verify.ts"
import { gscConnector } from "./GscConnector.ts"

const base64url = (bytes: Buffer) => bytes.toString("base64url")

/** 32 random bytes as base64url: 43 characters, within RFC 7636's 43–128. */
export const newVerifier = (): string => base64url(randomBytes(32))
export const challengeOf = (verifier: string): string => base64url(createHash("sha256").update(verifier).digest())
/** An unguessable `state` (and flow id material). */
export const newState = (): string => base64url(randomBytes(32))

export const authorizeUrl = (o: {
  readonly authUrl: string
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly state: string
  readonly challenge: string
}): string => {
  const url = new URL(o.authUrl)
  url.searchParams.set("client_id", o.clientId)
  url.searchParams.set("redirect_uri", o.redirectUri)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("scope", o.scope)
  url.searchParams.set("access_type", "offline")
  url.searchParams.set("prompt", "consent")
  url.searchParams.set("include_granted_scopes", "true")
  url.searchParams.set("state", o.state)
  url.searchParams.set("code_challenge", o.challenge)
  url.searchParams.set("code_challenge_method", "S256")
  return url.toString()
}

const TokenAnswer = Schema.Struct({
  access_token: Schema.NonEmptyString,
  refresh_token: Schema.optional(Schema.String),
  scope: Schema.optional(Schema.String)
})
const decodeToken = decodeEffect("google-search-console", TokenAnswer)

/** The authorization code for tokens; a refused code (invalid_grant: wrong verifier, reused, expired) → `rejected`. */
export const exchangeCode = (http: ProviderHttpShape, o: {
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly code: string
  readonly verifier: string
  readonly redirectUri: string
}): Effect.Effect<{ readonly accessToken: string; readonly refreshToken: string }, VerifyFailure> =>
  Effect.gen(function*() {
    const res = yield* http.request({
      method: "POST",
      url: o.tokenUrl,
      form: {
        grant_type: "authorization_code",
        code: o.code,
        code_verifier: o.verifier,
        client_id: o.clientId,
        client_secret: o.clientSecret,
        redirect_uri: o.redirectUri
      }
    }).pipe(Effect.mapError((e) =>
      isUnavailable(e)
        ? unavailable("Google", e)
        : e.kind === "unauthorized"
        ? new VerifyFailure({
          kind: "rejected",
          message: "Google refused this server's OAuth client (check GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET).",
          missing: []
        })
        : new VerifyFailure({
          kind: "rejected",
          message:
            "Google refused the authorization (the code was already used, expired, or does not match this sign-in). " +
            "Start the connection again.",
          missing: []
        })
    ))
    const body = yield* decodeToken(res.json, "token endpoint").pipe(Effect.mapError((e) => unavailable("Google", e)))
    if (body.refresh_token === undefined || body.refresh_token.length === 0) {
      return yield* Effect.fail(
        new VerifyFailure({
          kind: "rejected",
          message: "Google gave no refresh token, so this server could not sync later. Remove sitehealth's access at " +
            "myaccount.google.com/permissions and connect again.",
          missing: []
        })
      )
    }
    return { accessToken: body.access_token, refreshToken: body.refresh_token }
  })

const SiteList = Schema.Struct({
  siteEntry: Schema.optional(Schema.Array(Schema.Struct({ siteUrl: Schema.String, permissionLevel: Schema.String })))
})
const decodeSites = decodeEffect("google-search-console", SiteList)

/** The properties the account can read (sites.list), unverified ones left out (they give no data). */
export const listSites = (http: ProviderHttpShape, apiBase: string, accessToken: string) =>
  http.request({
    method: "GET",
    url: `${apiBase}/webmasters/v3/sites`,
    headers: { authorization: `Bearer ${accessToken}` }
  }).pipe(
    Effect.mapError((e) =>
      isUnavailable(e)
        ? unavailable("Search Console", e)
        : new VerifyFailure({
          kind: "rejected",
          message: `Search Console refused to list this Google account's properties (HTTP ${e.status ?? "?"}).`,
          missing: []
        })
    ),
    Effect.flatMap((res) =>
      decodeSites(res.json, "sites.list").pipe(Effect.mapError((e) => unavailable("Search Console", e)))
    ),
    Effect.map((list) =>
      (list.siteEntry ?? [])
        .filter((s) => s.permissionLevel !== "siteUnverifiedUser")
        .map((s) => ({ siteUrl: s.siteUrl, permissionLevel: s.permissionLevel }))
        .sort((a, b) => a.siteUrl.localeCompare(b.siteUrl))
    )
  )

/**
 * The connector's own check of the chosen property (a refresh-token grant, then GET of the property), in
 * words: the Google account cannot read it, it does not exist, or Google refused the refresh token.
 */
export const verifyGscProperty = (ctx: ConnectionContext): Effect.Effect<void, VerifyFailure> =>
  gscConnector.validate(ctx).pipe(
    Effect.mapError((e) =>
      isUnavailable(e)
        ? unavailable("Google", e)
        : e.kind === "forbidden"
        ? new VerifyFailure({
          kind: "rejected",
          message: `This Google account cannot read the Search Console property ${
            ctx.credentials.site_url ?? ""
          }: pick one of its verified properties.`,
          missing: []
        })
        : e.kind === "not_found"
        ? new VerifyFailure({
          kind: "not_found",
          message: `Search Console has no property ${ctx.credentials.site_url ?? ""}.`,
          missing: []
        })
        : new VerifyFailure({
          kind: "rejected",
          message: "Google refused the authorization it just gave (revoked?). Start the connection again.",
          missing: []
        })
    )
  )
