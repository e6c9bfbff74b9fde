/**
 * Report reads served as stored (docs/architecture.md, "Stored answers"): the access lookup reads the
 * request's stored answer with the token (http/AccessRepo.ts); when it is current — same data_version as the
 * project, same local day, younger than the freshness rule's maximum age — the handler answers it as the
 * lookup read it (the response body: the success envelope around it as UTF-8, or that gzipped), with no
 * further query, computation or encoding, as the health read does. Otherwise the handler
 * computes, answers, and keeps the encoded answer for the next read.
 */
import * as Clock from "effect/Clock"
import * as Zlib from "node:zlib"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { successText } from "@sitehealth/domain/Envelope"
import { PERIODS } from "@sitehealth/domain/Common"
import { RequestProject } from "../http/AccessRepo.ts"
import { todayIn } from "../metrics/Dates.ts"
import type { FreshnessShape } from "../snapshots/Freshness.ts"
import type { AnswersRepoShape } from "./AnswersRepo.ts"

/** The reads kept as stored answers, with how their query names the answer. */
const PERIOD_REPORTS: ReadonlySet<string> = new Set(["getAnalytics", "getRevenue", "getChurn", "getSeo"])
const PERIOD_SET: ReadonlySet<string> = new Set(PERIODS)
/** The signal list's filters, in the key's order; a page after the first (a cursor) is not kept. */
const SIGNAL_FILTERS = ["dimension", "severity", "active", "limit"] as const

type Query = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * The stored answer's key for a request to `endpoint` with these (raw) query parameters, or null when the
 * endpoint is not served from stored answers or the query is not one that is kept. Both the lookup and the
 * handler derive it from the same raw parameters, and an answer is only ever kept by a handler, that is for a
 * query that decoded: a key names one valid query.
 */
export const answerKeyOf = (endpoint: string, query: Query): string | null => {
  if (endpoint === "getBriefing") return endpoint
  if (endpoint === "listSignals") {
    if (query.cursor !== undefined) return null
    const parts: Array<string> = []
    for (const name of SIGNAL_FILTERS) {
      const value = query[name]
      if (value === undefined) continue
      if (typeof value !== "string") return null
      parts.push(`${name}=${encodeURIComponent(value)}`)
    }
    return `${endpoint}?${parts.join("&")}`
  }
  if (!PERIOD_REPORTS.has(endpoint)) return null
  const period = query.period ?? "30d"
  return typeof period === "string" && PERIOD_SET.has(period) ? `${endpoint}?period=${period}` : null
}

/** A stored-answer read's representation depends on Accept-Encoding, computed or not: caches must know. */
const VARY = { vary: "Accept-Encoding" }

const jsonAnswer = (encoded: string) =>
  HttpServerResponse.text(successText(encoded), { contentType: "application/json", headers: VARY })

/**
 * The stored answer's body as the lookup read it: the envelope already around it, UTF-8 — or that gzipped,
 * for a client that accepts gzip.
 */
const storedAnswer = (answer: { readonly body: Uint8Array; readonly gzip: boolean }) =>
  HttpServerResponse.uint8Array(answer.body, {
    contentType: "application/json",
    headers: answer.gzip ? { ...VARY, "content-encoding": "gzip" } : VARY
  })

/**
 * Below this many bytes of body an answer is not kept gzipped: a packet either way. Above it, gzip (level 6,
 * once, when the answer is kept) takes a 35 KB analytics answer to ~3 KB, which the lookup reads and the
 * socket sends instead (docs/benchmarks.md, "Stored answers, gzipped").
 */
export const GZIP_MIN_BYTES = 1_400

/** The gzipped response body of an encoded answer, or null when it is too small to be worth it. */
export const gzipBody = (encoded: string): Uint8Array | null => {
  const body = Buffer.from(successText(encoded), "utf8")
  return body.length < GZIP_MIN_BYTES ? null : Zlib.gzipSync(body, { level: 6 })
}

/** An endpoint's `data` schema, as stored answers encode it. */
export type AnswerSchema = Schema.Top & { readonly DecodingServices: never; readonly EncodingServices: never }

/**
 * The read `endpoint` of `project` (already scope-checked): served from the stored answer the access lookup
 * read when it is current, else `compute`d, encoded with the endpoint's `data` schema, kept, and answered.
 * Without a lookup (a test that authenticates without one), or for a query that is not kept, it simply
 * computes. Its services are taken once, when a handler group is built (http/GroupContext.ts).
 */
export const servedStoredWith = (freshness: FreshnessShape, answers: AnswersRepoShape) =>
<S extends AnswerSchema, E, R>(
  endpoint: string,
  project: { readonly id: string; readonly timezone: string },
  schema: S,
  compute: Effect.Effect<S["Type"], E, R>
) =>
  Effect.gen(function*() {
    const prefetched = yield* RequestProject
    if (prefetched === null || prefetched.id !== project.id || prefetched.dataVersion === null) return yield* compute
    const key = answerKeyOf(endpoint, yield* HttpServerRequest.ParsedSearchParams)
    if (key === null) return yield* compute
    const computedAt = new Date(yield* Clock.currentTimeMillis)
    const today = todayIn(project.timezone, computedAt)
    const stored = prefetched.answer
    if (stored !== null && stored.day === today && freshness.isFresh(stored, prefetched.dataVersion, computedAt)) {
      return storedAnswer(stored)
    }
    // The data_version read with the token, BEFORE computing: a write meanwhile makes what is kept stale.
    const dataVersion = prefetched.dataVersion
    const value = yield* compute
    const encoded = JSON.stringify(Schema.encodeSync(schema)(value))
    yield* answers.keep(project.id, key, { day: today, dataVersion, computedAt, encoded, gzip: gzipBody(encoded) }).pipe(
      // Keeping is an optimisation: the answer stands even when it cannot be stored.
      Effect.catchCause((cause) => Effect.logWarning("could not keep a stored answer", cause))
    )
    return jsonAnswer(encoded)
  })
