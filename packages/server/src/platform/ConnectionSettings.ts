/**
 * The settings of the dashboard's connections (read with the others in platform/Config.ts, docs/dashboard.md):
 *
 *   GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET   the OAuth client (a "Web application" client in Google Cloud);
 *                                            without both, Search Console cannot be connected (503 says so)
 *   GOOGLE_REDIRECT_URI                      the redirect URI registered with that client; default
 *                                            PUBLIC_URL + /oauth/google/callback (the web app's page)
 *   GOOGLE_AUTH_URL                          Google's authorize endpoint (tests point it at a fake)
 *
 * The provider URLs (STRIPE_API_BASE, PLAUSIBLE_API_BASE, GSC_API_BASE, GOOGLE_TOKEN_URL) are not read here:
 * they are checked once at start-up with the rest (platform/ProviderUrls.ts) and read where a connection is
 * checked, as the sync reads them. The fields below override them (tests); null means "as the sync does".
 */
import { GOOGLE_CALLBACK_PAGE } from "@sitehealth/domain/DashboardConnections"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { collect, parsed, secret, text } from "./Settings.ts"

export const DEFAULT_GOOGLE_AUTH_URL = "https://accounts.google.com/o/oauth2/v2/auth"
/** Read-only access to Search Console. */
export const GSC_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly"

export interface ConnectionSettings {
  readonly googleClientId: string | null
  readonly googleClientSecret: Redacted.Redacted<string> | null
  readonly googleRedirectUri: string
  readonly googleAuthUrl: string
  /** null: GOOGLE_TOKEN_URL or Google's, as the sync reads it. */
  readonly googleTokenUrl: string | null
  /** null: the connector's environment variable or default, as the sync reads it. */
  readonly stripeApiBase: string | null
  readonly plausibleApiBase: string | null
  readonly gscApiBase: string | null
}

const httpUrl = (name: string) => (raw: string): Result.Result<string, string> => {
  try {
    const u = new URL(raw)
    if (u.protocol === "http:" || u.protocol === "https:") return Result.succeed(raw.replace(/\/+$/, ""))
  } catch {
    // falls through
  }
  return Result.fail(`${name} must be an http(s) URL, got "${raw}"`)
}

const optionalUrl = (name: string) => parsed<string | null>(name, null, httpUrl(name))

/** As read from the environment: the redirect URI's default needs PUBLIC_URL, HOST and PORT (platform/Config.ts). */
export type ConnectionSettingsRead = Omit<ConnectionSettings, "googleRedirectUri"> & {
  readonly googleRedirectUri: string | null
}

export const connectionSettings = collect({
  googleClientId: text("GOOGLE_CLIENT_ID"),
  googleClientSecret: secret("GOOGLE_CLIENT_SECRET"),
  googleRedirectUri: optionalUrl("GOOGLE_REDIRECT_URI"),
  googleAuthUrl: parsed("GOOGLE_AUTH_URL", DEFAULT_GOOGLE_AUTH_URL, httpUrl("GOOGLE_AUTH_URL"))
}).pipe(
  Effect.map((read): ConnectionSettingsRead => ({
    ...read,
    googleTokenUrl: null,
    stripeApiBase: null,
    plausibleApiBase: null,
    gscApiBase: null
  }))
)

/** GOOGLE_REDIRECT_URI, else the web app's callback page on this server's public origin. */
export const withRedirectDefault = (read: ConnectionSettingsRead, origin: string): ConnectionSettings => ({
  ...read,
  googleRedirectUri: read.googleRedirectUri ?? `${origin}${GOOGLE_CALLBACK_PAGE}`
})
