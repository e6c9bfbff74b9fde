/** /api/v1's `webhooks` group: a website's webhook endpoints, their test and their deliveries (Api.ts composes it). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { op, projectParams, scoped } from "./ApiOperation.ts"
import { Idempotency } from "./Authentication.ts"
import { PageQuery } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict, Unavailable } from "./Errors.ts"
import {
  CreateWebhookPayload,
  DeliveryList,
  Redelivered,
  UpdateWebhookPayload,
  Webhook,
  WebhookCreated,
  WebhookDeleted,
  WebhookList,
  WebhookPreview,
  WebhookTested,
  WebhookUpdated
} from "./Webhooks.ts"

const webhookParams = { id: Schema.String, webhookId: Schema.String }

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    op(
      HttpApiEndpoint.get("listWebhooks", "/projects/:id/webhooks", {
        params: projectParams,
        success: Envelope("WebhookListResponse", WebhookList),
        error: scoped
      }),
      {
        permission: "webhooks:read",
        summary: "A website's webhook endpoints, never a secret",
        cli: ["webhooks", "list"],
        mcp: "list_webhooks"
      }
    ),
    op(
      HttpApiEndpoint.post("createWebhook", "/projects/:id/webhooks", {
        params: projectParams,
        payload: CreateWebhookPayload,
        success: [
          Envelope("WebhookPreviewResponse", WebhookPreview),
          Envelope("WebhookCreatedResponse", WebhookCreated, { status: 201 })
        ],
        error: [...scoped, BadRequest, Unavailable]
      }).middleware(Idempotency),
      {
        permission: "webhooks:write",
        kind: "write",
        confirmGate: true,
        summary: "Add a webhook endpoint (preview unless confirm: true); answers its signing secret once",
        cli: ["webhooks", "create"],
        mcp: "create_webhook"
      }
    ),
    op(
      HttpApiEndpoint.get("getWebhook", "/projects/:id/webhooks/:webhookId", {
        params: webhookParams,
        success: Envelope("WebhookResponse", Webhook),
        error: scoped
      }),
      {
        permission: "webhooks:read",
        summary: "One webhook endpoint, never its secret",
        cli: ["webhooks", "get"],
        mcp: "get_webhook"
      }
    ),
    op(
      HttpApiEndpoint.patch("updateWebhook", "/projects/:id/webhooks/:webhookId", {
        params: webhookParams,
        payload: UpdateWebhookPayload,
        success: Envelope("WebhookUpdatedResponse", WebhookUpdated),
        error: [...scoped, BadRequest, Unavailable]
      }),
      {
        permission: "webhooks:write",
        kind: "write",
        summary: "Change a webhook endpoint's URL, events or state, or rotate its secret",
        cli: ["webhooks", "update"],
        mcp: "update_webhook"
      }
    ),
    op(
      HttpApiEndpoint.delete("deleteWebhook", "/projects/:id/webhooks/:webhookId", {
        params: webhookParams,
        success: Envelope("WebhookDeletedResponse", WebhookDeleted),
        error: scoped
      }),
      {
        permission: "webhooks:write",
        kind: "destructive",
        summary: "Delete a webhook endpoint; its pending deliveries are dropped",
        cli: ["webhooks", "delete"],
        mcp: "delete_webhook",
        idempotent: true
      }
    ),
    op(
      HttpApiEndpoint.post("testWebhook", "/projects/:id/webhooks/:webhookId/test", {
        params: webhookParams,
        success: Envelope("WebhookTestedResponse", WebhookTested),
        error: [...scoped, Conflict, Unavailable]
      }).middleware(Idempotency),
      {
        permission: "webhooks:write",
        kind: "write",
        summary: "Send one signed webhook.test event now and answer how it went",
        cli: ["webhooks", "test"],
        mcp: "test_webhook",
        openWorld: true
      }
    ),
    op(
      HttpApiEndpoint.get("listWebhookDeliveries", "/projects/:id/webhooks/:webhookId/deliveries", {
        params: webhookParams,
        query: PageQuery,
        success: Envelope("DeliveryListResponse", DeliveryList),
        error: [...scoped, BadRequest]
      }),
      {
        permission: "webhooks:read",
        summary: "A webhook endpoint's deliveries, newest first",
        cli: ["webhooks", "deliveries"],
        mcp: "list_webhook_deliveries"
      }
    ),
    op(
      HttpApiEndpoint.post("redeliverWebhook", "/projects/:id/webhooks/:webhookId/deliveries/:deliveryId/redeliver", {
        params: { ...webhookParams, deliveryId: Schema.String },
        success: Envelope("RedeliveredResponse", Redelivered),
        error: scoped
      }).middleware(Idempotency),
      {
        permission: "webhooks:write",
        kind: "write",
        summary: "Send a delivery again (same webhook-id), by the worker, now",
        cli: ["webhooks", "redeliver"],
        mcp: "redeliver_webhook"
      }
    )
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Webhooks",
      description: "A website's webhook endpoints: signed events (Standard Webhooks), tests, deliveries"
    })
  )
{}
