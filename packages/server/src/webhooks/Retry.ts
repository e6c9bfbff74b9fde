/**
 * When a failed delivery is tried again (docs/alerts.md, "Retries"): exponential backoff with jitter — 5 s after
 * the first attempt, then ×4 each time (20 s, 80 s, 5 min, 21 min, 85 min, 5.7 h), capped at 12 h — so the first
 * two retries come within two minutes and the retries go on for 3 days after the first attempt, when the delivery
 * is given up. An endpoint whose deliveries have all failed for 3 days is disabled. Pure: the worker passes the
 * clock and the random number.
 */
export const FIRST_RETRY_MS = 5_000
export const BACKOFF_FACTOR = 4
export const MAX_RETRY_DELAY_MS = 12 * 3_600_000
export const GIVE_UP_AFTER_MS = 3 * 24 * 3_600_000
/** Each delay is moved by up to ±20 %, so endpoints that fail together are not retried in step. */
export const JITTER = 0.2

/** The delay before retry number `retry` (1 = the first retry), with `random` ∈ [0, 1) for the jitter. */
export const retryDelayMs = (retry: number, random: number): number => {
  const base = Math.min(FIRST_RETRY_MS * BACKOFF_FACTOR ** Math.max(0, retry - 1), MAX_RETRY_DELAY_MS)
  return Math.round(base * (1 - JITTER + 2 * JITTER * random))
}

export type NextStep =
  | { readonly _tag: "retry"; readonly at: Date }
  | { readonly _tag: "giveUp" }

/**
 * After a failed attempt: `attempts` made so far (this one included), the first at `firstAttemptAt`. Retried
 * while the retry falls within 3 days of the first attempt; given up after.
 */
export const nextStep = (attempts: number, firstAttemptAt: Date, now: Date, random: number): NextStep => {
  const at = now.getTime() + retryDelayMs(attempts, random)
  return at - firstAttemptAt.getTime() > GIVE_UP_AFTER_MS ? { _tag: "giveUp" } : { _tag: "retry", at: new Date(at) }
}

/**
 * Whether an endpoint failing since `failingSince` is disabled now: it has failed for 3 days, or a delivery is given
 * up (`givenUpFrom`: that delivery's first attempt) and every attempt since that delivery's first one has failed.
 */
export const shouldDisable = (failingSince: Date | null, now: Date, givenUpFrom: Date | null = null): boolean =>
  failingSince !== null &&
  (now.getTime() - failingSince.getTime() >= GIVE_UP_AFTER_MS ||
    (givenUpFrom !== null && failingSince.getTime() <= givenUpFrom.getTime()))
