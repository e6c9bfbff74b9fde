/**
 * One attempt of a claimed delivery (WebhooksRepo.claim): sign it with the endpoint's secret (and the previous one
 * during a rotation's overlap), send it (Send.ts, through the SSRF guard), and the outcome to record — done, retried
 * later (Retry.ts) or given up — with the endpoint's failing streak, disabling it after 3 days of failures. The
 * worker records a round's outcomes at once (WebhooksRepo.recordMany); the API's test send records its one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { AttemptOutcome, ClaimedDelivery, DeliveryRecord, WebhooksRepoShape } from "./Records.ts"
import { nextStep, shouldDisable } from "./Retry.ts"
import { type Attempt, send, type SendOptions } from "./Send.ts"
import { signedHeaders } from "./Signing.ts"
import { slackMessage } from "./Slack.ts"

/** Seals and opens signing secrets (AES-256-GCM under SITEHEALTH_SECRET_KEY, made where the key is read). */
export interface Sealer {
  readonly seal: (secret: string) => Uint8Array
  /** null when the stored bytes cannot be opened (the key changed). */
  readonly open: (stored: Uint8Array) => Effect.Effect<string | null>
}

export interface DeliverOptions extends SendOptions {
  /** [0, 1), for the retry's jitter. */
  readonly random?: () => number
  /** Where a Slack message links to (PUBLIC_URL). */
  readonly dashboardUrl?: string
  /** Sends an email destination's delivery (Email.ts); without it such a delivery fails, saying so. */
  readonly email?: (claimed: ClaimedDelivery) => Effect.Effect<Attempt>
}

const NO_MAILER: Attempt = {
  ok: false,
  status: null,
  latencyMs: 0,
  excerpt: "not sent: this process does not send email destinations (the worker does)"
}

/** The secrets a delivery is signed with at `now`: the current one, and the previous one while it overlaps. */
export const secretsAt = (sealer: Sealer, claimed: ClaimedDelivery, now: Date) =>
  Effect.gen(function*() {
    const w = claimed.webhook
    const current = yield* sealer.open(w.secretEnc)
    const previous = w.previousSecretEnc !== null && w.previousSecretExpiresAt !== null &&
        w.previousSecretExpiresAt > now
      ? yield* sealer.open(w.previousSecretEnc)
      : null
    return current === null ? null : previous === null ? [current] : [current, previous]
  })

/** The secrets of each endpoint, opened once (a round's, or one delivery's): null when they cannot be. */
export type OpenedSecrets = Map<string, ReadonlyArray<string> | null>

/** Opens the secrets of the claimed deliveries' endpoints at `now`, once per endpoint (an AES decryption each). */
export const openSecrets = (sealer: Sealer, claimed: ReadonlyArray<ClaimedDelivery>, now: Date) =>
  Effect.gen(function*() {
    const opened: OpenedSecrets = new Map()
    for (const c of claimed) {
      if (!opened.has(c.webhook.id)) opened.set(c.webhook.id, yield* secretsAt(sealer, c, now))
    }
    return opened
  })

const UNOPENED: Attempt = {
  ok: false,
  status: null,
  latencyMs: 0,
  excerpt: "not sent: the signing secret cannot be decrypted with this server's SITEHEALTH_SECRET_KEY"
}

/**
 * One attempt of a claimed delivery, signed with its endpoint's `secrets` (openSecrets), and what to record of it
 * (WebhooksRepo.record / recordMany): done, retried later or given up, and whether the endpoint is disabled.
 */
export const attemptClaimed = (
  claimed: ClaimedDelivery,
  secrets: ReadonlyArray<string> | null,
  options: DeliverOptions
) =>
  Effect.gen(function*() {
    const at = new Date(yield* Clock.currentTimeMillis)
    const attempt: Attempt = claimed.webhook.format === "email"
      ? yield* (options.email?.(claimed) ?? Effect.succeed(NO_MAILER))
      : secrets === null
      ? UNOPENED
      : yield* Effect.suspend(() => {
        // A Slack endpoint gets the Block Kit message, signed all the same (the headers cost nothing there).
        const body = claimed.webhook.format === "slack"
          ? slackMessage(claimed.body, options.dashboardUrl ?? "")
          : claimed.body
        const ts = Math.floor(at.getTime() / 1000)
        return send(claimed.webhook.url, signedHeaders(secrets, claimed.delivery.eventId, ts, body), body, options)
      })
    const attempts = claimed.delivery.attempts + 1
    const step = attempt.ok
      ? null
      : nextStep(attempts, claimed.delivery.firstAttemptAt ?? at, at, (options.random ?? Math.random)())
    const disable = !attempt.ok && shouldDisable(
      claimed.webhook.failingSince ?? at,
      at,
      step?._tag === "giveUp" ? (claimed.delivery.firstAttemptAt ?? at) : null
    )
    const outcome: AttemptOutcome = {
      deliveryId: claimed.delivery.id,
      webhookId: claimed.webhook.id,
      attempt: {
        ok: attempt.ok,
        status: attempt.status,
        latencyMs: attempt.latencyMs,
        excerpt: attempt.excerpt,
        at,
        next: attempt.ok ? "succeeded" : step?._tag === "retry" ? "pending" : "failed",
        nextAttemptAt: step?._tag === "retry" ? step.at : null,
        disable
      }
    }
    return outcome
  })

/** Logs an endpoint disabled by an attempt. */
export const logDisabled = (webhook: { readonly id: string; readonly projectId: string }) =>
  Effect.logWarning("webhook endpoint disabled after 3 days of failed deliveries").pipe(
    Effect.annotateLogs({ webhookId: webhook.id, projectId: webhook.projectId })
  )

/** One claimed delivery sent and recorded on its own (the API's test send). */
export const deliverClaimed = (repo: WebhooksRepoShape, sealer: Sealer, options: DeliverOptions) =>
  Effect.fn("Webhooks.deliver")(function*(claimed: ClaimedDelivery) {
    const now = new Date(yield* Clock.currentTimeMillis)
    const secrets = yield* secretsAt(sealer, claimed, now)
    const outcome = yield* attemptClaimed(claimed, secrets, options)
    const recorded: DeliveryRecord | null = yield* repo.record(outcome.deliveryId, outcome.attempt)
    if (outcome.attempt.disable) yield* logDisabled(claimed.webhook)
    return recorded
  })
