/**
 * The dashboard API's routes: the DashboardApi contract under /app/api with its handlers and middleware,
 * its OpenAPI document, and the demo's one-time login link (GET /app/api/auth/magic?token=…), which is a
 * browser navigation answered by a redirect, outside the JSON contract.
 */
import { DashboardApi, MAGIC_LINK_PATH } from "@sitehealth/domain/DashboardApi"
import { encodeApiError } from "@sitehealth/domain/Errors"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { StripeBilling } from "../billing/StripeBilling.ts"
import { RequestErrorsLive } from "../http/RequestErrors.ts"
import type { AppConfig } from "../platform/Config.ts"
import { Mailer } from "../platform/Mailer.ts"
import { DashboardAlertsHttp } from "./AlertsHttp.ts"
import { magicLogin } from "./Auth.ts"
import type { AuthRepo } from "./AuthRepo.ts"
import { DashboardConnectionsHttp } from "./connections/Http.ts"
import { DashboardConsentHttp } from "./ConsentHttp.ts"
import { DashboardHttp } from "./Http.ts"
import { Signing } from "./Links.ts"
import { DashboardOriginLive, DashboardSessionLive } from "./Middleware.ts"
import { dummyHash } from "./Passwords.ts"
import { DashboardReportsHttp } from "./reports/Http.ts"
import { DashboardSecurityHttp } from "./SecurityHttp.ts"
import { DashboardTeamHttp } from "./TeamHttp.ts"
import { AuthThrottle } from "./Throttle.ts"
import { UnsubscribeRoutes } from "./Unsubscribe.ts"

export const DASHBOARD_OPENAPI_PATH = "/app/api/openapi.json"

/** The services the dashboard's handlers use beyond the repositories and the config. */
export const DashboardServices = Layer.mergeAll(
  Signing.layer,
  Mailer.layer,
  AuthThrottle.layer,
  StripeBilling.layer,
  // The dummy hash an unknown email is checked against, made before the first log-in rather than during it,
  // so that first answer takes no longer than the rest.
  Layer.effectDiscard(dummyHash)
)

const MagicRoute = Layer.unwrap(
  // What the magic log-in needs beyond the request, captured when the layer is built.
  Effect.map(
    Effect.context<AuthRepo | AppConfig | Signing>(),
    (context) =>
      HttpRouter.add("GET", MAGIC_LINK_PATH, (request: HttpServerRequest.HttpServerRequest) => {
        const token = new URL(request.url, "http://localhost").searchParams.get("token") ?? ""
        return magicLogin(token).pipe(
          Effect.catch((error) => {
            const encoded = encodeApiError(error)
            return Effect.succeed(
              HttpServerResponse.jsonUnsafe(encoded?.body ?? {}, { status: encoded?.status ?? 400 })
            )
          }),
          Effect.provideContext(context)
        )
      })
  )
)

export const dashboardRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(DashboardApi, { openapiPath: DASHBOARD_OPENAPI_PATH }).pipe(
    Layer.provide([
      DashboardHttp,
      DashboardConnectionsHttp,
      DashboardReportsHttp,
      DashboardSecurityHttp,
      DashboardConsentHttp,
      DashboardAlertsHttp,
      DashboardTeamHttp
    ]),
    Layer.provide([DashboardSessionLive, DashboardOriginLive, RequestErrorsLive])
  ),
  MagicRoute,
  UnsubscribeRoutes
)
