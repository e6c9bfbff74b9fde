/**
 * The endpoint's operation metadata (permission, whether its path names a project), for the middlewares.
 * Every read of it on the server goes through here, so that where the metadata lives can change in one line.
 */
import type { HttpApiEndpoint } from "effect/http-api"
import { type Operation, operationOf } from "@sitehealth/domain/Permissions"

export const operationFor = (endpoint: HttpApiEndpoint.Top): Operation | undefined => operationOf(endpoint.identifier)
