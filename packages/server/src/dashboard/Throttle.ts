/**
 * Throttling of the dashboard's unauthenticated actions, in two kinds (docs/security.md, "Throttling"):
 *
 * - **Attempts** at what sends mail (sign-up, reset requests) or spends a link (reset confirmations), and every
 *   log-in attempt per address: fixed one-minute windows in the API's rate-limit stores (memory, or Redis with
 *   REDIS_URL): at most 5 per account (the email as typed, lower-cased) and 20 per address a minute.
 * - **Failures** of a secret (a wrong password at log-in or at a password change, a wrong second-factor code),
 *   counted in FailuresRepo per account *and* address pair, per address and per account over the last hour.
 *   Counted after the secret is checked, so a stranger's failures never hold back the owner's right password
 *   from elsewhere: a pair has 5 free failures, then waits 30 s, 1, 2, 4, 8 and at most 15 minutes after each
 *   next one; an address at most 50 failures an hour over all accounts; an account at most 100 an hour
 *   (ASVS 2.2.1), past which only a browser that has logged in to it before (its device cookie) may try.
 *
 * Every refusal is a 429 whose Retry-After says when the next attempt can pass (Middleware.ts sets it).
 */
import { RateLimited } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { RateLimiter, type RateLimiterShape } from "../http/RateLimiter.ts"
import { AppConfig } from "../platform/Config.ts"
import { type FailureKind, FailuresRepo } from "./FailuresRepo.ts"

export const ATTEMPTS_PER_ACCOUNT = 5
export const ATTEMPTS_PER_ADDRESS = 20
export const FAILURE_WINDOW_MS = 3_600_000
export const FREE_FAILURES_PER_PAIR = 5
export const MAX_FAILURES_PER_ACCOUNT = 100
export const MAX_FAILURES_PER_ADDRESS = 50
const MAX_PAIR_DELAY_MS = 15 * 60_000

/** How long a pair with `failures` recent failures waits after its last one: 0, then 30 s doubling to 15 min. */
export const pairDelayMs = (failures: number): number =>
  failures < FREE_FAILURES_PER_PAIR ? 0 : Math.min(MAX_PAIR_DELAY_MS, 30_000 * 2 ** (failures - FREE_FAILURES_PER_PAIR))

export type ThrottledAction = "login" | "signup" | "reset" | "reset-confirm" | "invite"

type WithRequest<A, E = never> = Effect.Effect<A, E, HttpServerRequest.HttpServerRequest>

export interface AuthThrottleShape {
  /** Counts one attempt of `action` for `account` (null: count the address only); 429 past either limit. */
  readonly attempt: (action: ThrottledAction, account: string | null) => WithRequest<void, RateLimited>
  /**
   * Before a secret of `account` is checked: 429 while this address must wait for this account, while it has
   * failed too often overall, or while the account is over its hourly failures and the client is not `known`
   * (a browser that logged in to it before).
   */
  readonly guard: (kind: FailureKind, account: string, known: boolean) => WithRequest<void, RateLimited>
  /** The secret was wrong: one failure for the pair, the account and the address. */
  readonly failed: (kind: FailureKind, account: string) => WithRequest<void>
  /** The secret was right: the pair's own failures are forgiven. */
  readonly succeeded: (kind: FailureKind, account: string) => WithRequest<void>
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

export class AuthThrottle
  extends Context.Service<AuthThrottle, AuthThrottleShape>()("sitehealth/dashboard/AuthThrottle")
{
  static readonly layer = Layer.effect(
    AuthThrottle,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const perAccount: RateLimiterShape = yield* limiter(config.redisUrl, ATTEMPTS_PER_ACCOUNT)
      const perAddress: RateLimiterShape = yield* limiter(config.redisUrl, ATTEMPTS_PER_ADDRESS)
      const failures = yield* FailuresRepo
      const refuse = (reset: number, limit: number, why = "Too many attempts") =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const seconds = Math.max(1, Math.ceil(reset - now / 1000))
          const wait = seconds < 120 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`
          return yield* new RateLimited({
            message: `${why}; try again in ${wait}`,
            type: "too_many_attempts",
            limit,
            remaining: 0,
            reset
          })
        })
      const keyOf = (kind: FailureKind, account: string) =>
        Effect.map(clientAddress, (address) => ({ kind, account, address }))
      return AuthThrottle.of({
        attempt: Effect.fn("AuthThrottle.attempt")(function*(action, account) {
          const address = yield* clientAddress
          const byAddress = yield* perAddress.consume(`dash:${action}:addr:${address}`)
          if (!byAddress.allowed) return yield* refuse(byAddress.reset, byAddress.limit)
          if (account === null) return
          const byAccount = yield* perAccount.consume(`dash:${action}:acct:${account}`)
          if (!byAccount.allowed) return yield* refuse(byAccount.reset, byAccount.limit)
        }),
        guard: Effect.fn("AuthThrottle.guard")(function*(kind, account, known) {
          const key = yield* keyOf(kind, account)
          const byAddress = yield* perAddress.consume(`dash:${kind}:addr:${key.address}`)
          if (!byAddress.allowed) return yield* refuse(byAddress.reset, byAddress.limit)
          const now = yield* Clock.currentTimeMillis
          const stats = yield* failures.stats(key, new Date(now - FAILURE_WINDOW_MS))
          const seconds = (ms: number) => Math.ceil(ms / 1000)
          const pairFree = (stats.pairLast ?? 0) + pairDelayMs(stats.pair)
          if (pairFree > now) {
            return yield* refuse(seconds(pairFree), FREE_FAILURES_PER_PAIR, "Too many failed attempts from here")
          }
          if (stats.address >= MAX_FAILURES_PER_ADDRESS) {
            return yield* refuse(
              seconds((stats.addressOldest ?? now) + FAILURE_WINDOW_MS),
              MAX_FAILURES_PER_ADDRESS,
              "Too many failed attempts from this address"
            )
          }
          if (!known && stats.account >= MAX_FAILURES_PER_ACCOUNT) {
            return yield* refuse(
              seconds((stats.accountOldest ?? now) + FAILURE_WINDOW_MS),
              MAX_FAILURES_PER_ACCOUNT,
              "Too many failed attempts on this account: only a browser that has logged in to it before can log in " +
                "now, or reset the password"
            )
          }
        }),
        failed: Effect.fn("AuthThrottle.failed")(function*(kind, account) {
          const key = yield* keyOf(kind, account)
          const now = yield* Clock.currentTimeMillis
          yield* failures.record(key, new Date(now), new Date(now - FAILURE_WINDOW_MS))
        }),
        succeeded: Effect.fn("AuthThrottle.succeeded")(function*(kind, account) {
          yield* failures.clearPair(yield* keyOf(kind, account))
        })
      })
    })
  )
}
