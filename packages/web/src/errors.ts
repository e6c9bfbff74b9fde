/**
 * Every failure in words: an API error's own message (the envelope's `error.message`, with any field issues),
 * a network failure, an answer the client could not read. Nothing is ever shown as a blank page.
 */
import { Cause } from "effect"

interface Described {
  readonly title: string
  readonly detail?: string
  readonly status?: number
}

const asRecord = (u: unknown): Record<string, unknown> | undefined =>
  typeof u === "object" && u !== null ? (u as Record<string, unknown>) : undefined

export const describeError = (error: unknown): Described => {
  const e = asRecord(error)
  if (e === undefined) return { title: String(error) }
  const tag = typeof e._tag === "string" ? e._tag : ""
  const message = typeof e.message === "string" ? e.message : ""
  // The contract's errors: their message is written for people.
  if (typeof e.type === "string" && message !== "") {
    const issues = Array.isArray(e.issues)
      ? (e.issues as Array<{ path: string; message: string }>).map((i) =>
        `${i.path.replace(/^body\./, "")}: ${i.message}`
      ).join("; ")
      : ""
    return issues === "" ? { title: message } : { title: message, detail: issues }
  }
  if (tag === "HttpClientError") {
    const reason = asRecord(e.reason)
    const status = asRecord(reason?.response)?.status
    if (typeof status === "number") {
      return { title: `The server answered ${status} unexpectedly. Try again in a moment.`, status }
    }
    return { title: "Could not reach the server. Check your connection and try again." }
  }
  if (tag === "SchemaError") return { title: "The server's answer could not be read.", detail: message }
  return { title: message !== "" ? message : "Something went wrong." }
}

export const describeCause = (cause: Cause.Cause<unknown>): Described => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some") return describeError(failure.value)
  const defect = cause.reasons.find(Cause.isDieReason)
  return describeError(defect?.defect ?? "Something went wrong.")
}

/** True when the failure means "not logged in" (the session is missing or expired). */
export const isUnauthenticated = (cause: Cause.Cause<unknown>): boolean => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag !== "Some") return false
  const e = asRecord(failure.value)
  return e?._tag === "Unauthorized" || e?._tag === "Unauthenticated"
}

/** The contract error's `type` (`invalid_code`, `invalid_link`…) when the failure is one of the API's errors. */
export const errorType = (cause: Cause.Cause<unknown>): string | undefined => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag !== "Some") return undefined
  const type = asRecord(failure.value)?.type
  return typeof type === "string" ? type : undefined
}
