/**
 * The live layers of the contract's access middlewares, one per concern (domain/Middleware.ts orders them).
 * Needs AccessRepo, RateLimiter and TokensRepo. A test swaps any one by providing its own layer instead.
 */
import { Layer } from "effect"
import { AuthenticationLive } from "./Authentication.ts"
import { EntitlementLive } from "./Entitlement.ts"
import { ProjectAccessLive } from "./ProjectAccess.ts"
import { RateLimitLive } from "./RateLimit.ts"
import { TokenUsageLive } from "./TokenUsage.ts"

export const AccessMiddlewareLive = Layer.mergeAll(
  AuthenticationLive,
  RateLimitLive,
  EntitlementLive,
  ProjectAccessLive,
  TokenUsageLive
)
