/**
 * A token minted the way an MCP client that connects by URL gets one (docs/mcp.md, "Connecting by URL"): a
 * registered client, the owner's approval of websites and permissions, the code exchanged with its PKCE
 * verifier — the authorization server's own functions, without the browser. The authorization matrix uses such
 * tokens for some of its points of view: an OAuth-minted token obeys exactly the rules of any other.
 */
import type { Permission } from "@sitehealth/domain/Permissions"
import { Clock, Effect } from "effect"
import * as Crypto from "node:crypto"
import { register } from "../../src/oauth/Authorization.ts"
import { approve, exchangeCode } from "../../src/oauth/Grants.ts"
import { OAuthRepo } from "../../src/oauth/OAuthRepo.ts"
import { challengeOf } from "../../src/oauth/Pkce.ts"

const ISSUER = "http://localhost"
const RESOURCE = `${ISSUER}/mcp`
const REDIRECT = "http://127.0.0.1:7777/callback"

export const oauthMintedToken = (input: {
  readonly accountId: string
  readonly projects: ReadonlyArray<string> | null
  readonly permissions: ReadonlyArray<Permission>
}) =>
  Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    const registered = yield* register({ client_name: "Matrix agent", redirect_uris: [REDIRECT] }, now)
    const client = (yield* (yield* OAuthRepo).findClient(registered.client_id))!
    const verifier = Crypto.randomBytes(32).toString("base64url")
    const redirectTo = yield* approve(
      {
        client,
        redirectUri: REDIRECT,
        state: undefined,
        codeChallenge: challengeOf(verifier),
        requestedPermissions: input.permissions,
        resource: RESOURCE
      },
      { accountId: input.accountId as any, projects: input.projects as any, permissions: input.permissions },
      ISSUER
    )
    const code = new URL(redirectTo).searchParams.get("code")!
    const answer = yield* exchangeCode(
      new URLSearchParams({ client_id: client.id, code, redirect_uri: REDIRECT, code_verifier: verifier }),
      RESOURCE
    )
    return answer.access_token
  })
