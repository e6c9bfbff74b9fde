/**
 * The consent page's API (`DashboardConsentApi`): what an MCP client asks, and the owner's answer. The request
 * is checked again here exactly as /oauth/authorize checked it; the grant can never exceed the account — its
 * own websites (every one named must be the account's) and the permissions a token may hold.
 */
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import type { AuthorizationRequest } from "@sitehealth/domain/DashboardConsent"
import { BadRequest, notFound } from "@sitehealth/domain/Errors"
import { type Permission, PERMISSION_DESCRIPTIONS, PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { checkAuthorization } from "../oauth/Authorization.ts"
import { approve, deny } from "../oauth/Grants.ts"
import { currentIssuer } from "../oauth/Issuer.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"

const ALL_WEBSITES = { limit: 100_000, after: null } as const

/** The request as /oauth/authorize would take it, or a 400 saying why not. */
const checked = (request: AuthorizationRequest) =>
  Effect.gen(function*() {
    const result = yield* checkAuthorization(request, yield* currentIssuer)
    if (result._tag !== "Valid") {
      return yield* new BadRequest({ message: result.message, type: "invalid_authorization_request" })
    }
    return result.request
  })

export const DashboardConsentHttp = HttpApiBuilder.group(DashboardApi, "consent", (h) =>
  h
    .handle("describe", ({ query }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const request = yield* checked(query)
        const websites = yield* (yield* ProjectsRepo).list(session.accountId, null, ALL_WEBSITES)
        return {
          client: { id: request.client.id, name: request.client.name },
          redirectHost: new URL(request.redirectUri).host,
          resource: request.resource,
          requestedPermissions: request.requestedPermissions,
          websites: websites.items.map((p) => ({ id: p.id, name: p.name, domain: p.domain })),
          permissions: PERMISSIONS.map((name) => ({ name, description: PERMISSION_DESCRIPTIONS[name] }))
        }
      }))
    .handle("decide", ({ payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const request = yield* checked(payload.request)
        const issuer = yield* currentIssuer
        if (!payload.approve) return { redirectTo: deny(request, issuer) }
        const permissions = [...new Set<Permission>(payload.permissions)]
        if (permissions.length === 0) {
          return yield* new BadRequest({
            message: "Choose at least one permission to approve, or deny",
            type: "invalid_request",
            issues: [{ path: "body.permissions", message: "must hold at least one permission" }]
          })
        }
        let projects: ReadonlyArray<(typeof payload.websites & {})[number]> | null = null
        if (payload.websites !== null) {
          const wanted = [...new Set(payload.websites)]
          const owned = yield* (yield* ProjectsRepo).existing(session.accountId, wanted)
          if (owned.length !== wanted.length) return yield* notFound("Website")
          projects = owned
        }
        return { redirectTo: yield* approve(request, { accountId: session.accountId, projects, permissions }, issuer) }
      })))
