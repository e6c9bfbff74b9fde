/**
 * What every provider connector is: how to check credentials with one cheap call, and how to run a sync —
 * fetch from the provider's public HTTP API, then write through the repositories the metrics engine reads
 * (TrafficRepo, PaymentsRepo, SearchRepo), which upsert by the provider's ids and bump data_version.
 *
 * Rules every connector keeps:
 * - A run that fails or is killed half-way leaves what the reports read as it was, and running it again is
 *   harmless. Either fetch everything FIRST and write it in ONE repository write (one transaction: Plausible,
 *   Search Console), or — an account too big to hold (Stripe) — commit bounded batches keyed by provider ids
 *   with the run's progress, and switch the derived rows and data_version in one final step
 *   (PaymentsRepo.commit / rollUp): the next attempt resumes from the progress.
 * - Idempotent: the same run twice changes nothing (upserts keyed by provider ids).
 * - Never log, return or put in an error message a credential.
 * - All HTTP through ProviderHttp (timeouts, Retry-After on 429/503, backoff with jitter otherwise), and
 *   every payload decoded by a schema (Decode.ts): a mismatch fails the run, naming the record and field.
 */
import * as Effect from "effect/Effect"
import { readProviderUrl } from "../platform/ProviderUrls.ts"
import type { ProviderError, ProviderHttpShape } from "./ProviderHttp.ts"

export type ProviderId = "stripe" | "plausible" | "google-search-console"
export type ProviderKind = "payments" | "analytics" | "search"

/** Decrypted credentials: a flat JSON object of strings, as in the operator's credentials file. */
export type Credentials = Readonly<Record<string, string>>

export interface ConnectionContext {
  readonly baseUrl: string
  readonly credentials: Credentials
  readonly http: ProviderHttpShape
}

export interface SyncContext extends ConnectionContext {
  readonly projectId: string
  /** The project's IANA time zone: provider days are asked for and stored as local days. */
  readonly timezone: string
  /** The project's reporting currency. */
  readonly currency: string
  readonly now: Date
  readonly mode: "incremental" | "full"
  /** What the last successful run of this integration returned as `state` (null on the first run or a full sync). */
  readonly state: unknown
}

export interface SyncOutcome {
  /** What was fetched and written, by kind, e.g. { customers: 120, subscriptions: 130, invoices: 900 }. */
  readonly counts: Readonly<Record<string, number>>
  /** Saved with the run and handed to the next incremental run (a cursor, the last day fetched…). */
  readonly state: unknown
}

export interface Connector<R = never> {
  readonly provider: ProviderId
  readonly kind: ProviderKind
  /** The provider's public API base URL. */
  readonly defaultBaseUrl: string
  /** The environment variable that overrides it (STRIPE_API_BASE, PLAUSIBLE_API_BASE, GSC_API_BASE). */
  readonly baseUrlEnv: string | null
  /** Keys the credentials JSON must have (with non-empty string values). */
  readonly credentialFields: ReadonlyArray<string>
  /** One cheap call that proves the credentials work; fails with a ProviderError that says what is wrong. */
  readonly validate: (ctx: ConnectionContext) => Effect.Effect<void, ProviderError>
  readonly sync: (ctx: SyncContext) => Effect.Effect<SyncOutcome, ProviderError, R>
}

/**
 * Per integration override > the connector's variable (read through Config: ProviderUrls.ts) > the provider's
 * default. Fails with the sentence naming the variable when it is not an http(s) URL.
 */
export const resolveBaseUrl = (
  connector: Pick<Connector<unknown>, "baseUrlEnv" | "defaultBaseUrl">,
  override: string | null
): Effect.Effect<string, string> =>
  Effect.map(
    override !== null || connector.baseUrlEnv === null
      ? Effect.succeed(override)
      : readProviderUrl(connector.baseUrlEnv),
    (url) => (url ?? connector.defaultBaseUrl).replace(/\/+$/, "")
  )
