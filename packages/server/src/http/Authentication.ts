/**
 * Authentication: who is calling. The Bearer token is looked up in the hot path's one database round trip
 * (access/AccessRepo.ts: the token joined with its account and, when the path names a project, that project
 * and what the endpoint's `FastPath` annotation asks for — today's stored snapshot, the request's stored answer —,
 * or for the projects list the caller's page; see LookupPlan); 401 when it is missing, unknown, revoked or expired. No
 * positive
 * cache, so a revocation takes effect on the very next request on every instance. What the lookup found is
 * handed to the checks that follow (RateLimit, Entitlement, ProjectAccess, TokenUsage: the files next to
 * this one), which therefore query nothing.
 */
import { endpointsOf, fastPathOf } from "@sitehealth/domain/Api"
import { Authentication, CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { Unauthorized } from "@sitehealth/domain/Errors"
import { type AccountEntitlement, CurrentAccount } from "@sitehealth/domain/Middleware"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { AccessRepo, type ListLookup, type ProjectLookup, RequestAccess, RequestProject } from "../access/AccessRepo.ts"
import { listLookupOf } from "../access/ListAnswer.ts"
import { type AnswerKey, answerKeyOf } from "../access/StoredAnswers.ts"
import type { TokenRecord } from "../store/Records.ts"
import { hashSecret, isWellFormedSecret } from "../store/TokenSecret.ts"
import { acceptsGzip } from "./AcceptEncoding.ts"
import { operationFor } from "./Operation.ts"
import { CurrentRequestLog } from "./RequestLog.ts"

/**
 * What the one-statement lookup reads with the token for a request to an endpoint, beyond the token and its
 * account: decided once per endpoint from its annotations (the `Operation`'s permission and project, and the
 * `FastPath`: @sitehealth/domain/ApiOperation), not per request and never from its name.
 */
export interface LookupPlan {
  /**
   * `"list"`: the caller's page of projects with their kept entries (a `projectList` pre-read, access/ListAnswer.ts);
   * `"project"`: the project the path names; `"token"`: nothing more. Only where the permission check can let the
   * request through to a handler that needs it (dashboard-only endpoints never reach one; an endpoint without an
   * Operation is refused).
   */
  readonly reads: "list" | "project" | "token"
  /** With the project, today's stored health snapshots (a `health` pre-read). */
  readonly withHealth: boolean
  /** With the project, the stored answer under this key of the request's query (access/StoredAnswers.ts). */
  readonly answerKey: AnswerKey | null
}

/** The lookup plan of `endpoint`, from its annotations (lookupPlanFor caches it per endpoint). */
export const lookupPlanOf = (endpoint: HttpApiEndpoint.Top): LookupPlan => {
  const operation = operationFor(endpoint)
  const fastPath = fastPathOf(endpoint)
  const reachable = operation !== undefined && operation.permission !== null
  if (reachable && fastPath?.preRead === "projectList") return { reads: "list", withHealth: false, answerKey: null }
  if (reachable && operation.project) {
    return { reads: "project", withHealth: fastPath?.preRead === "health", answerKey: answerKeyOf(endpoint) }
  }
  return { reads: "token", withHealth: false, answerKey: null }
}

/**
 * Each endpoint's lookup plan, made once: for every endpoint of the contract when the module loads, and for any
 * other endpoint (a test's own API) the first time it is asked. A request costs one Map lookup.
 */
const plans = new Map<HttpApiEndpoint.Top, LookupPlan>(
  endpointsOf().map(({ endpoint }): [HttpApiEndpoint.Top, LookupPlan] => [endpoint, lookupPlanOf(endpoint)])
)
export const lookupPlanFor = (endpoint: HttpApiEndpoint.Top): LookupPlan => {
  let plan = plans.get(endpoint)
  if (plan === undefined) {
    plan = lookupPlanOf(endpoint)
    plans.set(endpoint, plan)
  }
  return plan
}

export type UnauthorizedReason = "missing_token" | "invalid_token" | "token_revoked" | "token_expired"

/** Why a token that was found does not authenticate at `nowMs`; null when it does. */
export const tokenRejection = (token: TokenRecord, nowMs: number): "token_revoked" | "token_expired" | null =>
  token.revokedAt !== null
    ? "token_revoked"
    : token.expiresAt !== null && token.expiresAt.getTime() <= nowMs
    ? "token_expired"
    : null

/**
 * The 401 reason for a Bearer secret, or null when it authenticates — the API's rules, for a route outside
 * the contract (/mcp) that only needs to know whether to let the caller in. `find` looks the token up by the
 * hex SHA-256 of its secret (the tokens repository's findBySecretHash).
 */
export const bearerRejection = (
  find: (secretSha256Hex: string) => Effect.Effect<{ readonly token: TokenRecord } | null>,
  secret: string
): Effect.Effect<Exclude<UnauthorizedReason, "missing_token"> | null> =>
  !isWellFormedSecret(secret)
    ? Effect.succeed("invalid_token" as const)
    : Effect.flatMap(find(hashSecret(secret)), (found) =>
      found === null
        ? Effect.succeed("invalid_token" as const)
        : Effect.map(Clock.currentTimeMillis, (nowMs) => tokenRejection(found.token, nowMs)))

const principalOf = (token: TokenRecord): Principal => ({
  tokenId: token.id,
  accountId: token.accountId,
  projects: token.projects,
  permissions: token.permissions,
  expiresAt: token.expiresAt
})

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const access = yield* AccessRepo
    return Authentication.of({
      // Direct style (no generator): this runs on every request, and each `yield*` would be a step of its own.
      bearer: (httpEffect, { credential, endpoint }) => {
        const secret = Redacted.value(credential)
        if (secret === "") return Effect.fail(Unauthorized.of("missing_token"))
        if (!isWellFormedSecret(secret)) return Effect.fail(Unauthorized.of("invalid_token"))
        const plan = lookupPlanFor(endpoint)
        return Effect.withFiber<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | Unauthorized>(
          (fiber) => {
            const nowMs = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            let lookup: ProjectLookup | null = null
            let list: ListLookup | null = null
            if (plan.reads === "list") {
              // GET /projects: the caller's page with each project's kept entry (access/ListAnswer.ts).
              list = listLookupOf(Context.getUnsafe(fiber.context, HttpServerRequest.ParsedSearchParams))
            } else if (plan.reads === "project") {
              const id = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).params.id
              if (id !== undefined) {
                const answerKey = plan.answerKey === null
                  ? null
                  : plan.answerKey(Context.getUnsafe(fiber.context, HttpServerRequest.ParsedSearchParams))
                lookup = {
                  id,
                  withHealth: plan.withHealth,
                  answerKey,
                  gzip: answerKey !== null &&
                    acceptsGzip(
                      Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest).headers["accept-encoding"]
                    )
                }
              }
            }
            return Effect.flatMap(
              access.lookup(hashSecret(secret), lookup, new Date(nowMs), list ?? undefined),
              (
                found
              ): Effect.Effect<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | Unauthorized> => {
                if (found === null) return Effect.fail(Unauthorized.of("invalid_token"))
                // For the request's log line (http/RequestLog.ts): ids only, and the project only if it is the
                // account's.
                const log = fiber.getRef(CurrentRequestLog)
                log.tokenId = found.token.id
                log.projectId = found.project?.project?.id ?? null
                const rejection = tokenRejection(found.token, nowMs)
                if (rejection !== null) {
                  return Effect.fail(Unauthorized.of(rejection))
                }
                return httpEffect.pipe(
                  Effect.provideService(CurrentPrincipal, principalOf(found.token)),
                  Effect.provideService(CurrentAccount, found.account),
                  Effect.provideService(RequestAccess, found),
                  Effect.provideService(RequestProject, found.project)
                )
              }
            )
          }
        )
      }
    })
  })
)

/**
 * Tests: every non-empty Bearer credential is the given principal, of an account with the given entitlement
 * (a live trial unless said otherwise); nothing is looked up, so handlers read their project themselves.
 */
export const AuthenticationTest = (
  principal: Principal,
  account: AccountEntitlement = { trialEndsAt: new Date(8.64e15), subscriptionStatus: "none", subscriptionUntil: null }
) =>
  Layer.succeed(
    Authentication,
    Authentication.of({
      bearer: (httpEffect, { credential }) =>
        Redacted.value(credential) === ""
          ? Effect.fail(Unauthorized.of("missing_token"))
          : httpEffect.pipe(
            Effect.provideService(CurrentPrincipal, principal),
            Effect.provideService(CurrentAccount, account)
          )
    })
  )
