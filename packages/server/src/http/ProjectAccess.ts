/**
 * ProjectAccess: the permission the endpoint's operation metadata names (403 `missing_permission`), deny by
 * default (403 `operation_not_allowed` for an endpoint without metadata). The project's scope — 404 for
 * another account's, 403 `project_out_of_scope` outside the token's list — is judged by http/ProjectPolicy.ts
 * after the request is decoded (docs/api.md §2: a malformed request gets its 400 whichever project it
 * names), from the project the authentication lookup already read.
 */
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { Forbidden } from "@sitehealth/domain/Errors"
import { ProjectAccess } from "@sitehealth/domain/Middleware"
import { AUTHENTICATED } from "@sitehealth/domain/Permissions"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as Layer from "effect/Layer"
import { operationFor } from "./Operation.ts"

/** The 403 for `principal` calling `endpoint`, or null when the call is allowed. */
export const permissionRefusal = (principal: Principal, endpoint: HttpApiEndpoint.Top): Forbidden | null => {
  const operation = operationFor(endpoint)
  // Deny by default: an endpoint the operation metadata does not list is refused, never let through
  // (test/OperationsTable.test.ts keeps the metadata and the contract in step).
  if (operation === undefined) {
    return new Forbidden({
      message: `The operation ${endpoint.identifier} is not allowed through the API`,
      type: "operation_not_allowed"
    })
  }
  // null (dashboard-only) is refused by its handler; AUTHENTICATED needs nothing beyond a valid token.
  if (
    operation.permission !== null && operation.permission !== AUTHENTICATED &&
    !principal.permissions.includes(operation.permission)
  ) {
    return new Forbidden({
      message: `This token lacks the ${operation.permission} permission`,
      type: "missing_permission",
      permission: operation.permission
    })
  }
  return null
}

/** Direct style (one fiber step): it runs on every request. */
const make = (refusal: (principal: Principal, endpoint: HttpApiEndpoint.Top) => Forbidden | null) =>
  ProjectAccess.of((httpEffect, { endpoint }) =>
    Effect.withFiber<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | Forbidden>((fiber) => {
      const refused = refusal(Context.getUnsafe(fiber.context, CurrentPrincipal), endpoint)
      return refused === null ? httpEffect : Effect.fail(refused)
    })
  )

export const ProjectAccessLive = Layer.succeed(ProjectAccess, make(permissionRefusal))

/** Tests: `refuse` decides, by endpoint name, which calls get a 403 (none unless it says so). */
export const ProjectAccessTest = (
  refuse: (endpointName: string, principal: Principal) => Forbidden | null = () => null
) => Layer.succeed(ProjectAccess, make((principal, endpoint) => refuse(endpoint.identifier, principal)))
