/**
 * Start-up configuration as a whole: every bad variable named in one error, secrets Redacted from the moment
 * they are read (never in an error, a log line or the config's printed form), and the real entry points
 * stopping with those lines and exit code 1 — no stack trace.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { loadAppConfig } from "../src/platform/Config.ts"
import { flushLogs, loggingLayer } from "../src/platform/Logging.ts"
import { SettingsError } from "../src/platform/Settings.ts"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

const DB_PASSWORD = "hunter2-db-password"
const REDIS_PASSWORD = "redis-pw-0a9f"
const METRICS_SECRET = "metrics token with spaces 0123"
const OTEL_KEY = "otel-vendor-api-key-77"
const SHORT_KEY = "not-a-key-ZZ9"

const fromEnv = (env: Record<string, string>) =>
  Effect.provideService(loadAppConfig(false), ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))

const failureOf = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(fromEnv(env))
    if (Exit.isSuccess(exit)) return yield* Effect.die(new Error("expected the configuration to be refused"))
    const error = exit.cause.reasons[0]
    if (error?._tag !== "Fail" || !(error.error instanceof SettingsError)) return yield* Effect.die(exit.cause)
    return error.error
  })

describe("one start-up error for every bad variable", () => {
  it.effect("names two bad variables in one error", () =>
    Effect.gen(function*() {
      const error = yield* failureOf({ PORT: "eighty", LOG_FORMAT: "text" })
      expect(error.problems).toEqual([
        "PORT must be an integer between 0 and 65535, got \"eighty\"",
        "LOG_FORMAT must be json or pretty, got \"text\""
      ])
      expect(error.message).toContain("PORT must be")
      expect(error.message).toContain("LOG_FORMAT must be")
    }))

  it.effect("lists problems from every part of the configuration, tracing and keys included", () =>
    Effect.gen(function*() {
      const error = yield* failureOf({
        SITEHEALTH_WORKER: "maybe",
        SITEHEALTH_SECRET_KEY: SHORT_KEY,
        METRICS_TOKEN: METRICS_SECRET,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "10%"
      })
      expect(error.problems.map((p) => p.split(" ")[0])).toEqual([
        "SITEHEALTH_SECRET_KEY",
        "SITEHEALTH_WORKER",
        "METRICS_TOKEN",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_TRACES_SAMPLER_ARG"
      ])
    }))

  it.effect("never repeats a secret's value in the error", () =>
    Effect.gen(function*() {
      const error = yield* failureOf({
        PORT: "-1",
        DATABASE_URL: `postgres://app:${DB_PASSWORD}@db:5432/sitehealth`,
        REDIS_URL: `redis://:${REDIS_PASSWORD}@cache:6379`,
        METRICS_TOKEN: METRICS_SECRET,
        SITEHEALTH_SECRET_KEY_OLD: SHORT_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_HEADERS: `=${OTEL_KEY}`
      })
      expect(error.problems).toHaveLength(4)
      const text = [error.message, String(error), JSON.stringify(error)].join("\n")
      for (const secret of [DB_PASSWORD, REDIS_PASSWORD, METRICS_SECRET, SHORT_KEY, OTEL_KEY]) {
        expect(text).not.toContain(secret)
      }
    }))
})

describe("secrets are Redacted once read", () => {
  const env = {
    DATABASE_URL: `postgres://app:${DB_PASSWORD}@db:5432/sitehealth`,
    REDIS_URL: `redis://:${REDIS_PASSWORD}@cache:6379`,
    METRICS_TOKEN: "0123456789abcdef-metrics",
    SITEHEALTH_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
    OTEL_EXPORTER_OTLP_HEADERS: `api-key=${OTEL_KEY}`
  }
  const secrets = [DB_PASSWORD, REDIS_PASSWORD, env.METRICS_TOKEN, env.SITEHEALTH_SECRET_KEY, OTEL_KEY]

  it.effect("keeps the values for the code that uses them", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv(env)
      expect(Redacted.value(config.databaseUrl!)).toBe(env.DATABASE_URL)
      expect(Redacted.value(config.redisUrl!)).toBe(env.REDIS_URL)
      expect(Redacted.value(config.metricsToken!)).toBe(env.METRICS_TOKEN)
      expect(Redacted.value(config.secretKey!)).toBe(env.SITEHEALTH_SECRET_KEY)
      expect(Redacted.value(config.tracing!.headers)).toEqual({ "api-key": OTEL_KEY })
    }))

  it.effect("prints none of them, whether the config is logged as JSON or stringified", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv(env)
      const written: Array<string> = []
      const original = process.stdout.write
      yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          process.stdout.write = ((chunk: unknown) => written.push(String(chunk)) > 0) as typeof process.stdout.write
        }),
        () =>
          Effect.logInfo("configuration", config).pipe(
            Effect.annotateLogs({ config }),
            Effect.provide(loggingLayer({ logFormat: "json", logLevel: "info" })),
            Effect.andThen(Effect.sync(flushLogs))
          ),
        () => Effect.sync(() => (process.stdout.write = original))
      )
      const logged = written.join("")
      expect(logged).toContain("<redacted>")
      expect(logged).toContain("configuration")
      const printed = [logged, JSON.stringify(config), String(Object.values(config))].join("\n")
      for (const secret of secrets) expect(printed).not.toContain(secret)
    }))
})

describe("the entry points", () => {
  for (
    const [name, entry, prefix] of [
      ["npm start", "packages/server/bin/server.js", "sitehealth:"],
      ["npm run worker", "packages/server/bin/worker.js", "sitehealth worker:"]
    ] as const
  ) {
    it(`${name} stops with exit code 1 and one line per bad variable, no stack trace and no secret`, () => {
      const result = spawnSync(process.execPath, [Path.join(ROOT, entry)], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 30_000,
        env: {
          PATH: process.env.PATH,
          PORT: "eighty",
          LOG_LEVEL: "verbose",
          METRICS_TOKEN: METRICS_SECRET,
          DATABASE_URL: `postgres://app:${DB_PASSWORD}@127.0.0.1:1/none`
        }
      })
      expect(result.status).toBe(1)
      expect(result.stderr.trim().split("\n")).toEqual([
        `${prefix} PORT must be an integer between 0 and 65535, got "eighty"`,
        `${prefix} LOG_LEVEL must be one of trace, debug, info, warning, error, none, got "verbose"`,
        `${prefix} METRICS_TOKEN must be at least 16 characters without spaces (e.g. \`openssl rand -hex 32\`)`
      ])
      expect(result.stdout).toBe("")
      expect(result.stderr + result.stdout).not.toContain(DB_PASSWORD)
    }, 40_000)
  }
})
