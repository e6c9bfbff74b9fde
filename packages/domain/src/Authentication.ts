/**
 * The middleware tags of the contract. `Authentication` is the one security middleware: it authenticates
 * the Bearer token (401) and provides the `Principal` and the account's entitlement (`CurrentAccount`) to
 * the checks that follow it, each its own middleware (Middleware.ts: rate limit, entitlement, permission).
 * `RequestErrors` turns the framework's own failures (undecodable requests, oversized bodies, an unreachable
 * database, defects) into enveloped errors. `Idempotency` (on the POST endpoints only) honours an
 * `Idempotency-Key` header: it replays the stored response of a request already done with the same key.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as Schema from "effect/Schema"
import type { AccountId, ProjectId, TokenId } from "./Common.ts"
import {
  BadRequest,
  Conflict,
  IdempotencyKeyReused,
  InternalError,
  PayloadTooLarge,
  Unauthorized,
  Unavailable
} from "./Errors.ts"
import type { Permission } from "./Permissions.ts"

export interface Principal {
  readonly tokenId: TokenId
  readonly accountId: AccountId
  /** null = every project of the account, present and future. */
  readonly projects: ReadonlyArray<ProjectId> | null
  readonly permissions: ReadonlyArray<Permission>
  readonly expiresAt: Date | null
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("sitehealth/CurrentPrincipal") {}

/** What the entitlement check needs of the caller's account, read with the token. */
export interface AccountEntitlement {
  readonly trialEndsAt: Date
  readonly subscriptionStatus: "none" | "active" | "past_due" | "canceled"
  /** null with an active subscription: no end date. */
  readonly subscriptionUntil: Date | null
}

export class CurrentAccount
  extends Context.Service<CurrentAccount, AccountEntitlement>()("sitehealth/CurrentAccount")
{}

export class Authentication extends HttpApiMiddleware.Service<
  Authentication,
  { provides: CurrentPrincipal | CurrentAccount }
>()(
  "sitehealth/Authentication",
  {
    security: { bearer: HttpApiSecurity.bearer },
    error: [Unauthorized] as const,
    requiredForClient: true
  }
) {}

export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("sitehealth/RequestErrors", {
  error: [BadRequest, PayloadTooLarge, InternalError, Unavailable] as const
}) {}

export const TokenSecretSchema = Schema.String

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key"
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed"
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

/** 1–255 printable ASCII characters (space to tilde), as the API accepts them. */
export const isValidIdempotencyKey = (key: string): boolean =>
  key.length >= 1 && key.length <= IDEMPOTENCY_KEY_MAX_LENGTH && /^[\x20-\x7e]+$/.test(key)

/**
 * Idempotency for the POST endpoints. Declared on each POST endpoint, so it runs inside Authentication
 * (the API-level middleware wraps endpoint-level ones): it sees the authenticated token, and nothing is
 * stored for a request that failed authentication, rate limit, entitlement or permission.
 * 400 `invalid_idempotency_key`, 409 `idempotency_request_in_progress` (with Retry-After), 422
 * `idempotency_key_reused`.
 */
export class Idempotency extends HttpApiMiddleware.Service<Idempotency, { requires: CurrentPrincipal }>()(
  "sitehealth/Idempotency",
  { error: [BadRequest, Conflict, IdempotencyKeyReused] as const }
) {}
