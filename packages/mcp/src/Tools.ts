/**
 * The MCP tools, derived from the HttpApi contract and each endpoint's `Operation` annotation — never a
 * second list. One tool per endpoint whose annotation names one (dashboard-only endpoints, which always
 * answer 403, name none): its name is the annotation's `mcp`, its input schema the union of the endpoint's
 * path, query and payload schemas, its output schema the `data` of its success envelope(s), its annotations
 * the operation's kind.
 */
import { Schema, SchemaAST } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { endpointsOf, operationOf, SiteHealthApi } from "@sitehealth/domain/Api"
import type { Operation, Permission } from "@sitehealth/domain/Permissions"
import { pathParamOf } from "./PathParams.ts"

export type JsonObject = { [key: string]: unknown }

export interface ToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonObject & { readonly type: "object" }
  readonly outputSchema: JsonObject & { readonly type: "object" }
  readonly annotations: ToolAnnotations
}

/** A tool and how to turn its arguments into the endpoint's request. */
export interface ToolSpec {
  /** The contract's group and endpoint: what the typed client (HttpApiClient) calls. */
  readonly group: string
  readonly endpoint: string
  /** The endpoint's own input schemas (path params, query, JSON payload), to decode a call's arguments. */
  readonly schemas: { readonly params?: Schema.Top; readonly query?: Schema.Top; readonly payload?: Schema.Top; readonly payloadOptional: boolean }
  readonly method: string
  /** The full path template, `/api/v1/projects/:id/health`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly payloadFields: ReadonlyArray<string>
  readonly hasPayload: boolean
  readonly permission: Permission
  readonly kind: Operation["kind"]
  readonly confirmGate: boolean
  readonly definition: ToolDefinition
}

/** `getHealth` → `get_health`. */
export const toolNameOf = (endpointName: string): string => endpointName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

interface JsonDoc {
  readonly schema: JsonObject
  readonly definitions: JsonObject
}

const jsonSchemaOf = (schema: Schema.Top): JsonDoc => {
  const doc = Schema.toJsonSchemaDocument(schema)
  return { schema: doc.schema, definitions: doc.definitions }
}

const isNullSchema = (schema: Schema.Top): boolean => schema.ast._tag === "Null"

/** The JSON payload schemas: HttpApiEndpoint keeps them by content type. */
const payloadMembers = (endpoint: HttpApiEndpoint.Top): ReadonlyArray<Schema.Top> => {
  const json = endpoint.payload.get("application/json")
  return json === undefined ? [] : json.schemas
}

const objectProperties = (doc: JsonDoc): { properties: JsonObject; required: ReadonlyArray<string> } => {
  let schema = doc.schema
  const ref = schema.$ref
  if (typeof ref === "string") schema = (doc.definitions[ref.replace("#/$defs/", "")] ?? {}) as JsonObject
  return {
    properties: (schema.properties ?? {}) as JsonObject,
    required: (schema.required ?? []) as ReadonlyArray<string>
  }
}

const CONFIRM_PROPERTY = {
  type: "boolean",
  default: false,
  description: "false (default): answer a preview and change nothing. true: act."
}

const inputOf = (endpoint: HttpApiEndpoint.Top, confirmGate: boolean) => {
  const properties: JsonObject = {}
  const required = new Set<string>()
  const definitions: JsonObject = {}
  const add = (schema: Schema.Top | undefined, requiredToo: boolean): ReadonlyArray<string> => {
    if (schema === undefined) return []
    const doc = jsonSchemaOf(schema)
    Object.assign(definitions, doc.definitions)
    const { properties: props, required: req } = objectProperties(doc)
    Object.assign(properties, props)
    if (requiredToo) for (const key of req) required.add(key)
    return Object.keys(props)
  }
  const pathParams = add(endpoint.params, true)
  const queryParams = add(endpoint.query, true)
  const payloadAll = payloadMembers(endpoint)
  const payloads = payloadAll.filter((s) => !isNullSchema(s))
  // A payload that may be null (`[Payload, Null]`) is optional as a whole, so none of its fields is required.
  const payloadOptional = payloadAll.some(isNullSchema)
  const payloadFields = add(payloads[0], !payloadOptional)
  if (confirmGate) properties.confirm = CONFIRM_PROPERTY
  strictInputProperties(endpoint, properties, pathParams, queryParams)
  // Unknown arguments are refused (Validate.ts), so the schema says so.
  const inputSchema: JsonObject & { type: "object" } = { type: "object", properties, additionalProperties: false }
  if (required.size > 0) inputSchema.required = [...required]
  if (Object.keys(definitions).length > 0) inputSchema.$defs = definitions
  return { inputSchema, pathParams, queryParams, payloadFields, hasPayload: payloads.length > 0 }
}

/**
 * What the input schema says beyond the contract's JSON Schema: each path parameter's id pattern and
 * description (PathParams.ts), and for a query parameter whose schema documents nothing (a query text such as
 * `limit`, whose checks say what it spells) the JSON Schema its checks declare — `limit` is an integer 1–100.
 */
const strictInputProperties = (
  endpoint: HttpApiEndpoint.Top,
  properties: JsonObject,
  pathParams: ReadonlyArray<string>,
  queryParams: ReadonlyArray<string>
): void => {
  for (const name of pathParams) properties[name] = pathParamOf(endpoint.path, name).jsonSchema
  if (endpoint.query === undefined) return
  const encoded = SchemaAST.toEncoded(endpoint.query.ast)
  if (encoded._tag !== "Objects") return
  for (const signature of encoded.propertySignatures) {
    const name = String(signature.name)
    if (!queryParams.includes(name) || Object.keys((properties[name] ?? {}) as JsonObject).length > 0) continue
    const declared: JsonObject = {}
    for (const check of signature.type.checks ?? []) {
      const toJson = check.annotations?.toJsonSchema
      if (typeof toJson === "function") Object.assign(declared, (toJson as () => JsonObject)())
      const description = check.annotations?.description
      if (typeof description === "string") declared.description = description
    }
    properties[name] = declared
  }
}

/** The schema of `data` in the success envelope(s); alternatives (preview or result) become `anyOf`. */
const outputOf = (endpoint: HttpApiEndpoint.Top): JsonObject & { type: "object" } => {
  const definitions: JsonObject = {}
  const datas = [...endpoint.success].map((success) => {
    const doc = jsonSchemaOf(Schema.toEncoded(success))
    Object.assign(definitions, doc.definitions)
    return objectProperties(doc).properties.data as JsonObject
  })
  const base: JsonObject & { type: "object" } = datas.length === 1
    ? { ...resolveRef(datas[0]!, definitions), type: "object" }
    : { type: "object", anyOf: datas }
  return Object.keys(definitions).length > 0 ? { ...base, $defs: definitions } : base
}

const resolveRef = (schema: JsonObject, definitions: JsonObject): JsonObject => {
  const ref = schema.$ref
  return typeof ref === "string" ? (definitions[ref.replace("#/$defs/", "")] as JsonObject) ?? schema : schema
}

const annotationsOf = (title: string, operation: Operation): ToolAnnotations => ({
  title,
  readOnlyHint: operation.kind === "read",
  destructiveHint: operation.kind === "destructive",
  // Reads are idempotent; otherwise the operation says so (revoking twice, deleting twice: nothing more changes).
  idempotentHint: operation.kind === "read" || operation.idempotent === true,
  openWorldHint: operation.openWorld === true
})

const describe = (operation: Operation, endpointName: string): string => {
  const gate = operation.confirmGate
    ? " Confirmation gate: without `confirm: true` it changes nothing and answers a preview."
    : ""
  return `${operation.summary}. Requires the \`${operation.permission}\` permission (endpoint ${endpointName}).${gate}`
}

/** Every tool of the contract, in the contract's order. */
export const deriveTools = (api: typeof SiteHealthApi = SiteHealthApi): ReadonlyArray<ToolSpec> => {
  const specs: Array<ToolSpec> = []
  for (const { endpoint, group } of endpointsOf(api)) {
    const operation = operationOf(endpoint)
    if (operation === undefined) throw new Error(`endpoint ${endpoint.identifier} has no Operation annotation`)
    // No tool for the endpoint, or none that a token could use (dashboard-only endpoints always answer 403).
    if (operation.mcp === null || operation.permission === null) continue
    const name = operation.mcp
    const input = inputOf(endpoint, operation.confirmGate)
    const payloadAll = payloadMembers(endpoint)
    const payload = payloadAll.find((m) => !isNullSchema(m))
    const params = endpoint.params
    const query = endpoint.query
    specs.push({
      group,
      endpoint: endpoint.identifier,
      schemas: {
        ...(params === undefined ? {} : { params }),
        ...(query === undefined ? {} : { query }),
        ...(payload === undefined ? {} : { payload }),
        payloadOptional: payloadAll.some(isNullSchema)
      },
      method: endpoint.method,
      path: endpoint.path,
      pathParams: input.pathParams,
      queryParams: input.queryParams,
      payloadFields: input.payloadFields,
      hasPayload: input.hasPayload,
      permission: operation.permission,
      kind: operation.kind,
      confirmGate: operation.confirmGate,
      definition: {
        name,
        title: operation.summary,
        description: describe(operation, endpoint.identifier),
        inputSchema: input.inputSchema,
        outputSchema: outputOf(endpoint),
        annotations: annotationsOf(operation.summary, operation)
      }
    })
  }
  return specs
}
