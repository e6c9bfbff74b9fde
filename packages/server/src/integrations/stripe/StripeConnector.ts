/**
 * The Stripe connector: payments → revenue and churn. docs/integrations-stripe.md has the details.
 *
 * A run is either a FULL listing of the account (StripeFullListing.ts: the first sync, a requested full resync,
 * the daily reconciliation, or an events cursor older than Stripe's 30-day event retention) or an INCREMENTAL
 * run that reads only what changed from the events (StripeEvents.ts). Both commit bounded batches
 * (PaymentsRepo.commit) and roll up once at the end; what they share is in StripeSync.ts.
 */
import * as Effect from "effect/Effect"
import { PaymentsRepo } from "../../payments/PaymentsRepo.ts"
import type { ConnectionContext, Connector, SyncContext, SyncOutcome } from "../Connector.ts"
import { ProviderError } from "../ProviderHttp.ts"
import { reconciliationDue } from "../Schedule.ts"
import { getPage } from "./StripeApi.ts"
import { EVENT_TYPES, eventsSync } from "./StripeEvents.ts"
import { fullListing, readProgress } from "./StripeFullListing.ts"
import {
  BATCH_PAGES,
  DERIVE_BATCH,
  PROVIDER,
  readState,
  type StripeSyncOptions,
  StripeSyncState
} from "./StripeSync.ts"

export { BATCH_PAGES, DERIVE_BATCH, EVENT_TYPES, StripeSyncState }
export type { StripeSyncOptions }

/** Stripe keeps events 30 days; a cursor older than this (with an hour to spare) means a full listing. */
export const EVENTS_RETENTION_SECONDS = 30 * 86_400 - 3_600
/** A saved progress older than this is dropped and the listing starts over (its events cursor would be stale). */
const PROGRESS_MAX_AGE_SECONDS = 7 * 86_400

const REJECTED = "Stripe rejected the key (401): it is wrong, revoked or expired"
const FORBIDDEN = "The Stripe key lacks a read permission (403): a restricted key needs read access to customers, " +
  "subscriptions, invoices, charges, refunds and events"

/**
 * The cheapest call that needs the permission a sync needs most (read customers); 401 says "the key was
 * rejected", 403 that a restricted key lacks a permission.
 */
const validate = Effect.fn("StripeConnector.validate")(function*(ctx: ConnectionContext) {
  yield* getPage(ctx, "/v1/customers", [["limit", "1"]]).pipe(
    Effect.mapError((e) =>
      e.kind === "unauthorized"
        ? new ProviderError({ kind: e.kind, status: e.status, message: REJECTED })
        : e.kind === "forbidden"
        ? new ProviderError({ kind: e.kind, status: e.status, message: FORBIDDEN })
        : e
    )
  )
})

/** Why this run lists everything, or null when it reads events. */
export const fullListingReason = (ctx: SyncContext, state: StripeSyncState | null): string | null => {
  if (ctx.mode === "full") return "full sync requested"
  if (state === null) return "first sync"
  if (state.eventsCursor === null) return "the key cannot read events"
  const now = Math.floor(ctx.now.getTime() / 1000)
  if (now - state.eventsCursor > EVENTS_RETENTION_SECONDS) return "events cursor older than Stripe's 30-day retention"
  if (reconciliationDue(new Date(state.reconciledAt * 1000), ctx.now)) return "daily reconciliation"
  return null
}

const syncWith = (options: StripeSyncOptions) =>
  Effect.fn("StripeConnector.sync")(
    function*(ctx: SyncContext): Effect.fn.Return<SyncOutcome, ProviderError, PaymentsRepo> {
      const repo = yield* PaymentsRepo
      // A listing that died midway continues from its last committed batch, whatever this run was asked for.
      const saved = readProgress(yield* repo.progress(ctx.projectId, PROVIDER))
      const now = Math.floor(ctx.now.getTime() / 1000)
      if (saved !== null && now - saved.startedAt <= PROGRESS_MAX_AGE_SECONDS) {
        const at = `${saved.phase} (list ${saved.list}, after ${saved.after ?? "the start"})`
        yield* Effect.logInfo(`stripe: resuming the full listing at ${at}`)
        return yield* fullListing(ctx, saved, options)
      }
      const state = readState(ctx.state)
      const reason = fullListingReason(ctx, state)
      if (reason !== null || state === null || state.eventsCursor === null) {
        yield* Effect.logInfo(`stripe: full listing (${reason ?? "no events cursor"})`)
        return yield* fullListing(ctx, null, options)
      }
      return yield* eventsSync(ctx, { ...state, eventsCursor: state.eventsCursor }, options)
    }
  )

export const makeStripeConnector = (options: StripeSyncOptions = {}): Connector<PaymentsRepo> => ({
  provider: "stripe",
  kind: "payments",
  defaultBaseUrl: "https://api.stripe.com",
  baseUrlEnv: "STRIPE_API_BASE",
  credentialFields: ["secret_key"],
  validate,
  sync: syncWith(options)
})

export const stripeConnector: Connector<PaymentsRepo> = makeStripeConnector()
