/**
 * Throttling of the dashboard's unauthenticated actions (log-in, sign-up, password reset), per account (the
 * email as typed, lower-cased: an unknown address is throttled exactly like a registered one) and per client
 * address. Fixed one-minute windows in the same stores as the API's rate limit (memory, or Redis when
 * REDIS_URL is set): at most 5 attempts per account and 20 per address a minute; the next answers 429.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { RateLimited } from "@sitehealth/domain/Errors"
import { AppConfig } from "../Config.ts"
import { RateLimiter, type RateLimiterShape } from "../http/RateLimiter.ts"

export const ATTEMPTS_PER_ACCOUNT = 5
export const ATTEMPTS_PER_ADDRESS = 20

export type ThrottledAction = "login" | "signup" | "reset" | "reset-confirm"

export interface AuthThrottleShape {
  /** Counts one attempt of `action` for `account` (null: count the address only); 429 past either limit. */
  readonly attempt: (action: ThrottledAction, account: string | null) => Effect.Effect<void, RateLimited, HttpServerRequest.HttpServerRequest>
}

const limiter = (redisUrl: Redacted.Redacted<string> | null, limit: number) =>
  Effect.map(
    Layer.build(redisUrl === null ? RateLimiter.memory(limit) : RateLimiter.redis(Redacted.value(redisUrl), limit)),
    (context) => Context.get(context, RateLimiter)
  )

/** The client's address as the socket reports it ("unknown" when there is none, e.g. an in-process call). */
export const clientAddress = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return Option.getOrElse(request.remoteAddress, () => "unknown")
})

export class AuthThrottle extends Context.Service<AuthThrottle, AuthThrottleShape>()("sitehealth/dashboard/AuthThrottle") {
  static readonly layer = Layer.effect(
    AuthThrottle,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const perAccount: RateLimiterShape = yield* limiter(config.redisUrl, ATTEMPTS_PER_ACCOUNT)
      const perAddress: RateLimiterShape = yield* limiter(config.redisUrl, ATTEMPTS_PER_ADDRESS)
      const refuse = (reset: number, limit: number) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const seconds = Math.max(1, Math.ceil(reset - now / 1000))
          return yield* new RateLimited({
            message: `Too many attempts; try again in ${seconds} seconds`,
            type: "too_many_attempts",
            limit,
            remaining: 0,
            reset
          })
        })
      return AuthThrottle.of({
        attempt: (action, account) =>
          Effect.gen(function*() {
            const address = yield* clientAddress
            const byAddress = yield* perAddress.consume(`dash:${action}:addr:${address}`)
            if (!byAddress.allowed) return yield* refuse(byAddress.reset, byAddress.limit)
            if (account === null) return
            const byAccount = yield* perAccount.consume(`dash:${action}:acct:${account}`)
            if (!byAccount.allowed) return yield* refuse(byAccount.reset, byAccount.limit)
          })
      })
    })
  )
}
