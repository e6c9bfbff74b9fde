/**
 * The settings of the dashboard's connections (read with the others in Config.ts, docs/dashboard.md):
 *
 *   GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET   the OAuth client (a "Web application" client in Google Cloud);
 *                                            without both, Search Console cannot be connected (503 says so)
 *   GOOGLE_REDIRECT_URI                      the redirect URI registered with that client; default
 *                                            PUBLIC_URL + /oauth/google/callback (the web app's page)
 *   GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL        Google's authorize and token endpoints (tests point them at a fake)
 *   STRIPE_API_BASE, PLAUSIBLE_API_BASE, GSC_API_BASE   the providers' API base URLs (the sync reads the same)
 */
import { Effect, type Redacted, Result } from "effect"
import { GOOGLE_CALLBACK_PAGE } from "@sitehealth/domain/DashboardConnections"
import { collect, parsed, secret, text } from "../../Settings.ts"

export const DEFAULT_GOOGLE_AUTH_URL = "https://accounts.google.com/o/oauth2/v2/auth"
export const DEFAULT_GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
/** Read-only access to Search Console. */
export const GSC_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly"

export interface ConnectionSettings {
  readonly googleClientId: string | null
  readonly googleClientSecret: Redacted.Redacted<string> | null
  readonly googleRedirectUri: string
  readonly googleAuthUrl: string
  readonly googleTokenUrl: string
  /** null: the connector's default (or its environment variable, read by the sync). */
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

export const connectionSettings = collect({
  googleClientId: text("GOOGLE_CLIENT_ID"),
  googleClientSecret: secret("GOOGLE_CLIENT_SECRET"),
  googleRedirectUri: optionalUrl("GOOGLE_REDIRECT_URI"),
  publicUrl: optionalUrl("PUBLIC_URL"),
  host: parsed("HOST", "127.0.0.1", Result.succeed),
  port: parsed("PORT", "8787", Result.succeed),
  googleAuthUrl: parsed("GOOGLE_AUTH_URL", DEFAULT_GOOGLE_AUTH_URL, httpUrl("GOOGLE_AUTH_URL")),
  googleTokenUrl: parsed("GOOGLE_TOKEN_URL", DEFAULT_GOOGLE_TOKEN_URL, httpUrl("GOOGLE_TOKEN_URL")),
  stripeApiBase: optionalUrl("STRIPE_API_BASE"),
  plausibleApiBase: optionalUrl("PLAUSIBLE_API_BASE"),
  gscApiBase: optionalUrl("GSC_API_BASE")
}).pipe(
  Effect.map(({ host, port, publicUrl, googleRedirectUri, ...rest }): ConnectionSettings => ({
    ...rest,
    googleRedirectUri: googleRedirectUri ?? `${publicUrl ?? `http://${host}:${port}`}${GOOGLE_CALLBACK_PAGE}`
  }))
)
