/**
 * The dashboard API's two checks: `DashboardOrigin` (every state-changing request comes from our own origin)
 * and `DashboardSession` (the session cookie, then on state-changing requests the session's CSRF token).
 * `DashboardOrigin` wraps every endpoint, so it also puts Retry-After on every 429 the dashboard answers.
 */
import {
  CSRF_HEADER,
  CurrentDashboardSession,
  DashboardOrigin,
  DashboardSession
} from "@sitehealth/domain/DashboardApi"
import { accessOf, roleAllows } from "@sitehealth/domain/DashboardRoles"
import { Forbidden, RateLimited } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Crypto from "node:crypto"
import { AppConfig } from "../platform/Config.ts"
import { findSession, isHttps, sessionRequired } from "./Auth.ts"
import type { AuthRepo } from "./AuthRepo.ts"
import type { Signing } from "./Links.ts"

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const originOf = (value: string | undefined): string | null => {
  if (value === undefined || value === "" || value === "null") return null
  try {
    // An opaque origin (`data:`, `javascript:`, `file:`, `about:` URLs) is the text "null": no origin at all.
    const origin = new URL(value).origin
    return origin === "null" ? null : origin
  } catch {
    return null
  }
}

export const DashboardOriginLive = Layer.effect(
  DashboardOrigin,
  Effect.gen(function*() {
    const config = yield* AppConfig
    return DashboardOrigin.of((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (SAFE_METHODS.has(request.method)) return yield* withRetryAfter(httpEffect)
        const origin = originOf(request.headers.origin) ?? originOf(request.headers.referer)
        // Node always has a Host header; a web-standard Request (the in-process handler) has its URL instead.
        const host = request.headers.host ?? hostOfUrl(request.originalUrl)
        const allowed = origin !== null &&
          (origin === config.publicUrl || (host !== undefined && new URL(origin).host === host))
        if (!allowed) {
          return yield* new Forbidden({
            message: origin === null
              ? "A state-changing request must carry an Origin header from the dashboard"
              : "Cross-site request refused: the Origin is not this server's",
            type: "csrf_origin"
          })
        }
        return yield* withRetryAfter(httpEffect)
      })
    )
  })
)

/** A 429 says when to come back: Retry-After, whole seconds until the refusal's `reset` (at least 1). */
const withRetryAfter = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) =>
    error instanceof RateLimited
      ? Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const seconds = String(Math.max(1, Math.ceil(error.reset - now / 1000)))
        return HttpEffect.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", seconds))
        )
      })
      : Effect.void)

const hostOfUrl = (url: string): string | undefined => {
  try {
    return new URL(url).host
  } catch {
    return undefined
  }
}

const sameToken = (sent: string | undefined, expected: string) => {
  if (sent === undefined) return false
  const a = Buffer.from(sent)
  const b = Buffer.from(expected)
  return a.length === b.length && Crypto.timingSafeEqual(a, b)
}

export const DashboardSessionLive = Layer.effect(
  DashboardSession,
  Effect.gen(function*() {
    // What the session lookup needs, captured when the layer is built (a middleware runs per request).
    const context = yield* Effect.context<AuthRepo | Signing>()
    const config = yield* AppConfig
    const check = (secret: string, endpoint: HttpApiEndpoint.Top) => <A, E, R>(httpEffect: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const principal = yield* findSession(secret).pipe(Effect.provideContext(context))
        if (principal === null) return yield* sessionRequired()
        // The role comes with the session's row on every request: a demoted member's next request is refused.
        const level = accessOf(endpoint)
        if (level === undefined || level === "public" || !roleAllows(principal.role, level)) {
          return yield* new Forbidden({
            message: level === undefined || level === "public"
              ? "This endpoint declares no role: refused"
              : `Your role (${principal.role}) cannot do this: it needs ${level}`,
            type: "role_forbidden"
          })
        }
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!SAFE_METHODS.has(request.method) && !sameToken(request.headers[CSRF_HEADER], principal.csrfToken)) {
          return yield* new Forbidden({
            message: "Missing or wrong X-CSRF-Token header: send the csrfToken from GET /app/api/auth/session",
            type: "csrf_token"
          })
        }
        return yield* Effect.provideService(httpEffect, CurrentDashboardSession, principal)
      })
    return DashboardSession.of({
      // PUBLIC_URL https: the `__Host-` cookie alone (a plain one could have been planted by a sibling subdomain).
      secureCookie: (httpEffect, { credential, endpoint }) => check(Redacted.value(credential), endpoint)(httpEffect),
      cookie: (httpEffect, { credential, endpoint }) =>
        isHttps(config) ? Effect.fail(sessionRequired()) : check(Redacted.value(credential), endpoint)(httpEffect)
    })
  })
)
