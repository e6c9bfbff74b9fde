/**
 * What a tool's path parameter may be, by the collection it names in the path: `/projects/:id` a project id,
 * `/tokens/:id` a token id, `/expenses/:expenseId` an expense id, `/annotations/:annotationId` an annotation
 * id, `/webhooks/:webhookId` a webhook id, `/deliveries/:deliveryId` a
 * delivery id, `/integrations/:provider` a provider. The
 * patterns and the providers are the domain's (Common.ts, Integrations.ts), read from their JSON Schema. The
 * contract keeps its path parameters plain strings (a malformed id is a 404 there, Common.ts); an MCP
 * argument is stricter because it is put into a path: only a value of this shape is, and it is
 * URL-encoded too, so `..` or `a/b` can never reach another route.
 */
import { AnnotationId, DeliveryId, ExpenseId, ProjectId, TokenId, WebhookId } from "@sitehealth/domain/Common"
import { clipInput } from "@sitehealth/domain/Errors"
import { Provider } from "@sitehealth/domain/Integrations"
import * as Schema from "effect/Schema"

type JsonObject = { [key: string]: unknown }

export interface PathParam {
  /** The input schema of the argument: type, pattern or enum, description. */
  readonly jsonSchema: JsonObject
  /** null when the value may go into the path, else why not. */
  readonly problem: (value: unknown) => string | null
}

const jsonOf = (schema: Schema.Top): JsonObject => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const ref = doc.schema.$ref
  return (typeof ref === "string" ? doc.definitions[ref.replace("#/$defs/", "")] : doc.schema) as JsonObject
}

const got = (value: unknown) =>
  typeof value === "string"
    ? `got ${JSON.stringify(clipInput(value, 80))}`
    : `got ${value === undefined ? "nothing" : typeof value}`

const idParam = (schema: Schema.Top, what: string): PathParam => {
  const { type, pattern, description } = jsonOf(schema)
  if (typeof pattern !== "string") throw new Error(`the ${what} schema documents no pattern`)
  const regex = new RegExp(pattern)
  return {
    jsonSchema: { type, pattern, description },
    problem: (
      value
    ) => (typeof value === "string" && regex.test(value) ? null : `Expected ${what} matching ${pattern}, ${got(value)}`)
  }
}

const providerParam = (): PathParam => {
  const providers = jsonOf(Provider).enum as ReadonlyArray<string>
  return {
    jsonSchema: { type: "string", enum: providers, description: "Integration provider" },
    problem: (value) =>
      typeof value === "string" && providers.includes(value)
        ? null
        : `Expected one of ${providers.join(", ")}, ${got(value)}`
  }
}

const BY_COLLECTION: Record<string, () => PathParam> = {
  projects: () => idParam(ProjectId, "a project id"),
  tokens: () => idParam(TokenId, "a token id"),
  expenses: () => idParam(ExpenseId, "an expense id"),
  annotations: () => idParam(AnnotationId, "an annotation id"),
  integrations: providerParam,
  webhooks: () => idParam(WebhookId, "a webhook id"),
  deliveries: () => idParam(DeliveryId, "a delivery id")
}

const cache = new Map<string, PathParam>()

/**
 * The path parameter `name` of `path` (`/api/v1/projects/:id/expenses/:expenseId`), by the segment before it.
 * Throws for a parameter of a collection it does not know: a new endpoint must say what its ids look like
 * before it becomes a tool.
 */
export const pathParamOf = (path: string, name: string): PathParam => {
  const segments = path.split("/")
  const index = segments.indexOf(`:${name}`)
  const collection = index > 0 ? segments[index - 1]! : ""
  const make = BY_COLLECTION[collection]
  if (make === undefined) {
    throw new Error(`path parameter :${name} of ${path} is of no known kind (after "${collection}")`)
  }
  let param = cache.get(collection)
  if (param === undefined) {
    param = make()
    cache.set(collection, param)
  }
  return param
}
