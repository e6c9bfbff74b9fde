/**
 * TokenUsage: the token's last_used_at, written once the request has passed every check, in the
 * background (the answer does not wait for it) and at most once a minute per token, so reads do not turn
 * into writes.
 */
import { Clock, Effect, Layer } from "effect"
import { CurrentPrincipal } from "@sitehealth/domain/Authentication"
import { TokenUsage } from "@sitehealth/domain/Middleware"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { RequestAccess } from "./AccessRepo.ts"
import type { TokenId } from "@sitehealth/domain/Common"

/** lastUsedAt is written at most this often per token. */
export const TOUCH_EVERY_MS = 60_000

const make = (touch: (tokenId: TokenId, at: Date) => Effect.Effect<void>) =>
  TokenUsage.of((httpEffect) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      // The token's lastUsedAt as the authentication lookup read it; unknown (written) without that lookup.
      const access = yield* RequestAccess
      const lastUsedAt = access === null ? null : access.token.lastUsedAt
      const nowMs = yield* Clock.currentTimeMillis
      if (lastUsedAt === null || nowMs - lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
        yield* Effect.forkDetach(touch(principal.tokenId, new Date(nowMs)))
      }
      return yield* httpEffect
    }))

export const TokenUsageLive = Layer.effect(TokenUsage, Effect.map(TokensRepo, (tokens) => make(tokens.touch)))

/** Tests: each write is recorded in `touched` instead of the database. */
export const TokenUsageTest = (touched: Array<{ readonly tokenId: TokenId; readonly at: Date }>) =>
  Layer.succeed(TokenUsage, make((tokenId, at) => Effect.sync(() => void touched.push({ tokenId, at }))))
