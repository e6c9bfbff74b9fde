/**
 * Revoking a token with its `token.revoked` event: one event per website the token reached (its own list, or every
 * website of the account), written in the revocation's transaction. A token already revoked causes none.
 */
import * as Effect from "effect/Effect"
import type { ProjectsRepoShape } from "../projects/ProjectsRepo.ts"
import { tokenMetadata } from "../store/Present.ts"
import type { TokenRecord } from "../store/Records.ts"
import type { TokensRepoShape } from "../tokens/TokensRepo.ts"
import { emit } from "./Outbox.ts"
import type { WebhooksRepoShape } from "./Records.ts"

/** Websites an account has at most, as far as one revocation's events go. */
const MAX_WEBSITES = 1_000

export const revokeWithEvent = (
  deps: { readonly tokens: TokensRepoShape; readonly projects: ProjectsRepoShape; readonly webhooks: WebhooksRepoShape }
) =>
(accountId: string, target: TokenRecord, now: Date): Effect.Effect<TokenRecord | null> =>
  deps.webhooks.transaction(Effect.gen(function*() {
    const revoked = yield* deps.tokens.revoke(accountId, target.id, now)
    if (revoked === null || target.revokedAt !== null) return revoked
    const websites = revoked.projects ??
      (yield* deps.projects.list(accountId, null, { limit: MAX_WEBSITES, after: null })).items.map((p) => p.id)
    const metadata = tokenMetadata(revoked, now)
    for (const projectId of websites) {
      yield* emit(deps.webhooks)("token.revoked", projectId, {
        projectId,
        tokenId: revoked.id,
        name: revoked.name,
        prefix: metadata.prefix,
        revokedAt: (revoked.revokedAt ?? now).toISOString()
      }, now)
    }
    return revoked
  }))
