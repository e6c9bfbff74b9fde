/**
 * When an integration syncs on its own (docs/operations.md "Sync schedule"):
 *
 * - **Cadence** — each provider's own, fitted to when its data changes: Stripe and Plausible hourly,
 *   Search Console daily (its figures land 2–3 days late and only once a day). An integration's own
 *   `sync_interval_minutes` wins; a provider without a cadence here (none today) takes
 *   SITEHEALTH_SYNC_INTERVAL_MINUTES.
 * - **Spreading** — an integration's runs fall on its own slots: `offset + k × interval` from the epoch,
 *   where `offset` is a hash of (project, provider) modulo the interval. A thousand hourly connections fire
 *   at a thousand different minutes of the hour instead of all at once, and each one always at the same
 *   minute (deterministic: every instance computes the same slot, nothing random is stored).
 * - **Back-off** — after `n` consecutive failed runs (each already retried twice within the run, see
 *   SyncRunner), the next one waits `interval × 2^(n−1)`, at most `max(24 h, 4 × interval)`; a success
 *   resets the count and returns the integration to its slots.
 *
 * - **Reconciliation** — a connector that syncs incrementally from a change feed (Stripe's events) still
 *   lists everything again once a day (`reconciliationDue`), at its first scheduled run 24 h or more after
 *   the last full listing: it catches what the feed missed, and falls at each integration's own slot.
 *
 * Pure functions: the queue (SyncQueue.schedule) and the runner (SyncRunner) call them.
 */

export const MINUTE_MS = 60_000

/** Minutes between scheduled syncs, by provider. */
export const PROVIDER_CADENCE_MINUTES: Readonly<Record<string, number>> = {
  stripe: 60,
  plausible: 60,
  "google-search-console": 24 * 60
}

/** The integration's interval: its own > its provider's cadence > the server's default. */
export const intervalMinutesOf = (provider: string, own: number | null | undefined, defaultMinutes: number): number =>
  own ?? PROVIDER_CADENCE_MINUTES[provider] ?? defaultMinutes

/** FNV-1a (32-bit) of `projectId/provider`: the same number on every instance and every start. */
const hash32 = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** Where in its interval the integration's slots fall, in ms: a whole minute in [0, interval). */
export const slotOffsetMs = (projectId: string, provider: string, intervalMinutes: number): number =>
  (hash32(`${projectId}/${provider}`) % intervalMinutes) * MINUTE_MS

/** The integration's first slot strictly after `after`. */
export const nextSlot = (projectId: string, provider: string, intervalMinutes: number, after: Date): Date => {
  const interval = intervalMinutes * MINUTE_MS
  const offset = slotOffsetMs(projectId, provider, intervalMinutes)
  const k = Math.floor((after.getTime() - offset) / interval) + 1
  return new Date(offset + k * interval)
}

/** Wait after the `failures`-th consecutive failed run (failures ≥ 1): interval × 2^(failures−1), capped. */
export const backoffMs = (intervalMinutes: number, failures: number): number => {
  const cap = Math.max(24 * 60, 4 * intervalMinutes) * MINUTE_MS
  return Math.min(intervalMinutes * MINUTE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 30), cap)
}

/** When the integration's next scheduled run is due after a run that ended at `now`. */
export const nextSyncAfter = (input: {
  readonly projectId: string
  readonly provider: string
  readonly intervalMinutes: number
  readonly now: Date
  /** Consecutive failed runs including this one; 0 after a success. */
  readonly failures: number
}): Date =>
  input.failures === 0
    ? nextSlot(input.projectId, input.provider, input.intervalMinutes, input.now)
    : new Date(input.now.getTime() + backoffMs(input.intervalMinutes, input.failures))

/** How often an incremental connector lists everything again (Stripe: docs/integrations-stripe.md). */
export const RECONCILE_EVERY_MS = 24 * 60 * MINUTE_MS

/** Whether a run at `now` must be a full listing, the last one having ended at `reconciledAt`. */
export const reconciliationDue = (reconciledAt: Date, now: Date): boolean =>
  now.getTime() - reconciledAt.getTime() >= RECONCILE_EVERY_MS
