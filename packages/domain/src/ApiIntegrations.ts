/** /api/v1's `integrations` group: a project's data providers and their syncs (Api.ts composes it). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { dashboardOnly, dashboardOnlyOptions, op, projectGet, scoped } from "./ApiOperation.ts"
import { Idempotency } from "./Authentication.ts"
import { Envelope } from "./Envelope.ts"
import { IntegrationList, SyncPayload, SyncResult } from "./Integrations.ts"

const integrationParams = { id: Schema.String, provider: Schema.String }

export class IntegrationsApi extends HttpApiGroup.make("integrations")
  .add(
    op(
      projectGet(
        "listIntegrations",
        "/projects/:id/integrations",
        Envelope("IntegrationListResponse", IntegrationList)
      ),
      {
        permission: "integrations:read",
        summary: "Integrations of a project",
        cli: ["integrations", "list"],
        mcp: "list_integrations"
      }
    ),
    op(
      HttpApiEndpoint.post("syncIntegration", "/projects/:id/integrations/:provider/sync", {
        params: integrationParams,
        payload: [SyncPayload, Schema.Null],
        success: Envelope("SyncResponse", SyncResult, { status: 202 }),
        error: scoped
      }).middleware(Idempotency),
      {
        permission: "integrations:sync",
        kind: "write",
        summary: "Queue a sync of one integration",
        cli: ["integrations", "sync"],
        mcp: "sync_integration",
        openWorld: true
      }
    ),
    op(
      HttpApiEndpoint.post(
        "connectIntegration",
        "/projects/:id/integrations/:provider",
        dashboardOnlyOptions(integrationParams)
      )
        .middleware(Idempotency),
      dashboardOnly
    ),
    op(
      HttpApiEndpoint.delete(
        "disconnectIntegration",
        "/projects/:id/integrations/:provider",
        dashboardOnlyOptions(integrationParams)
      ),
      dashboardOnly
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Integrations", description: "Data providers and sync" }))
{}
