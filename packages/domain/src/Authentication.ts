/**
 * The middleware tags of the contract. `Authentication` is the one security middleware: it authenticates
 * the Bearer token (401) and provides the `Principal` and the account's entitlement (`CurrentAccount`) to
 * the checks that follow it, each its own middleware (Middleware.ts: rate limit, entitlement, permission).
 * `RequestErrors` turns the framework's own failures (undecodable requests, oversized bodies, an unreachable
 * database, defects) into enveloped errors. `Idempotency` (on the POST endpoints only) honours an
 * `Idempotency-Key` header: it replays the stored response of a request already done with the same key.
 */
import { Context, Schema, SchemaTransformation } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import {
  BadRequestWire,
  ConflictWire,
  InternalErrorWire,
  PayloadTooLargeWire,
  UnauthorizedWire,
  UnavailableWire
} from "./Errors.ts"
import type { CurrentAccount } from "./Middleware.ts"
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

export class Authentication extends HttpApiMiddleware.Service<
  Authentication,
  { provides: CurrentPrincipal | CurrentAccount }
>()(
  "sitehealth/Authentication",
  {
    security: { bearer: HttpApiSecurity.bearer },
    error: [UnauthorizedWire] as const,
    requiredForClient: true
  }
) {}

export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("sitehealth/RequestErrors", {
  error: [BadRequestWire, PayloadTooLargeWire, InternalErrorWire, UnavailableWire] as const
}) {}

export const TokenSecretSchema = Schema.String

/**
 * 422: an `Idempotency-Key` already used by this token for a different request (another body, endpoint or
 * path). Its own wire schema here rather than in Errors.ts only because this change owns this file; the
 * shape is the same envelope as every other error's.
 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  message: Schema.String,
  type: Schema.String
}) {
  static readonly of = () =>
    new IdempotencyKeyReused({
      message: "This Idempotency-Key was already used for a different request (another body or endpoint); use a new key",
      type: "idempotency_key_reused"
    })
}
export const IdempotencyKeyReusedWire = Schema.Struct({
  status: Schema.Literal("error"),
  error: Schema.Struct({ code: Schema.Literal(422), message: Schema.String, type: Schema.String })
}).pipe(
  Schema.decodeTo(
    IdempotencyKeyReused,
    SchemaTransformation.transform({
      decode: (wire: { readonly error: { readonly message: string; readonly type: string } }) => ({
        _tag: "IdempotencyKeyReused" as const,
        message: wire.error.message,
        type: wire.error.type
      }),
      encode: (error: { readonly message: string; readonly type: string }) => ({
        status: "error" as const,
        error: { code: 422 as const, message: error.message, type: error.type }
      })
    }) as any
  ),
  (schema) =>
    schema.annotate({
      identifier: "IdempotencyKeyReusedError",
      description: "The `Idempotency-Key` was already used by this token for a different request (`idempotency_key_reused`).",
      httpApiStatus: 422
    } as any)
) as unknown as Schema.Codec<
  IdempotencyKeyReused,
  { readonly status: "error"; readonly error: { readonly code: 422; readonly message: string; readonly type: string } }
>

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
  { error: [BadRequestWire, ConflictWire, IdempotencyKeyReusedWire] as const }
) {}
