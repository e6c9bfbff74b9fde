/**
 * The fastify peer: GET /api/v1/projects/:id/health doing the same work per request as our server
 * (see shared.ts: token ⋈ account, then project ⋈ today's snapshot; two parameterised queries over a
 * node-postgres Pool of 20), written the way a fastify developer would: one route, params schema,
 * no logger, JSON serialised by fastify.
 *
 *   DATABASE_URL=postgres://… npx node bench/peer/fastify.ts --port 8788 [--host 127.0.0.1]
 */
import Fastify from "fastify"
import pg from "pg"
import { health, POOL_MAX, readPeerConfig } from "./shared.ts"

const config = readPeerConfig("fastify peer")
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: POOL_MAX, application_name: "bench-fastify" })
// An idle client's error (the database restarting) would otherwise crash the process.
pool.on("error", (e) => process.stderr.write(`fastify peer: idle database client: ${e.message}\n`))

const app = Fastify({ logger: false })

app.get<{ Params: { id: string } }>("/api/v1/projects/:id/health", {
  schema: { params: { type: "object", properties: { id: { type: "string", minLength: 1 } }, required: ["id"] } }
}, async (request, reply) => {
  const answer = await health(pool, request.headers.authorization, request.params.id)
  return reply.code(answer.status).send(answer.body)
})

const shutdown = () => {
  app.close().then(() => pool.end()).then(() => process.exit(0), () => process.exit(1))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)

app.listen({ host: config.host, port: config.port }).then(
  (address) => process.stdout.write(`fastify peer: listening on ${address}\n`),
  (e: Error) => {
    process.stderr.write(`fastify peer: cannot listen on ${config.host}:${config.port}: ${e.message}\n`)
    process.exit(1)
  }
)
