/**
 * RateLimit: every authenticated request counts against its token's budget (http/RateLimiter.ts), accepted
 * or not — except the MCP server's in-process listing requests (`RateLimitExempt`); X-RateLimit-Limit/-Remaining/-Reset
 * on every answer that passed authentication, Retry-After on
 * the 429.
 */
import { CurrentPrincipal } from "@sitehealth/domain/Authentication"
import { RateLimited } from "@sitehealth/domain/Errors"
import { RateLimit, RateLimitExempt } from "@sitehealth/domain/Middleware"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { type RateLimitDecision, RateLimiter } from "./RateLimiter.ts"

const rateLimitHeaders = (d: RateLimitDecision, nowMs: number, limited: boolean) => ({
  "x-ratelimit-limit": String(d.limit),
  "x-ratelimit-remaining": String(d.remaining),
  "x-ratelimit-reset": String(d.reset),
  ...(limited ? { "retry-after": String(Math.max(1, Math.ceil(d.reset - nowMs / 1000))) } : {})
})

/**
 * The middleware over any source of decisions, keyed by token id. Direct style (one fiber step to read what
 * it needs) rather than a generator: it runs on every request, and each `yield*` is a step of its own.
 */
const make = (consume: (tokenId: string) => Effect.Effect<RateLimitDecision>) =>
  RateLimit.of((httpEffect) =>
    Effect.withFiber<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | RateLimited>((fiber) => {
      // MCP's own listing requests (tools/list, resources/list at /mcp) spend nothing; tool calls do.
      if (fiber.getRef(RateLimitExempt)) return httpEffect
      const principal = Context.getUnsafe(fiber.context, CurrentPrincipal)
      const nowMs = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
      return Effect.flatMap(
        consume(principal.tokenId),
        (decision): Effect.Effect<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | RateLimited> => {
          // On the way out, whatever answers: the handler's success or error, or the 402/403 of a later check.
          HttpEffect.appendPreResponseHandlerUnsafe(
            fiber.context,
            (_req, res) =>
              Effect.succeed(HttpServerResponse.setHeaders(res, rateLimitHeaders(decision, nowMs, res.status === 429)))
          )
          if (!decision.allowed) {
            return Effect.fail(
              new RateLimited({
                message: `Rate limit of ${decision.limit} requests per minute exceeded; retry after the window resets`,
                type: "rate_limited",
                limit: decision.limit,
                remaining: decision.remaining,
                reset: decision.reset
              })
            )
          }
          return httpEffect
        }
      )
    })
  )

export const RateLimitLive = Layer.effect(RateLimit, Effect.map(RateLimiter, (limiter) => make(limiter.consume)))

/** Tests: the decision for each request comes from `decide` (no counter is kept). */
export const RateLimitTest = (decide: (tokenId: string) => RateLimitDecision) =>
  Layer.succeed(RateLimit, make((tokenId) => Effect.sync(() => decide(tokenId))))
