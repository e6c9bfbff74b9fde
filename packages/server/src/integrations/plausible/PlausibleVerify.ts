/**
 * The dashboard's live check of Plausible credentials before they are stored: the fields' shape, then the
 * connector's own cheapest query (yesterday's visitors) against the Stats API. Plausible answers 401 both
 * for a wrong key and for a site the key cannot read, so the message names both.
 */
import * as Effect from "effect/Effect"
import type { ConnectionContext } from "../Connector.ts"
import { isUnavailable, unavailable, VerifyFailure } from "../Verify.ts"
import { plausibleConnector } from "./PlausibleConnector.ts"

/** A Plausible site id is the site's domain (optionally with a path segment), without scheme. */
const SITE_ID = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+(?:\/[^\s/]+)?$/i

/** Null when both fields look right, else what is wrong (never echoing the key). */
export const plausibleInputProblem = (apiKey: string, siteId: string): string | null => {
  if (apiKey.trim().length === 0) return "Enter a Plausible Stats API key (Plausible → Account settings → API keys)."
  if (/\s/.test(apiKey.trim())) return "The Plausible API key cannot contain spaces; paste it again."
  // It goes in an Authorization header: only visible ASCII can (anything else fails before the call is sent).
  if (!/^[\x21-\x7e]+$/.test(apiKey.trim())) {
    return "The Plausible API key has characters no key has; paste it again from Plausible."
  }
  if (siteId.trim().length === 0) {
    return "Enter the site id: the site's domain as it appears in Plausible, e.g. example.com."
  }
  if (/^https?:\/\//i.test(siteId.trim())) return "The site id is the domain without https://, e.g. example.com."
  if (!SITE_ID.test(siteId.trim())) {
    return "The site id must be the site's domain as it appears in Plausible, e.g. example.com."
  }
  return null
}

export const verifyPlausible = (ctx: ConnectionContext): Effect.Effect<void, VerifyFailure> =>
  Effect.gen(function*() {
    const problem = plausibleInputProblem(ctx.credentials.api_key ?? "", ctx.credentials.site_id ?? "")
    if (problem !== null) {
      return yield* Effect.fail(new VerifyFailure({ kind: "rejected", message: problem, missing: [] }))
    }
    const site = ctx.credentials.site_id ?? ""
    yield* plausibleConnector.validate(ctx).pipe(
      Effect.mapError((e) =>
        isUnavailable(e)
          ? unavailable("Plausible", e)
          : e.kind === "not_found"
          ? new VerifyFailure({
            kind: "not_found",
            message:
              `Plausible has no site "${site}": use the domain exactly as it appears in your Plausible dashboard.`,
            missing: []
          })
          : e.kind === "unauthorized" || e.kind === "forbidden"
          ? new VerifyFailure({
            kind: "rejected",
            message:
              `Plausible rejected this API key for "${site}": the key is wrong or was revoked, or its account cannot ` +
              `read that site. Check the key and the site id, then try again.`,
            missing: []
          })
          : new VerifyFailure({
            kind: "rejected",
            message: `Plausible refused the check (HTTP ${e.status ?? "?"}): check the API key and the site id.`,
            missing: []
          })
      )
    )
  })
