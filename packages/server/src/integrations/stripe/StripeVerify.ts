/**
 * The dashboard's live check of a Stripe key before it is stored: the key's shape (`rk_…` restricted or
 * `sk_…` secret, live or test), then one `limit=1` list call per object the sync reads — Stripe answers 403
 * to a restricted key lacking a resource's read permission, so every missing permission is named at once.
 */
import { STRIPE_READ_PERMISSIONS } from "@sitehealth/domain/DashboardConnections"
import * as Effect from "effect/Effect"
import type { ConnectionContext } from "../Connector.ts"
import type { ProviderError } from "../ProviderHttp.ts"
import { isUnavailable, unavailable, VerifyFailure } from "../Verify.ts"
import { getPage } from "./StripeApi.ts"

const KEY_SHAPE = /^(rk|sk)_(live|test)_[A-Za-z0-9]{8,255}$/

/** Words for a list, "a, b and c". */
const listed = (items: ReadonlyArray<string>) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`

/** Null when the text looks like a Stripe API key, else what is wrong with it (never echoing it). */
export const stripeKeyProblem = (key: string): string | null => {
  const k = key.trim()
  if (k.length === 0) return "Enter a Stripe restricted key (it starts with rk_live_ or rk_test_)."
  if (k.startsWith("pk_")) {
    return "That is a publishable key (pk_…); Stripe needs a restricted key (rk_…) with read access."
  }
  if (k.startsWith("whsec_")) {
    return "That is a webhook signing secret; Stripe needs a restricted key (rk_…) with read access."
  }
  if (!KEY_SHAPE.test(k)) {
    return "That does not look like a Stripe key: a restricted key starts with rk_live_ or rk_test_."
  }
  return null
}

export const verifyStripeKey: (ctx: ConnectionContext) => Effect.Effect<void, VerifyFailure> = Effect.fn(
  "StripeVerify.verifyStripeKey"
)(function*(ctx: ConnectionContext) {
  const problem = stripeKeyProblem(ctx.credentials.secret_key ?? "")
  if (problem !== null) {
    return yield* Effect.fail(new VerifyFailure({ kind: "rejected", message: problem, missing: [] }))
  }
  const outcomes = yield* Effect.forEach(
    STRIPE_READ_PERMISSIONS,
    (p) => Effect.result(getPage(ctx, `/v1/${p.resource}`, [["limit", "1"]])).pipe(Effect.map((r) => ({ p, r }))),
    { concurrency: STRIPE_READ_PERMISSIONS.length }
  )
  const failures = outcomes.flatMap(({ p, r }) => (r._tag === "Failure" ? [{ p, e: r.failure as ProviderError }] : []))
  if (failures.length === 0) return
  const down = failures.find(({ e }) => isUnavailable(e))
  if (down !== undefined) return yield* Effect.fail(unavailable("Stripe", down.e))
  if (failures.some(({ e }) => e.kind === "unauthorized")) {
    const message = "Stripe rejected this key: it is wrong, revoked or expired. " +
      "Create a restricted key in Stripe and paste it again."
    return yield* Effect.fail(new VerifyFailure({ kind: "rejected", message, missing: [] }))
  }
  const missing = failures.filter(({ e }) => e.kind === "forbidden").map(({ p }) => p.resource)
  if (missing.length > 0) {
    const message = `Stripe rejected this key: it lacks read access to ${listed(missing)}. ` +
      `Edit the restricted key in Stripe to allow Read on ${listed(missing)}, then try again.`
    return yield* Effect.fail(new VerifyFailure({ kind: "missing_permissions", message, missing }))
  }
  const first = failures[0]!.e
  const message = `Stripe refused the check (${first.status === null ? first.kind : `HTTP ${first.status}`}); ` +
    "nothing was stored. Check the key and try again."
  return yield* Effect.fail(new VerifyFailure({ kind: "rejected", message, missing: [] }))
})
