/**
 * Fault: Redis lost while it backs the rate limiter (REDIS_URL set).
 *
 *   npx node scripts/faults/redis-loss.ts            (or `npm run faults`; skipped when redis-server is missing)
 *
 * A private embedded Postgres, a private `redis-server` (no persistence, a free port — never the shared one
 * on 6379) and the real server with REDIS_URL on it. Requests are counted (X-RateLimit-Remaining falls);
 * then Redis is killed (SIGKILL) and the requests go on; then a new redis-server comes up on the same port.
 *
 * The documented mode is FAIL OPEN TO A LOCAL LIMITER (docs/security.md): while Redis is unreachable each
 * instance counts on its own — X-RateLimit-Remaining keeps falling from the full budget — promptly (a command
 * fails at once, no offline queue), with one warning per 10 s in the log, not one per request. Once Redis is
 * back the client reconnects by itself and the shared count resumes (a new, empty Redis counts from 1 again),
 * without a restart.
 */
import { sleep } from "./lib/common.ts"
import { call, formatCounts, statusCounts } from "./lib/http.ts"
import { seedAccount } from "./lib/postgres.ts"
import { saveLog, type Server } from "./lib/processes.ts"
import { redisServerBinary, startPrivateRedis } from "./lib/redis.ts"
import {
  type Check,
  check,
  type FaultResult,
  isMain,
  type Logs,
  result,
  runAsScript,
  stderrLog
} from "./lib/results.ts"
import { withFaultSetting } from "./lib/setting.ts"

export const FAULT = "Redis lost while it backs the rate limiter"

export interface RedisLossOptions extends Logs {
  readonly downMs: number
  readonly limit: number
}

export const DEFAULTS: RedisLossOptions = {
  downMs: 4_000,
  limit: 100_000,
  log: stderrLog("redis-loss")
}

/** One counted request (GET /projects) and the X-RateLimit-Remaining it was answered with. */
const remainingOf = async (server: Server, secret: string) => {
  const o = await call(server.base, "GET", "/api/v1/projects", { token: secret })
  const remaining = o.headers["x-ratelimit-remaining"]
  return { ...o, remaining: remaining === undefined ? null : Number(remaining) }
}

export const runRedisLoss = async (overrides: Partial<RedisLossOptions> = {}): Promise<FaultResult> => {
  const o = { ...DEFAULTS, ...overrides }
  const binary = redisServerBinary()
  if (binary === null) {
    return result(`${FAULT} (skipped: no redis-server on PATH)`, [], { skipped: "redis-server is not on PATH" })
  }
  return withFaultSetting(async ({ db, startServer, releaseAtEnd }) => {
    const r = await startPrivateRedis(binary)
    releaseAtEnd(r.kill)
    const { secret } = await seedAccount(db.url, "Redis")
    const srv = await startServer({
      name: "server",
      worker: false,
      env: { REDIS_URL: r.url, SITEHEALTH_RATE_LIMIT: String(o.limit) }
    })
    o.log(`redis on ${r.port}, server on ${srv.base}`)
    const checks: Array<Check> = []

    const up: Array<Awaited<ReturnType<typeof remainingOf>>> = []
    for (let i = 0; i < 10; i++) up.push(await remainingOf(srv, secret))
    checks.push(
      check(
        "Redis up: requests are counted (X-RateLimit-Remaining below the limit)",
        up.every((x) => x.status === 200 && x.remaining !== null && x.remaining < o.limit),
        `remaining ${up.map((x) => x.remaining).join(",")}`
      )
    )

    await r.kill()
    const killedAt = Date.now()
    const down: Array<Awaited<ReturnType<typeof remainingOf>>> = []
    while (Date.now() - killedAt < o.downMs) down.push(await remainingOf(srv, secret))
    const slowest = Math.max(...down.map((x) => x.endedAt - x.startedAt))
    const falling = down.every((x, i) =>
      x.remaining !== null && (i === 0 ? x.remaining === o.limit - 1 : x.remaining === down[i - 1].remaining! - 1)
    )
    checks.push(
      check(
        "Redis down: every request answered at once (fail open), counted by this instance",
        down.length > 0 &&
          down.every((x) => x.status === 200) && falling && slowest < 1_500,
        `${down.length} requests: ${formatCounts(statusCounts(down))}; remaining ${down[0]?.remaining} → ${
          down[down.length - 1]?.remaining
        }; slowest ${slowest} ms`
      )
    )
    const warnings = srv.proc.count("rate limiter: redis unavailable")
    const allowedWarnings = Math.ceil(o.downMs / 10_000) + 1
    checks.push(
      check(
        "the outage is logged, once per 10 s rather than per request",
        warnings >= 1 && warnings <= allowedWarnings,
        `${warnings} warning(s) for ${down.length} requests counted locally`
      )
    )
    const lowestDown = Math.min(...down.map((x) => x.remaining ?? o.limit))

    await r.start()
    const restartedAt = Date.now()
    let resumedAt: number | null = null
    const back: Array<Awaited<ReturnType<typeof remainingOf>>> = []
    while (Date.now() - restartedAt < 15_000) {
      const x = await remainingOf(srv, secret)
      back.push(x)
      // The restarted Redis is empty: its count starts at 1 again, above what the local count had reached.
      if (x.status === 200 && x.remaining !== null && x.remaining > lowestDown) {
        resumedAt = x.endedAt
        break
      }
      await sleep(100)
    }
    checks.push(
      check(
        "Redis back: counting resumes by itself, same process",
        resumedAt !== null && srv.proc.alive() && back.every((x) => x.status === 200),
        resumedAt === null
          ? "still counting locally 15 s after Redis came back"
          : `${resumedAt - restartedAt} ms after redis-server listened again`
      )
    )

    const saved = checks.every((c) => c.ok) ? {} : { "server log": saveLog(srv.proc) }
    return result(FAULT, checks, {
      ...saved,
      "mode": "fail open to a per-instance limiter, logged once per 10 s",
      "requests while Redis was down": `${down.length}: ${formatCounts(statusCounts(down))}; slowest ${slowest} ms`,
      "warnings logged": warnings,
      "Redis back → counting again": resumedAt === null ? "never" : `${resumedAt - restartedAt} ms`
    })
  })
}

if (isMain(import.meta.url)) runAsScript(FAULT, () => runRedisLoss())
