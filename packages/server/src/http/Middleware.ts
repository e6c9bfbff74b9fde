/**
 * The layers of the contract's access middlewares, one per concern (domain/Middleware.ts orders them): the
 * live ones need AccessRepo, RateLimiter and TokensRepo. A test swaps any one alone and keeps the others live.
 */
import { Authentication, Idempotency, RequestErrors } from "@sitehealth/domain/Authentication"
import { Entitlement, ProjectAccess, RateLimit, TokenUsage } from "@sitehealth/domain/Middleware"
import * as Layer from "effect/Layer"
import { AuthenticationLive } from "./Authentication.ts"
import { EntitlementLive } from "./Entitlement.ts"
import { builtWithOnly } from "./GroupContext.ts"
import { ProjectAccessLive } from "./ProjectAccess.ts"
import { RateLimitLive } from "./RateLimit.ts"
import { TokenUsageLive } from "./TokenUsage.ts"

/** Layers used instead of the live ones (each file's `…Test`). */
export interface AccessMiddlewareOverrides {
  readonly authentication?: Layer.Layer<Authentication>
  readonly rateLimit?: Layer.Layer<RateLimit>
  readonly entitlement?: Layer.Layer<Entitlement>
  readonly projectAccess?: Layer.Layer<ProjectAccess>
  readonly tokenUsage?: Layer.Layer<TokenUsage>
}

export const accessMiddleware = (overrides: AccessMiddlewareOverrides = {}) =>
  Layer.mergeAll(
    overrides.authentication ?? AuthenticationLive,
    overrides.rateLimit ?? RateLimitLive,
    overrides.entitlement ?? EntitlementLive,
    overrides.projectAccess ?? ProjectAccessLive,
    overrides.tokenUsage ?? TokenUsageLive
  )

export const AccessMiddlewareLive = accessMiddleware()

/**
 * A /api/v1 handler group's layer, built with the contract's middlewares only (http/GroupContext.ts): what
 * each of its requests merges into its context.
 */
export const withApiMiddlewaresOnly = builtWithOnly(
  Authentication,
  RateLimit,
  Entitlement,
  ProjectAccess,
  TokenUsage,
  RequestErrors,
  Idempotency
)
