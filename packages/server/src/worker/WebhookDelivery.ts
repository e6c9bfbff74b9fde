/**
 * The worker's webhook loop: take the due deliveries (WebhooksRepo.claim — a lease under FOR UPDATE SKIP LOCKED,
 * so two workers never send the same one, and one killed mid-delivery loses nothing: its lease runs out and
 * another worker sends it), send each once (webhooks/Deliver.ts) and record how they went, a round at once.
 * Secrets are sealed with the credentials' key (integrations/Crypto.ts).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { makeCipher, oldSecretKey, resolveSecretKey } from "../integrations/Crypto.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import { attemptClaimed, type DeliverOptions, openSecrets, type Sealer } from "../webhooks/Deliver.ts"
import { noticeDisabled } from "../webhooks/Disabled.ts"
import { emailSenderHere } from "../webhooks/Email.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"

/** A claimed delivery is the worker's for this long: more than an attempt's 15 s timeout. */
export const LEASE_MS = 60_000
export const BATCH = 50
/** An idle loop looks again this often: a new event waits this long at most before it is taken. */
const IDLE_POLL_MS = 250

/** Where messages link to: PUBLIC_URL, else the listener's address. */
export const dashboardUrlOf = (config: AppConfigShape) => config.publicUrl ?? `http://${config.host}:${config.port}`

const sealers = new WeakMap<AppConfigShape, Sealer>()

/** The sealer of signing secrets; throws a SecretKeyError when this server has no usable key. */
export const webhookSealer = (config: AppConfigShape): Sealer => {
  const known = sealers.get(config)
  if (known !== undefined) return known
  const cipher = makeCipher(resolveSecretKey(config), oldSecretKey(config))
  const sealer: Sealer = {
    seal: (secret) => cipher.encrypt({ whsec: secret }),
    open: (stored) =>
      cipher.decrypt(stored).pipe(
        Effect.map((credentials) => credentials.whsec ?? null),
        Effect.catch(() => Effect.succeed(null))
      )
  }
  sealers.set(config, sealer)
  return sealer
}

export interface DeliverDueOptions extends Partial<DeliverOptions> {
  readonly limit?: number
  /**
   * Sends at once at most; by default the whole round (`limit`): a round then ends within one attempt's timeout
   * (15 s), well inside the lease, and only then is it recorded (16 at a time, a round of 50 timeouts took the
   * whole lease).
   */
  readonly concurrency?: number
  /** Only these endpoints' deliveries (tests sharing a database). */
  readonly webhookIds?: ReadonlyArray<string>
}

/**
 * One round: claims up to `limit` due deliveries, opens each endpoint's secret once, sends them all at once and
 * records every outcome at once (WebhooksRepo.recordMany); answers how many were attempted. A worker killed before
 * the record loses nothing: the leases run out and the round's deliveries are sent again.
 */
export const deliverDue = (options: DeliverDueOptions = {}) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const config = yield* AppConfig
    const now = new Date(yield* Clock.currentTimeMillis)
    const claimed = yield* repo.claim(now, LEASE_MS, options.limit ?? BATCH, options.webhookIds)
    if (claimed.length === 0) return 0
    const secrets = yield* openSecrets(webhookSealer(config), claimed, now)
    const email = yield* emailSenderHere(dashboardUrlOf(config))
    const sendOptions: DeliverOptions = {
      allowPrivate: config.webhooksAllowPrivate,
      dashboardUrl: dashboardUrlOf(config),
      ...(email === undefined ? {} : { email }),
      ...options
    }
    const outcomes = yield* Effect.forEach(
      claimed,
      (c) => attemptClaimed(c, secrets.get(c.webhook.id) ?? null, sendOptions),
      { concurrency: options.concurrency ?? options.limit ?? BATCH }
    )
    yield* repo.recordMany(outcomes)
    // Each endpoint disabled by this round: logged, and its owners mailed once per failing streak.
    const disabled = new Map(outcomes.filter((o) => o.attempt.disable).map((o) => [o.webhookId, o.attempt.at]))
    const notice = noticeDisabled(repo, dashboardUrlOf(config))
    for (const c of claimed) {
      const at = disabled.get(c.webhook.id)
      if (at === undefined) continue
      disabled.delete(c.webhook.id)
      yield* notice(c.webhook, c.webhook.failingSince ?? c.delivery.firstAttemptAt ?? at)
    }
    return claimed.length
  })

/**
 * The loop: a full batch is followed by the next at once, a partial one by a pause of IDLE_POLL_MS. `webhookIds`
 * limits it to those endpoints (the bench, on a database other runs use).
 */
export const webhookLoop = (options: DeliverDueOptions = {}) =>
  Effect.gen(function*() {
    yield* Effect.logInfo("sitehealth: webhook delivery started")
    return yield* deliverDue(options).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(Effect.logError("webhook round failed", Cause.pretty(cause)), 0)
      ),
      Effect.flatMap((sent) => sent < (options.limit ?? BATCH) ? Effect.sleep(IDLE_POLL_MS) : Effect.void),
      Effect.forever,
      Effect.withTracerEnabled(false),
      Effect.annotateLogs("worker", "webhooks"),
      // Email destinations' mail (one transport for the loop's life; the log without SMTP_URL).
      Effect.provide(Mailer.layer)
    )
  })

export const runWebhookWorker = webhookLoop()
