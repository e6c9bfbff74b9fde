/** /api/v1's `tokens` group: list, the caller's own, mint, revoke (Api.ts composes it). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { op, pagedList, scoped } from "./ApiOperation.ts"
import { Idempotency } from "./Authentication.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict } from "./Errors.ts"
import { AUTHENTICATED } from "./Permissions.ts"
import {
  CreateTokenPayload,
  RevokePayload,
  RevokePreview,
  RevokeQuery,
  TokenList,
  TokenMetadata,
  TokenMinted,
  TokenPreview,
  TokenRevoked
} from "./Tokens.ts"

export class TokensApi extends HttpApiGroup.make("tokens")
  .add(
    op(pagedList("listTokens", "/tokens", Envelope("TokenListResponse", TokenList)), {
      permission: "tokens:read",
      summary: "Token metadata, never a secret",
      cli: ["tokens", "list"],
      mcp: "list_tokens",
      csv: ["tokens"]
    }),
    // Before `/tokens/:id` in the group; only `DELETE /tokens/:id` exists, so a GET never matches it anyway.
    op(
      HttpApiEndpoint.get("getCurrentToken", "/tokens/current", {
        success: Envelope("CurrentTokenResponse", TokenMetadata)
      }),
      {
        permission: AUTHENTICATED,
        summary: "The calling token's own metadata (who am I), never a secret",
        cli: null,
        mcp: null
      }
    ),
    op(
      HttpApiEndpoint.post("createToken", "/tokens", {
        payload: [CreateTokenPayload, Schema.Null],
        success: [
          Envelope("TokenPreviewResponse", TokenPreview),
          Envelope("TokenMintedResponse", TokenMinted, { status: 201 })
        ],
        error: [...scoped, BadRequest]
      }).middleware(Idempotency),
      {
        permission: "tokens:write",
        kind: "write",
        confirmGate: true,
        summary: "Mint a token (preview unless confirm: true)",
        cli: ["tokens", "create"],
        mcp: "create_token"
      }
    ),
    op(
      HttpApiEndpoint.delete("revokeToken", "/tokens/:id", {
        params: { id: Schema.String },
        query: RevokeQuery,
        payload: [RevokePayload, Schema.Null],
        success: [Envelope("RevokePreviewResponse", RevokePreview), Envelope("TokenRevokedResponse", TokenRevoked)],
        error: [...scoped, Conflict]
      }),
      {
        permission: "tokens:write",
        kind: "destructive",
        confirmGate: true,
        summary: "Revoke a token (preview unless confirmed)",
        cli: ["tokens", "revoke"],
        mcp: "revoke_token",
        idempotent: true
      }
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Tokens", description: "Access tokens: list, the caller's own, mint, revoke" })
  )
{}
