/**
 * TokenUsage: the token's last_used_at, written once the request has passed every check, in the
 * background (the answer does not wait for it) and at most once a minute per token, so reads do not turn
 * into writes.
 */
import { CurrentPrincipal } from "@sitehealth/domain/Authentication"
import type { TokenId } from "@sitehealth/domain/Common"
import { TokenUsage } from "@sitehealth/domain/Middleware"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RequestAccess } from "../access/AccessRepo.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"

/** lastUsedAt is written at most this often per token. */
export const TOUCH_EVERY_MS = 60_000

/** Direct style (one fiber step): it runs on every request. */
const make = (touch: (tokenId: TokenId, at: Date) => Effect.Effect<void>) =>
  TokenUsage.of((httpEffect) =>
    Effect.withFiber((fiber) => {
      const principal = Context.getUnsafe(fiber.context, CurrentPrincipal)
      // The token's lastUsedAt as the authentication lookup read it; unknown (written) without that lookup.
      const access = fiber.getRef(RequestAccess)
      const lastUsedAt = access === null ? null : access.token.lastUsedAt
      const nowMs = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
      if (lastUsedAt !== null && nowMs - lastUsedAt.getTime() < TOUCH_EVERY_MS) return httpEffect
      return Effect.andThen(Effect.forkDetach(touch(principal.tokenId, new Date(nowMs))), httpEffect)
    })
  )

export const TokenUsageLive = Layer.effect(TokenUsage, Effect.map(TokensRepo, (tokens) => make(tokens.touch)))

/** Tests: each write is recorded in `touched` instead of the database. */
export const TokenUsageTest = (touched: Array<{ readonly tokenId: TokenId; readonly at: Date }>) =>
  Layer.succeed(TokenUsage, make((tokenId, at) => Effect.sync(() => void touched.push({ tokenId, at }))))
