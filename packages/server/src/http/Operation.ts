/**
 * The endpoint's operation metadata (permission, whether its path names a project), for the middlewares:
 * the Operation annotation the contract puts on every endpoint (@sitehealth/domain/Api).
 */
import { operationOf } from "@sitehealth/domain/Api"
import type { Operation } from "@sitehealth/domain/Permissions"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"

export const operationFor = (endpoint: HttpApiEndpoint.Top): Operation | undefined => operationOf(endpoint)
