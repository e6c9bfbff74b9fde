/**
 * A Plausible stand-in that tells which process called it and whose answers can be held or delayed; used by
 * worker-kill.ts and by packages/server/test/ScaleOut.test.ts (through test/support/ScaleOut.ts).
 */
import { closeNow } from "@sitehealth/fakes/FakeHttp"
import { createServer, type IncomingMessage } from "node:http"
import * as Net from "node:net"
import { sleep } from "./common.ts"

export interface PlausibleCall {
  /** The first path segment: each process gets its own PLAUSIBLE_API_BASE (`<url>/<name>`). */
  readonly instance: string
  readonly site: string
  readonly dimensions: string
  /** The caller went away before the answer (its worker was stopped or killed). */
  aborted: boolean
}

export interface FakePlausible {
  readonly url: string
  /** Every /api/v2/query: which process asked, for which site and dimensions. */
  readonly calls: Array<PlausibleCall>
  /** Leaves the next `time:day` query of `site` unanswered; resolves with it once it arrives. */
  readonly hold: (site: string) => Promise<PlausibleCall>
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => resolve(body))
  })

/**
 * Answers Plausible's POST /api/v2/query (under `/<instance>/`, so it knows which process called) with no
 * rows (zeros for aggregates): enough for the real connector to finish a sync. `dayDelayMs` delays the
 * `time:day` query — the first of every sync, so their count per site is how many times that site's sync
 * ran — to keep each run busy while other workers poll. Shared with packages/server/test/ScaleOut.test.ts.
 */
export const startFakePlausible = async (options: { readonly dayDelayMs?: number } = {}): Promise<FakePlausible> => {
  const calls: Array<PlausibleCall> = []
  const holds = new Map<string, (call: PlausibleCall) => void>()
  const server = createServer(async (req, res) => {
    const m = /^\/([^/]+)\/api\/v2\/query$/.exec(req.url ?? "")
    let body: any = null
    try {
      body = JSON.parse((await readBody(req)) || "null")
    } catch {
      body = null
    }
    if (m === null || req.method !== "POST" || body === null) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "Not found" }))
      return
    }
    const call: PlausibleCall = {
      instance: m[1],
      site: String(body.site_id),
      dimensions: (body.dimensions ?? []).join(","),
      aborted: false
    }
    calls.push(call)
    res.on("close", () => {
      if (!res.writableEnded) call.aborted = true
    })
    const held = call.dimensions === "time:day" ? holds.get(call.site) : undefined
    if (held !== undefined) {
      holds.delete(call.site)
      held(call)
      return // never answered: the sync sits in the connector until its worker stops
    }
    if (call.dimensions === "time:day" && options.dayDelayMs !== undefined) await sleep(options.dayDelayMs)
    const results = call.dimensions === "" ? [{ dimensions: [], metrics: (body.metrics ?? []).map(() => 0) }] : []
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results, meta: {}, query: body }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    hold: (site) => new Promise((resolve) => holds.set(site, resolve)),
    close: () => closeNow(server)
  }
}
