/**
 * The MCP tools, derived from the HttpApi contract and each endpoint's `Operation` annotation — never a
 * second list. One tool per endpoint whose annotation names one (dashboard-only endpoints, which always
 * answer 403, name none): its name is the annotation's `mcp`, its input schema the union of the endpoint's
 * path, query and payload schemas, its output schema the `data` of its success envelope(s), its annotations
 * the operation's kind.
 */
import { endpointsOf, operationOf, SiteHealthApi } from "@sitehealth/domain/Api"
import { AUTHENTICATED, type Operation, type Permission } from "@sitehealth/domain/Permissions"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { mcpOnlyArguments, REVEAL_SECRET } from "./Names.ts"
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
  /** The contract's group and endpoint: what the typed client (HttpApiClient) calls. The group is the toolset. */
  readonly group: string
  readonly endpoint: string
  /** The endpoint's own input schemas (path params, query, JSON payload), to decode a call's arguments. */
  readonly schemas: {
    readonly params?: Schema.Top
    readonly query?: Schema.Top
    readonly payload?: Schema.Top
    readonly payloadOptional: boolean
  }
  readonly method: string
  /** The full path template, `/api/v1/projects/:id/health`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly payloadFields: ReadonlyArray<string>
  readonly hasPayload: boolean
  readonly permission: Permission | typeof AUTHENTICATED
  readonly kind: Operation["kind"]
  readonly confirmGate: boolean
  readonly definition: ToolDefinition
}

export { toolNameOf } from "./Names.ts"

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

export { REVEAL_SECRET }
const REVEAL_SECRET_PROPERTY = {
  type: "boolean",
  default: false,
  description:
    "true: the result includes the new secret (token or signing secret), which then sits in this conversation's " +
    "context. false (default): the secret is withheld and cannot be shown again."
}
const MCP_ONLY_PROPERTIES: Record<string, JsonObject> = { [REVEAL_SECRET]: REVEAL_SECRET_PROPERTY }
const mcpOnlyInput = (endpointName: string): JsonObject =>
  Object.fromEntries(mcpOnlyArguments(endpointName).map((name) => [name, MCP_ONLY_PROPERTIES[name]]))

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
    if (requiredToo) { for (const key of req) required.add(key) }
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
  Object.assign(properties, mcpOnlyInput(endpoint.identifier))
  // Unknown arguments are refused (Validate.ts), so the schema says so; the MCP-only ones are listed above.
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

/**
 * The schema of `data` in the success envelope(s), cut to what an agent reads: the top-level fields with
 * their JSON types and descriptions, nested objects as `{type: "object"}` (no `$defs`). The full schemas made
 * `tools/list` ~90 KB (get_revenue alone 14 KB); the fields' meanings are in docs/api.md and the OpenAPI
 * document. Alternatives (a preview or the result) become `anyOf`. The SDK client still validates every
 * `structuredContent` against it, so the types are the contract's own.
 */
const outputOf = (
  endpoint: HttpApiEndpoint.Top,
  maxDescription = MAX_DESCRIPTION
): JsonObject & { type: "object" } => {
  const shapes = [...endpoint.success].map((success) => {
    const doc = jsonSchemaOf(Schema.toEncoded(success))
    const data = resolveRef(objectProperties(doc).properties.data as JsonObject, doc.definitions)
    return shallow(data, doc.definitions, maxDescription)
  })
  return shapes.length === 1 ? shapes[0]! : { type: "object", anyOf: shapes }
}

const resolveRef = (schema: JsonObject, definitions: JsonObject): JsonObject => {
  const ref = schema.$ref
  return typeof ref === "string" ? (definitions[ref.replace("#/$defs/", "")] as JsonObject) ?? schema : schema
}

const MAX_DESCRIPTION = 120
/**
 * What one tool's definition may weigh in tools/list. A tool whose output has many fields (get_revenue) would pass
 * it with every field's description at MAX_DESCRIPTION: its descriptions are cut shorter, in steps, until it fits.
 */
export const MAX_TOOL_BYTES = 4 * 1024
const SHORTER_DESCRIPTIONS = [100, 80, 60] as const

/** The JSON types a schema allows, or null when it cannot tell (then the field is left untyped). */
const typesOf = (node: JsonObject, definitions: JsonObject, depth = 0): Set<string> | null => {
  if (depth > 8) return null
  if (typeof node.$ref === "string") return typesOf(resolveRef(node, definitions), definitions, depth + 1)
  if (typeof node.type === "string") return new Set([node.type])
  if (Array.isArray(node.type)) return new Set(node.type as Array<string>)
  const alternatives = (node.anyOf ?? node.oneOf) as Array<JsonObject> | undefined
  if (Array.isArray(alternatives)) {
    const all = new Set<string>()
    for (const alternative of alternatives) {
      const types = typesOf(alternative, definitions, depth + 1)
      if (types === null) return null
      for (const t of types) all.add(t)
    }
    return all
  }
  if (Array.isArray(node.allOf)) {
    for (const member of node.allOf as Array<JsonObject>) {
      const types = typesOf(member, definitions, depth + 1)
      if (types !== null) return types
    }
  }
  return null
}

const descriptionOf = (node: JsonObject, definitions: JsonObject, max: number): string | undefined => {
  const found = typeof node.description === "string"
    ? node.description
    : [...((node.allOf ?? []) as Array<JsonObject>)].reverse().map((m) => m.description).find((d) =>
      typeof d === "string"
    )
  const text = (found ?? resolveRef(node, definitions).description) as string | undefined
  if (typeof text !== "string") return undefined
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

const shallow = (schema: JsonObject, definitions: JsonObject, max: number): JsonObject & { type: "object" } => {
  const properties: JsonObject = {}
  for (const [key, node] of Object.entries((schema.properties ?? {}) as Record<string, JsonObject>)) {
    const types = typesOf(node, definitions)
    const list = types === null ? null : [...types]
    const description = descriptionOf(node, definitions, max)
    properties[key] = {
      // One `type` a branch: a `type` array (["string", "null"]) is legal JSON Schema but less portable (the
      // MCP Inspector's --strict lint warns of it: single-`type` dialects such as Gemini's reject it).
      ...(list === null ? {} : list.length === 1 ? { type: list[0] } : { anyOf: list.map((type) => ({ type })) }),
      ...(description === undefined ? {} : { description })
    }
  }
  return {
    type: "object",
    properties,
    ...(Array.isArray(schema.required) && schema.required.length > 0 ? { required: schema.required } : {})
  }
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
  const secret = endpointName !== "createToken" && mcpOnlyArguments(endpointName).length > 0
    ? " A new signing secret is returned only with `reveal_secret: true`, and then it is in the model's context; " +
      "without it the secret is withheld for good (rotate it to get another)."
    : endpointName === "createToken"
    ? " The new token's secret is returned only with `reveal_secret: true`, and then it is in the model's context " +
      "(and any transcript of this conversation); without it the secret is withheld for good."
    : ""
  const access = operation.permission === AUTHENTICATED
    ? "Any token may call it"
    : `Requires the \`${operation.permission}\` permission`
  return `${operation.summary}. ${access} (endpoint ${endpointName}).${gate}${secret}`
}

/** The toolsets a server can be limited to: the contract's groups that have tools, in the contract's order. */
export const toolsetsOf = (
  tools: ReadonlyArray<ToolSpec> = deriveTools()
): ReadonlyArray<string> => [...new Set(tools.map((t) => t.group))]

/**
 * `reports,expenses` (from `--toolsets`, `?toolsets=` or `X-MCP-Toolsets`) as the toolsets it names; empty
 * or `all` means every toolset. An unknown name is an error naming the valid ones.
 */
export const parseToolsets = (
  raw: string | null | undefined
): { readonly toolsets: ReadonlyArray<string> | null } | { readonly error: string } => {
  const names = (raw ?? "").split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "")
  if (names.length === 0 || names.includes("all")) return { toolsets: null }
  const valid = toolsetsOf()
  const unknown = names.filter((n) => !valid.includes(n))
  if (unknown.length > 0) {
    return { error: `Unknown toolset ${unknown.join(", ")}; the toolsets are ${valid.join(", ")} (or all)` }
  }
  return { toolsets: [...new Set(names)] }
}

/** `true`/`1`/`yes` (and an empty flag) is read-only; `false`/`0`/`no` or nothing is not; anything else is an error. */
export const parseReadOnly = (
  raw: string | null | undefined
): { readonly readOnly: boolean } | { readonly error: string } => {
  if (raw === null || raw === undefined) return { readOnly: false }
  const value = raw.trim().toLowerCase()
  if (["", "1", "true", "yes"].includes(value)) return { readOnly: true }
  if (["0", "false", "no"].includes(value)) return { readOnly: false }
  return { error: `read-only must be true or false, got "${raw}"` }
}

/** The tools a server registers: read-only keeps the reads, toolsets keep their groups' tools. */
export const selectTools = (
  tools: ReadonlyArray<ToolSpec>,
  selection: { readonly readOnly?: boolean | undefined; readonly toolsets?: ReadonlyArray<string> | null | undefined }
): ReadonlyArray<ToolSpec> =>
  tools.filter((t) =>
    (selection.readOnly !== true || t.kind === "read") &&
    (selection.toolsets === undefined || selection.toolsets === null || selection.toolsets.includes(t.group))
  )

/** The definition, its output's descriptions cut shorter while it weighs more than MAX_TOOL_BYTES. */
const fitted = (
  definition: ToolDefinition,
  outputWith: (maxDescription: number) => ToolDefinition["outputSchema"]
): ToolDefinition => {
  let fit = definition
  for (const max of SHORTER_DESCRIPTIONS) {
    if (Buffer.byteLength(JSON.stringify(fit)) <= MAX_TOOL_BYTES) break
    fit = { ...definition, outputSchema: outputWith(max) }
  }
  return fit
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
      definition: fitted({
        name,
        title: operation.summary,
        description: describe(operation, endpoint.identifier),
        inputSchema: input.inputSchema,
        outputSchema: outputOf(endpoint),
        annotations: annotationsOf(operation.summary, operation)
      }, (max) => outputOf(endpoint, max))
    })
  }
  return specs
}
