/**
 * The ceiling: GET /api/v1/projects/:id/health on bare node:http + node-postgres (Pool of 20), the same
 * work per request as our server and the fastify peer (shared.ts), with no framework at all. Whatever
 * ours or fastify costs above this is framework.
 *
 *   DATABASE_URL=postgres://… npx node bench/peer/bare.ts --port 8789 [--host 127.0.0.1]
 */
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"
import { health, POOL_MAX, readPeerConfig } from "./shared.ts"

const config = readPeerConfig("bare peer")
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: POOL_MAX, application_name: "bench-bare" })
pool.on("error", (e) => process.stderr.write(`bare peer: idle database client: ${e.message}\n`))

const ROUTE = /^\/api\/v1\/projects\/([^/?]+)\/health(?:\?.*)?$/

const send = (res: ServerResponse, status: number, body: unknown) => {
  const json = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) })
  res.end(json)
}

const server = createServer((req, res) => {
  const match = req.method === "GET" ? ROUTE.exec(req.url ?? "") : null
  if (match === null) {
    return send(res, 404, { status: "error", error: { code: 404, message: "Not found", type: "not_found" } })
  }
  let projectId: string
  try {
    projectId = decodeURIComponent(match[1])
  } catch {
    return send(res, 404, { status: "error", error: { code: 404, message: "Project not found", type: "not_found" } })
  }
  health(pool, req.headers.authorization, projectId).then(
    (answer) => send(res, answer.status, answer.body),
    (e: Error) => {
      process.stderr.write(`bare peer: ${e.message}\n`)
      send(res, 500, {
        status: "error",
        error: { code: 500, message: "Unexpected server error", type: "internal_error" }
      })
    }
  )
})

const shutdown = () => {
  server.close()
  server.closeIdleConnections()
  pool.end().then(() => process.exit(0), () => process.exit(1))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)

server.once("error", (e) => {
  process.stderr.write(`bare peer: cannot listen on ${config.host}:${config.port}: ${e.message}\n`)
  process.exit(1)
})
server.listen(
  config.port,
  config.host,
  () => process.stdout.write(`bare peer: listening on http://${config.host}:${config.port}\n`)
)
