/**
 * Safe retries of a tool call's POST. Each POST gets one `Idempotency-Key` for all its attempts, so the API
 * acts at most once however many are sent: when the server could not be reached, answered 5xx, or answered
 * 409 `idempotency_request_in_progress` (an earlier attempt whose answer was lost is still running), the
 * same request is sent again with the same key — up to 3 more times, after 250 ms, 500 ms, 1 s (1 s for a
 * 409: the API's Retry-After). A retried POST that had in fact been done gets the stored answer back.
 * Other requests go once, as before: a read is cheap to ask again, a DELETE answers 404 the second time.
 * The waits are the shared retry schedule's (@sitehealth/domain/RetryAfter), without jitter.
 */
import { after, backoff, type RetryAdvice, retrySchedule, stop } from "@sitehealth/domain/RetryAfter"
import * as Effect from "effect/Effect"
import type { ApiAnswer, ApiRequest, Send } from "./Dispatch.ts"

export interface RetryPolicy {
  readonly attempts: number
  readonly baseDelayMs: number
  /** The wait before retrying a 409 in progress (the API answers it with Retry-After: 1). */
  readonly inProgressDelayMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 250, inProgressDelayMs: 1000 }

const errorType = (answer: ApiAnswer): unknown => {
  const body = answer.body as { error?: { type?: unknown } } | null
  return typeof body === "object" && body !== null ? body.error?.type : undefined
}

/** Whether an answer is worth sending again, and after what wait. */
export const retryAdvice = (answer: ApiAnswer, policy: RetryPolicy): RetryAdvice => {
  if (answer.status === 409 && errorType(answer) === "idempotency_request_in_progress") {
    return after(policy.inProgressDelayMs)
  }
  // 5xx from the API, and the `unreachable` answer (503) a Send gives when the server cannot be reached.
  if (answer.status >= 500) return backoff
  return stop
}

export const withRetries = (send: Send, policy: RetryPolicy = DEFAULT_RETRY): Send => (request: ApiRequest) => {
  if (request.method !== "POST") return send(request)
  const keyed: ApiRequest = request.idempotencyKey === undefined
    ? { ...request, idempotencyKey: crypto.randomUUID() }
    : request
  const advise = (answer: ApiAnswer) => retryAdvice(answer, policy)
  const schedule = retrySchedule<ApiAnswer>(
    { retries: policy.attempts, backoffBaseMs: policy.baseDelayMs, maxWaitMs: Number.POSITIVE_INFINITY, jitter: false },
    advise
  )
  // An answer worth sending again travels as a failure so the schedule sees it; the last one stands.
  return Effect.runPromise(
    Effect.promise(() => send(keyed)).pipe(
      Effect.flatMap((answer) => (advise(answer)._tag === "Stop" ? Effect.succeed(answer) : Effect.fail(answer))),
      Effect.retry(schedule),
      Effect.catch((answer: ApiAnswer) => Effect.succeed(answer))
    )
  )
}
