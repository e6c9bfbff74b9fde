/**
 * The middleware tags of the contract. `Authentication` is the one security middleware: it authenticates
 * the Bearer token, counts the request against the token's rate limit, checks the account's entitlement
 * and the endpoint's permission (from the operation table), in that order, then provides the `Principal`.
 * `RequestErrors` turns the framework's own failures (undecodable requests, oversized bodies, an unreachable
 * database, defects) into enveloped errors.
 */
import { Context, Schema } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import {
  BadRequestWire,
  ForbiddenWire,
  InternalErrorWire,
  PayloadTooLargeWire,
  RateLimitedWire,
  TrialExpiredWire,
  UnauthorizedWire,
  UnavailableWire
} from "./Errors.ts"
import type { Permission } from "./Permissions.ts"

export interface Principal {
  readonly tokenId: string
  readonly accountId: string
  /** null = every project of the account, present and future. */
  readonly projects: ReadonlyArray<string> | null
  readonly permissions: ReadonlyArray<Permission>
  readonly expiresAt: Date | null
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("sitehealth/CurrentPrincipal") {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "sitehealth/Authentication",
  {
    security: { bearer: HttpApiSecurity.bearer },
    error: [UnauthorizedWire, RateLimitedWire, TrialExpiredWire, ForbiddenWire] as const,
    requiredForClient: true
  }
) {}

export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("sitehealth/RequestErrors", {
  error: [BadRequestWire, PayloadTooLargeWire, InternalErrorWire, UnavailableWire] as const
}) {}

export const TokenSecretSchema = Schema.String
