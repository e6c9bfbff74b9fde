/** The service's configuration, read once from the environment. */
import { Context, Effect, Layer } from "effect"
import * as Path from "node:path"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  /** null: start the embedded Postgres in dataDir. */
  readonly databaseUrl: string | null
  /** null: keep rate-limit counters in memory. */
  readonly redisUrl: string | null
  /** Requests per token per minute. */
  readonly rateLimit: number
  readonly maxBodyBytes: number
  readonly embeddedPgPort: number
  /** SITEHEALTH_SECRET_KEY as given (32 bytes, base64 or hex): encrypts integration credentials. null: the key
   * file in dataDir (embedded database only; see integrations/Crypto.ts). */
  readonly secretKey: string | null
  /** Default minutes between scheduled syncs of a connected integration (SITEHEALTH_SYNC_INTERVAL_MINUTES). */
  readonly syncIntervalMinutes: number
  /** Whether `npm start` runs the background work (recompute + syncs) in-process (SITEHEALTH_WORKER). */
  readonly worker: boolean
  /**
   * On SIGTERM/SIGINT, how long in-flight requests get to finish before their connections are cut
   * (SITEHEALTH_SHUTDOWN_TIMEOUT_MS).
   */
  readonly shutdownTimeoutMs: number
  /**
   * On SIGTERM/SIGINT, how long to keep accepting requests (with /readyz answering 503) before the listener
   * closes, so a load balancer polling /readyz stops routing here first (SITEHEALTH_SHUTDOWN_DELAY_MS).
   */
  readonly shutdownDelayMs: number
  /** LOG_FORMAT: `json` (one JSON object per line) or `pretty` (for people); see readLogSettings. */
  readonly logFormat: LogFormat
  /** LOG_LEVEL: the least severe level written; `none` writes nothing. */
  readonly logLevel: LogLevelName
  /**
   * METRICS_TOKEN: when set, GET /metrics wants `Authorization: Bearer <it>`; null: /metrics is open (bind the
   * listener to a private interface then — docs/operations.md).
   */
  readonly metricsToken: string | null
}

export type LogFormat = "json" | "pretty"
export const LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "none"] as const
export type LogLevelName = (typeof LOG_LEVELS)[number]

/** "warn" is what most tools call it; accepted so a habit does not stop the server. */
const LOG_LEVEL_ALIASES: Record<string, LogLevelName> = { warn: "warning" }

export interface LogSettings {
  readonly logFormat: LogFormat
  readonly logLevel: LogLevelName
}

/**
 * LOG_FORMAT and LOG_LEVEL alone (the admin CLI needs only these). Unset LOG_FORMAT means `pretty` when the
 * stream the logs go to is a terminal and `json` otherwise: a developer running `npm start` reads lines, while
 * a container, systemd or a pipe into a collector gets one parseable object per line without being told.
 */
export const readLogSettings = (env: NodeJS.ProcessEnv, isTerminal: boolean): LogSettings => {
  const format = nonEmpty(env.LOG_FORMAT)?.toLowerCase() ?? (isTerminal ? "pretty" : "json")
  if (format !== "json" && format !== "pretty") {
    throw new Error(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`)
  }
  const rawLevel = nonEmpty(env.LOG_LEVEL)?.toLowerCase() ?? "info"
  const level = LOG_LEVEL_ALIASES[rawLevel] ?? rawLevel
  if (!(LOG_LEVELS as ReadonlyArray<string>).includes(level)) {
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`)
  }
  return { logFormat: format, logLevel: level as LogLevelName }
}

/** Shorter than this, a bearer token for /metrics is guessable; refuse it rather than pretend to protect. */
export const METRICS_TOKEN_MIN_LENGTH = 16

const metricsTokenFrom = (raw: string | undefined): string | null => {
  const token = nonEmpty(raw)
  if (token !== null && (token.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(token))) {
    // The value itself is not repeated: it is a secret, and start-up errors end up in logs.
    throw new Error(`METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters without spaces (e.g. \`openssl rand -hex 32\`)`)
  }
  return token
}

const intFrom = (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  }
  return n
}

const WORKER_ON = ["1", "on", "true", "yes"]
const WORKER_OFF = ["0", "off", "false", "no"]

/** Unset means on: a single `npm start` must do everything. A typo must not silently turn the worker off. */
export const parseWorkerFlag = (raw: string | undefined): boolean => {
  if (raw === undefined || raw.trim() === "") return true
  const value = raw.trim().toLowerCase()
  if (WORKER_ON.includes(value)) return true
  if (WORKER_OFF.includes(value)) return false
  throw new Error(
    `SITEHEALTH_WORKER must be one of ${WORKER_ON.join(", ")} (run the background worker in this process) or ` +
      `${WORKER_OFF.join(", ")} (leave it to \`npm run worker\`), got "${raw}"`
  )
}

const nonEmpty = (s: string | undefined): string | null => (s === undefined || s.trim() === "" ? null : s.trim())

/** `isTerminal`: whether the logs go to a terminal (stdout for the server), for LOG_FORMAT's default. */
export const readConfig = (env: NodeJS.ProcessEnv = process.env, isTerminal = process.stdout.isTTY === true): AppConfigShape => ({
  port: intFrom("PORT", env.PORT, 8787, 0, 65535),
  host: nonEmpty(env.HOST) ?? "127.0.0.1",
  dataDir: Path.resolve(nonEmpty(env.SITEHEALTH_DATA_DIR) ?? ".data"),
  databaseUrl: nonEmpty(env.DATABASE_URL),
  redisUrl: nonEmpty(env.REDIS_URL),
  rateLimit: intFrom("SITEHEALTH_RATE_LIMIT", env.SITEHEALTH_RATE_LIMIT, 60, 1, 1_000_000),
  maxBodyBytes: intFrom("SITEHEALTH_MAX_BODY_BYTES", env.SITEHEALTH_MAX_BODY_BYTES, 64 * 1024, 1024, 10 * 1024 * 1024),
  embeddedPgPort: intFrom("SITEHEALTH_EMBEDDED_PG_PORT", env.SITEHEALTH_EMBEDDED_PG_PORT, 54329, 1, 65535),
  secretKey: nonEmpty(env.SITEHEALTH_SECRET_KEY),
  syncIntervalMinutes: intFrom("SITEHEALTH_SYNC_INTERVAL_MINUTES", env.SITEHEALTH_SYNC_INTERVAL_MINUTES, 60, 1, 7 * 24 * 60),
  worker: parseWorkerFlag(env.SITEHEALTH_WORKER),
  shutdownTimeoutMs: intFrom("SITEHEALTH_SHUTDOWN_TIMEOUT_MS", env.SITEHEALTH_SHUTDOWN_TIMEOUT_MS, 10_000, 0, 600_000),
  shutdownDelayMs: intFrom("SITEHEALTH_SHUTDOWN_DELAY_MS", env.SITEHEALTH_SHUTDOWN_DELAY_MS, 0, 0, 600_000),
  ...readLogSettings(env, isTerminal),
  metricsToken: metricsTokenFrom(env.METRICS_TOKEN)
})

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("sitehealth/AppConfig") {
  static readonly layerFromEnv = Layer.effect(AppConfig, Effect.sync(() => readConfig()))
  static readonly layer = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
}
