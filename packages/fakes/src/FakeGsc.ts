/**
 * A local Google for tests, on 127.0.0.1 (port 0): the OAuth2 token endpoint (POST /token, form
 * grant_type=refresh_token) and the Search Console API (GET /webmasters/v3/sites/{siteUrl},
 * POST /webmasters/v3/sites/{siteUrl}/searchAnalytics/query), with Google's shapes: invalid_grant as
 * 400 {error, error_description}, API errors as {error: {code, message, status}}, rows as
 * {keys, clicks, impressions, ctr, position} sorted by clicks, paged by rowLimit/startRow, and no `rows`
 * key at all when nothing matches. Access tokens die after `expiresIn` seconds or after `tokenUses` API
 * calls (an expiry in the middle of a run). `apiScript`/`tokenScript` queue canned answers.
 *
 * The dashboard's sign-in: GET /o/oauth2/v2/auth (Google's authorize endpoint: client_id, redirect_uri,
 * response_type=code, state, code_challenge with code_challenge_method=S256 required) answers 302 to
 * redirect_uri?code&state as if the user consented; POST /token with grant_type=authorization_code checks the
 * client, the code (single use), the redirect_uri and SHA-256(code_verifier) against the challenge, and
 * issues an access token and `options.refreshToken`. GET /webmasters/v3/sites is sites.list (`sites`).
 */
import { createHash } from "node:crypto"
import { createServer, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { closeNow, readBody, send } from "./FakeHttp.ts"
import type { CannedResponse } from "./FakePlausible.ts"

export interface GscFactRow {
  readonly date: string
  readonly query: string
  readonly page: string
  readonly clicks: number
  readonly impressions: number
  readonly position: number
}

export interface GscTotals {
  readonly clicks: number
  readonly impressions: number
  readonly position: number
}

export interface FakeGscOptions {
  readonly clientId: string
  readonly clientSecret: string
  readonly refreshToken: string
  readonly siteUrl: string
  rows: Array<GscFactRow>
  /** The property's totals per day (they include anonymised queries, so they exceed the rows' sums). */
  totals: Record<string, GscTotals>
  expiresIn?: number
  tokenUses?: number
  /** sites.list: the account's properties (default: siteUrl as owner). */
  sites?: Array<{ siteUrl: string; permissionLevel: string }>
}

export interface FakeGsc {
  readonly url: string
  readonly tokenUrl: string
  readonly options: FakeGscOptions
  readonly apiScript: Array<CannedResponse | null>
  readonly tokenScript: Array<CannedResponse | null>
  readonly apiRequests: Array<
    {
      readonly at: number
      readonly method: string
      readonly path: string
      readonly authorization: string | undefined
      readonly body: GscQuery | null
    }
  >
  readonly tokenRequests: Array<Record<string, string>>
  /** The authorize endpoint's URL (GOOGLE_AUTH_URL). */
  readonly authUrl: string
  /** Every authorize request's query, as sent. */
  readonly authorizeRequests: Array<Record<string, string>>
  revoke(): void
  close(): Promise<void>
}

const apiError = (res: ServerResponse, code: number, status: string, message: string) =>
  send(res, code, { error: { code, message, status } })

interface Agg {
  keys: Array<string>
  clicks: number
  impressions: number
  weighted: number
}

/** A Search Analytics query as the fake reads it (anything else in the body is kept, unread). */
export interface GscQuery {
  readonly startDate: string
  readonly endDate: string
  readonly dimensions: ReadonlyArray<"date" | "query" | "page">
  readonly startRow?: number
  readonly rowLimit?: number
  readonly [other: string]: unknown
}

/** Search Analytics over the fact rows: group by the asked dimensions, position averaged by impressions. */
const searchAnalytics = (o: FakeGscOptions, q: GscQuery) => {
  const dims = q.dimensions
  const inRange = (d: string) => d >= q.startDate && d <= q.endDate
  const groups = new Map<string, Agg>()
  if (dims.length === 1 && dims[0] === "date") {
    for (const [date, t] of Object.entries(o.totals)) {
      if (inRange(date)) {
        groups.set(date, {
          keys: [date],
          clicks: t.clicks,
          impressions: t.impressions,
          weighted: t.position * t.impressions
        })
      }
    }
  } else {
    for (const r of o.rows) {
      if (!inRange(r.date)) continue
      const keys = dims.map((d) => r[d])
      const key = keys.join("\u0000")
      const g = groups.get(key) ?? { keys, clicks: 0, impressions: 0, weighted: 0 }
      g.clicks += r.clicks
      g.impressions += r.impressions
      g.weighted += r.position * r.impressions
      groups.set(key, g)
    }
  }
  const all = [...groups.values()].sort((a, b) =>
    b.clicks - a.clicks || b.impressions - a.impressions || (a.keys.join() < b.keys.join() ? -1 : 1)
  )
  const page = all.slice(q.startRow ?? 0, (q.startRow ?? 0) + (q.rowLimit ?? 1000))
  const rows = page.map((g) => ({
    keys: g.keys,
    clicks: g.clicks,
    impressions: g.impressions,
    ctr: g.impressions === 0 ? 0 : g.clicks / g.impressions,
    position: g.impressions === 0 ? 0 : g.weighted / g.impressions
  }))
  return rows.length === 0 ? { responseAggregationType: "byProperty" } : { rows, responseAggregationType: "byProperty" }
}

export const startFakeGsc = async (options: FakeGscOptions): Promise<FakeGsc> => {
  let revoked = false
  let issued_ = 0
  const tokens = new Map<string, { expiresAt: number; usesLeft: number }>()
  const apiScript: Array<CannedResponse | null> = []
  const tokenScript: Array<CannedResponse | null> = []
  const apiRequests: FakeGsc["apiRequests"] = []
  const tokenRequests: Array<Record<string, string>> = []
  const authorizeRequests: Array<Record<string, string>> = []
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; used: boolean }>()
  let codesIssued = 0

  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req)
    const path = req.url ?? "/"
    if (path.startsWith("/o/oauth2/v2/auth?")) {
      const q = Object.fromEntries(new URL(path, "http://x").searchParams)
      authorizeRequests.push(q)
      if (q.client_id !== options.clientId) {
        return send(res, 401, { error: "invalid_client", error_description: "The OAuth client was not found." })
      }
      if (q.response_type !== "code" || !q.redirect_uri || !q.state) {
        return send(res, 400, {
          error: "invalid_request",
          error_description: "Missing response_type, redirect_uri or state"
        })
      }
      if (q.code_challenge_method !== "S256" || !q.code_challenge) {
        return send(res, 400, { error: "invalid_request", error_description: "PKCE with S256 is required" })
      }
      const code = `4/fake-code-${++codesIssued}`
      codes.set(code, { clientId: q.client_id, redirectUri: q.redirect_uri, challenge: q.code_challenge, used: false })
      const to = new URL(q.redirect_uri)
      to.searchParams.set("code", code)
      to.searchParams.set("state", q.state)
      to.searchParams.set("scope", q.scope ?? "")
      res.writeHead(302, { location: to.toString() })
      return res.end()
    }
    if (path === "/webmasters/v3/sites" && req.method === "GET") {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const token = bearer === undefined ? undefined : tokens.get(bearer)
      if (token === undefined || token.expiresAt <= Date.now()) {
        return apiError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
      }
      return send(res, 200, {
        siteEntry: options.sites ?? [{ siteUrl: options.siteUrl, permissionLevel: "siteOwner" }]
      })
    }
    if (path === "/token") {
      const form = Object.fromEntries(new URLSearchParams(text))
      tokenRequests.push(form)
      const canned = tokenScript.shift()
      if (canned !== undefined && canned !== null) return send(res, canned.status, canned.body ?? "", canned.headers)
      if (form.grant_type === "authorization_code") {
        if (form.client_id !== options.clientId || form.client_secret !== options.clientSecret) {
          return send(res, 401, { error: "invalid_client", error_description: "Unauthorized" })
        }
        const issued = codes.get(form.code ?? "")
        if (issued === undefined || issued.used) {
          return send(res, 400, { error: "invalid_grant", error_description: "Malformed auth code." })
        }
        issued.used = true
        if (issued.redirectUri !== form.redirect_uri) {
          return send(res, 400, { error: "redirect_uri_mismatch", error_description: "Bad Request" })
        }
        const challenge = createHash("sha256").update(form.code_verifier ?? "").digest("base64url")
        if (challenge !== issued.challenge) {
          return send(res, 400, { error: "invalid_grant", error_description: "Invalid code verifier." })
        }
        const accessToken = `ya29.fake-${++issued_}`
        tokens.set(accessToken, { expiresAt: Date.now() + 3599_000, usesLeft: Infinity })
        return send(res, 200, {
          access_token: accessToken,
          expires_in: 3599,
          refresh_token: options.refreshToken,
          scope: "https://www.googleapis.com/auth/webmasters.readonly",
          token_type: "Bearer"
        })
      }
      if (form.grant_type !== "refresh_token") {
        return send(res, 400, { error: "unsupported_grant_type", error_description: "Invalid grant_type" })
      }
      if (form.client_id !== options.clientId || form.client_secret !== options.clientSecret) {
        return send(res, 401, { error: "invalid_client", error_description: "Unauthorized" })
      }
      if (revoked || form.refresh_token !== options.refreshToken) {
        return send(res, 400, { error: "invalid_grant", error_description: "Token has been expired or revoked." })
      }
      const accessToken = `ya29.fake-${++issued_}`
      const expiresIn = options.expiresIn ?? 3599
      tokens.set(accessToken, { expiresAt: Date.now() + expiresIn * 1000, usesLeft: options.tokenUses ?? Infinity })
      return send(res, 200, {
        access_token: accessToken,
        expires_in: expiresIn,
        scope: "https://www.googleapis.com/auth/webmasters.readonly",
        token_type: "Bearer"
      })
    }

    let body: GscQuery | null = null
    try {
      body = text.length > 0 ? JSON.parse(text) : null
    } catch {
      body = null
    }
    apiRequests.push({ at: Date.now(), method: req.method ?? "", path, authorization: req.headers.authorization, body })
    const canned = apiScript.shift()
    if (canned !== undefined && canned !== null) return send(res, canned.status, canned.body ?? "", canned.headers)
    const m = /^\/webmasters\/v3\/sites\/([^/]+)(\/searchAnalytics\/query)?$/.exec(path)
    if (m === null) return apiError(res, 404, "NOT_FOUND", "Not Found")
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
    const token = bearer === undefined ? undefined : tokens.get(bearer)
    if (token === undefined || token.expiresAt <= Date.now() || token.usesLeft <= 0) {
      return apiError(
        res,
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid " +
          "authentication credential."
      )
    }
    token.usesLeft--
    if (decodeURIComponent(m[1]) !== options.siteUrl) {
      return apiError(
        res,
        403,
        "PERMISSION_DENIED",
        `User does not have sufficient permission for site '${decodeURIComponent(m[1])}'.`
      )
    }
    if (m[2] === undefined) {
      if (req.method !== "GET") return apiError(res, 405, "METHOD_NOT_ALLOWED", "Method not allowed")
      return send(res, 200, { siteUrl: options.siteUrl, permissionLevel: "siteOwner" })
    }
    if (req.method !== "POST" || body === null) {
      return apiError(res, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
    }
    return send(res, 200, searchAnalytics(options, body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    tokenUrl: `${url}/token`,
    authUrl: `${url}/o/oauth2/v2/auth`,
    authorizeRequests,
    options,
    apiScript,
    tokenScript,
    apiRequests,
    tokenRequests,
    // As Google does when a grant is revoked: its refresh token and the access tokens it gave stop working.
    revoke: () => {
      revoked = true
      tokens.clear()
    },
    close: () => closeNow(server)
  }
}
