/**
 * Handlers of the webhooks group: a website's endpoints (the signing secret answered once, stored sealed), a test
 * sent at once, the delivery log and redelivery. Deliveries themselves are the worker's (worker/WebhookDelivery.ts).
 */
import { SiteHealthApi, type WebhooksApi } from "@sitehealth/domain/Api"
import { DEFAULT_PAGE_SIZE } from "@sitehealth/domain/Common"
import { badRequest, Conflict, notFound, Unavailable } from "@sitehealth/domain/Errors"
import {
  type Delivery,
  SECRET_OVERLAP_HOURS,
  SLACK_DEFAULT_MIN_MONEY,
  type Webhook,
  type WebhookFormat
} from "@sitehealth/domain/Webhooks"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AccountMembers } from "../accounts/Members.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { AppConfig } from "../platform/Config.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { decodeCursor } from "../store/Cursor.ts"
import { randomBase62 } from "../store/Ids.ts"
import { isoOrNull } from "../store/Present.ts"
import { deliverClaimed } from "../webhooks/Deliver.ts"
import { emailSenderHere } from "../webhooks/Email.ts"
import { emit, eventBody } from "../webhooks/Outbox.ts"
import { newWebhookSecret } from "../webhooks/Signing.ts"
import { urlProblem } from "../webhooks/Targets.ts"
import { type DeliveryRecord, type WebhookRecord, WebhooksRepo } from "../webhooks/WebhooksRepo.ts"
import { dashboardUrlOf, LEASE_MS, webhookSealer } from "../worker/WebhookDelivery.ts"

type Request<Name extends keyof typeof WebhooksApi.endpoints> = (typeof WebhooksApi.endpoints)[Name]["~Request"]

/** At most this many endpoints per website. */
export const MAX_WEBHOOKS = 20

export const presentWebhook = (w: WebhookRecord): Webhook => ({
  id: w.id,
  projectId: w.projectId as Webhook["projectId"],
  url: w.url,
  format: w.format,
  description: w.description,
  events: [...w.events],
  minMoneyAtStake: w.minMoneyAtStake,
  minSeverity: w.minSeverity,
  cadence: w.cadence,
  status: w.enabled ? "enabled" : "disabled",
  disabledReason: w.disabledReason,
  failingSince: isoOrNull(w.failingSince),
  secretRotatedAt: isoOrNull(w.secretRotatedAt),
  previousSecretExpiresAt: isoOrNull(w.previousSecretExpiresAt),
  createdAt: w.createdAt.toISOString()
})

export const presentDelivery = (d: DeliveryRecord): Delivery => ({
  id: d.id,
  webhookId: d.webhookId,
  eventId: d.eventId,
  type: d.type,
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  latencyMs: d.latencyMs,
  responseExcerpt: d.responseExcerpt,
  createdAt: d.createdAt.toISOString(),
  lastAttemptAt: isoOrNull(d.lastAttemptAt),
  nextAttemptAt: d.status === "pending" ? isoOrNull(d.nextAttemptAt) : null
})

export const webhooksOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const webhooks = yield* WebhooksRepo
  const config = yield* AppConfig
  const requireProject = requireProjectWith(projects)

  const sealer = Effect.try({
    try: () => webhookSealer(config),
    catch: () =>
      new Unavailable({
        message: "This server cannot keep signing secrets: its SITEHEALTH_SECRET_KEY is missing or invalid (the " +
          "operator's log says which).",
        type: "secret_key_unavailable"
      })
  }).pipe(Effect.tapError(() => Effect.logError("webhooks: no secret key to seal signing secrets with")))

  /** https (SSRF-checked) for a webhook or Slack; mailto: one member of the website's account for email. */
  const checkUrl = (projectId: string, url: string, format: WebhookFormat) =>
    Effect.gen(function*() {
      const mailto = url.startsWith("mailto:")
      if (format !== "email") {
        const problem = mailto
          ? "must be https:// (mailto: is for format email)"
          : urlProblem(url, config.webhooksAllowPrivate)
        if (problem !== null) return yield* Effect.fail(badRequest(`url ${problem}`, "invalid_webhook_url"))
        return
      }
      if (!mailto) {
        return yield* Effect.fail(badRequest("url must be mailto:address for format email", "invalid_webhook_url"))
      }
      const address = url.slice("mailto:".length).trim().toLowerCase()
      const allowed = Option.isSome(members) ? yield* members.value.emailsOfProject(projectId) : []
      if (!allowed.includes(address)) {
        return yield* Effect.fail(
          badRequest(
            `url ${address} is not a member of this website's account: invite them first (the dashboard's Team page)`,
            "not_a_member"
          )
        )
      }
    })

  const requireWebhook = (projectId: string, webhookId: string) =>
    Effect.flatMap(
      webhooks.find(projectId, webhookId),
      (w) => w === null ? Effect.fail(notFound("Webhook")) : Effect.succeed(w)
    )

  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  // A test event to an email destination is mailed at once, as the worker would.
  const email = yield* emailSenderHere(dashboardUrlOf(config))
  const members = yield* Effect.serviceOption(AccountMembers)

  return {
    listWebhooks: ({ params }: Pick<Request<"listWebhooks">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        return { webhooks: (yield* webhooks.list(project.id)).map(presentWebhook) }
      }),
    createWebhook: ({ params, payload }: Pick<Request<"createWebhook">, "params" | "payload">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const format = payload.format ?? "standard_webhooks" as const
        yield* checkUrl(project.id, payload.url, format)
        const events = [...new Set(payload.events)]
        const draft = {
          url: format === "email" ? payload.url.trim().toLowerCase() : payload.url,
          format,
          events,
          description: payload.description ?? null,
          minMoneyAtStake: payload.minMoneyAtStake !== undefined
            ? payload.minMoneyAtStake
            : format === "slack" || format === "email"
            ? SLACK_DEFAULT_MIN_MONEY
            : null,
          minSeverity: payload.minSeverity ?? null,
          cadence: payload.cadence ?? "live" as const
        }
        if (payload.confirm !== true) {
          return {
            preview: true as const,
            webhook: draft,
            message: "Nothing was stored. Send the same request with confirm: true to add the endpoint; its " +
              "signing secret is answered once."
          }
        }
        if ((yield* webhooks.list(project.id)).length >= MAX_WEBHOOKS) {
          return yield* Effect.fail(
            badRequest(`A website has at most ${MAX_WEBHOOKS} webhook endpoints`, "too_many_webhooks")
          )
        }
        const seal = yield* sealer
        const secret = newWebhookSecret()
        const created = yield* webhooks.insert({
          id: `whk_${randomBase62(16)}`,
          projectId: project.id,
          ...draft,
          enabled: true,
          disabledReason: null,
          failingSince: null,
          secretEnc: seal.seal(secret),
          previousSecretEnc: null,
          previousSecretExpiresAt: null,
          secretRotatedAt: null,
          createdAt: yield* now
        })
        return { webhook: presentWebhook(created), secret }
      }),
    getWebhook: ({ params }: Pick<Request<"getWebhook">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        return presentWebhook(yield* requireWebhook(project.id, params.webhookId))
      }),
    updateWebhook: ({ params, payload }: Pick<Request<"updateWebhook">, "params" | "payload">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const current = yield* requireWebhook(project.id, params.webhookId)
        if (payload.url !== undefined) yield* checkUrl(project.id, payload.url, current.format)
        const at = yield* now
        let secret: string | undefined
        let sealed = {}
        if (payload.rotateSecret === true) {
          const seal = yield* sealer
          secret = newWebhookSecret()
          sealed = {
            secretEnc: seal.seal(secret),
            previousSecretEnc: current.secretEnc,
            previousSecretExpiresAt: new Date(at.getTime() + SECRET_OVERLAP_HOURS * 3_600_000),
            secretRotatedAt: at
          }
        }
        const updated = yield* webhooks.update(project.id, current.id, {
          ...(payload.url === undefined ? {} : { url: payload.url }),
          ...(payload.events === undefined ? {} : { events: [...new Set(payload.events)] }),
          ...(payload.description === undefined ? {} : { description: payload.description }),
          ...(payload.minMoneyAtStake === undefined ? {} : { minMoneyAtStake: payload.minMoneyAtStake }),
          ...(payload.minSeverity === undefined ? {} : { minSeverity: payload.minSeverity }),
          ...(payload.cadence === undefined ? {} : { cadence: payload.cadence }),
          ...(payload.enabled === true ? { enabled: true, disabledReason: null, failingSince: null } : {}),
          ...(payload.enabled === false ? { enabled: false, disabledReason: "disabled by its owner" } : {}),
          ...sealed
        })
        if (updated === null) return yield* Effect.fail(notFound("Webhook"))
        return { webhook: presentWebhook(updated), ...(secret === undefined ? {} : { secret }) }
      }),
    deleteWebhook: ({ params }: Pick<Request<"deleteWebhook">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const removed = yield* webhooks.remove(project.id, params.webhookId)
        if (removed === null) return yield* Effect.fail(notFound("Webhook"))
        return { deleted: true as const, webhook: presentWebhook(removed) }
      }),
    testWebhook: ({ params }: Pick<Request<"testWebhook">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const webhook = yield* requireWebhook(project.id, params.webhookId)
        if (!webhook.enabled) {
          return yield* Effect.fail(
            new Conflict({
              message: "The endpoint is disabled: enable it (PATCH with enabled: true) to test it",
              type: "webhook_disabled"
            })
          )
        }
        const seal = yield* sealer
        const at = yield* now
        const data = { projectId: project.id, webhookId: webhook.id, message: "A test event from sitehealth" }
        // Held from the worker while this request sends it; a crash here leaves it to the worker after the lease.
        const [queued] = yield* emit(webhooks)("webhook.test", project.id, data, at, {
          webhookId: webhook.id,
          lockedUntil: new Date(at.getTime() + LEASE_MS)
        })
        if (queued === undefined) return yield* Effect.fail(notFound("Webhook"))
        const sent = yield* deliverClaimed(webhooks, seal, {
          allowPrivate: config.webhooksAllowPrivate,
          dashboardUrl: dashboardUrlOf(config),
          ...(email === undefined ? {} : { email })
        })({
          delivery: queued,
          body: eventBody("webhook.test", data, at),
          webhook
        })
        return { delivery: presentDelivery(sent ?? queued) }
      }),
    listWebhookDeliveries: ({ params, query }: Pick<Request<"listWebhookDeliveries">, "params" | "query">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const webhook = yield* requireWebhook(project.id, params.webhookId)
        const after = yield* decodeCursor(query.cursor)
        const page = yield* webhooks.listDeliveries(webhook.id, { limit: query.limit ?? DEFAULT_PAGE_SIZE, after })
        return { deliveries: page.items.map(presentDelivery), nextCursor: page.nextCursor }
      }),
    redeliverWebhook: ({ params }: Pick<Request<"redeliverWebhook">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const webhook = yield* requireWebhook(project.id, params.webhookId)
        const again = yield* webhooks.redeliver(webhook.id, params.deliveryId, yield* now)
        if (again === null) return yield* Effect.fail(notFound("Delivery"))
        return { delivery: presentDelivery(again) }
      })
  }
})

export const WebhooksHttp = Layer.unwrap(
  Effect.map(
    webhooksOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "webhooks", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
