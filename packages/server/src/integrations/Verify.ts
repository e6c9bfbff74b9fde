/**
 * What the dashboard's connect check says when a provider refuses credentials, in words a website owner
 * understands: `rejected` (wrong, revoked, expired), `missing_permissions` (a restricted key that cannot read
 * everything a sync reads; `missing` lists what), `not_found` (no such site or property), or `unavailable`
 * (the provider could not be reached or answered an error of its own — try again). Never a credential.
 */
import * as Schema from "effect/Schema"
import type { ProviderError } from "./ProviderHttp.ts"

export class VerifyFailure extends Schema.TaggedError<VerifyFailure>()("VerifyFailure", {
  kind: Schema.Literals(["rejected", "missing_permissions", "not_found", "unavailable"]),
  message: Schema.String,
  missing: Schema.Array(Schema.String)
}) {}

const UNAVAILABLE: ReadonlySet<ProviderError["kind"]> = new Set([
  "rate_limited",
  "server",
  "timeout",
  "network",
  "malformed"
])

/** A transport-level failure of the check: the provider is down, slow, rate limiting, or not its API. */
export const unavailable = (name: string, e: ProviderError): VerifyFailure =>
  new VerifyFailure({
    kind: "unavailable",
    message: e.kind === "timeout"
      ? `${name} did not answer in time; nothing was stored. Try again in a minute.`
      : e.kind === "rate_limited"
      ? `${name} is rate limiting requests right now; nothing was stored. Try again in a minute.`
      : e.kind === "malformed"
      ? `${name} answered with something that is not its API; nothing was stored. Try again later.`
      : `${name} could not be reached or had an error of its own (${
        e.status === null ? e.kind : `HTTP ${e.status}`
      }); nothing was stored. Try again in a minute.`,
    missing: []
  })

export const isUnavailable = (e: ProviderError): boolean => UNAVAILABLE.has(e.kind)
