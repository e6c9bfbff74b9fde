/**
 * The Authentication middleware: the checks every /api/v1 request passes, in the documented order —
 * 401 token → 429 rate limit → 402 entitlement → 403 permission — then the request runs with the
 * Principal. One database round trip (http/AccessRepo.ts: the token joined with its account and, when the
 * path names a project, that project and — for health — its stored snapshot); no positive cache, so a
 * revocation takes effect on the very next request on every instance.
 */
import { Clock, Effect, Layer, Redacted } from "effect"
import { HttpEffect, HttpRouter, HttpServerResponse } from "effect/http"
import { Authentication, CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { Forbidden, RateLimited, TrialExpired, Unauthorized } from "@sitehealth/domain/Errors"
import { operationOf } from "@sitehealth/domain/Api"
import { isEntitled } from "../accounts/AccountsRepo.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { hashSecret, isWellFormedSecret } from "../tokens/TokenSecret.ts"
import { AccessRepo, type ProjectLookup, RequestProject } from "./AccessRepo.ts"
import { RateLimiter, type RateLimitDecision } from "./RateLimiter.ts"
import { CurrentRequestLog } from "./RequestLog.ts"

/** Endpoints served from today's stored snapshot: the lookup reads it with the token. */
const WITH_HEALTH = new Set(["getHealth", "listSignals"])

/** lastUsedAt is written at most this often per token, so reads do not turn into writes. */
const TOUCH_EVERY_MS = 60_000

const rateLimitHeaders = (d: RateLimitDecision, nowMs: number, limited: boolean) => ({
  "x-ratelimit-limit": String(d.limit),
  "x-ratelimit-remaining": String(d.remaining),
  "x-ratelimit-reset": String(d.reset),
  ...(limited ? { "retry-after": String(Math.max(1, Math.ceil(d.reset - nowMs / 1000))) } : {})
})

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const tokens = yield* TokensRepo
    const access = yield* AccessRepo
    const limiter = yield* RateLimiter

    return Authentication.of({
      bearer: (httpEffect, { credential, endpoint }) =>
        Effect.gen(function*() {
          const secret = Redacted.value(credential)
          if (secret === "") return yield* Unauthorized.of("missing_token")
          if (!isWellFormedSecret(secret)) return yield* Unauthorized.of("invalid_token")
          const operation = operationOf(endpoint)
          const nowMs = yield* Clock.currentTimeMillis
          let lookup: ProjectLookup | null = null
          if (operation?.project === true && operation.permission !== null) {
            const id = (yield* HttpRouter.params).id
            if (id !== undefined) lookup = { id, withHealth: WITH_HEALTH.has(endpoint.identifier) }
          }
          const found = yield* access.lookup(hashSecret(secret), lookup, new Date(nowMs))
          if (found === null) return yield* Unauthorized.of("invalid_token")
          const { account, token } = found
          // For the request's log line (http/RequestLog.ts): ids only, and the project only if it is the account's.
          const log = yield* CurrentRequestLog
          log.tokenId = token.id
          log.projectId = found.project?.project?.id ?? null
          if (token.revokedAt !== null) return yield* Unauthorized.of("token_revoked")
          if (token.expiresAt !== null && token.expiresAt.getTime() <= nowMs) {
            return yield* Unauthorized.of("token_expired")
          }

          const decision = yield* limiter.consume(token.id)
          yield* HttpEffect.appendPreResponseHandler((_req, res) =>
            Effect.succeed(HttpServerResponse.setHeaders(res, rateLimitHeaders(decision, nowMs, res.status === 429)))
          )
          if (!decision.allowed) {
            return yield* new RateLimited({
              message: `Rate limit of ${decision.limit} requests per minute exceeded; retry after the window resets`,
              type: "rate_limited",
              limit: decision.limit,
              remaining: decision.remaining,
              reset: decision.reset
            })
          }

          const now = new Date(nowMs)
          if (!isEntitled(account, now)) return yield* TrialExpired.of()

          // Deny by default: an endpoint the operation table does not list is refused, never let through
          // (test/OperationsTable.test.ts keeps the table and the contract in step).
          if (operation === undefined) {
            return yield* new Forbidden({
              message: `The operation ${endpoint.identifier} is not allowed through the API`,
              type: "operation_not_allowed"
            })
          }
          if (operation.permission !== null && !token.permissions.includes(operation.permission)) {
            return yield* new Forbidden({
              message: `This token lacks the ${operation.permission} permission`,
              type: "missing_permission",
              permission: operation.permission
            })
          }

          if (token.lastUsedAt === null || nowMs - token.lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
            yield* Effect.forkDetach(tokens.touch(token.id, now))
          }

          const principal: Principal = {
            tokenId: token.id,
            accountId: token.accountId,
            projects: token.projects,
            permissions: token.permissions,
            expiresAt: token.expiresAt
          }
          return yield* httpEffect.pipe(
            Effect.provideService(CurrentPrincipal, principal),
            Effect.provideService(RequestProject, found.project)
          )
        })
    })
  })
)
