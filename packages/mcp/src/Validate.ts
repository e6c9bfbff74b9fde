/**
 * A tool call's arguments checked before any request is built, with the endpoint's own schemas: the path
 * parameters against their id pattern or provider list (PathParams.ts), the query and the JSON payload by the
 * contract's query and payload schemas (unknown body fields refused, as the API refuses them), and every
 * argument the tool does not take refused by name. A call that fails is answered locally with the API's own
 * 400 envelope (`invalid_request` with `issues`, each naming `path.<arg>`, `query.<arg>`, `body.<arg>` or
 * `arguments.<arg>`) — an `isError` tool result, never a request, a transport error or a retry. The MCP-only
 * arguments (Names.ts: create_token's `reveal_secret`) are known too, and must be booleans.
 */
import { BadRequest, clipInput, encodeApiError } from "@sitehealth/domain/Errors"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { ApiAnswer } from "./Dispatch.ts"
import { mcpOnlyArguments } from "./Names.ts"
import { pathParamOf } from "./PathParams.ts"
import type { ToolSpec } from "./Tools.ts"

interface Issue {
  readonly path: string
  readonly message: string
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** A schema's decoding issues as the API words them (server/src/http/RequestErrors.ts), under `slot`. */
const decodeIssues = (slot: string, schema: Schema.Top, value: unknown): ReadonlyArray<Issue> => {
  const exit = Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(value, {
    errors: "all",
    onExcessProperty: "error"
  })
  if (Exit.isSuccess(exit)) return []
  const failure = Cause.findErrorOption(exit.cause)
  const error = failure._tag === "Some" ? failure.value : undefined
  if (!Schema.isSchemaError(error)) return [{ path: slot, message: "Invalid value" }]
  return formatIssues(error.issue).issues.map((issue) => {
    const path = (issue.path ?? []).map((p) =>
      String(typeof p === "object" && p !== null ? (p as { key: unknown }).key : p)
    )
    const message = issue.message === "Expected no excess property" ? "Unknown field" : issue.message
    return { path: clipInput([slot, ...path].join("."), 200), message: clipInput(message, 300) }
  })
}

/** The query text of an argument: what `?name=` would spell. */
const queryText = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : undefined

/** The arguments' issues, all of them; empty when the call may be sent. */
export const argumentIssues = (spec: ToolSpec, args: Record<string, unknown>): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const mcpOnly = mcpOnlyArguments(spec.endpoint)
  const known = new Set([
    ...spec.pathParams,
    ...spec.queryParams,
    ...spec.payloadFields,
    ...(spec.confirmGate ? ["confirm"] : []),
    ...mcpOnly
  ])
  const unknown = Object.keys(args).filter((key) => !known.has(key))
  for (const key of unknown) {
    issues.push({
      path: clipInput(`arguments.${key}`, 200),
      message: known.size === 0
        ? "Unknown argument: this tool takes none"
        : `Unknown argument; this tool takes ${[...known].join(", ")}`
    })
  }
  for (const name of spec.pathParams) {
    const problem = pathParamOf(spec.path, name).problem(args[name])
    if (problem !== null) issues.push({ path: `path.${name}`, message: problem })
  }
  const queryNames = spec.queryParams.filter((name) => !spec.payloadFields.includes(name))
  if (spec.schemas.query !== undefined) {
    const query: Record<string, unknown> = {}
    for (const name of queryNames) {
      const value = args[name]
      if (value === undefined) continue
      const text = queryText(value)
      if (text === undefined) {
        issues.push({
          path: `query.${name}`,
          message: `Expected a string, number or boolean, got ${value === null ? "null" : typeof value}`
        })
      } else query[name] = text
    }
    issues.push(...decodeIssues("query", spec.schemas.query, query))
  }
  if (spec.confirmGate && args.confirm !== undefined && typeof args.confirm !== "boolean") {
    issues.push({ path: "body.confirm", message: `Expected true or false, got ${JSON.stringify(args.confirm)}` })
  }
  for (const name of mcpOnly) {
    if (args[name] !== undefined && typeof args[name] !== "boolean") {
      issues.push({
        path: `arguments.${name}`,
        message: clipInput(`Expected true or false, got ${JSON.stringify(args[name])}`, 300)
      })
    }
  }
  if (spec.schemas.payload !== undefined) {
    const body: Record<string, unknown> = {}
    for (const name of spec.payloadFields) if (args[name] !== undefined && name !== "confirm") body[name] = args[name]
    issues.push(...decodeIssues("body", spec.schemas.payload, body))
  }
  return issues
}

/** The 400 answer for a call whose arguments do not hold, or null when they do. */
export const validateArguments = (spec: ToolSpec, args: Record<string, unknown>): ApiAnswer | null => {
  const issues = argumentIssues(spec, args).slice(0, 10)
  if (issues.length === 0) return null
  const summary = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join("; ")
  const error = new BadRequest({ message: `Invalid request: ${summary}`, type: "invalid_request", issues })
  const encoded = encodeApiError(error)!
  return { status: encoded.status, body: encoded.body }
}
