/**
 * Report reads served as stored (docs/architecture.md, "Stored answers"): the access lookup reads the
 * request's stored answer with the token (access/AccessRepo.ts); when it is current — same data_version as the
 * project, same local day, younger than the freshness rule's maximum age — the handler answers it as the
 * lookup read it (the response body: the success envelope around it as UTF-8, or that gzipped), with no
 * further query, computation or encoding, as the health read does. Otherwise the handler
 * computes, answers, and keeps the encoded answer for the next read. Which reads keep answers, and how their
 * query names one, is each endpoint's `FastPath` annotation in the contract (`storedAnswer`), read here from the
 * endpoint itself.
 */
import { fastPathOf } from "@sitehealth/domain/ApiOperation"
import { PERIODS } from "@sitehealth/domain/Common"
import { successText } from "@sitehealth/domain/Envelope"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"
import * as Zlib from "node:zlib"
import type { AnswersRepoShape } from "../answers/AnswersRepo.ts"
import { todayIn } from "../metrics/Dates.ts"
import type { FreshnessShape } from "../recompute/Freshness.ts"
import { RequestProject } from "./AccessRepo.ts"

/** The signal list's filters, in the key's order; a page after the first (a cursor) is not kept. */
const SIGNAL_FILTERS = ["dimension", "severity", "active", "limit"] as const

type Query = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * A CSV request (`format=csv`, @sitehealth/domain/Csv) has no stored answer (they are JSON): none is read for it.
 * (A CSV asked by `Accept: text/csv` alone is told apart by the handler, which then computes.)
 */
const isCsv = (query: Query) => query.format !== undefined && query.format !== "json"

/** The stored answer's key for a request's (raw) query parameters; null when the query is not one that is kept. */
export type AnswerKey = (query: Query) => string | null

/** What of an endpoint its stored answers are known by: its name, and its `FastPath` annotation. */
export interface AnswerEndpoint {
  readonly identifier: string
  readonly annotations: Context.Context<never>
}

/**
 * How `endpoint`'s stored answers are keyed, from its `FastPath` annotation's `storedAnswer`
 * (@sitehealth/domain/ApiOperation), or null when it keeps none. Taken once per endpoint (the authentication
 * middleware's lookup plan, a handler group being built), never per request. The key is the endpoint's name and
 * its normalised query — `getAnalytics?period=30d`, `listSignals?active=true`, `getBriefing` —, so a renamed
 * endpoint keeps its fast path, its answers kept afresh under its new name (the old name's rows are never read
 * again). Both the
 * lookup and the handler derive it from the same raw parameters, and an answer is only ever kept by a handler,
 * that is for a query that decoded: a key names one valid query.
 */
export const answerKeyOf = (endpoint: AnswerEndpoint): AnswerKey | null => {
  const kind = fastPathOf(endpoint)?.storedAnswer ?? null
  const name = endpoint.identifier
  switch (kind) {
    case null:
      return null
    case "whole":
      return (query) => (isCsv(query) ? null : name)
    case "period": {
      // One key per period, made once: a lookup per request, no string built (absent = the default, 30d).
      const keys = new Map<unknown, string>(PERIODS.map((period) => [period, `${name}?period=${period}`]))
      const fallback = keys.get("30d")!
      return (query) => isCsv(query) ? null : query.period === undefined ? fallback : keys.get(query.period) ?? null
    }
    case "signalFilters":
      return (query) => {
        if (query.cursor !== undefined || isCsv(query)) return null
        const parts: Array<string> = []
        for (const filter of SIGNAL_FILTERS) {
          const value = query[filter]
          if (value === undefined) continue
          if (typeof value !== "string") return null
          parts.push(`${filter}=${encodeURIComponent(value)}`)
        }
        return `${name}?${parts.join("&")}`
      }
  }
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
 * The read `endpoint` (the contract's endpoint object: `ReportsApi.endpoints.getAnalytics`, whose `FastPath`
 * annotation says how its answers are keyed) of `project` (already scope-checked): served from the stored answer
 * the access lookup read when it is current, else `compute`d, encoded with the endpoint's `data` schema, kept, and
 * answered. Without a lookup (a test that authenticates without one, the dashboard), or for a query that is not
 * kept, it simply computes. Its services are taken once, when a handler group is built (http/GroupContext.ts), and
 * so is the endpoint's key: an endpoint that keeps no stored answers is refused then, when the group is built.
 */
export const servedStoredWith =
  (freshness: FreshnessShape, answers: AnswersRepoShape) =>
  <S extends AnswerSchema>(endpoint: AnswerEndpoint, schema: S) => {
    const keyOf = answerKeyOf(endpoint)
    if (keyOf === null) {
      throw new Error(`${endpoint.identifier} keeps no stored answers: its FastPath annotation has no storedAnswer`)
    }
    const encode = Schema.encodeSync(schema)
    return <E, R>(
      project: { readonly id: string; readonly timezone: string },
      compute: Effect.Effect<S["Type"], E, R>
    ) =>
      Effect.gen(function*() {
        const prefetched = yield* RequestProject
        if (prefetched === null || prefetched.id !== project.id || prefetched.dataVersion === null) {
          return yield* compute
        }
        const key = keyOf(yield* HttpServerRequest.ParsedSearchParams)
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
        const encoded = JSON.stringify(encode(value))
        yield* answers.keep(project.id, key, { day: today, dataVersion, computedAt, encoded, gzip: gzipBody(encoded) })
          .pipe(
            // Keeping is an optimisation: the answer stands even when it cannot be stored.
            Effect.catchCause((cause) => Effect.logWarning("could not keep a stored answer", cause))
          )
        return jsonAnswer(encoded)
      })
  }
