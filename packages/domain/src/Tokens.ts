/** Access tokens: metadata, minting behind a confirmation gate, revocation. */
import * as Schema from "effect/Schema"
import { AccountId, NextCursor, ProjectId, Text, Timestamp, TokenId } from "./Common.ts"
import { Permission } from "./Permissions.ts"

export const TokenStatus = Schema.Literals(["active", "revoked", "expired"])

export const TokenMetadata = Schema.Struct({
  id: TokenId,
  accountId: AccountId.annotate({ description: "The account the token belongs to (its projects are this account's)" }),
  name: Schema.String,
  prefix: Schema.String.annotate({ description: "`svc_…` plus the secret's last 4 characters, to recognise it" }),
  projects: Schema.NullOr(Schema.Array(ProjectId)).annotate({
    description: "Project ids the token is limited to; null = every project of the account, present and future"
  }),
  permissions: Schema.Array(Permission),
  createdAt: Timestamp,
  lastUsedAt: Schema.NullOr(Timestamp).annotate({ description: "Updated at most once a minute" }),
  expiresAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  status: TokenStatus
}).annotate({ identifier: "TokenMetadata" })
export type TokenMetadata = typeof TokenMetadata.Type

export const TokenList = Schema.Struct({ tokens: Schema.Array(TokenMetadata), nextCursor: NextCursor })

const Confirm = Schema.optionalKey(
  Schema.Boolean.annotate({ description: "true to act; anything else answers a preview" })
)

export const CreateTokenPayload = Schema.Struct({
  confirm: Confirm,
  name: Schema.optionalKey(Text(100)),
  projects: Schema.optionalKey(
    Schema.NullOr(Schema.Array(ProjectId).check(Schema.isMinLength(1), Schema.isMaxLength(100)))
  ).annotate({ description: "Omitted: the caller's own scope. null: every project (only for an unrestricted caller)" }),
  permissions: Schema.optionalKey(Schema.Array(Permission).check(Schema.isMinLength(1))).annotate({
    description: "Omitted: the caller's own permissions"
  }),
  expiresAt: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({
    description:
      "ISO 8601 instant in the future. Omitted: the caller's own expiry. null: never (only for a caller that never " +
      "expires)"
  })
}).annotate({ identifier: "CreateTokenRequest" })
export type CreateTokenPayload = typeof CreateTokenPayload.Type

export const TokenDraft = Schema.Struct({
  name: Schema.String,
  projects: Schema.NullOr(Schema.Array(ProjectId)),
  permissions: Schema.Array(Permission),
  expiresAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "TokenDraft" })

export const TokenPreview = Schema.Struct({
  preview: Schema.Literal(true),
  token: TokenDraft,
  message: Schema.String
}).annotate({ identifier: "TokenPreview" })

export const TokenMinted = Schema.Struct({
  token: TokenMetadata,
  secret: Schema.NullOr(Schema.String).annotate({
    description: "The token itself, `svc_…`. Shown once; store it now. null only in a replay of the mint (same " +
      "Idempotency-Key), which never shows the secret again"
  }),
  secretRedacted: Schema.optionalKey(Schema.Boolean).annotate({
    description:
      "true in a replayed mint answer: the token exists, but its secret is not kept and cannot be shown again"
  })
}).annotate({ identifier: "TokenMinted" })

export const RevokePayload = Schema.Struct({ confirm: Confirm }).annotate({ identifier: "RevokeTokenRequest" })
export const RevokeQuery = {
  confirm: Schema.optionalKey(
    Schema.Literals(["true", "false"]).annotate({ description: "Same as the body's confirm" })
  )
}

export const RevokePreview = Schema.Struct({
  preview: Schema.Literal(true),
  token: TokenMetadata,
  message: Schema.String
}).annotate({ identifier: "RevokePreview" })

export const TokenRevoked = Schema.Struct({
  revoked: Schema.Literal(true),
  token: TokenMetadata
}).annotate({ identifier: "TokenRevoked" })
