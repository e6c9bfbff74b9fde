/**
 * What both peers (fastify.ts, bare.ts) share: their configuration, and the work of
 * GET /api/v1/projects/:id/health exactly as our server does it, minus the framework:
 *
 *   1. sha256 of the Bearer secret; ONE query for the token joined with its account
 *      → 401 unknown / revoked / expired, 402 trial ended and no paid-up subscription,
 *        403 the token lacks projects:read;
 *   2. ONE query for the project joined with its stored snapshot of the project's local today
 *      → 404 no such project in the token's account, 403 outside the token's project list;
 *   3. `{"status":"success","data": <stored health>}`.
 *
 * Same order of checks and the same envelope as ours (packages/server/src/http/Authentication.ts,
 * http/ProjectPolicy.ts), so that the bench can compare the peers' answers with ours before measuring.
 * Node-postgres with named (prepared) statements, as a developer who cares about this path would.
 */
import { createHash } from "node:crypto"
import { parseArgs } from "node:util"
import type pg from "pg"

export interface PeerConfig {
  readonly host: string
  readonly port: number
  readonly databaseUrl: string
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"])

/** --host/--port or HOST/PORT, and DATABASE_URL. Only loopback: these servers exist to be measured here. */
export const readPeerConfig = (name: string): PeerConfig => {
  const { values } = parseArgs({ options: { host: { type: "string" }, port: { type: "string" } } })
  const host = values.host ?? process.env.HOST ?? "127.0.0.1"
  const rawPort = values.port ?? process.env.PORT ?? "8788"
  const port = Number(rawPort)
  const databaseUrl = process.env.DATABASE_URL ?? ""
  const fail = (message: string): never => {
    process.stderr.write(`${name}: ${message}\n`)
    process.exit(1)
  }
  if (!LOOPBACK.has(host)) {
    fail(`refusing to listen on ${host}: a bench peer binds to loopback only (127.0.0.1, ::1, localhost)`)
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    fail(`port must be an integer between 0 and 65535, got "${rawPort}"`)
  }
  if (databaseUrl.trim() === "") fail("DATABASE_URL is required (the bench database; see bench/seed.ts)")
  return { host, port, databaseUrl }
}

export const POOL_MAX = 20

export const TOKEN_QUERY = {
  name: "peer_token",
  text: `SELECT t.account_id, t.projects, t.permissions, t.expires_at, t.revoked_at,
           a.trial_ends_at, a.subscription_status, a.subscription_until
         FROM tokens t JOIN accounts a ON a.id = t.account_id
         WHERE t.secret_sha256 = $1`
}

/** The project's local today is computed by Postgres from the project's own time zone. */
export const HEALTH_QUERY = {
  name: "peer_health",
  text: `SELECT p.account_id, h.body
         FROM projects p
         LEFT JOIN health_snapshots h ON h.project_id = p.id AND h.day = (now() AT TIME ZONE p.timezone)::date
         WHERE p.id = $1`
}

export interface PeerAnswer {
  readonly status: number
  readonly body: unknown
}

const error = (status: number, code: number | string, type: string, message: string): PeerAnswer => ({
  status,
  body: { status: "error", error: { code, message, type } }
})
const unauthorized = (type: string) => error(401, 401, type, "Invalid or expired token")

/** Live while the trial runs, or a subscription is active (or canceled but paid up to `until`). */
const isEntitled = (row: any, now: number): boolean => {
  if (row.trial_ends_at.getTime() > now) return true
  const until: Date | null = row.subscription_until
  if (row.subscription_status === "active") return until === null || until.getTime() > now
  if (row.subscription_status === "canceled") return until !== null && until.getTime() > now
  return false
}

export const health = async (
  pool: pg.Pool,
  authorization: string | undefined,
  projectId: string
): Promise<PeerAnswer> => {
  if (authorization === undefined || !authorization.startsWith("Bearer ")) return unauthorized("missing_token")
  const secret = authorization.slice(7).trim()
  if (secret === "") return unauthorized("missing_token")
  const hash = createHash("sha256").update(secret).digest()
  const tokens = await pool.query({ ...TOKEN_QUERY, values: [hash] })
  if (tokens.rows.length === 0) return unauthorized("invalid_token")
  const token = tokens.rows[0]
  const now = Date.now()
  if (token.revoked_at !== null) return unauthorized("token_revoked")
  if (token.expires_at !== null && token.expires_at.getTime() <= now) return unauthorized("token_expired")
  if (!isEntitled(token, now)) {
    return error(
      402,
      "trial_expired",
      "trial_expired",
      "Your trial or subscription has ended; subscribe to continue using the API."
    )
  }
  if (!token.permissions.includes("projects:read")) {
    return error(403, 403, "missing_permission", "This token lacks the projects:read permission")
  }

  const rows = await pool.query({ ...HEALTH_QUERY, values: [projectId] })
  if (rows.rows.length === 0 || rows.rows[0].account_id !== token.account_id) {
    return error(404, 404, "not_found", "Project not found")
  }
  if (token.projects !== null && !token.projects.includes(projectId)) {
    return error(403, 403, "project_out_of_scope", "This token is not allowed to access this project")
  }
  const body = rows.rows[0].body
  // Ours computes a missing snapshot on the spot; a peer only reads. The bench asks ours first.
  if (body === null) return error(503, 503, "not_computed", "No health snapshot stored for the project's today yet")
  return { status: 200, body: { status: "success", data: body } }
}
