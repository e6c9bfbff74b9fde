/**
 * The short human line that follows a tool result's compact JSON: what came back, in a few words, so an
 * agent (or a person reading the transcript) need not parse the JSON to know whether it got what it asked
 * for. Derived from the data's shape, not written per tool: the lists and their lengths, a few of the
 * top-level scalar fields, and whether more pages follow.
 */
import type { ToolSpec } from "./Tools.ts"

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const MAX_SCALARS = 4
const MAX_VALUE = 40

const scalar = (value: unknown): string | null => {
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  if (typeof value === "string") return value.length <= MAX_VALUE ? value : `${value.slice(0, MAX_VALUE - 1)}…`
  return null
}

export const summaryOf = (spec: ToolSpec, data: Record<string, unknown>): string => {
  const name = spec.definition.name
  if (spec.confirmGate && data.preview === true) {
    return `Nothing changed: this is a preview. To do it, call ${name} again with the same arguments and "confirm": ` +
      `true.`
  }
  const parts: Array<string> = []
  for (const [key, value] of Object.entries(data)) {
    if (Array.isArray(value)) parts.push(`${value.length} ${key}`)
  }
  const scalars = Object.entries(data)
    .filter(([key]) => key !== "nextCursor" && key !== "secret")
    .flatMap(([key, value]) => {
      const text = scalar(value)
      return text === null ? [] : [`${key}=${text}`]
    })
    .slice(0, MAX_SCALARS)
  parts.push(...scalars)
  for (const [key, value] of Object.entries(data)) {
    // A nested object with an id (the expense created, the token revoked) is named by it.
    if (isObject(value) && typeof value.id === "string") parts.push(`${key} ${value.id}`)
  }
  if (typeof data.nextCursor === "string") parts.push("more: pass nextCursor as cursor")
  return `${name}: ${parts.length > 0 ? parts.join(", ") : "ok"}`
}
