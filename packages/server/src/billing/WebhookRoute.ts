/**
 * `POST /billing/webhook`, outside /api/v1: Stripe's deliveries. The RAW body is verified against the
 * Stripe-Signature header before anything is parsed (Signature.ts): missing, wrong or stale → 400 and nothing
 * changes. Then the event is applied (Webhook.ts): 200 when done or already done, 503 when Stripe could not be
 * read (Stripe retries). 404 while billing is off, as if the route were not there.
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { BillingRepo } from "../accounts/BillingRepo.ts"
import { AppConfig } from "../platform/Config.ts"
import { type SignatureProblem, verifySignature } from "./Signature.ts"
import type { StripeBilling } from "./StripeBilling.ts"
import { handleEvent, StripeEvent } from "./Webhook.ts"

export const WEBHOOK_PATH = "/billing/webhook"

const fail = (status: number, message: string, type: string) =>
  HttpServerResponse.jsonUnsafe(errorBody(status, message, type), { status })

const problemText: Record<SignatureProblem, string> = {
  missing: "The Stripe-Signature header is missing",
  malformed: "The Stripe-Signature header has no timestamp or no v1 signature",
  mismatch: "No signature in the Stripe-Signature header matches the body",
  stale: "The signature's timestamp is more than 5 minutes from the server's clock"
}

const decodeEvent = Schema.decodeUnknownResult(Schema.fromJsonString(StripeEvent))

export const WebhookRoute = Layer.unwrap(
  Effect.map(
    Effect.context<AppConfig | BillingRepo | StripeBilling>(),
    (context) =>
      HttpRouter.add("POST", WEBHOOK_PATH, (request: HttpServerRequest.HttpServerRequest) =>
        Effect.gen(function*() {
          const { billing } = yield* AppConfig
          if (billing === null) return fail(404, "Billing is not configured on this server", "billing_not_configured")
          const body = yield* Effect.result(request.arrayBuffer)
          if (body._tag === "Failure") return fail(400, "The request body could not be read", "invalid_request")
          const bytes = new Uint8Array(body.success)
          const now = yield* Clock.currentTimeMillis
          const problem = verifySignature(
            request.headers["stripe-signature"],
            bytes,
            Redacted.value(billing.webhookSecret),
            Math.floor(now / 1000)
          )
          if (problem !== null) {
            yield* Effect.logWarning("billing webhook refused", { reason: problem })
            return fail(400, problemText[problem], "invalid_signature")
          }
          const event = decodeEvent(new TextDecoder().decode(bytes))
          if (event._tag === "Failure") return fail(400, "The body is not a Stripe event", "invalid_event")
          const outcome = yield* Effect.result(handleEvent(event.success, new Date(now)))
          if (outcome._tag === "Failure") {
            yield* Effect.logError("billing webhook: Stripe could not be read", outcome.failure.message)
            return fail(
              503,
              "Stripe could not be read; the event is not processed (Stripe retries it)",
              "billing_unavailable"
            )
          }
          return HttpServerResponse.jsonUnsafe({
            status: "success",
            data: { received: true, outcome: outcome.success }
          })
        }).pipe(Effect.provideContext(context)))
  )
)
