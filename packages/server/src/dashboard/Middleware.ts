/**
 * The dashboard API's two checks: `DashboardOrigin` (every state-changing request comes from our own origin)
 * and `DashboardSession` (the session cookie, then on state-changing requests the session's CSRF token).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { CSRF_HEADER, CurrentDashboardSession, DashboardOrigin, DashboardSession } from "@sitehealth/domain/DashboardApi"
import { Forbidden } from "@sitehealth/domain/Errors"
import * as Crypto from "node:crypto"
import { AppConfig } from "../Config.ts"
import { findSession, sessionRequired } from "./Auth.ts"

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const originOf = (value: string | undefined): string | null => {
  if (value === undefined || value === "" || value === "null") return null
  try {
    return new URL(value).origin
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
        if (SAFE_METHODS.has(request.method)) return yield* httpEffect
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
        return yield* httpEffect
      }))
  })
)

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
    // any: the repositories the session lookup needs, captured when the layer is built (a middleware runs per request).
    const context = yield* Effect.context<any>()
    return DashboardSession.of({
      cookie: (httpEffect, { credential }) =>
        Effect.gen(function*() {
          const principal = yield* findSession(Redacted.value(credential)).pipe(Effect.provideContext(context))
          if (principal === null) return yield* sessionRequired()
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!SAFE_METHODS.has(request.method) && !sameToken(request.headers[CSRF_HEADER], principal.csrfToken)) {
            return yield* new Forbidden({
              message: "Missing or wrong X-CSRF-Token header: send the csrfToken from GET /app/api/auth/session",
              type: "csrf_token"
            })
          }
          return yield* Effect.provideService(httpEffect, CurrentDashboardSession, principal)
        })
    })
  })
)
