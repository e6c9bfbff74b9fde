/**
 * Webhooks: a website's endpoints (list, get, create behind the confirmation gate, update, delete), a test sent
 * now, the delivery log and redelivery. A new or rotated signing secret goes to stdout once.
 */
import { CADENCES, EVENT_KINDS } from "@sitehealth/domain/Events"
import { SEVERITIES } from "@sitehealth/domain/Projects"
import type { Delivery, Webhook } from "@sitehealth/domain/Webhooks"
import { CreateWebhookPayload, UpdateWebhookPayload, WEBHOOK_FORMATS } from "@sitehealth/domain/Webhooks"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { EXIT, localFailure } from "../Failure.ts"
import { fields, orDash, status, type Style, table } from "../Format.ts"
import { emit, Json, printJson, style, validate, withApi, writeErr, writeOut } from "../Session.ts"
import { pageFlags, pageQuery, projectArg } from "./Reads.ts"
import { confirmOrRefuse, splitList, yesFlag } from "./Tokens.ts"

const webhookArg = Argument.String("webhook").pipe(Argument.withDescription("The webhook endpoint's id (whk_…)"))
const eventsFlag = Flag.String("events").pipe(
  Flag.withDescription(`Comma-separated event kinds: ${EVENT_KINDS.join(", ")}`)
)

/** The rules' flags (docs/alerts.md, Rules), for create and update. */
const ruleFlags = {
  minMoney: Flag.String("min-money").pipe(
    Flag.withDescription("Minimum money at stake in minor units (5000 = €50.00), or none"),
    Flag.optional
  ),
  minSeverity: Flag.Literals("min-severity", [...SEVERITIES, "none"] as const).pipe(
    Flag.withDescription("Minimum signal severity, or none"),
    Flag.optional
  ),
  cadence: Flag.Literals("cadence", CADENCES).pipe(
    Flag.withDescription("live, or a daily, weekly or monthly recap"),
    Flag.optional
  )
}

const rulesOf = (input: {
  readonly minMoney: Option.Option<string>
  readonly minSeverity: Option.Option<(typeof SEVERITIES)[number] | "none">
  readonly cadence: Option.Option<(typeof CADENCES)[number]>
}) => ({
  ...(Option.isSome(input.minMoney)
    ? { minMoneyAtStake: input.minMoney.value === "none" ? null : Number(input.minMoney.value) }
    : {}),
  ...(Option.isSome(input.minSeverity)
    ? { minSeverity: input.minSeverity.value === "none" ? null : input.minSeverity.value }
    : {}),
  ...(Option.isSome(input.cadence) ? { cadence: input.cadence.value } : {})
})

const webhookFields = (s: Style, w: Webhook) =>
  fields(s, [
    ["id", w.id],
    ["url", w.url],
    ["format", w.format],
    ["events", w.events.join(", ")],
    ["min money at stake", w.minMoneyAtStake === null ? "-" : `${w.minMoneyAtStake} (minor units)`],
    ["min severity", orDash(w.minSeverity)],
    ["cadence", w.cadence],
    ["status", status(s, w.status === "enabled" ? "active" : "failed").replace(/active|failed/, w.status)],
    ["description", orDash(w.description)],
    ...(w.disabledReason === null ? [] : [["disabled", w.disabledReason] as const]),
    ...(w.failingSince === null ? [] : [["failing since", w.failingSince] as const]),
    ["created", w.createdAt]
  ])

const webhookTable = (s: Style, data: { readonly webhooks: ReadonlyArray<Webhook> }) =>
  table(s, ["ID", "STATUS", "URL", "EVENTS"], data.webhooks.map((w) => [w.id, w.status, w.url, w.events.join(",")]))

const deliveryRow = (d: Delivery) => [
  d.id,
  d.type,
  d.status,
  String(d.attempts),
  d.responseStatus === null ? "-" : String(d.responseStatus),
  d.latencyMs === null ? "-" : `${d.latencyMs} ms`,
  d.lastAttemptAt ?? "-",
  orDash(d.responseExcerpt)
]

const deliveryTable = (s: Style, data: { readonly deliveries: ReadonlyArray<Delivery> }) =>
  table(
    s,
    ["ID", "EVENT", "STATUS", "ATTEMPTS", "HTTP", "LATENCY", "LAST ATTEMPT", "ANSWER"],
    data.deliveries.map(deliveryRow)
  )

const deliveryFields = (s: Style, d: Delivery) =>
  fields(s, [
    ["id", d.id],
    ["webhook-id", d.eventId],
    ["event", d.type],
    ["status", d.status],
    ["attempts", String(d.attempts)],
    ["http status", d.responseStatus === null ? "-" : String(d.responseStatus)],
    ["latency", d.latencyMs === null ? "-" : `${d.latencyMs} ms`],
    ["answer", orDash(d.responseExcerpt)],
    ...(d.nextAttemptAt === null ? [] : [["next attempt", d.nextAttemptAt] as const])
  ])

/** Prints a secret answered once: to stdout, the warning to stderr. */
const showSecret = (what: string, secret: string, answer: unknown) =>
  Effect.gen(function*() {
    const json: boolean = yield* Json
    if (json) yield* printJson(answer)
    else {
      yield* writeErr(what)
      yield* writeOut(secret)
    }
    yield* writeErr("This signing secret is shown only once and cannot be retrieved again: store it now.")
  })

export const listWebhooksCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg },
    ({ project }) =>
      withApi((api, call) =>
        Effect.flatMap(call(api.webhooks.listWebhooks({ params: { id: project } })), (data) => emit(data, webhookTable))
      )
  ).pipe(Command.withDescription("List a website's webhook endpoints"))

export const getWebhookCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, webhook: webhookArg },
    ({ project, webhook }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.webhooks.getWebhook({ params: { id: project, webhookId: webhook } })),
          (data) => emit(data, webhookFields)
        )
      )
  ).pipe(Command.withDescription("Show one webhook endpoint"))

export const createWebhookCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      url: Flag.String("url").pipe(Flag.withDescription("Where to send the events (https://…)")),
      events: eventsFlag,
      format: Flag.Literals("format", WEBHOOK_FORMATS).pipe(
        Flag.withDescription("standard_webhooks (signed JSON, default) or slack (a Slack incoming-webhook URL)"),
        Flag.optional
      ),
      description: Flag.String("description").pipe(Flag.withDescription("A label"), Flag.optional),
      ...ruleFlags,
      yes: yesFlag
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const draft = yield* validate(
            CreateWebhookPayload,
            {
              url: input.url,
              events: splitList(input.events),
              ...(Option.isSome(input.format) ? { format: input.format.value } : {}),
              ...(Option.isSome(input.description) ? { description: input.description.value } : {}),
              ...rulesOf(input)
            },
            "webhook"
          )
          const preview = yield* call(api.webhooks.createWebhook({ params: { id: input.project }, payload: draft }))
          if (!("preview" in preview)) {
            return yield* localFailure(EXIT.failure, "unexpected_response", "the API added an endpoint unconfirmed")
          }
          yield* confirmOrRefuse(
            preview,
            `This would add a webhook endpoint:\n${
              fields(style(), [["url", preview.webhook.url], ["events", preview.webhook.events.join(", ")]])
            }\n${preview.message}`,
            "Add this endpoint?",
            input.yes
          )
          const created = yield* call(
            api.webhooks.createWebhook({ params: { id: input.project }, payload: { ...draft, confirm: true } })
          )
          if (!("secret" in created) || created.secret === null) {
            return yield* localFailure(
              EXIT.failure,
              "secret_lost",
              "the endpoint was added but its signing secret was not answered: rotate it " +
                "(sitehealth webhooks update … --rotate-secret)"
            )
          }
          yield* showSecret(`added ${created.webhook.id}`, created.secret, created)
        })
      )
  ).pipe(
    Command.withDescription("Add a webhook endpoint (shows the API's preview, then asks; --yes to skip the question)"),
    Command.withExamples([{
      command:
        "sitehealth webhooks create prj_3kTMd9qXyVbN2LwP --url https://example.com/hooks --events signal.opened --yes",
      description: "Send new signals to an endpoint"
    }])
  )

export const updateWebhookCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      webhook: webhookArg,
      url: Flag.String("url").pipe(Flag.withDescription("A new URL"), Flag.optional),
      events: eventsFlag.pipe(Flag.optional),
      enable: Flag.Boolean("enable").pipe(
        Flag.withDescription("Enable it (forgets its failures)"),
        Flag.withDefault(false)
      ),
      disable: Flag.Boolean("disable").pipe(Flag.withDescription("Disable it"), Flag.withDefault(false)),
      ...ruleFlags,
      rotateSecret: Flag.Boolean("rotate-secret").pipe(
        Flag.withDescription("A new signing secret (the old one stays valid 24 hours)"),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          // Checked here as the API would (a --min-money that is no integer is refused, never sent as null).
          const payload = yield* validate(
            UpdateWebhookPayload,
            {
              ...(Option.isSome(input.url) ? { url: input.url.value } : {}),
              ...(Option.isSome(input.events) ? { events: splitList(input.events.value) } : {}),
              ...(input.enable ? { enabled: true } : input.disable ? { enabled: false } : {}),
              ...rulesOf(input),
              ...(input.rotateSecret ? { rotateSecret: true as const } : {})
            },
            "webhook"
          )
          const data = yield* call(api.webhooks.updateWebhook({
            params: { id: input.project, webhookId: input.webhook },
            payload
          }))
          if (data.secret !== undefined) return yield* showSecret(`rotated ${data.webhook.id}`, data.secret, data)
          yield* emit(data, (s, d) => webhookFields(s, d.webhook))
        })
      )
  ).pipe(Command.withDescription(
    "Change a webhook endpoint or its rules (--min-money, --min-severity, --cadence), enable or disable it, " +
      "or rotate its secret"
  ))

export const deleteWebhookCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, webhook: webhookArg },
    ({ project, webhook }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.webhooks.deleteWebhook({ params: { id: project, webhookId: webhook } })),
          (data) => emit(data, (s, d) => `deleted\n${webhookFields(s, d.webhook)}`)
        )
      )
  ).pipe(Command.withDescription("Delete a webhook endpoint"))

export const testWebhookCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, webhook: webhookArg },
    ({ project, webhook }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.webhooks.testWebhook({ params: { id: project, webhookId: webhook } })),
          (data) => emit(data, (s, d) => deliveryFields(s, d.delivery))
        )
      )
  ).pipe(Command.withDescription("Send one signed webhook.test event now and show how it went"))

export const listWebhookDeliveriesCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, webhook: webhookArg, ...pageFlags },
    ({ project, webhook, ...page }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const query = yield* pageQuery(page)
          const data = yield* call(
            api.webhooks.listWebhookDeliveries({ params: { id: project, webhookId: webhook }, query })
          )
          yield* emit(data, deliveryTable)
        })
      )
  ).pipe(Command.withDescription("A webhook endpoint's deliveries, newest first"))

export const redeliverWebhookCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      webhook: webhookArg,
      delivery: Argument.String("delivery").pipe(Argument.withDescription("The delivery's id (whd_…)"))
    },
    ({ delivery, project, webhook }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.webhooks.redeliverWebhook({ params: { id: project, webhookId: webhook, deliveryId: delivery } })),
          (data) => emit(data, (s, d) => `queued again\n${deliveryFields(s, d.delivery)}`)
        )
      )
  ).pipe(Command.withDescription("Send a delivery again (same webhook-id), by the worker, now"))
