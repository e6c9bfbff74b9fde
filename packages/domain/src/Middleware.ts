/**
 * The access checks of /api/v1 after authentication, one middleware per concern, so that each has its own
 * server layer and a test can swap any one of them alone:
 *
 *   Authentication (401, domain/Authentication.ts) → RateLimit (429, X-RateLimit-* headers) →
 *   Entitlement (402) → ProjectAccess (403 permission) → TokenUsage (last_used_at) → [Idempotency] → handler
 *
 * The framework wraps an endpoint in its middlewares in the order they were added, the first added
 * innermost, so SiteHealthApi adds them in the reverse of the order above. The type of each middleware says
 * what it reads from the ones outside it (`requires`), and Authentication provides all of it from its one
 * database lookup: the later checks add no query.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import type { CurrentAccount, CurrentPrincipal } from "./Authentication.ts"

import { Forbidden, RateLimited, TrialExpired } from "./Errors.ts"

/** Provided by Authentication (Authentication.ts), with the principal. */
export { type AccountEntitlement, CurrentAccount } from "./Authentication.ts"

/**
 * True only for a request the MCP server at `/mcp` dispatches in-process to list or discover (the caller's
 * `GET /tokens/current` for `tools/list`, `GET /projects` for `resources/list`) — never for one from the
 * network, which cannot set it. RateLimit counts none of those: protocol listing is not an API call.
 */
export const RateLimitExempt = Context.Reference<boolean>("sitehealth/RateLimitExempt", { defaultValue: () => false })

/** Counts every authenticated request against the token's budget; sets the X-RateLimit-* headers; 429. */
export class RateLimit extends HttpApiMiddleware.Service<RateLimit, { requires: CurrentPrincipal }>()(
  "sitehealth/RateLimit",
  { error: [RateLimited] as const }
) {}

/** 402 `trial_expired` unless the account's trial or subscription is live, on every endpoint. */
export class Entitlement extends HttpApiMiddleware.Service<Entitlement, { requires: CurrentAccount }>()(
  "sitehealth/Entitlement",
  { error: [TrialExpired] as const }
) {}

/**
 * 403 unless the token holds the permission the endpoint's operation metadata names (deny by default: an
 * endpoint without metadata is refused). The project's own scope (404 another account's, 403 out of the
 * token's list) is judged after request decoding, as docs/api.md §2 orders it, from the project this
 * request's lookup already read (server http/ProjectPolicy.ts).
 */
export class ProjectAccess extends HttpApiMiddleware.Service<ProjectAccess, { requires: CurrentPrincipal }>()(
  "sitehealth/ProjectAccess",
  { error: [Forbidden] as const }
) {}

/** Records that the token was used (last_used_at), once the request has passed every check. No errors. */
export class TokenUsage extends HttpApiMiddleware.Service<TokenUsage, { requires: CurrentPrincipal }>()(
  "sitehealth/TokenUsage"
) {}
