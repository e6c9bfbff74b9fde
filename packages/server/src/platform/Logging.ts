/**
 * Where log lines go and what they look like (LOG_FORMAT, LOG_LEVEL), for the server, the worker and the admin
 * CLI alike. Effect's Logger does the plumbing (levels, annotations, causes); this module only decides the
 * format:
 *
 *   json    one JSON object per line: {"time","level","msg","requestId"? (while serving a request),
 *           …annotations, "cause"?}. A request line
 *           (http/RequestLog.ts) is flat: {"time","level":"info","msg":"request","requestId","method","route",
 *           "status","durationMs","tokenId"?,"projectId"?}.
 *   pretty  for a terminal: a request is one line `[10:42:07.123] INFO GET /api/v1/projects/:id/health 200
 *           4.1ms req=… token=tok_… project=prj_…`; anything else as Effect's pretty logger prints it.
 *
 * Lines go to stdout (stderr where Logger.LogToStderr is set, as in the admin CLI). Nothing here filters
 * secrets: what is logged is chosen where it is logged (a request line carries ids, never a token value,
 * header, query string or body), and Redacted values print as <redacted>.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import type { LogFormat, LogLevelName, LogSettings } from "./Config.ts"

/**
 * Whether the per-request line is written. Set by `loggingLayer` (the processes that configured their logging
 * from LOG_FORMAT/LOG_LEVEL); off by default, so an app embedded elsewhere — the test suites' web handler —
 * does not print one line per request through Effect's default logger.
 */
export const LogRequests = Context.Reference<boolean>("sitehealth/LogRequests", { defaultValue: () => false })

export interface RequestLogSlot {
  readonly requestId: string
  /** The matched route's template; null until the router matched one (never, for an unknown path). */
  route: string | null
  tokenId: string | null
  /** The project the path names, once Authentication found it in the token's account. */
  projectId: string | null
}

/**
 * The current request's record, created by http/RequestLog.ts for each request and filled by the layers inside
 * it. Every JSON line logged while a request runs carries its `requestId`, so an error's line and the
 * request's line join on it. The default (outside any request) is a throwaway that nothing reads, so that
 * code filling it does not have to ask whether there is a request.
 */
export const CurrentRequestLog = Context.Reference<RequestLogSlot>("sitehealth/CurrentRequestLog", {
  defaultValue: () => ({ requestId: "", route: null, tokenId: null, projectId: null })
})

/** One request, as http/RequestLog.ts reports it once its response is ready. Ids only: no secret fits here. */
export class RequestLine {
  readonly requestId: string
  readonly method: string
  /** The route template (`/api/v1/projects/:id/health`), never the path with its ids or query. */
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly tokenId: string | null
  readonly projectId: string | null
  constructor(
    requestId: string,
    method: string,
    route: string,
    status: number,
    durationMs: number,
    tokenId: string | null,
    projectId: string | null
  ) {
    this.requestId = requestId
    this.method = method
    this.route = route
    this.status = status
    this.durationMs = durationMs
    this.tokenId = tokenId
    this.projectId = projectId
  }
}

const EFFECT_LEVEL: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warning: "Warn",
  error: "Error",
  none: "None"
}

export const effectLogLevel = (level: LogLevelName): LogLevel.LogLevel => EFFECT_LEVEL[level]

const write = (toStderr: boolean, line: string): void => {
  // Looked up per call, not bound once: a test that captures the stream's writes must see these too.
  if (toStderr) process.stderr.write(line)
  else process.stdout.write(line)
}

/**
 * JSON lines for stdout, written once per turn of the event loop rather than once per line: under load many
 * requests finish in one turn, and a write to a pipe or socket (a container's log driver, journald, the bench)
 * is a system call each. A line waits at most until the loop's next check phase; at 64 KiB the buffer is
 * written at once. On exit (process.exit, an uncaught error) what is pending is written synchronously; only a
 * SIGKILL can lose the last turn's lines.
 */
let pending = ""
let flushScheduled = false
const FLUSH_AT = 64 * 1024

/** Writes the buffered JSON lines now (tests call it before reading what was written). */
export const flushLogs = (): void => {
  flushScheduled = false
  if (pending === "") return
  const out = pending
  pending = ""
  process.stdout.write(out)
}

process.once("exit", flushLogs)

const writeJson = (toStderr: boolean, line: string): void => {
  if (toStderr) return write(true, line)
  pending += line
  if (pending.length >= FLUSH_AT) flushLogs()
  else if (!flushScheduled) {
    flushScheduled = true
    setImmediate(flushLogs)
  }
}

const textOf = (message: unknown): string => (typeof message === "string" ? message : Formatter.formatJson(message))

/** A request as one flat JSON object. A fixed key order and plain values: JSON.stringify's fast path. */
export const requestJson = (line: RequestLine, date: Date): string =>
  JSON.stringify({
    time: date.toISOString(),
    level: "info",
    msg: "request",
    requestId: line.requestId,
    method: line.method,
    route: line.route,
    status: line.status,
    durationMs: line.durationMs,
    // undefined keys are left out: "where known".
    tokenId: line.tokenId ?? undefined,
    projectId: line.projectId ?? undefined
  })

/** Core keys an annotation may not overwrite: a line's own time, level and message stay what they are. */
const CORE_KEYS = new Set(["time", "level", "msg", "requestId", "cause"])

const jsonLogger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  const toStderr = fiber.getRef(References.LogToStderr)
  const parts = Array.isArray(message) ? message : [message]
  if (parts.length === 1 && parts[0] instanceof RequestLine) {
    writeJson(toStderr, requestJson(parts[0], date) + "\n")
    return
  }
  const record: Record<string, unknown> = {
    time: date.toISOString(),
    level: logLevel.toLowerCase(),
    msg: parts.map(textOf).join(" ")
  }
  const requestId = fiber.getRef(CurrentRequestLog).requestId
  if (requestId !== "") record.requestId = requestId
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) {
    if (!CORE_KEYS.has(key)) record[key] = value
  }
  const spans = fiber.getRef(References.CurrentLogSpans)
  if (spans.length > 0) {
    const now = date.getTime()
    record.spans = Object.fromEntries(spans.map(([label, start]) => [label, now - start]))
  }
  if (cause.reasons.length > 0) record.cause = Cause.pretty(cause)
  // Effect's formatter: annotations may hold anything (cycles, bigints, Redacted values, which it hides).
  writeJson(toStderr, Formatter.formatJson(record) + "\n")
})

const pad2 = (n: number) => (n < 10 ? "0" : "") + n
const clockTime = (date: Date) =>
  `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}.${
    String(date.getMilliseconds()).padStart(3, "0")
  }`

/** A request as one line for a terminal. */
export const requestPretty = (line: RequestLine, date: Date): string =>
  `[${clockTime(date)}] INFO ${line.method} ${line.route} ${line.status} ${line.durationMs}ms req=${line.requestId}` +
  (line.tokenId === null ? "" : ` token=${line.tokenId}`) +
  (line.projectId === null ? "" : ` project=${line.projectId}`)

const prettyLogger = (): Logger.Logger<unknown, void> => {
  const effectPretty = Logger.consolePretty()
  return Logger.make<unknown, void>((options) => {
    const parts = Array.isArray(options.message) ? options.message : [options.message]
    if (parts.length === 1 && parts[0] instanceof RequestLine) {
      write(options.fiber.getRef(References.LogToStderr), requestPretty(parts[0], options.date) + "\n")
      return
    }
    effectPretty.log(options)
  })
}

export const loggerFor = (
  format: LogFormat
): Logger.Logger<unknown, void> => (format === "json" ? jsonLogger : prettyLogger())

/**
 * The process's logging: our logger in place of Effect's default one (the tracer logger stays, so that log
 * lines become events of the current span when tracing is on), the minimum level, and per-request lines.
 */
export const loggingLayer = (settings: LogSettings): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.layer([loggerFor(settings.logFormat), Logger.tracerLogger]),
    Layer.succeed(References.MinimumLogLevel, effectLogLevel(settings.logLevel)),
    Layer.succeed(LogRequests, true)
  )
