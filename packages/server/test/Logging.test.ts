/** LOG_FORMAT / LOG_LEVEL / METRICS_TOKEN parsing, and what the json and pretty loggers write. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { readConfig, readLogSettings } from "../src/platform/Config.ts"
import { flushLogs, loggingLayer, RequestLine, requestPretty } from "../src/platform/Logging.ts"

describe("LOG_FORMAT and LOG_LEVEL", () => {
  it("default to info, pretty on a terminal and json otherwise", () => {
    expect(readLogSettings({}, true)).toEqual({ logFormat: "pretty", logLevel: "info" })
    expect(readLogSettings({}, false)).toEqual({ logFormat: "json", logLevel: "info" })
    expect(readLogSettings({ LOG_FORMAT: " ", LOG_LEVEL: "" }, false)).toEqual({ logFormat: "json", logLevel: "info" })
  })

  it("take any accepted value, in any case; warn means warning", () => {
    expect(readLogSettings({ LOG_FORMAT: "JSON", LOG_LEVEL: "Debug" }, true)).toEqual({
      logFormat: "json",
      logLevel: "debug"
    })
    expect(readLogSettings({ LOG_FORMAT: "pretty", LOG_LEVEL: "none" }, false)).toEqual({
      logFormat: "pretty",
      logLevel: "none"
    })
    expect(readLogSettings({ LOG_LEVEL: "warn" }, false).logLevel).toBe("warning")
    for (const level of ["trace", "debug", "info", "warning", "error", "none"]) {
      expect(readLogSettings({ LOG_LEVEL: level }, false).logLevel).toBe(level)
    }
  })

  it("refuse anything else at start-up, naming the accepted values", () => {
    expect(() => readConfig({ LOG_FORMAT: "text" })).toThrow("LOG_FORMAT must be json or pretty, got \"text\"")
    expect(() => readConfig({ LOG_LEVEL: "verbose" })).toThrow(
      "LOG_LEVEL must be one of trace, debug, info, warning, error, none, got \"verbose\""
    )
  })
})

describe("METRICS_TOKEN", () => {
  it("is null when unset, the value when set", () => {
    expect(readConfig({}).metricsToken).toBeNull()
    expect(Redacted.value(readConfig({ METRICS_TOKEN: "0123456789abcdef0123" }).metricsToken!)).toBe(
      "0123456789abcdef0123"
    )
  })

  it("refuses a short or spaced token without repeating it", () => {
    for (const token of ["short", "0123456789abcde", "0123456789 abcdef0123"]) {
      let message = ""
      try {
        readConfig({ METRICS_TOKEN: token })
      } catch (e) {
        message = (e as Error).message
      }
      expect(message).toMatch(/^METRICS_TOKEN must be at least 16 characters without spaces/)
      expect(message).not.toContain(token)
    }
  })
})

/** What `effect` writes to stdout through the logging layer (run with `it.live`: the real console, no TestConsole). */
const stdoutOf = (settings: Parameters<typeof loggingLayer>[0], effect: Effect.Effect<void>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const written: Array<string> = []
      const original = process.stdout.write
      process.stdout.write = ((chunk: any) => {
        written.push(String(chunk))
        return true
      }) as any
      const originalLog = console.log
      console.log = (...args: Array<unknown>) => void written.push(args.map(String).join(" ") + "\n")
      return { written, restore: () => ((process.stdout.write = original), (console.log = originalLog)) }
    }),
    ({ written }) =>
      Effect.provide(effect, loggingLayer(settings)).pipe(Effect.andThen(Effect.sync(flushLogs)), Effect.as(written)),
    ({ restore }) => Effect.sync(restore)
  ).pipe(Effect.map((written) => written.join("")))

const line = new RequestLine("req-1", "GET", "/api/v1/projects/:id/health", 200, 4.12, "tok_abc", "prj_def")

describe("json logs", () => {
  it.live("write a request as one flat object, leaving out what is not known", () =>
    Effect.gen(function*() {
      const out = yield* stdoutOf(
        { logFormat: "json", logLevel: "info" },
        Effect.andThen(
          Effect.logInfo(line),
          Effect.logInfo(new RequestLine("req-2", "GET", "/healthz", 200, 0.3, null, null))
        )
      )
      const [first, second] = out.trim().split("\n").map((l) => JSON.parse(l))
      expect(first).toEqual({
        time: expect.any(String),
        level: "info",
        msg: "request",
        requestId: "req-1",
        method: "GET",
        route: "/api/v1/projects/:id/health",
        status: 200,
        durationMs: 4.12,
        tokenId: "tok_abc",
        projectId: "prj_def"
      })
      expect(Object.keys(second)).toEqual([
        "time",
        "level",
        "msg",
        "requestId",
        "method",
        "route",
        "status",
        "durationMs"
      ])
    }))

  it.live("write any other message as one line with its annotations and cause, core keys kept", () =>
    Effect.gen(function*() {
      const out = yield* stdoutOf(
        { logFormat: "json", logLevel: "info" },
        Effect.logError("sync failed", "for", 3, "runs").pipe(
          Effect.annotateLogs({ provider: "stripe", level: "spoofed" })
        )
      )
      expect(out.endsWith("\n")).toBe(true)
      expect(out.trim().split("\n")).toHaveLength(1)
      expect(JSON.parse(out)).toEqual({
        time: expect.any(String),
        level: "error",
        msg: "sync failed for 3 runs",
        provider: "stripe"
      })
    }))

  it.live("honour LOG_LEVEL: below it nothing is written, request lines included; none silences everything", () =>
    Effect.gen(function*() {
      const all = Effect.andThen(
        Effect.logInfo(line),
        Effect.andThen(Effect.logWarning("careful"), Effect.logError("broken"))
      )
      const warning = yield* stdoutOf({ logFormat: "json", logLevel: "warning" }, all)
      expect(warning.trim().split("\n").map((l) => JSON.parse(l).level)).toEqual(["warn", "error"])
      expect(yield* stdoutOf({ logFormat: "json", logLevel: "none" }, all)).toBe("")
      const debug = yield* stdoutOf({ logFormat: "json", logLevel: "debug" }, Effect.logDebug("details"))
      expect(JSON.parse(debug).level).toBe("debug")
    }))
})

describe("pretty logs", () => {
  it.live("write a request as one readable line", () =>
    Effect.gen(function*() {
      expect(requestPretty(line, new Date(2026, 10, 20, 9, 5, 7, 42))).toBe(
        "[09:05:07.042] INFO GET /api/v1/projects/:id/health 200 4.12ms req=req-1 token=tok_abc project=prj_def"
      )
      const out = yield* stdoutOf({ logFormat: "pretty", logLevel: "info" }, Effect.logInfo(line))
      expect(out).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO GET \/api\/v1\/projects\/:id\/health 200 4\.12ms req=req-1 token=tok_abc project=prj_def\n$/
      )
    }))

  it.live("leave other messages to Effect's pretty logger", () =>
    Effect.gen(function*() {
      const out = yield* stdoutOf({ logFormat: "pretty", logLevel: "info" }, Effect.logInfo("hello there"))
      expect(out).toContain("INFO")
      expect(out).toContain("hello there")
      expect(() => JSON.parse(out)).toThrow()
    }))
})
