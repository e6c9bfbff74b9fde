/**
 * The service's configuration, read once at start-up through Effect's `Config` (platform/Settings.ts): every variable
 * of docs/operations.md, secrets as `Redacted`, and one SettingsError naming every bad variable at once.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Path from "node:path"
import { type BillingSettings, billingSettings } from "./BillingSettings.ts"
import { type ConnectionSettings, connectionSettings, withRedirectDefault } from "./ConnectionSettings.ts"
import { EMBEDDED_SHARED_BUFFERS, isPostgresMemorySize } from "./EmbeddedPostgres.ts"
import { providerUrlSettings } from "./ProviderUrls.ts"

/** Connections of a process's database pool by default (SITEHEALTH_DB_POOL_SIZE). */
export const POOL_MAX_CONNECTIONS = 20
import { parseSecretKey, SecretKeyError } from "./SecretKey.ts"
import { collect, int, parsed, readSync, secret, type SettingsError } from "./Settings.ts"
import { type TracingConfig, tracingSettings } from "./TracingConfig.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  /** null: start the embedded Postgres in dataDir. Redacted: it carries the database password. */
  readonly databaseUrl: Redacted.Redacted<string> | null
  /**
   * Connections of each process's database pool (SITEHEALTH_DB_POOL_SIZE, default 20): with N servers and workers
   * on one PostgreSQL, N × this must stay under its max_connections.
   */
  readonly databasePoolSize: number
  /** null: keep rate-limit counters in memory. Redacted: it may carry a password. */
  readonly redisUrl: Redacted.Redacted<string> | null
  /** Requests per token per minute. */
  readonly rateLimit: number
  readonly maxBodyBytes: number
  readonly embeddedPgPort: number
  /** The embedded cluster's shared_buffers (SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS; EmbeddedPostgres.ts). */
  readonly embeddedPgSharedBuffers: string
  /** SITEHEALTH_SECRET_KEY as given (32 bytes, base64 or hex): encrypts integration credentials. null: the key
   * file in dataDir (embedded database only; see integrations/Crypto.ts). */
  readonly secretKey: Redacted.Redacted<string> | null
  /** SITEHEALTH_SECRET_KEY_OLD during a key rotation (see integrations/Crypto.ts oldSecretKey); null when unset. */
  readonly secretKeyOld: Redacted.Redacted<string> | null
  /** Default minutes between scheduled syncs of a connected integration (SITEHEALTH_SYNC_INTERVAL_MINUTES). */
  readonly syncIntervalMinutes: number
  /**
   * How long one sync run may take in all, provider calls and writes (SITEHEALTH_SYNC_DEADLINE_MINUTES):
   * past it the run is stopped and fails as a timeout (retried; a Stripe listing resumes from its last batch).
   */
  readonly syncDeadlineMinutes: number
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
  readonly metricsToken: Redacted.Redacted<string> | null
  /** The OTEL_* variables (platform/Tracing.ts); null: tracing off. */
  readonly tracing: TracingConfig | null
  /**
   * PUBLIC_URL: the origin people reach the server at (`https://health.example.com`), for links in mail, the
   * dashboard's Origin check and the session cookie's `Secure` flag (set when it is https). null: the request's
   * own Host is the only accepted origin and links point at http://HOST:PORT.
   */
  readonly publicUrl: string | null
  /** SMTP_URL (`smtp://user:pass@host:587`, `smtps://…`): where the dashboard's mail goes; null: to the log. */
  readonly smtpUrl: Redacted.Redacted<string> | null
  /** MAIL_FROM: the sender of the dashboard's mail. */
  readonly mailFrom: string
  /**
   * SITEHEALTH_SIGNING_KEY (≥ 32 characters): signs the dashboard's email links and CSRF tokens (HMAC-SHA-256).
   * null: a random key per process (links die with a restart; set it when more than one instance runs).
   */
  readonly signingKey: Redacted.Redacted<string> | null
  /** Minutes a dashboard session lives without a request (SITEHEALTH_SESSION_IDLE_MINUTES; ASVS L2: 30). */
  readonly sessionIdleMinutes: number
  /** Hours a dashboard session lives at most, however active (SITEHEALTH_SESSION_MAX_HOURS; ASVS L2: 12). */
  readonly sessionMaxHours: number
  /**
   * Days a session lives (idle and absolute) when the owner ticked "Stay signed in" at log-in
   * (SITEHEALTH_SESSION_REMEMBER_DAYS).
   */
  readonly sessionRememberDays: number
  /** The dashboard's provider connections: Google OAuth client, provider API bases (platform/ConnectionSettings.ts). */
  readonly connections: ConnectionSettings
  /** Subscriptions through Stripe Checkout (platform/BillingSettings.ts); null: operator-managed (the admin CLI). */
  readonly billing: BillingSettings | null
  /**
   * SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE=1, for development and tests only: webhooks may target http:// and private,
   * loopback or link-local addresses, which are refused otherwise (docs/alerts.md, SSRF).
   */
  readonly webhooksAllowPrivate: boolean
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
export const logSettings = (isTerminal: boolean): Effect.Effect<LogSettings, SettingsError> =>
  collect({
    logFormat: parsed<LogFormat>("LOG_FORMAT", isTerminal ? "pretty" : "json", (raw) => {
      const format = raw.toLowerCase()
      return format === "json" || format === "pretty"
        ? Result.succeed(format)
        : Result.fail(`LOG_FORMAT must be json or pretty, got "${raw}"`)
    }),
    logLevel: parsed<LogLevelName>("LOG_LEVEL", "info", (raw) => {
      const level = LOG_LEVEL_ALIASES[raw.toLowerCase()] ?? raw.toLowerCase()
      return (LOG_LEVELS as ReadonlyArray<string>).includes(level)
        ? Result.succeed(level as LogLevelName)
        : Result.fail(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${raw}"`)
    })
  })

/** logSettings from an environment record; throws the SettingsError. */
export const readLogSettings = (env: Record<string, string | undefined>, isTerminal: boolean): LogSettings =>
  readSync(logSettings(isTerminal), env)

/** Shorter than this, a bearer token for /metrics is guessable; refuse it rather than pretend to protect. */
export const METRICS_TOKEN_MIN_LENGTH = 16

const WORKER_ON = ["1", "on", "true", "yes"]
const WORKER_OFF = ["0", "off", "false", "no"]

/** Unset means on: a single `npm start` must do everything. A typo must not silently turn the worker off. */
const workerFlag = parsed("SITEHEALTH_WORKER", true, (raw) => {
  const value = raw.toLowerCase()
  if (WORKER_ON.includes(value)) return Result.succeed(true)
  if (WORKER_OFF.includes(value)) return Result.succeed(false)
  return Result.fail(
    `SITEHEALTH_WORKER must be one of ${WORKER_ON.join(", ")} (run the background worker in this process) or ` +
      `${WORKER_OFF.join(", ")} (leave it to \`npm run worker\`), got "${raw}"`
  )
})

/** A key's format is checked with the other settings; the problem names the variable, never the value. */
const secretKeyProblem = (name: string) => (value: string): string | null => {
  try {
    parseSecretKey(value, name)
    return null
  } catch (e) {
    if (e instanceof SecretKeyError) return e.message
    throw e
  }
}

/**
 * Every setting of the server and the worker. `isTerminal`: whether the logs go to a terminal (stdout for the
 * server), for LOG_FORMAT's default.
 */
export const loadAppConfig = (
  isTerminal = process.stdout.isTTY === true
): Effect.Effect<AppConfigShape, SettingsError> =>
  collect({
    port: int("PORT", 8787, 0, 65535),
    host: parsed("HOST", "127.0.0.1", Result.succeed),
    dataDir: parsed("SITEHEALTH_DATA_DIR", Path.resolve(".data"), (raw) => Result.succeed(Path.resolve(raw))),
    databaseUrl: secret("DATABASE_URL"),
    databasePoolSize: int("SITEHEALTH_DB_POOL_SIZE", POOL_MAX_CONNECTIONS, 1, 1000),
    redisUrl: secret("REDIS_URL"),
    rateLimit: int("SITEHEALTH_RATE_LIMIT", 60, 1, 1_000_000),
    maxBodyBytes: int("SITEHEALTH_MAX_BODY_BYTES", 64 * 1024, 1024, 10 * 1024 * 1024),
    embeddedPgPort: int("SITEHEALTH_EMBEDDED_PG_PORT", 54329, 1, 65535),
    embeddedPgSharedBuffers: parsed("SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS", EMBEDDED_SHARED_BUFFERS, (raw) =>
      isPostgresMemorySize(raw)
        ? Result.succeed(raw)
        : Result.fail(
          `SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS must be a whole number with kB, MB or GB, such as 512MB or 1GB, got ` +
            `"${raw}"`
        )),
    secretKey: secret("SITEHEALTH_SECRET_KEY", secretKeyProblem("SITEHEALTH_SECRET_KEY")),
    secretKeyOld: secret("SITEHEALTH_SECRET_KEY_OLD", secretKeyProblem("SITEHEALTH_SECRET_KEY_OLD")),
    syncIntervalMinutes: int("SITEHEALTH_SYNC_INTERVAL_MINUTES", 60, 1, 7 * 24 * 60),
    syncDeadlineMinutes: int("SITEHEALTH_SYNC_DEADLINE_MINUTES", 60, 1, 24 * 60),
    worker: workerFlag,
    shutdownTimeoutMs: int("SITEHEALTH_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    shutdownDelayMs: int("SITEHEALTH_SHUTDOWN_DELAY_MS", 0, 0, 600_000),
    log: logSettings(isTerminal),
    metricsToken: secret("METRICS_TOKEN", (token) =>
      token.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(token)
        // The value itself is not repeated: it is a secret, and start-up errors end up in logs.
        ? `METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters without spaces (e.g. \`openssl rand ` +
          `-hex 32\`)`
        : null),
    tracing: tracingSettings,
    // Only checked here: the workers read them where a connection is made (ProviderUrls.ts).
    providerUrls: providerUrlSettings,
    publicUrl: parsed<string | null>("PUBLIC_URL", null, (raw) => {
      try {
        const url = new URL(raw)
        if (url.protocol !== "http:" && url.protocol !== "https:") {
          throw new Error()
        }
        return Result.succeed(url.origin)
      } catch {
        return Result.fail(`PUBLIC_URL must be an http or https URL such as https://health.example.com, got "${raw}"`)
      }
    }),
    smtpUrl: secret("SMTP_URL", (value) =>
      /^smtps?:\/\/[^\s]+$/.test(value)
        ? null
        : "SMTP_URL must look like smtp://user:password@host:587 or smtps://host:465"),
    mailFrom: parsed("MAIL_FROM", "sitehealth <no-reply@localhost>", Result.succeed),
    signingKey: secret("SITEHEALTH_SIGNING_KEY", (value) =>
      value.length < 32 ? "SITEHEALTH_SIGNING_KEY must be at least 32 characters (e.g. `openssl rand -hex 32`)" : null),
    sessionIdleMinutes: int("SITEHEALTH_SESSION_IDLE_MINUTES", 30, 1, 7 * 24 * 60),
    sessionMaxHours: int("SITEHEALTH_SESSION_MAX_HOURS", 12, 1, 24 * 365),
    sessionRememberDays: int("SITEHEALTH_SESSION_REMEMBER_DAYS", 14, 1, 365),
    connections: connectionSettings,
    billing: billingSettings,
    webhooksAllowPrivate: parsed("SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE", false, (raw) => {
      const value = raw.toLowerCase()
      if (WORKER_ON.includes(value)) {
        return Result.succeed(true)
      }
      if (WORKER_OFF.includes(value)) {
        return Result.succeed(false)
      }
      return Result.fail(`SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE must be 1 (development and tests only) or 0, got "${raw}"`)
    })
  }).pipe(Effect.map(({ log, providerUrls: _, connections, ...rest }) => ({
    ...rest,
    ...log,
    connections: withRedirectDefault(connections, rest.publicUrl ?? `http://${rest.host}:${rest.port}`)
  })))

/** loadAppConfig from an environment record (tests); throws the SettingsError. */
export const readConfig = (env: Record<string, string | undefined>, isTerminal = false): AppConfigShape =>
  readSync(loadAppConfig(isTerminal), env)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("sitehealth/AppConfig") {
  static readonly layerFromEnv = Layer.effect(AppConfig, loadAppConfig())
  static readonly layer = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
}
