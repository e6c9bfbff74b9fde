/**
 * A local Plausible Stats API v2 for tests: POST /api/v2/query on 127.0.0.1 (port 0), answering from a
 * dataset the test writes by hand, with the real request and response shapes — bearer key, `site_id`,
 * `date_range: [from, to]`, `dimensions`, `pagination: {limit, offset}` (default 10,000), and
 * `{results: [{dimensions, metrics}], meta, query}`. Time labels are the site's local time, as Plausible's
 * are ("2026-03-29" for days, "2026-03-29 03:00:00" for hours). `script` queues canned answers (429 with
 * Retry-After, 5xx, bodies that are not JSON) served before the real ones; `requests` records every query.
 * GET /api/v1/sites/{site_id} (the Sites API) answers the site's time zone when the test gives one, else 401
 * as to a Stats-only key; its calls are recorded in `siteRequests` and take no scripted answer.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { closeNow, readBody, send } from "./FakeHttp.ts"

/** [visitors, visits, pageviews, bounce_rate %, visit_duration s] */
export type Metrics5 = readonly [number, number, number, number, number]
const METRIC_INDEX: Record<string, number> = { visitors: 0, visits: 1, pageviews: 2, bounce_rate: 3, visit_duration: 4 }

export interface PlausibleData {
  /** Local day → its metrics. */
  days: Record<string, Metrics5>
  /** Local hour label "YYYY-MM-DD HH:00:00" → its metrics. */
  hours: Record<string, Metrics5>
  /** [day, path, visitors, pageviews] */
  pages: Array<readonly [string, string, number, number]>
  /** [day, source, visitors, visits]; a visit without a referrer is "Direct / None", as Plausible says. */
  sources: Array<readonly [string, string, number, number]>
  /** [day, country (ISO 3166-1 alpha-2, as Plausible's visit:country gives it), visitors]; absent = none. */
  countries?: Array<readonly [string, string, number]>
  /** "from|to" → unique visitors of that exact range (an aggregate query without dimensions). */
  uniques: Record<string, number>
}

export interface CannedResponse {
  readonly status: number
  readonly body?: string
  readonly headers?: Record<string, string>
}

/** A Stats API v2 query as the fake reads it (what the connector sends; anything else in the body is kept, unread). */
export interface PlausibleQuery {
  readonly site_id?: string
  readonly metrics: ReadonlyArray<string>
  readonly date_range: readonly [string, string]
  readonly dimensions?: ReadonlyArray<string>
  readonly pagination?: { readonly limit?: number; readonly offset?: number }
  readonly [other: string]: unknown
}

export interface RecordedRequest {
  readonly at: number
  readonly authorization: string | undefined
  /** The parsed JSON body (null when absent or not JSON). */
  readonly body: PlausibleQuery | null
}

export interface FakePlausible {
  readonly url: string
  data: PlausibleData
  /** Answers for the next requests, in order; null = answer that request normally. */
  readonly script: Array<CannedResponse | null>
  readonly requests: Array<RecordedRequest>
  /** Calls of the Sites API (GET /api/v1/sites/{site_id}), apart from the queries. */
  readonly siteRequests: Array<RecordedRequest>
  /** The API key stops working (as when it is deleted in Plausible's settings). */
  revoke(): void
  close(): Promise<void>
}

const inRange = (day: string, [from, to]: readonly [string, string]) => day >= from && day <= to

/** The rows a query asks for, before pagination. */
const answer = (
  data: PlausibleData,
  q: PlausibleQuery
): Array<{ dimensions: Array<string>; metrics: Array<number> }> => {
  const range = q.date_range
  const pick = (m: Metrics5) => q.metrics.map((name) => m[METRIC_INDEX[name]])
  const dims = (q.dimensions ?? []).join(",")
  switch (dims) {
    case "": {
      const key = `${range[0]}|${range[1]}`
      if (q.metrics.length === 1 && q.metrics[0] === "visitors" && key in data.uniques) {
        return [{ dimensions: [], metrics: [data.uniques[key]] }]
      }
      const days = Object.entries(data.days).filter(([d]) => inRange(d, range))
      const visitors = days.reduce((s, [, m]) => s + m[0], 0)
      return [{ dimensions: [], metrics: q.metrics.map((name: string) => (name === "visitors" ? visitors : 0)) }]
    }
    case "time:day":
      return Object.entries(data.days).filter(([d]) => inRange(d, range)).sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([d, m]) => ({ dimensions: [d], metrics: pick(m) }))
    case "time:hour":
      return Object.entries(data.hours).filter(([h]) => inRange(h.slice(0, 10), range)).sort((
        [a],
        [b]
      ) => (a < b ? -1 : 1))
        .map(([h, m]) => ({ dimensions: [h], metrics: pick(m) }))
    case "time:day,event:page":
      return data.pages.filter(([d]) => inRange(d, range))
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : b[3] - a[3]))
        .map(([d, path, visitors, pageviews]) => ({
          dimensions: [d, path],
          metrics: q.metrics.map((name: string) => (name === "visitors" ? visitors : pageviews))
        }))
    case "time:day,visit:source":
      return data.sources.filter(([d]) => inRange(d, range))
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : b[2] - a[2]))
        .map(([d, source, visitors, visits]) => ({
          dimensions: [d, source],
          metrics: q.metrics.map((name: string) => (name === "visitors" ? visitors : visits))
        }))
    case "time:day,visit:country":
      return (data.countries ?? []).filter(([d]) => inRange(d, range))
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : b[2] - a[2]))
        .map(([d, country, visitors]) => ({
          dimensions: [d, country],
          metrics: q.metrics.map((name: string) => (name === "visitors" ? visitors : 0))
        }))
    default:
      throw new Error(`the fake does not know dimensions ${dims}`)
  }
}

export const startFakePlausible = async (options: {
  apiKey: string
  siteId: string
  data: PlausibleData
  /**
   * The site's zone, answered by GET /api/v1/sites/{site_id} (the Sites API) to this key. Unset: that
   * endpoint answers 401, as Plausible does to a Stats API key without the Sites scope.
   */
  siteTimezone?: string
  /** Where each query's data comes from, read per request (the demo's data of the current hour); `data` when unset. */
  source?: () => PlausibleData
}): Promise<FakePlausible> => {
  let revoked = false
  const script: Array<CannedResponse | null> = []
  const requests: Array<RecordedRequest> = []
  const siteRequests: Array<RecordedRequest> = []
  const fake = { data: options.data }
  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req)
    let body: PlausibleQuery | null = null
    try {
      body = JSON.parse(text)
    } catch {
      body = null
    }
    // The Sites API: its own requests list, and scripted answers stay for the Stats API's queries.
    if (req.method === "GET" && req.url === `/api/v1/sites/${encodeURIComponent(options.siteId)}`) {
      siteRequests.push({ at: Date.now(), authorization: req.headers.authorization, body: null })
      if (revoked || options.siteTimezone === undefined || req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return send(res, 401, {
          error: "Invalid API key. Please make sure you're using a valid API key with access to the resource you've " +
            "requested."
        })
      }
      return send(res, 200, { domain: options.siteId, timezone: options.siteTimezone, custom_properties: [] })
    }
    requests.push({ at: Date.now(), authorization: req.headers.authorization, body })
    const canned = script.shift()
    if (canned !== undefined && canned !== null) return send(res, canned.status, canned.body ?? "", canned.headers)
    if (req.method !== "POST" || req.url !== "/api/v2/query") return send(res, 404, { error: "Not found" })
    if (revoked || req.headers.authorization !== `Bearer ${options.apiKey}` || body?.site_id !== options.siteId) {
      return send(res, 401, {
        error:
          "Invalid API key or site ID. Please make sure you're using a valid API key with access to the site you've " +
          "requested."
      })
    }
    if (!Array.isArray(body.date_range) || !Array.isArray(body.metrics)) {
      return send(res, 400, { error: "#/date_range: Invalid date range" })
    }
    const rows = answer(options.source?.() ?? fake.data, body)
    const limit = body.pagination?.limit ?? 10_000
    const offset = body.pagination?.offset ?? 0
    send(res, 200, { results: rows.slice(offset, offset + limit), meta: {}, query: body })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    get data() {
      return fake.data
    },
    set data(d: PlausibleData) {
      fake.data = d
    },
    script,
    requests,
    siteRequests,
    revoke: () => void (revoked = true),
    close: () => closeNow(server)
  }
}
