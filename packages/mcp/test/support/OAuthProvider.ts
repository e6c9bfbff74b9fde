/** An MCP client's OAuth state as the SDK keeps it between runs, in memory; the "browser" is the test. */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import * as Crypto from "node:crypto"

/** What an MCP client keeps between runs, in memory; the "browser" is the test, which reads `authorizationUrl`. */
export class TestProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  readonly sentState = Crypto.randomBytes(16).toString("base64url")
  readonly name: string
  readonly redirect: string
  constructor(name: string, redirect: string) {
    this.name = name
    this.redirect = redirect
  }
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }
  state() {
    return this.sentState
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  /** What the SDK forgets after an invalid_grant (tokens) or invalid_client (all). */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined
    if (scope === "all" || scope === "client") this.client = undefined
  }
}
